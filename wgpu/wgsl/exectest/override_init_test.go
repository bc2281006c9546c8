package exectest

import (
	"math"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// TestComputedOverridesAndPrivateInit sets overrides at pipeline creation and
// checks, against Go, overrides computed from them with float arithmetic,
// builtins, conversions and bools (computed in the shader), and private
// variables initialized from override-expressions (issue 8, item 8).
func TestComputedOverridesAndPrivateInit(t *testing.T) {
	d := newDevice(t, wgpu.FeatureShaderF16)
	src := `enable f16;
override scale: f32 = 0.5;
override bias = scale * 3.0 - 1.0;
override root = sqrt(abs(bias)) + f32(N);
override N: u32 = 4;
override N2 = N * 2u;
override half_scale = f16(scale) * 2.0h;
override flag: bool = true;
override both = flag && root > 1.0;
override big = select(1.0, 2.0, both);
override steps = u32(big * 3.0) + N2;
override k: u32 = 3;
override t = scale * scale;
var<private> a: u32 = k;
var<private> b = k * 2u + 1u;
var<private> d = t + 1.0;
var<private> e = vec2(scale, 2.0 * scale);
var<private> g: array<f32, 2> = array(t, bias);
var<workgroup> w: array<f32, N2>;
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
fn f() -> f32 { return root + big; }
fn bump() { d += 1.0; }
@compute @workgroup_size(N2) fn main(@builtin(local_invocation_index) li: u32) {
	w[li] = bias + f32(li);
	bump();
	workgroupBarrier();
	o[16u + li] = f() + w[li];
	if li == 0u {
		o[0] = bias; o[1] = root; o[2] = f32(N2); o[3] = f32(half_scale); o[4] = select(0.0, 1.0, both);
		o[5] = big; o[6] = f32(steps); o[7] = f32(a); o[8] = f32(b); o[9] = d; o[10] = e.x; o[11] = e.y;
		o[12] = g[0]; o[13] = g[1]; o[14] = w[N2 - 1u];
	}
}`
	for _, c := range []struct {
		scale float32
		n, k  uint32
		flag  bool
	}{{0.25, 3, 5, true}, {0.5, 2, 1, false}} {
		flag := 0.0
		if c.flag {
			flag = 1
		}
		consts := map[string]float64{"scale": float64(c.scale), "N": float64(c.n), "k": float64(c.k), "flag": flag}
		bias := c.scale*3 - 1
		root := float32(math.Sqrt(math.Abs(float64(bias)))) + float32(c.n)
		n2 := 2 * c.n
		both := c.flag && root > 1
		big := float32(1)
		if both {
			big = 2
		}
		steps := uint32(big*3) + n2
		tt := c.scale * c.scale
		want := []float32{bias, root, float32(n2), c.scale * 2, 0, big, float32(steps), float32(c.k),
			float32(2*c.k + 1), tt + 2, c.scale, 2 * c.scale, tt, bias, bias + float32(n2-1), 0}
		if both {
			want[4] = 1
		}
		for li := range n2 {
			want = append(want, root+big+bias+float32(li))
		}
		out := d.run(t, src, consts, nil, one, make([]byte, 4*len(want)))
		got := getF32(out[0])
		for i, w := range want {
			// sqrt may be a few ulp off on a GPU; the rest is exact.
			if !close(float64(got[i]), float64(w), 1e-6) {
				t.Errorf("%+v: o[%d] = %g, want %g", c, i, got[i], w)
			}
		}
	}
}
