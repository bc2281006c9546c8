package exectest

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// TestNarrowMatrices reads matrices whose columns are less than 16 bytes
// apart (matCx2<f32>, f16 matrices) from uniform buffers, as struct members,
// array elements and a whole buffer, by whole loads, constant and run-time
// indices and pointer parameters, and writes them to a storage buffer, all
// against the WGSL layout computed here (issue 8, item 8).
func TestNarrowMatrices(t *testing.T) {
	d := newDevice(t, wgpu.FeatureShaderF16)
	src := `enable f16;
struct M { a: vec2<f32>, m: mat3x2<f32>, x: f32, h: mat2x3<f16>, k: mat4x2<f16> }
struct U { s: M, @align(16) arr: array<mat2x2<f32>, 3>, harr: array<mat4x2<f16>, 2>, last: f32 }
struct S { a: f32, m: mat2x2<f32>, h: mat2x3<f16>, n: mat3x2<f32> }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<uniform> top: mat3x2<f32>;
@group(0) @binding(2) var<storage, read> ks: array<u32>;
@group(0) @binding(3) var<storage, read_write> st: S;
@group(0) @binding(4) var<storage, read_write> o: array<f32>;
var<private> n: u32;
fn put(v: f32) { o[n] = v; n++; }
fn put2(v: vec2<f32>) { put(v.x); put(v.y); }
fn col(p: ptr<uniform, mat3x2<f32>>, i: u32) -> vec2<f32> { return (*p)[i]; }
fn whole(p: ptr<uniform, mat2x2<f32>>) -> mat2x2<f32> { return *p; }
@compute @workgroup_size(1) fn main() {
	let s = u.s;
	put2(s.a);
	for (var c = 0; c < 3; c++) { put2(s.m[c]); }
	put(s.x);
	for (var c = 0; c < 2; c++) { let v = vec3<f32>(s.h[c]); put(v.x); put(v.y); put(v.z); }
	for (var c = 0; c < 4; c++) { put2(vec2<f32>(s.k[c])); }
	let a = u.arr;
	for (var i = 0; i < 3; i++) { put2(a[i][0]); put2(a[i][1]); }
	for (var i = 0u; i < 3u; i++) {
		let k = ks[i];
		put2(u.s.m[k]); put(u.arr[k][ks[i + 1u] % 2u].y); put(f32(u.harr[k % 2u][k].y));
	}
	put(u.last); put(f32(u.s.k[2].y)); put(u.arr[2][1][1]);
	put2(u.s.m * vec3(1.0, 2.0, 3.0)); put2(top * vec3(1.0, -1.0, 0.5)); put2(vec2(1.0, 2.0) * u.arr[1]);
	put2(col(&u.s.m, ks[0])); put2(col(&top, 2u)); put2(whole(&u.arr[ks[1]])[1]);
	let p = &u.s.m;
	put(p[ks[2]].x); put((*p)[2][1]);
	st.m = u.arr[2]; st.h = u.s.h; st.n = top; st.n[1] = st.m[0] + top[1]; st.a = st.n[2].y;
}`
	type mat [][]float64 // [column][row]
	newMat := func(cols, rows int, f func(c, r int) float64) mat {
		m := make(mat, cols)
		for c := range m {
			m[c] = make([]float64, rows)
			for r := range m[c] {
				m[c][r] = f(c, r)
			}
		}
		return m
	}
	a := []float64{0.5, 1.5}
	sm := newMat(3, 2, func(c, r int) float64 { return 10 + 2*float64(c) + float64(r) })
	x := 7.25
	sh := newMat(2, 3, func(c, r int) float64 { return 0.5*float64(3*c+r) - 1 })
	sk := newMat(4, 2, func(c, r int) float64 { return 2 + 0.25*float64(2*c+r) })
	arr := make([]mat, 3)
	for i := range arr {
		arr[i] = newMat(2, 2, func(c, r int) float64 { return 20 + 4*float64(i) + 2*float64(c) + float64(r) })
	}
	harr := make([]mat, 2)
	for i := range harr {
		harr[i] = newMat(4, 2, func(c, r int) float64 { return -3 + 0.5*float64(8*i+2*c+r) })
	}
	last := 99.5
	top := newMat(3, 2, func(c, r int) float64 { return 0.125 - float64(2*c+r) })

	// U's WGSL layout: s.a@0, s.m@8 (stride 8), s.x@32, s.h@40 (stride 8),
	// s.k@56 (stride 4); arr@80 (element stride 16, column stride 8),
	// harr@128 (stride 16, columns 4), last@160; size 176.
	ub := make([]byte, 176)
	f32at := func(b []byte, off int, v float64) {
		binary.LittleEndian.PutUint32(b[off:], math.Float32bits(float32(v)))
	}
	f16at := func(b []byte, off int, v float64) { binary.LittleEndian.PutUint16(b[off:], toF16(float32(v))) }
	putMat := func(b []byte, off int, m mat, stride, size int, put func([]byte, int, float64)) {
		for c := range m {
			for r, v := range m[c] {
				put(b, off+c*stride+r*size, v)
			}
		}
	}
	f32at(ub, 0, a[0])
	f32at(ub, 4, a[1])
	putMat(ub, 8, sm, 8, 4, f32at)
	f32at(ub, 32, x)
	putMat(ub, 40, sh, 8, 2, f16at)
	putMat(ub, 56, sk, 4, 2, f16at)
	for i := range arr {
		putMat(ub, 80+16*i, arr[i], 8, 4, f32at)
	}
	for i := range harr {
		putMat(ub, 128+16*i, harr[i], 4, 2, f16at)
	}
	f32at(ub, 160, last)
	tb := make([]byte, 24)
	putMat(tb, 0, top, 8, 4, f32at)
	ks := []uint32{2, 0, 1, 1}

	mulMV := func(m mat, v []float64) []float64 {
		out := make([]float64, len(m[0]))
		for c := range m {
			for r := range out {
				out[r] += m[c][r] * v[c]
			}
		}
		return out
	}
	var want []float64
	want = append(want, a...)
	for c := range 3 {
		want = append(want, sm[c]...)
	}
	want = append(want, x)
	for c := range 2 {
		want = append(want, sh[c]...)
	}
	for c := range 4 {
		want = append(want, sk[c]...)
	}
	for i := range 3 {
		want = append(want, arr[i][0]...)
		want = append(want, arr[i][1]...)
	}
	for i := range 3 {
		k := ks[i]
		want = append(want, sm[k]...)
		want = append(want, arr[k][ks[i+1]%2][1], harr[k%2][k][1])
	}
	want = append(want, last, sk[2][1], arr[2][1][1])
	want = append(want, mulMV(sm, []float64{1, 2, 3})...)
	want = append(want, mulMV(top, []float64{1, -1, 0.5})...)
	want = append(want, 1*arr[1][0][0]+2*arr[1][0][1], 1*arr[1][1][0]+2*arr[1][1][1]) // v * M: dot with columns
	want = append(want, sm[ks[0]]...)
	want = append(want, top[2]...)
	want = append(want, arr[ks[1]][1]...)
	want = append(want, sm[ks[2]][0], sm[2][1])

	out := d.run(t, src, nil, nil, one, ub, tb, u32s(ks...), make([]byte, 64), make([]byte, 4*len(want)))
	got := getF32(out[4])
	for i, w := range want {
		if float64(got[i]) != w {
			t.Errorf("o[%d] = %g, want %g", i, got[i], w)
		}
	}
	// S's WGSL layout: a@0, m@8 (stride 8), h@24 (stride 8), n@40 (stride 8).
	sb := out[3]
	f32of := func(off int) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(sb[off:]))) }
	f16of := func(off int) float64 { return float64(fromF16(binary.LittleEndian.Uint16(sb[off:]))) }
	stn := newMat(3, 2, func(c, r int) float64 { return top[c][r] })
	stn[1][0] += arr[2][0][0]
	stn[1][1] += arr[2][0][1]
	check := func(what string, got, want float64) {
		if got != want {
			t.Errorf("st.%s = %g, want %g", what, got, want)
		}
	}
	check("a", f32of(0), top[2][1])
	for c := range 2 {
		for r := range 2 {
			check("m", f32of(8+8*c+4*r), arr[2][c][r])
		}
		for r := range 3 {
			check("h", f16of(24+8*c+2*r), sh[c][r])
		}
	}
	for c := range 3 {
		for r := range 2 {
			check("n", f32of(40+8*c+4*r), stn[c][r])
		}
	}
}
