package shaders

import (
	"fmt"
	"math"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/refops"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
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

// sameBits fails t unless got and want are the same float32 bits.
func sameBits(t testing.TB, what string, got, want []float32) {
	t.Helper()
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s[%d] = %v, want %v bit for bit", what, i, got[i], want[i])
		}
	}
}

// sharedCase is a tile configuration of TestMatmulShared, with VEC (where K
// and N allow it; else 0), the
// most workgroups along x of its dispatch, and whether it runs every
// epilogue (else EPI 0 only: the epilogues' code does not depend on the
// tiles, and each pipeline costs lavapipe a second or two to compile).
type sharedCase struct {
	t      matmulTiles
	vec    int
	gx     int
	allEpi bool
}

// sharedCases are the configurations TestMatmulShared runs: the default
// (also with the element loads forced, VEC 0, and with a 2D dispatch whose
// last row is partly past the last tile), 64x64 with 4x4 per invocation,
// odd ones (TM 12 and 16, 20 invocations, 5 vec4 loads of x's tile per
// invocation, BK 4 and 12, BM/4 odd, non-square), and every candidate of the
// autotuner.
func sharedCases() []sharedCase {
	cases := []sharedCase{
		{defaultMatmulTiles, 1, 65535, true},
		{defaultMatmulTiles, 0, 65535, true},
		{defaultMatmulTiles, 1, 2, true},
		{matmulTiles{BM: 64, BN: 64, BK: 8, TM: 4, TN: 4}, 1, 65535, false},
		{matmulTiles{BM: 48, BN: 40, BK: 4, TM: 12, TN: 8}, 1, 65535, true},
		{matmulTiles{BM: 32, BN: 64, BK: 16, TM: 16, TN: 4}, 1, 65535, false},
		{matmulTiles{BM: 24, BN: 32, BK: 12, TM: 12, TN: 4}, 1, 65535, false},
		{matmulTiles{BM: 20, BN: 16, BK: 4, TM: 4, TN: 4}, 0, 3, false},
	}
	for _, t := range matmulCandidates {
		if t != defaultMatmulTiles {
			cases = append(cases, sharedCase{t, 1, 65535, false})
		}
	}
	return cases
}

// TestMatmulShared compares matmul_shared.wgsl with refops.Matmul (then
// refops.GELU, or plus the residual) and with matmul.wgsl on the same inputs,
// for both weight types and the configurations of sharedCases (every
// epilogue for some, EPI 0 for the rest), on sizes that are not multiples of the tiles: M, N and K all
// ragged; K and N multiples of 4 (vec4 loads of x and w, and element loads
// where VEC = 0), neither, and one of each (element loads); K = 200 spans
// many BK steps and ends in a partial one. Every configuration adds each output's products in k order, and both
// load paths read the same values, so all give the same bits; the default
// configuration's run is repeated and gives the same bits again. Every
// buffer is followed by guard values (NaN after the inputs, a sentinel after
// out) to catch reads and writes out of bounds. Tolerance 1e-5 relative to
// max(1, |want|): f32 sums of at most 200 products of order 0.2, rounding
// errors growing about as √K·2⁻²⁴·|sum| ≈ 3e-6; the f16 reference uses the
// rounded weights, so the same bound holds; both kernels add in k order, so
// they agree at least as closely.
func TestMatmulShared(t *testing.T) {
	d := newTestDev(t)
	sizes := []struct{ M, K, N int }{
		{37, 48, 52},   // vec4 loads of x and w
		{37, 45, 70},   // element loads: neither K nor N a multiple of 4
		{19, 36, 30},   // element loads: N
		{21, 27, 40},   // element loads: K
		{5, 20, 12},    // one small tile
		{3, 8, 4},      // one step
		{130, 200, 72}, // 25 steps of 8, a partial last one of 4
	}
	cases := sharedCases()
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
			for _, epi := range []epilogue{epiStore, epiGELU, epiAdd, epiGELUErf} {
				want := make([]float64, len(y))
				init := make([]byte, 4*M*N)
				for i, v := range y {
					switch epi {
					case epiStore:
						want[i] = v
					case epiGELU:
						want[i] = refops.GELU(v)
					case epiAdd:
						want[i] = float64(res[i]) + v
					case epiGELUErf:
						want[i] = refops.GELUErf(v)
					}
				}
				if epi == epiAdd {
					init = f32Bytes(res)
				}
				var regsOut []float64 // matmul.wgsl's output on the same inputs
				t.Run(fmt.Sprintf("f16=%v/M=%d,K=%d,N=%d/EPI=%d/matmul.wgsl", f16, M, K, N, epi), func(t *testing.T) {
					p, err := regs.Pipeline(map[string]float64{"EPI": float64(epi), "WG": matmulWG})
					if err != nil {
						t.Fatal(err)
					}
					b, out := bufs(t, init)
					d.run(t, p, b, params, matmulGroups(M, N, matmulWG, 65535))
					got := d.readF32(t, out.Buffer, M*N)
					checkClose(t, "matmul", got, want, 1e-5)
					regsOut = f64(got)
				})
				var first []float32 // the first configuration's output
				for ci, c := range cases {
					if epi != 0 && !c.allEpi {
						continue
					}
					vec := c.vec
					if K%4 != 0 || N%4 != 0 {
						vec = 0 // as the host sets it
					}
					t.Run(fmt.Sprintf("f16=%v/M=%d,K=%d,N=%d/EPI=%d/%v,VEC=%d,gx=%d", f16, M, K, N, epi, c.t, vec, c.gx), func(t *testing.T) {
						if err := c.t.fits(d.dev); err != nil {
							t.Skip(err)
						}
						consts := c.t.constants()
						consts["EPI"], consts["VEC"] = float64(epi), float64(vec)
						p, err := k.Pipeline(consts)
						if err != nil {
							t.Fatal(err)
						}
						if got, want := int(p.WorkgroupSize[0]), c.t.invocations(); got != want {
							t.Fatalf("workgroup size %d, want %d", got, want)
						}
						run := func() []float32 {
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
							return got[:M*N]
						}
						got := run()
						checkClose(t, "matmul_shared", got, want, 1e-5)
						if regsOut != nil {
							checkClose(t, "matmul_shared vs matmul.wgsl", got, regsOut, 1e-5)
						}
						if ci == 0 {
							sameBits(t, "matmul_shared rerun", run(), got)
							worst := 0.0
							for i, v := range got {
								worst = max(worst, math.Abs(float64(v)-want[i])/math.Max(1, math.Abs(want[i])))
							}
							t.Logf("max error vs float64: %.3g (relative to max(1, |want|))", worst)
						}
						if first == nil {
							first = got
						} else {
							sameBits(t, "matmul_shared vs its first configuration", got, first)
						}
					})
				}
			}
		}
	}
}

// TestMatmulSharedQKV: with the c_attn epilogue (epiQKV), matmul_shared.wgsl
// stores q in out and k and v in the KV cache (B sequences of T rows at pos0
// of a cache of S positions, H heads; rows and heads not tile multiples)
// exactly where a plain Go copy of a plain matmul's (epiStore) output puts
// them, and where kv_write.wgsl copies them (head sizes that are multiples of
// 4, as kv_write.wgsl needs); it leaves the rest of the cache and k, v's
// columns of out untouched, and gives the same bits. The second shape has
// head size 3 and N = 45, K = 13: element loads, and a head's channels that
// straddle the epilogue's blocks of 4 columns.
func TestMatmulSharedQKV(t *testing.T) {
	d := newTestDev(t)
	k, err := NewKernel(d.dev, "matmul_shared.wgsl", false)
	if err != nil {
		t.Fatal(err)
	}
	kvw, _ := attnKernels(t, d, 64)
	for _, sh := range []struct{ B, T, C, H, S, pos0, K int }{{3, 11, 24, 3, 20, 5, 16}, {2, 7, 15, 5, 9, 2, 13}} {
		t.Run(fmt.Sprintf("%+v", sh), func(t *testing.T) {
			B, T, C, H, S, pos0, K := sh.B, sh.T, sh.C, sh.H, sh.S, sh.pos0, sh.K
			M, N, hd := B*T, 3*C, C/H
			x := randF32(71, M*K+4, 0, 1) // whole vec4s, as the kernel's bindings read them
			w, bias := randF32(72, K*N+4, 0, 0.2), randF32(73, N, 0, 0.1)
			sentinel := make([]float32, B*H*S*hd)
			for i := range sentinel {
				sentinel[i] = -7
			}
			run := func(epi epilogue) (out, kc, vc []float32) {
				vec := 0.0
				if K%4 == 0 && N%4 == 0 {
					vec = 1
				}
				p, err := k.Pipeline(map[string]float64{"EPI": float64(epi), "VEC": vec, "BM": 16, "BN": 16, "BK": 4, "TM": 4, "TN": 4})
				if err != nil {
					t.Fatal(err)
				}
				ob := d.buffer(t, "out", f32Bytes(make([]float32, M*N)))
				kcb, vcb := d.buffer(t, "kc", f32Bytes(sentinel)), d.buffer(t, "vc", f32Bytes(sentinel))
				params := Params{"M": float64(M), "N": float64(N), "K": float64(K), "T": float64(T), "H": float64(H), "S": float64(S), "pos0": float64(pos0)}
				d.run(t, p, map[string]Buf{"x": {Buffer: d.buffer(t, "x", f32Bytes(x))}, "w": {Buffer: d.buffer(t, "w", f32Bytes(w))},
					"bias": {Buffer: d.buffer(t, "bias", f32Bytes(bias))}, "out": {Buffer: ob}, "kc": {Buffer: kcb}, "vc": {Buffer: vcb}},
					params, sharedGroups(M, N, 16, 16, 65535))
				if epi == epiStore && hd%4 == 0 { // kv_write.wgsl copies k and v from out
					d.run(t, kvw, map[string]Buf{"qkv": {Buffer: ob}, "kc": {Buffer: kcb}, "vc": {Buffer: vcb}},
						Params{"B": float64(B), "T": float64(T), "C": float64(C), "H": float64(H), "S": float64(S), "pos0": float64(pos0)},
						[3]uint32{uint32(ceilDiv(B*T*C/4, int(kvw.WorkgroupSize[0]))), 1, 1})
				}
				return d.readF32(t, ob, M*N), d.readF32(t, kcb, len(sentinel)), d.readF32(t, vcb, len(sentinel))
			}
			out0, kc0, vc0 := run(epiStore)
			out3, kc3, vc3 := run(epiQKV)
			// The cache as a Go copy from out0 makes it.
			wantK, wantV := append([]float32(nil), sentinel...), append([]float32(nil), sentinel...)
			for m := range M {
				b, tt := m/T, m%T
				for c := range C {
					dst := ((b*H+c/hd)*S+pos0+tt)*hd + c%hd
					wantK[dst], wantV[dst] = out0[m*N+C+c], out0[m*N+2*C+c]
				}
			}
			sameBits(t, "kc vs Go copy", kc3, wantK)
			sameBits(t, "vc vs Go copy", vc3, wantV)
			if hd%4 == 0 {
				sameBits(t, "kc vs kv_write.wgsl", kc3, kc0)
				sameBits(t, "vc vs kv_write.wgsl", vc3, vc0)
			}
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
			if want := B * H * (S - T) * hd; untouched != want {
				t.Errorf("%d cache entries untouched, want %d (positions outside pos0 .. pos0+T-1)", untouched, want)
			}
		})
	}
}

// TestMatmulTilesValid: the host's constraints accept every multiple of 4 up
// to 16 for TM and TN with BM % TM == BN % TN == 0, and refuse the rest and
// the configurations that need more than 8 vec4 loads of a tile per
// invocation; the default fits lavapipe's and SwiftShader's 32 KiB of
// workgroup memory.
func TestMatmulTilesValid(t *testing.T) {
	for _, tm := range []int{4, 8, 12, 16} {
		for _, tn := range []int{4, 8, 12, 16} {
			c := matmulTiles{BM: 4 * tm, BN: 4 * tn, BK: 8, TM: tm, TN: tn}
			if err := c.valid(); err != nil {
				t.Errorf("%v: %v", c, err)
			}
		}
	}
	for _, c := range []matmulTiles{
		{BM: 64, BN: 64, BK: 8, TM: 20, TN: 4},   // TM above 16
		{BM: 64, BN: 64, BK: 8, TM: 6, TN: 4},    // TM not a multiple of 4
		{BM: 64, BN: 60, BK: 8, TM: 4, TN: 8},    // BN % TN
		{BM: 64, BN: 64, BK: 6, TM: 4, TN: 4},    // BK not a multiple of 4
		{BM: 128, BN: 16, BK: 32, TM: 16, TN: 4}, // 8 x 4 invocations, 1024 vec4s of x's tile
	} {
		if c.valid() == nil {
			t.Errorf("%v: valid, want refused", c)
		}
	}
	if b := defaultMatmulTiles.sharedBytes(); b > 32<<10 {
		t.Errorf("default tiles %v: %d bytes of workgroup memory, more than 32 KiB", defaultMatmulTiles, b)
	}
}

// TestMatmulSharedWorkgroupBytes: the host's sharedBytes, which it checks
// against the device's limit, is the workgroup memory the kernel declares
// once specialized (from the SPIR-V), for every configuration the tests and
// the autotuner use; and each of them reads workgroup memory only as whole
// vec4s, none behind an index clamp (as TestMatmulInnerLoopSPIRV checks for
// the autotuner's).
func TestMatmulSharedWorkgroupBytes(t *testing.T) {
	src, err := Source("matmul_shared.wgsl", false)
	if err != nil {
		t.Fatal(err)
	}
	m, err := wgsl.Compile("matmul_shared.wgsl", src, wgsl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range sharedCases() {
		sp, err := m.Specialize("main", c.t.constants())
		if err != nil {
			t.Fatal(err)
		}
		if got, want := workgroupBytes(t, sp.SPIRV), c.t.sharedBytes(); got != want {
			t.Errorf("%v: the kernel declares %d bytes of workgroup memory, sharedBytes says %d", c.t, got, want)
		}
		if got, want := int(sp.WorkgroupSize[0]), c.t.invocations(); got != want {
			t.Errorf("%v: workgroup size %d, invocations says %d", c.t, got, want)
		}
		if vec, scalar, _, clamped, _ := workgroupLoads(sp.SPIRV); vec == 0 || scalar != 0 || clamped != 0 {
			t.Errorf("%v: %d vec4 and %d scalar workgroup loads, %d clamped: want vec4 only, none clamped", c.t, vec, scalar, clamped)
		}
	}
}

// workgroupBytes is the size of the workgroup variables of a SPIR-V module
// whose types are scalars, vectors and arrays of constant length.
func workgroupBytes(t *testing.T, words []uint32) int {
	const (
		opTypeInt, opTypeFloat, opTypeVector, opTypeArray = 21, 22, 23, 28
		opConstant, opTypePointer, opVariable             = 43, 32, 59
	)
	size := map[uint32]int{}    // type id -> bytes
	consts := map[uint32]int{}  // constant id -> value
	pointee := map[uint32]int{} // workgroup pointer type id -> pointee bytes
	total := 0
	for i := 5; i < len(words); {
		op, n := words[i]&0xffff, int(words[i]>>16)
		if n == 0 || i+n > len(words) {
			t.Fatalf("malformed SPIR-V at word %d", i)
		}
		w := words[i : i+n]
		switch op {
		case opTypeInt, opTypeFloat:
			size[w[1]] = int(w[2]) / 8
		case opTypeVector:
			size[w[1]] = size[w[2]] * int(w[3])
		case opTypeArray:
			size[w[1]] = size[w[2]] * consts[w[3]]
		case opConstant:
			consts[w[2]] = int(w[3])
		case opTypePointer:
			if w[2] == spvWorkgroup {
				pointee[w[1]] = size[w[3]]
			}
		case opVariable:
			if w[3] == spvWorkgroup {
				total += pointee[w[1]]
			}
		}
		i += n
	}
	return total
}

// TestMatmulFor: the host's choice of matmul kernel. On GPUs matmul_shared
// with the tuned tiles, or the device's default where the tuned ones do not
// fit its workgroup memory; the dispatch geometry follows the constants the
// pipeline gets; VEC only where K and N are multiples of 4; matmul.wgsl for
// other K, N when the buffers do not hold x's or w's last partial vec4 whole,
// and on software adapters.
func TestMatmulFor(t *testing.T) {
	d := newTestDev(t)
	g := &GPT2{dev: d.dev, sharedMatmul: true, tiles: defaultMatmulTiles, matmulShared: &Kernel{}, matmul: &Kernel{}}
	big := matmulTiles{BM: 128, BN: 128, BK: 64, TM: 8, TN: 8} // 130 KiB of workgroup memory
	small := matmulTiles{BM: 64, BN: 32, BK: 8, TM: 4, TN: 4}
	g.tuned = map[string]TuneChoice{
		tuneKey(false, 200, 96, 64): {Tiles: small.constants()},
		tuneKey(false, 200, 64, 96): {Tiles: big.constants()},
	}
	for _, c := range []struct {
		M, K, N        int
		xBytes, wBytes uint64
		shared         bool
		tiles          matmulTiles
		vec            float64
	}{
		{200, 64, 96, 4 * 200 * 64, 4 * 64 * 96, true, small, 1},
		{200, 96, 64, 4 * 200 * 96, 4 * 96 * 64, true, defaultMatmulTiles, 1}, // big does not fit
		{37, 45, 70, 16 * 417, 16 * 788, true, defaultMatmulTiles, 0},         // whole vec4s
		{37, 45, 70, 4 * 37 * 45, 16 * 788, false, matmulTiles{}, 0},          // x's last vec4 partial
		{37, 44, 70, 4 * 37 * 44, 4 * 44 * 70, true, defaultMatmulTiles, 0},   // K*N % 4 == 0
	} {
		mm := g.matmulFor(c.M, c.K, c.N, c.xBytes, c.wBytes)
		if !c.shared {
			if mm.k != g.matmul || mm.consts != consts("WG", matmulWG) || mm.work(c.M, c.N) != perInvocation(ceilDiv(c.M, 4)*ceilDiv(c.N, 4)) {
				t.Errorf("%+v: want matmul.wgsl with WG %d, got %+v", c, matmulWG, mm)
			}
			continue
		}
		if c.tiles.fits(d.dev) != nil {
			t.Fatalf("%v does not fit the test device", c.tiles)
		}
		want := c.tiles.constants()
		want["VEC"] = c.vec
		if ws, _ := constsOf(want); mm.k != g.matmulShared || mm.consts != ws {
			t.Errorf("%+v: matmul_shared with %v, got %v", c, want, mm.consts)
		}
		if got, want := mm.work(c.M, c.N), perWorkgroup(ceilDiv(c.M, c.tiles.BM)*ceilDiv(c.N, c.tiles.BN)); got != want {
			t.Errorf("%+v: %+v workgroups, want %+v", c, got, want)
		}
	}
	g.sharedMatmul = false
	if mm := g.matmulFor(200, 64, 96, 1<<20, 1<<20); mm.k != g.matmul {
		t.Errorf("software adapter: got matmul_shared")
	}
}
