package exectest

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// TestBigCopies copies arrays and structs too large to rebuild inline (the
// compiler copies them element by element in a loop, see wgsl's
// emit_copy.go) whole between buffers and values, both ways: loads into a
// let and a var, stores of a whole value, a value parameter and return,
// lets bound to results and to other lets, nested arrays, a uniform struct with narrow matrices, run-time indices
// into the copies; all checked against the WGSL layout computed here
// (issue 8, huge_buffer_copy).
func TestBigCopies(t *testing.T) {
	d := newDevice(t)
	src := `
struct Big { head: u32, v: array<vec3<f32>, 100>, m: array<array<f32, 70>, 3>, tail: f32 }
struct U { s: vec4<f32>, a: array<vec4<f32>, 80>, mats: array<mat2x2<f32>, 70> }
@group(0) @binding(0) var<storage, read> src: Big;
@group(0) @binding(1) var<storage, read_write> dst: array<Big, 2>;
@group(0) @binding(2) var<uniform> u: U;
@group(0) @binding(3) var<storage, read_write> o: array<f32>;
var<workgroup> wb: Big;

fn total(b: Big, i: u32) -> f32 { return b.v[i].y + b.m[i % 3u][i % 70u] + b.tail + f32(b.head); }
fn whole() -> Big { return src; }

@compute @workgroup_size(1) fn main() {
	let i = u32(u.s.x);
	let x = src;
	var y = src;
	y.head += 1u;
	y.v[7].x = -1.0;
	dst[0] = y;
	dst[1] = x;
	var arr = src.m;
	arr[1][3] = 42.0;
	dst[1].m = arr;
	wb = x;
	let uu = u;
	o[0] = total(x, i);
	o[1] = total(src, i + 1u);
	o[2] = uu.a[i].z + uu.mats[i][1][0] + uu.mats[i + 60u][0][1];
	o[3] = x.m[2][i];
	o[4] = arr[1][i] + arr[1][3];
	o[5] = whole().tail + whole().v[i].z;
	o[6] = wb.v[i + 80u].x;
	let z = whole();
	let z2 = z;
	o[7] = z2.v[i + 1u].x + z.tail;
}`
	// Big: head@0; v@16, stride 16; m@1616, inner stride 4 (280 bytes),
	// outer stride 280; tail@2456; size 2460 rounded to align 16: 2464.
	const bigSize, vOff, mOff, tailOff = 2464, 16, 1616, 2456
	vAt := func(j, c int) float32 { return float32(j) + float32(c)/4 }
	mAt := func(a, b int) float32 { return float32(100*a + b) }
	const head, tail = 5, 2.5
	big := make([]byte, bigSize)
	put := func(b []byte, off int, v float32) { binary.LittleEndian.PutUint32(b[off:], math.Float32bits(v)) }
	binary.LittleEndian.PutUint32(big, head)
	for j := range 100 {
		for c := range 3 {
			put(big, vOff+16*j+4*c, vAt(j, c))
		}
	}
	for a := range 3 {
		for b := range 70 {
			put(big, mOff+280*a+4*b, mAt(a, b))
		}
	}
	put(big, tailOff, tail)
	// U: s@0; a@16, stride 16; mats@1296, stride 16 (two 8-byte columns).
	const i = 9
	const uSize, aOff, matsOff = 1296 + 16*70, 16, 1296
	ubuf := make([]byte, uSize)
	put(ubuf, 0, i)
	aAt := func(j, c int) float32 { return float32(1000 + 4*j + c) }
	matAt := func(j, col, row int) float32 { return float32(-(10*j + 2*col + row)) }
	for j := range 80 {
		for c := range 4 {
			put(ubuf, aOff+16*j+4*c, aAt(j, c))
		}
	}
	for j := range 70 {
		for col := range 2 {
			for row := range 2 {
				put(ubuf, matsOff+16*j+8*col+4*row, matAt(j, col, row))
			}
		}
	}
	out := d.run(t, src, nil, nil, one, big, make([]byte, 2*bigSize), ubuf, make([]byte, 4*8))

	want0 := bytes.Clone(big)
	binary.LittleEndian.PutUint32(want0, head+1)
	put(want0, vOff+16*7, -1)
	want1 := bytes.Clone(big)
	put(want1, mOff+280+4*3, 42)
	for k, want := range [][]byte{want0, want1} {
		got := out[1][k*bigSize : (k+1)*bigSize]
		for off := 0; off < bigSize; off += 4 {
			if g, w := got[off:off+4], want[off:off+4]; !bytes.Equal(g, w) {
				t.Errorf("dst[%d] at byte %d: % x, want % x", k, off, g, w)
				break
			}
		}
	}
	total := func(j int) float32 { return vAt(j, 1) + mAt(j%3, j%70) + tail + head }
	wantO := []float32{
		total(i),
		total(i + 1),
		aAt(i, 2) + matAt(i, 1, 0) + matAt(i+60, 0, 1),
		mAt(2, i),
		mAt(1, i) + 42,
		tail + vAt(i, 2),
		vAt(i+80, 0),
		vAt(i+1, 0) + tail,
	}
	for k, g := range getF32(out[3]) {
		if g != wantO[k] {
			t.Errorf("o[%d] = %g, want %g", k, g, wantO[k])
		}
	}
}
