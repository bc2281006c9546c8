package shaders

import (
	"fmt"
	"math"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/refops"
)

// sharedGroups is the dispatch for matmul_shared.wgsl: one workgroup per
// bm x bn tile of out, at most gx workgroups along x (the kernel flattens
// wid.y * nwg.x + wid.x; those past the last tile return).
func sharedGroups(M, N, bm, bn, gx int) [3]uint32 {
	groups := ceilDiv(M, bm) * ceilDiv(N, bn)
	gx = min(groups, gx)
	return [3]uint32{uint32(gx), uint32(ceilDiv(groups, gx)), 1}
}

// guard is the number of values after each array in TestMatmulShared's
// buffers: NaN after the inputs, so that a read out of bounds shows in the
// output, and guardOut after out, which must stay as it is.
const (
	guard    = 16
	guardOut = 12345.0
)

// withGuard appends guard copies of v to b, encoded as f16 or f32.
func withGuard(b []byte, v float32, f16 bool) []byte {
	g := make([]float32, guard)
	for i := range g {
		g[i] = v
	}
	return append(b, weightBytes(g, f16)...)
}

// TestMatmulShared compares matmul_shared.wgsl with refops.Matmul (then
// refops.GELU, or plus the residual) and with matmul.wgsl on the same inputs,
// for every epilogue, both weight types and every tile configuration the
// autotuner may choose plus two small ones (non-square, BK 4, 16
// invocations), on sizes that are not multiples of the tiles (M, N and K all
// ragged, K and N multiples of 4 as the kernel's vec4 loads require; K = 200
// spans many BK steps and ends in a partial one), with 2D dispatches whose
// last row of workgroups is partly past the last tile. Every configuration
// adds each output's products in k order, so all of them give the same bits. Every buffer is followed by guard values
// (NaN after the inputs, a sentinel after out) to catch reads and writes out
// of bounds. Tolerance 1e-5 relative to max(1, |want|):
// f32 sums of at most 200 products of order 0.2, rounding errors growing
// about as √K·2⁻²⁴·|sum| ≈ 3e-6; the f16 reference uses the rounded weights,
// so the same bound holds; both kernels add in k order, so they agree at
// least as closely.
func TestMatmulShared(t *testing.T) {
	d := newTestDev(t)
	sizes := []struct{ M, K, N int }{{37, 48, 52}, {5, 20, 12}, {3, 8, 4}, {130, 200, 72}}
	type tileCase struct {
		t  matmulTiles
		gx int
	}
	var cases []tileCase
	for _, c := range matmulCandidates {
		cases = append(cases, tileCase{c, 65535})
	}
	cases = append(cases, tileCase{defaultMatmulTiles, 2}, tileCase{matmulTiles{16, 16, 4, 4, 4}, 3}, tileCase{matmulTiles{32, 16, 8, 8, 4}, 65535})
	for _, f16 := range d.weightTypes() {
		k, err := NewKernel(d.dev, "matmul_shared.wgsl", f16)
		if err != nil {
			t.Fatal(err)
		}
		regs, err := NewKernel(d.dev, "matmul.wgsl", f16)
		if err != nil {
			t.Fatal(err)
		}
		for si, sz := range sizes {
			M, K, N := sz.M, sz.K, sz.N
			seed := uint64(100 + 10*si)
			x := randF32(seed+1, M*K, 0, 1)
			w, bias := randF32(seed+2, K*N, 0, 0.2), randF32(seed+3, N, 0, 0.1)
			res := randF32(seed+4, M*N, 0, 1)
			wb, bb := weightBytes(w, f16), weightBytes(bias, f16)
			y := refops.Matmul(f64(x), f64(w), f64(bias), M, K, N)
			bufs := func(t *testing.T, init []byte) (map[string]Buf, Buf) {
				nan := float32(math.NaN())
				out := Buf{Buffer: d.buffer(t, "out", withGuard(init, guardOut, false))}
				return map[string]Buf{
					"x":    {Buffer: d.buffer(t, "x", withGuard(f32Bytes(x), nan, false))},
					"w":    {Buffer: d.buffer(t, "w", withGuard(wb, nan, f16))},
					"bias": {Buffer: d.buffer(t, "bias", withGuard(bb, nan, f16))}, "out": out,
				}, out
			}
			params := Params{"M": float64(M), "N": float64(N), "K": float64(K)}
			for epi := range 3 {
				want := make([]float64, len(y))
				init := make([]byte, 4*M*N)
				for i, v := range y {
					switch epi {
					case 0:
						want[i] = v
					case 1:
						want[i] = refops.GELU(v)
					case 2:
						want[i] = float64(res[i]) + v
					}
				}
				if epi == 2 {
					init = f32Bytes(res)
				}
				var regsOut []float64 // matmul.wgsl's output on the same inputs
				t.Run(fmt.Sprintf("f16=%v/M=%d,K=%d,N=%d/EPI=%d/matmul.wgsl", f16, M, K, N, epi), func(t *testing.T) {
					p, err := regs.Pipeline(map[string]float64{"EPI": float64(epi)})
					if err != nil {
						t.Fatal(err)
					}
					b, out := bufs(t, init)
					d.run(t, p, b, params, matmulGroups(M, N, 64, 65535))
					got := d.readF32(t, out.Buffer, M*N)
					checkClose(t, "matmul", got, want, 1e-5)
					regsOut = f64(got)
				})
				var first []float32 // the first configuration's output
				for _, c := range cases {
					name := fmt.Sprintf("f16=%v/M=%d,K=%d,N=%d/EPI=%d/%v,gx=%d", f16, M, K, N, epi, c.t, c.gx)
					t.Run(name, func(t *testing.T) {
						if err := c.t.fits(d.dev); err != nil {
							t.Skip(err)
						}
						consts := c.t.constants()
						consts["EPI"] = float64(epi)
						p, err := k.Pipeline(consts)
						if err != nil {
							t.Fatal(err)
						}
						b, out := bufs(t, init)
						b["kc"], b["vc"] = Buf{Buffer: d.buffer(t, "kc", make([]byte, 16))}, Buf{Buffer: d.buffer(t, "vc", make([]byte, 16))}
						sp := Params{"M": params["M"], "N": params["N"], "K": params["K"], "T": 1, "H": 1, "S": 1, "pos0": 0}
						d.run(t, p, b, sp, sharedGroups(M, N, c.t.BM, c.t.BN, c.gx))
						got := d.readF32(t, out.Buffer, M*N+guard)
						for i, v := range got[M*N:] {
							if v != guardOut {
								t.Fatalf("out[M*N+%d] = %v: stored out of bounds", i, v)
							}
						}
						got = got[:M*N]
						checkClose(t, "matmul_shared", got, want, 1e-5)
						if regsOut != nil {
							checkClose(t, "matmul_shared vs matmul.wgsl", got, regsOut, 1e-5)
						}
						if first == nil {
							first = got
						} else {
							checkClose(t, "matmul_shared vs its first configuration", got, f64(first), 0)
						}
					})
				}
			}
		}
	}
}

// TestMatmulSharedQKV: with the c_attn epilogue (epiQKV), matmul_shared.wgsl
// stores q in out and k and v in the KV cache exactly where kv_write.wgsl
// copies them from a plain matmul's output (B sequences of T rows at pos0 of
// a cache of S positions, H heads; rows and heads not tile multiples), leaves
// the rest of the cache and k, v's columns of out untouched, and gives the
// same bits.
func TestMatmulSharedQKV(t *testing.T) {
	d := newTestDev(t)
	const B, T, C, H, S, pos0, K = 3, 11, 24, 3, 20, 5, 16
	M, N := B*T, 3*C
	k, err := NewKernel(d.dev, "matmul_shared.wgsl", false)
	if err != nil {
		t.Fatal(err)
	}
	kvw, _ := attnKernels(t, d)
	x := randF32(71, M*K, 0, 1)
	w, bias := randF32(72, K*N, 0, 0.2), randF32(73, N, 0, 0.1)
	sentinel := make([]float32, B*H*S*(C/H))
	for i := range sentinel {
		sentinel[i] = -7
	}
	run := func(epi int) (out, kc, vc []float32) {
		p, err := k.Pipeline(map[string]float64{"EPI": float64(epi), "BM": 16, "BN": 16, "BK": 4, "TM": 4, "TN": 4})
		if err != nil {
			t.Fatal(err)
		}
		ob := d.buffer(t, "out", f32Bytes(make([]float32, M*N)))
		kcb, vcb := d.buffer(t, "kc", f32Bytes(sentinel)), d.buffer(t, "vc", f32Bytes(sentinel))
		params := Params{"M": float64(M), "N": float64(N), "K": K, "T": T, "H": H, "S": S, "pos0": pos0}
		d.run(t, p, map[string]Buf{"x": {Buffer: d.buffer(t, "x", f32Bytes(x))}, "w": {Buffer: d.buffer(t, "w", f32Bytes(w))},
			"bias": {Buffer: d.buffer(t, "bias", f32Bytes(bias))}, "out": {Buffer: ob}, "kc": {Buffer: kcb}, "vc": {Buffer: vcb}},
			params, sharedGroups(M, N, 16, 16, 65535))
		if epi == epiStore { // the reference path: kv_write.wgsl copies k and v from out
			d.run(t, kvw, map[string]Buf{"qkv": {Buffer: ob}, "kc": {Buffer: kcb}, "vc": {Buffer: vcb}},
				Params{"B": B, "T": T, "C": C, "H": H, "S": S, "pos0": pos0}, [3]uint32{uint32(ceilDiv(B*T*C/4, int(kvw.WorkgroupSize[0]))), 1, 1})
		}
		return d.readF32(t, ob, M*N), d.readF32(t, kcb, len(sentinel)), d.readF32(t, vcb, len(sentinel))
	}
	out0, kc0, vc0 := run(epiStore)
	out3, kc3, vc3 := run(epiQKV)
	checkClose(t, "kc", kc3, f64(kc0), 0)
	checkClose(t, "vc", vc3, f64(vc0), 0)
	for m := range M {
		for n := range N {
			got, want := out3[m*N+n], out0[m*N+n]
			if n >= C {
				want = 0 // k and v are not stored in out
			}
			if got != want {
				t.Fatalf("out[%d][%d] = %v, want %v", m, n, got, want)
			}
		}
	}
	untouched := 0
	for _, v := range kc3 {
		if v == -7 {
			untouched++
		}
	}
	if want := B * H * (S - T) * (C / H); untouched != want {
		t.Errorf("%d cache entries untouched, want %d (positions outside pos0 .. pos0+T-1)", untouched, want)
	}
}
