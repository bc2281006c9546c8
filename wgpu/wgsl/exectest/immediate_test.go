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

// TestSwizzleAssignment assigns to swizzles in function and storage memory,
// through a pointer and with compound assignment; components not named keep
// their values.
func TestSwizzleAssignment(t *testing.T) {
	d := newDevice(t)
	src := `
@group(0) @binding(0) var<storage, read_write> o: array<vec4<i32>>;
fn put(p: ptr<function, vec3<i32>>) { p.zx = vec2(5, 6); }
@compute @workgroup_size(1) fn main() {
	var v = vec4(1, 2, 3, 4);
	v.wy = vec2(10, 20);
	v.xz -= vec2(100, 200);
	o[0] = v;
	var w = vec3(7, 8, 9);
	put(&w);
	o[1] = vec4(w, 0);
	o[2].zy = vec2(30, 40);
	o[3].xw *= vec2(2, -3);
}`
	in := []int32{0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}
	out := d.run(t, src, nil, nil, one, i32s(in...))
	got := getI32(out[0])
	want := []int32{1 - 100, 20, 3 - 200, 10, 6, 8, 5, 0, 1, 40, 30, 4, 10, 6, 7, -24}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("o[%d][%d] = %d, want %d", i/4, i%4, got[i], w)
		}
	}
}

// TestPhonyPointer: `_ = &a[f()]` still calls f, and `_ = p` of a pointer to
// a uniform matrix split into columns compiles.
func TestPhonyPointer(t *testing.T) {
	d := newDevice(t)
	src := `@group(0) @binding(0) var<uniform> u: mat2x2<f32>;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
fn f(p: ptr<uniform, mat2x2<f32>>) -> f32 { _ = p; return (*p)[1].x; }
fn next() -> u32 { o[0] += 1.0; return 1u; }
@compute @workgroup_size(1) fn main() { var a: array<f32, 2>; _ = &a[next()]; _ = &a[next()]; o[1] = f(&u); }`
	out := d.run(t, src, nil, nil, one, f32s(1, 2, 3, 4), make([]byte, 8))
	if got := getF32(out[1]); got[0] != 2 || got[1] != 3 {
		t.Errorf("o = %v, want [2 3]", got)
	}
}
