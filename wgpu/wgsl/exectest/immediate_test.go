package exectest

import "testing"

// TestImmediateAddressSpace reads push constants declared as WGSL's
// var<immediate>.
func TestImmediateAddressSpace(t *testing.T) {
	d := newDevice(t)
	src := `struct PC { n: u32, alpha: f32 }
var<immediate> pc: PC;
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(16) fn main(@builtin(global_invocation_id) gid: vec3<u32>) { if gid.x < pc.n { o[gid.x] *= pc.alpha; } }`
	xs := make([]float32, 16)
	for i := range xs {
		xs[i] = float32(i) - 3.5
	}
	out := d.run(t, src, nil, append(u32s(11), f32s(-2.5)...), one, f32s(xs...))
	got := getF32(out[0])
	for i, x := range xs {
		want := x
		if i < 11 {
			want = x * -2.5
		}
		if got[i] != want {
			t.Errorf("o[%d] = %g, want %g", i, got[i], want)
		}
	}
}
