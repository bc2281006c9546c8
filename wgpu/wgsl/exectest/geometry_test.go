package exectest

import (
	"math"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// TestGeometryBuiltins runs faceForward, reflect and refract (total internal
// reflection included) on random vectors against float64 formulas.
func TestGeometryBuiltins(t *testing.T) {
	d := newDevice(t)
	src := `
@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> o: array<vec4<f32>>;
@compute @workgroup_size(8)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
	let i = g.x;
	let a = x[3u * i].xyz;
	let n = normalize(x[3u * i + 1u].xyz);
	let eta = x[3u * i + 2u].x;
	o[3u * i] = vec4(reflect(a, n), 0.0);
	o[3u * i + 1u] = vec4(faceForward(a, n, x[3u * i + 2u].yzw), 0.0);
	o[3u * i + 2u] = vec4(refract(a, n, eta), 0.0);
}`
	const n = 16
	seed := uint32(12345)
	rnd := func() float32 { // deterministic values in [-2, 2)
		seed = seed*1664525 + 1013904223
		return float32(seed>>8)/float32(1<<24)*4 - 2
	}
	in := make([]float32, 12*n)
	for i := range in {
		in[i] = rnd()
	}
	out := d.run(t, src, nil, nil, [3]uint32{n / 8, 1, 1}, f32s(in...), make([]byte, 4*12*n))
	got := getF32(out[1])
	vec := func(k int) []float64 { return []float64{float64(in[4*k]), float64(in[4*k+1]), float64(in[4*k+2])} }
	dot := func(a, b []float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }
	for i := range n {
		a, m, e := vec(3*i), vec(3*i+1), vec(3*i+2)
		l := math.Sqrt(dot(m, m))
		nn := []float64{m[0] / l, m[1] / l, m[2] / l}
		eta := float64(in[4*(3*i+2)])
		d := dot(nn, a)
		var r, f, tr [3]float64
		k := 1 - eta*eta*(1-d*d)
		sign := -1.0
		if dot(nn, []float64{e[1], e[2], float64(in[4*(3*i+2)+3])}) < 0 {
			sign = 1
		}
		for c := range 3 {
			r[c] = a[c] - 2*d*nn[c]
			f[c] = sign * a[c]
			if k >= 0 {
				tr[c] = eta*a[c] - (eta*d+math.Sqrt(k))*nn[c]
			}
		}
		for c := range 3 {
			for j, w := range [][3]float64{r, f, tr} {
				if g := float64(got[4*(3*i+j)+c]); math.Abs(g-w[c]) > 1e-4*math.Max(1, math.Abs(w[c])) {
					t.Errorf("vector %d, builtin %d, component %d: got %g, want %g", i, j, c, g, w[c])
				}
			}
		}
	}
}

// TestQuadOps checks the quad operations against the quad layout: quads
// are groups of four consecutive subgroup invocations.
func TestQuadOps(t *testing.T) {
	d := newDevice(t, wgpu.FeatureSubgroups)
	src := `enable subgroups;
@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(32)
fn main(@builtin(subgroup_invocation_id) sid: u32, @builtin(local_invocation_index) li: u32) {
	let v = sid * 10u + 7u;
	o[5u * li] = quadSwapX(v);
	o[5u * li + 1u] = quadSwapY(vec2(v)).y;
	o[5u * li + 2u] = u32(quadSwapDiagonal(f32(v)));
	o[5u * li + 3u] = bitcast<u32>(quadBroadcast(i32(v), 2));
	o[5u * li + 4u] = sid;
}`
	out := d.run(t, src, nil, nil, one, make([]byte, 4*5*32))
	got := getU32(out[0])
	val := func(sid uint32) uint32 { return sid*10 + 7 }
	for li := range uint32(32) {
		sid := got[5*li+4]
		want := []uint32{val(sid ^ 1), val(sid ^ 2), val(sid ^ 3), val(sid&^3 + 2)}
		for k, w := range want {
			if g := got[5*li+uint32(k)]; g != w {
				t.Errorf("invocation %d (subgroup invocation %d) op %d: got %d, want %d", li, sid, k, g, w)
			}
		}
	}
}
