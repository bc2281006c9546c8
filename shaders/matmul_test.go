package shaders

import (
	"fmt"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/refops"
)

// matmulGroups is the dispatch for matmul.wgsl: one invocation per 4x4 tile of
// out, wg per workgroup, at most gx workgroups along x (the kernel flattens
// wid.y * nwg.x + wid.x, so any gx up to 65535 is valid).
func matmulGroups(M, N, wg, gx int) [3]uint32 {
	groups := ceilDiv(ceilDiv(M, 4)*ceilDiv(N, 4), wg)
	gx = min(groups, gx)
	return [3]uint32{uint32(gx), uint32(ceilDiv(groups, gx)), 1}
}

// TestMatmul compares matmul.wgsl with refops.Matmul (then refops.GELU, or
// plus the residual) for every epilogue, both weight types and two workgroup
// sizes, on sizes that are not multiples of the 4x4 tile (M, N and K all
// ragged in one case, small in the other), once with a 2D dispatch. Tolerance
// 1e-5 relative to max(1, |want|): f32 sums of at most 48 products of order 1;
// the f16 reference uses the rounded weights, so the same bound holds.
func TestMatmul(t *testing.T) {
	d := newTestDev(t)
	sizes := []struct{ M, K, N int }{{37, 48, 50}, {5, 20, 12}, {3, 7, 5}}
	for _, f16 := range d.weightTypes() {
		k, err := NewKernel(d.dev, "matmul.wgsl", f16)
		if err != nil {
			t.Fatal(err)
		}
		for si, sz := range sizes {
			M, K, N := sz.M, sz.K, sz.N
			seed := uint64(10 * si)
			x := randF32(seed+1, M*K, 0, 1)
			w, bias := randF32(seed+2, K*N, 0, 0.2), randF32(seed+3, N, 0, 0.1)
			res := randF32(seed+4, M*N, 0, 1)
			wb, bb := weightBytes(w, f16), weightBytes(bias, f16)
			y := refops.Matmul(f64(x), f64(w), f64(bias), M, K, N)
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
				for _, c := range []struct{ wg, gx int }{{64, 65535}, {1, 65535}, {1, 3}} {
					name := fmt.Sprintf("f16=%v/M=%d,K=%d,N=%d/EPI=%d/WG=%d,gx=%d", f16, M, K, N, epi, c.wg, c.gx)
					t.Run(name, func(t *testing.T) {
						p, err := k.Pipeline(map[string]float64{"WG": float64(c.wg), "EPI": float64(epi)})
						if err != nil {
							t.Fatal(err)
						}
						out := d.buffer(t, "out", init)
						d.run(t, p, map[string]Buf{
							"x": {Buffer: d.buffer(t, "x", f32Bytes(x))}, "w": {Buffer: d.buffer(t, "w", wb)},
							"bias": {Buffer: d.buffer(t, "bias", bb)}, "out": {Buffer: out},
						}, Params{"M": float64(M), "N": float64(N), "K": float64(K)}, matmulGroups(M, N, c.wg, c.gx))
						checkClose(t, "matmul", d.readF32(t, out, M*N), want, 1e-5)
					})
				}
			}
		}
	}
}
