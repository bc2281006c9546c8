package exectest

import (
	"slices"
	"testing"
)

// constIndexKernel indexes runtime-sized arrays with constants past their
// bindings' ends: a bare array, the last member of a struct and an array of
// vectors, in loads and stores. Clamped (WGSL lets an implementation clamp
// an out-of-bounds index), each access lands on the array's last element.
const constIndexKernel = `
struct Tail { n: u32, data: array<f32> }
@group(0) @binding(0) var<storage, read_write> o: array<f32>;        // 4 bound
@group(0) @binding(1) var<storage, read_write> near: array<f32>;     // 4 bound
@group(0) @binding(2) var<storage, read_write> s: Tail;              // n and 3 bound
@group(0) @binding(3) var<storage, read_write> v: array<vec2<f32>>;  // 2 bound
@compute @workgroup_size(1)
fn main() {
	o[1000000] = 1.0;
	near[5] = 2.0;
	s.data[6] = s.data[1000000] + 10.0;
	v[4] = v[9] * 2.0 + vec2(0.5);
}`

// TestConstIndexClamped runs constIndexKernel with 16 bytes of each buffer
// bound and sentinels (-1) after them: every store goes to the last bound
// element and no sentinel changes.
func TestConstIndexClamped(t *testing.T) {
	const x = -1 // a sentinel past the binding's end
	d := newDevice(t)
	d.bound = []uint64{16, 16, 16, 16}
	out := d.run(t, constIndexKernel, nil, nil, [3]uint32{1, 1, 1},
		f32s(0, 0, 0, 0, x, x, x, x),
		f32s(0, 0, 0, 0, x, x, x, x),
		append(u32s(3), f32s(5, 6, 7, x, x, x, x)...),
		f32s(1, 2, 3, 4, x, x, x, x))
	for i, want := range [][]float32{
		{0, 0, 0, 1, x, x, x, x},
		{0, 0, 0, 2, x, x, x, x},
		{5, 6, 17, x, x, x, x},
		{1, 2, 6.5, 8.5, x, x, x, x},
	} {
		got := getF32(out[i])
		if i == 2 {
			if n := getU32(out[i][:4])[0]; n != 3 {
				t.Errorf("s.n = %d, want 3", n)
			}
			got = got[1:]
		}
		if !slices.Equal(got, want) {
			t.Errorf("binding %d: %v, want %v", i, got, want)
		}
	}
}

// dynVectorKernel indexes vector and matrix values, and a vector in function
// memory, with run-time indices past their ends (j = 7, and i = -1, which is
// 0xFFFFFFFF as a u32): each is clamped to the last component or column.
const dynVectorKernel = `
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
@group(0) @binding(1) var<storage, read> idx: array<i32>;
@compute @workgroup_size(1)
fn main() {
	let j = u32(idx[0]);
	let i = idx[1];
	let v = vec4(1.0, 2.0, 3.0, 4.0);
	let m = mat3x2(10.0, 20.0, 30.0, 40.0, 50.0, 60.0);
	var w = vec3(7.0, 8.0, 9.0);
	o[0] = v[j];
	o[1] = v[i];
	o[2] = m[j][i];
	o[3] = (v * 2.0)[j];
	w[i] = 5.0;
	o[4] = w[2];
	o[5] = v[idx[2]];
}`

// TestDynamicVectorIndexClamped runs dynVectorKernel: every out-of-range
// index reads (or writes) the last component or column, and an in-range one
// (idx[2] = 1) reads its own.
func TestDynamicVectorIndexClamped(t *testing.T) {
	d := newDevice(t)
	out := d.run(t, dynVectorKernel, nil, nil, [3]uint32{1, 1, 1}, f32s(0, 0, 0, 0, 0, 0), i32s(7, -1, 1))
	if got, want := getF32(out[0]), []float32{4, 4, 60, 8, 5, 2}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
