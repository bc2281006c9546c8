package shaders

import (
	"fmt"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/refops"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// TestRMSNorm compares rmsnorm.wgsl and, on devices with subgroup
// operations, rmsnorm_subgroup.wgsl with refops.RMSNorm for both weight
// types and several workgroup sizes (1: rmsnorm.wgsl's barrier-free form),
// with the rows spread over a 2D grid, on channel counts no workgroup size
// divides: at C 100 the row fits the registers of every workgroup size but
// 1's, at C 1100 none of rmsnorm.wgsl's (16 x 64 values), so its channels
// read again past MAXE * WG are covered (rmsnorm_subgroup.wgsl holds up to
// 8 x WG, so it runs 1100 at 256 only). A rerun gives the same bits.
// Tolerance 2e-5 relative: f32 sums of squares of up to 1100 values and
// inverseSqrt.
func TestRMSNorm(t *testing.T) {
	d := newTestDev(t)
	const rows, eps = 37, 1e-6
	for _, C := range []int{100, 1100} {
		x := randF32(uint64(C)+7, rows*C, 0.3, 2)
		for _, f16 := range d.weightTypes() {
			w := randF32(8, C, 1, 0.2)
			wb := weightBytes(w, f16)
			want := refops.RMSNorm(f64(x), f64(w), rows, C, eps)
			type variant struct {
				file string
				wg   int
			}
			vs := []variant{{"rmsnorm.wgsl", 1}, {"rmsnorm.wgsl", 32}, {"rmsnorm.wgsl", 64}}
			if d.dev.HasFeature(wgpu.FeatureSubgroups) {
				for _, wg := range []int{32, 128, 256} {
					if C <= 8*wg && wg <= int(d.dev.Limits().MaxComputeInvocationsPerWorkgroup) {
						vs = append(vs, variant{"rmsnorm_subgroup.wgsl", wg})
					}
				}
			}
			for _, v := range vs {
				t.Run(fmt.Sprintf("%s/C=%d/f16=%v/WG=%d", v.file, C, f16, v.wg), func(t *testing.T) {
					k, err := NewKernel(d.dev, v.file, f16)
					if err != nil {
						t.Fatal(err)
					}
					p, err := k.Pipeline(map[string]float64{"WG": float64(v.wg)})
					if err != nil {
						t.Fatal(err)
					}
					var got [2][]float32
					for i := range got {
						out := d.buffer(t, "out", make([]byte, 4*rows*C))
						d.run(t, p, map[string]Buf{
							"x": {Buffer: d.buffer(t, "x", f32Bytes(x))}, "w": {Buffer: d.buffer(t, "w", wb)}, "out": {Buffer: out},
						}, Params{"rows": rows, "C": float64(C), "eps": eps}, [3]uint32{10, 4, 1}) // 40 workgroups: 3 past the rows
						got[i] = d.readF32(t, out, rows*C)
					}
					checkClose(t, v.file, got[0], want, 2e-5)
					checkClose(t, "rerun", got[1], f64(got[0]), 0)
				})
			}
		}
	}
}
