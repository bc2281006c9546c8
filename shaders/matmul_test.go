package shaders

import (
	"fmt"
	"math"
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

// TestMatmul compares matmul.wgsl with refops.Matmul (then refops.GELU or
// refops.GELUErf, or plus the residual) for every epilogue, both weight types and two workgroup
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

// TestGELUErfAccuracy: the exact-GELU epilogue (erfc by Numerical Recipes'
// fit, fractional error below 1.2e-7) on 4001 points of [-12, 12] (through
// matmul.wgsl with K = 1 and w = 1, so y is x exactly) against float64
// x·Φ(x): within 1e-6 relative (lavapipe and SwiftShader: 5.3e-7 for
// x > -2; WGSL allows exp 3 + 2|x| ulp, and GPUs' approximate exp2 is
// within some 2.4e-7) plus 1e-8·|x|. The absolute term covers the tail (x
// below -3), whose values f32's exp loses relative digits of (lavapipe's
// are off by 1e-6 there), a sixth of what f32 gelu_new's 1 + tanh loses
// there (6e-8·|x|). And it is not gelu_new (which differs by up to 5e-4).
func TestGELUErfAccuracy(t *testing.T) {
	d := newTestDev(t)
	k, err := NewKernel(d.dev, "matmul.wgsl", false)
	if err != nil {
		t.Fatal(err)
	}
	const M = 4001
	x := make([]float32, M)
	for i := range x {
		x[i] = float32(-12 + 24*float64(i)/(M-1))
	}
	p, err := k.Pipeline(map[string]float64{"WG": 64, "EPI": float64(epiGELUErf)})
	if err != nil {
		t.Fatal(err)
	}
	out := d.buffer(t, "out", make([]byte, 4*M))
	d.run(t, p, map[string]Buf{
		"x": {Buffer: d.buffer(t, "x", f32Bytes(x))}, "w": {Buffer: d.buffer(t, "w", f32Bytes([]float32{1}))},
		"bias": {Buffer: d.buffer(t, "bias", f32Bytes([]float32{0}))}, "out": {Buffer: out},
	}, Params{"M": M, "N": 1, "K": 1}, matmulGroups(M, 1, 64, 65535))
	got := d.readF32(t, out, M)
	var worst, apart float64
	for i, v := range x {
		want := refops.GELUErf(float64(v))
		e := math.Abs(float64(got[i]) - want)
		if e > 1e-6*math.Abs(want)+1e-8*math.Abs(float64(v)) {
			t.Errorf("geluErf(%v) = %v, want %v (relative error %.2g)", v, got[i], want, e/math.Abs(want))
		}
		if v > -2 && want != 0 {
			worst = max(worst, e/math.Abs(want))
		}
		apart = max(apart, math.Abs(float64(got[i])-refops.GELU(float64(v))))
	}
	t.Logf("largest relative error for x > -2: %.2g; largest difference from gelu_new %.2g", worst, apart)
	if apart < 1e-4 {
		t.Errorf("the exact GELU is within %.2g of gelu_new everywhere: not the erf form", apart)
	}
}
