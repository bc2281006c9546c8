package exectest

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// TestStdUniformLayout reads uniform buffers laid out by WGSL's storage rules
// (arrays of f32, vec2 and 8-byte structs, arrays and structs at offsets that
// are not multiples of 16), which need uniformBufferStandardLayout: by
// constant and run-time indices, whole loads and pointer parameters, against
// the layout computed here. wgpu compiles the WGSL itself, so this also checks
// that it enables the feature and tells the compiler.
func TestStdUniformLayout(t *testing.T) {
	d := newDevice(t)
	if info := d.dev.AdapterInfo(); !info.Features.UniformStandardLayout {
		if strings.Contains(info.Name, "llvmpipe") { // lavapipe has it (core in Vulkan 1.2)
			t.Fatalf("%s (Vulkan %s) reports no uniformBufferStandardLayout", info.Name, info.APIVersion)
		}
		t.Skipf("adapter %s lacks uniformBufferStandardLayout", info.Name)
	}
	d.opt = wgsl.Options{UniformStandardLayout: true} // for the reflection
	src := `struct P { x: f32, y: f32 }
struct U { a: f32, v: array<f32, 5>, p: P, w: array<vec2<f32>, 3>, ps: array<P, 2>, b: u32, h: array<vec3<f32>, 2> }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<uniform> arr: array<i32, 6>;
@group(0) @binding(2) var<storage, read> ks: array<u32>;
@group(0) @binding(3) var<storage, read_write> o: array<f32>;
var<private> n: u32;
fn put(v: f32) { o[n] = v; n++; }
fn py(p: ptr<uniform, P>) -> f32 { return (*p).y; }
fn elem(p: ptr<uniform, array<f32, 5>>, i: u32) -> f32 { return p[i]; }
@compute @workgroup_size(1) fn main() {
	for (var i = 0u; i < 5u; i++) { put(u.v[ks[i]]); }
	put(u.a); put(u.p.x); put(u.p.y);
	let whole = u;
	put(whole.v[2]); put(whole.ps[1].y); put(whole.w[2].x);
	for (var i = 0u; i < 3u; i++) { let v = u.w[ks[i] % 3u]; put(v.x); put(v.y); }
	put(py(&u.ps[ks[0] % 2u])); put(py(&u.p)); put(elem(&u.v, ks[1]));
	put(f32(u.b)); put(u.h[1].z); put(u.h[ks[3] % 2u].x);
	for (var i = 0u; i < 6u; i++) { put(f32(arr[ks[i]])); }
	let a = arr;
	put(f32(a[5] - a[0]));
}`
	// U's WGSL layout: a@0, v@4 (stride 4), p@24 (x@24, y@28), w@32
	// (stride 8), ps@56 (stride 8), b@72, h@80 (stride 16); size 112.
	ub := make([]byte, 112)
	putF := func(off int, v float32) { binary.LittleEndian.PutUint32(ub[off:], math.Float32bits(v)) }
	fv := func(off int) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(ub[off:]))) }
	for i := range 28 {
		putF(4*i, 0.5*float32(i)-3)
	}
	binary.LittleEndian.PutUint32(ub[72:], 41)
	arr := []int32{-7, 3, 11, -2, 5, 19}
	ab := make([]byte, 4*len(arr))
	for i, v := range arr {
		binary.LittleEndian.PutUint32(ab[4*i:], uint32(v))
	}
	ks := []uint32{4, 1, 3, 0, 2, 5}
	v := func(i uint32) float64 { return fv(4 + 4*int(i)) }
	var want []float64
	for i := range 5 {
		want = append(want, v(ks[i]))
	}
	want = append(want, fv(0), fv(24), fv(28), v(2), fv(56+8+4), fv(32+16))
	for i := range 3 {
		k := ks[i] % 3
		want = append(want, fv(32+8*int(k)), fv(32+8*int(k)+4))
	}
	want = append(want, fv(56+8*int(ks[0]%2)+4), fv(28), v(ks[1]))
	want = append(want, 41, fv(80+16+8), fv(80+16*int(ks[3]%2)))
	for i := range 6 {
		want = append(want, float64(arr[ks[i]]))
	}
	want = append(want, float64(arr[5]-arr[0]))

	out := d.run(t, src, nil, nil, one, ub, ab, u32s(ks...), make([]byte, 4*len(want)))
	got := getF32(out[3])
	for i, w := range want {
		if float64(got[i]) != w {
			t.Errorf("o[%d] = %g, want %g", i, got[i], w)
		}
	}
}
