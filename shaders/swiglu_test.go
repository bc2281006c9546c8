package shaders

import (
	"fmt"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/refops"
)

// TestMatmulSwiGLU compares the SwiGLU epilogue (epiSwiGLU) of matmul.wgsl
// and matmul_shared.wgsl (the default tiles with vector and element loads,
// and small tiles) with refops.Matmul then refops.SiLU(gate) * up over w's
// interleaved columns (gate 2i, up 2i+1), for both weight types, on sizes
// whose N/2 is odd (the last vec4 of a row holds one pair), whose K and M are
// ragged, and with gates large and negative enough for e^-g to overflow
// (silu is then -0, as the CPU's). out (M, N/2) is followed by guard values
// that must stay; matmul_shared.wgsl's products, added in k order as
// matmul.wgsl's, give the same bits. Tolerance 1e-5 relative to
// max(1, |want|): TestMatmul's sums, then one exp and a division.
func TestMatmulSwiGLU(t *testing.T) {
	d := newTestDev(t)
	sizes := []struct{ M, K, N int }{{37, 48, 52}, {19, 27, 70}, {5, 20, 12}}
	for _, f16 := range d.weightTypes() {
		regs, err := NewKernel(d.dev, "matmul.wgsl", f16)
		if err != nil {
			t.Fatal(err)
		}
		shared, err := NewKernel(d.dev, "matmul_shared.wgsl", f16)
		if err != nil {
			t.Fatal(err)
		}
		for si, sz := range sizes {
			M, K, N := sz.M, sz.K, sz.N
			seed := uint64(200 + 10*si)
			x := randF32(seed+1, ceilDiv(M*K, 4)*4, 0, 1) // whole vec4s, as matmul_shared.wgsl binds x
			x[0] = 400                                    // row 0's gates: some far below -88
			w, bias := randF32(seed+2, ceilDiv(K*N, 4)*4, 0, 0.5), randF32(seed+3, N, 0, 0.1)
			wb, bb := weightBytes(w, f16), weightBytes(bias, f16)
			y := refops.Matmul(f64(x[:M*K]), f64(w[:K*N]), f64(bias), M, K, N)
			want := make([]float64, M*N/2)
			for i := range want {
				want[i] = refops.SiLU(y[2*i]) * y[2*i+1]
			}
			params := Params{"M": float64(M), "N": float64(N), "K": float64(K)}
			run := func(t *testing.T, k *Kernel, consts map[string]float64, groups [3]uint32, shared bool) []float32 {
				t.Helper()
				consts["EPI"] = float64(epiSwiGLU)
				p, err := k.Pipeline(consts)
				if err != nil {
					t.Fatal(err)
				}
				out := d.buffer(t, "out", withGuard(make([]byte, 4*M*N/2), guardOut, false))
				bufs := map[string]Buf{"x": {Buffer: d.buffer(t, "x", f32Bytes(x))}, "w": {Buffer: d.buffer(t, "w", wb)},
					"bias": {Buffer: d.buffer(t, "bias", bb)}, "out": {Buffer: out}}
				pr := params
				if shared {
					// Unused by this epilogue, but read_write: one buffer for both would alias (WebGPU refuses it).
					bufs["kc"] = Buf{Buffer: d.buffer(t, "unused kc", make([]byte, 16))}
					bufs["vc"] = Buf{Buffer: d.buffer(t, "unused vc", make([]byte, 16))}
					pr = Params{"M": float64(M), "N": float64(N), "K": float64(K), "T": 1, "H": 1, "S": 1, "pos0": 0}
				}
				d.run(t, p, bufs, pr, groups)
				got := d.readF32(t, out, M*N/2+guard)
				for i, v := range got[M*N/2:] {
					if v != guardOut {
						t.Fatalf("guard %d after out: %v", i, v)
					}
				}
				return got[:M*N/2]
			}
			var regsOut []float32
			t.Run(fmt.Sprintf("f16=%v/M=%d,K=%d,N=%d/matmul.wgsl", f16, M, K, N), func(t *testing.T) {
				regsOut = run(t, regs, map[string]float64{"WG": matmulWG}, matmulGroups(M, N, matmulWG, 65535), false)
				checkClose(t, "swiglu", regsOut, want, 1e-5)
			})
			for _, c := range []struct {
				t   matmulTiles
				vec int
			}{{defaultMatmulTiles, 1}, {defaultMatmulTiles, 0}, {matmulTiles{BM: 20, BN: 16, BK: 4, TM: 4, TN: 4}, 0}} {
				if c.vec == 1 && (K%4 != 0 || N%4 != 0) {
					continue
				}
				t.Run(fmt.Sprintf("f16=%v/M=%d,K=%d,N=%d/matmul_shared.wgsl/%v,VEC=%d", f16, M, K, N, c.t, c.vec), func(t *testing.T) {
					consts := c.t.constants()
					consts["VEC"] = float64(c.vec)
					got := run(t, shared, consts, sharedGroups(M, N, c.t.BM, c.t.BN, 65535), true)
					checkClose(t, "swiglu", got, want, 1e-5)
					if regsOut != nil {
						sameBits(t, "matmul_shared.wgsl vs matmul.wgsl", got, regsOut)
					}
				})
			}
		}
	}
}
