package exectest

import (
	"math"
	"testing"
)

func TestMatrices(t *testing.T) {
	d := newDevice(t)
	src := `
struct T { a: f32, m: mat3x3<f32>, k: mat2x4<f32> }
@group(0) @binding(0) var<storage, read> t: T;
@group(0) @binding(1) var<uniform> u: mat4x4<f32>;
@group(0) @binding(2) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(1)
fn main() {
	let m = t.m;
	let v = vec3(1.0, 2.0, 3.0);
	let mv = m * v;                 // columns combination
	let vm = v * m;                 // dot with columns
	let mm = m * transpose(m);
	var k = 0u;
	o[k] = mv.x; k++; o[k] = mv.y; k++; o[k] = mv.z; k++;
	o[k] = vm.x; k++; o[k] = vm.z; k++;
	o[k] = mm[1][2]; k++;
	o[k] = determinant(m); k++;
	o[k] = (u * vec4(1.0, 0.0, 0.0, 1.0)).w; k++;
	o[k] = (t.k * vec2(1.0, -1.0)).y; k++;
	var w = m;
	w[2][1] = 100.0;
	w = w + m * 2.0 - m * -1.0;
	o[k] = w[2].y; k++;
	o[k] = t.a;
}`
	// T layout: a@0, m@16 (3 columns, stride 16), k@64 (2 columns of vec4, stride 16); size 96.
	M := [3][3]float32{{1, 2, 3}, {4, 5, 7}, {6, 0, 9}} // M[col][row]
	K := [2][4]float32{{1, 2, 3, 4}, {5, 6, 7, 8}}
	buf := make([]byte, 96)
	copy(buf[0:], f32s(0.5))
	for c := range 3 {
		copy(buf[16+16*c:], f32s(M[c][0], M[c][1], M[c][2]))
	}
	for c := range 2 {
		copy(buf[64+16*c:], f32s(K[c][0], K[c][1], K[c][2], K[c][3]))
	}
	U := make([]float32, 16)
	for i := range U {
		U[i] = float32(i) // U[col*4+row]
	}
	out := d.run(t, src, nil, nil, one, buf, f32s(U...), make([]byte, 4*11))
	o := getF32(out[2])
	v := [3]float64{1, 2, 3}
	var mv, vm [3]float64
	for r := range 3 {
		for c := range 3 {
			mv[r] += float64(M[c][r]) * v[c]
			vm[c] += v[r] * float64(M[c][r])
		}
	}
	// (M * M^T)[col 1][row 2] = sum_k M[k][2] * M^T[1][k] = sum_k M[k][2]*M[k][1]
	mm12 := 0.0
	for k := range 3 {
		mm12 += float64(M[k][2]) * float64(M[k][1])
	}
	det := float64(M[0][0])*(float64(M[1][1])*float64(M[2][2])-float64(M[2][1])*float64(M[1][2])) -
		float64(M[1][0])*(float64(M[0][1])*float64(M[2][2])-float64(M[2][1])*float64(M[0][2])) +
		float64(M[2][0])*(float64(M[0][1])*float64(M[1][2])-float64(M[1][1])*float64(M[0][2]))
	uw := float64(U[3] + U[15])      // (U * (1,0,0,1)).w = U[0][3] + U[3][3]
	ky := float64(K[0][1] - K[1][1]) // (K * (1,-1)).y
	w21 := 100 + 2*float64(M[2][1]) + float64(M[2][1])
	want := []float64{mv[0], mv[1], mv[2], vm[0], vm[2], mm12, det, uw, ky, w21, 0.5}
	for i, w := range want {
		if math.Abs(float64(o[i])-w) > 1e-4*math.Max(1, math.Abs(w)) {
			t.Errorf("o[%d] = %g, want %g", i, o[i], w)
		}
	}
}
