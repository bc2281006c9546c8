package exectest

import (
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// TestNoIndexClamp runs one kernel with and without index clamping
// (wgsl.Options.NoIndexClamp) on in-bounds inputs: both give Go's results.
func TestNoIndexClamp(t *testing.T) {
	src := `
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
var<workgroup> w: array<f32, 64>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32) {
	var a = array<f32, 4>(1.0, 2.0, 3.0, 4.0);
	let m = mat2x2<f32>(5.0, 6.0, 7.0, 8.0);
	let v = vec4<f32>(9.0, 10.0, 11.0, 12.0);
	w[li] = x[li];
	workgroupBarrier();
	o[li] = w[63u - li] + a[li % 4u] + m[li % 2u][(li / 2u) % 2u] + v[li % 4u];
}`
	xs := make([]float32, 64)
	for i := range xs {
		xs[i] = float32(i) * 0.25
	}
	mat := [2][2]float32{{5, 6}, {7, 8}}
	want := make([]float32, 64)
	for li := range 64 {
		want[li] = xs[63-li] + float32(li%4+1) + mat[li%2][(li/2)%2] + float32(9+li%4)
	}
	for _, opt := range []wgsl.Options{{}, {NoIndexClamp: true}} {
		d := newDevice(t)
		d.opt = opt
		got := getF32(d.run(t, src, nil, nil, [3]uint32{1, 1, 1}, f32s(xs...), make([]byte, 4*64))[1])
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%+v: o[%d] = %v, want %v", opt, i, got[i], want[i])
			}
		}
	}
}
