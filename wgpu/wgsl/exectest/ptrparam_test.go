package exectest

import (
	"math"
	"testing"
)

// TestPointerParameters runs helper functions that take pointers into
// workgroup, storage, uniform, private and function memory, to elements and
// members as well as whole variables (issue 8, item 9), against Go.
func TestPointerParameters(t *testing.T) {
	d := newDevice(t)
	src := `
struct Row { v: array<f32, 4>, s: f32 }
struct Out { rows: array<Row, 2>, sum: array<f32> }
struct Params { scale: vec4<f32>, k: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> o: Out;
@group(0) @binding(2) var<uniform> u: Params;
@group(0) @binding(3) var<storage, read_write> cnt: array<atomic<u32>, 2>;
var<workgroup> wg: array<f32, 64>;
var<private> pv: array<f32, 3>;

// combine: *a += b in workgroup memory. (Two pointers into wg, one written,
// would be invalid aliasing.)
fn combine(a: ptr<workgroup, f32>, b: f32) { *a = *a + b; }
fn reduce(li: u32) {
	for (var s = 32u; s > 0u; s >>= 1u) {
		if li < s { combine(&wg[li], wg[li + s]); }
		workgroupBarrier();
	}
}
fn scaled(p: ptr<uniform, vec4<f32>>, i: u32) -> f32 { return (*p)[i] * 2.0; }
fn put(cell: ptr<storage, f32, read_write>, v: f32) { *cell = v; }
fn putRow(r: ptr<storage, Row, read_write>, c: u32, v: f32) { put(&r.v[c], v); put(&(*r).s, r.v[0] + v); }
fn bumpPriv(p: ptr<private, f32>) { *p += 1.5; }
fn sq(p: ptr<function, f32>) { *p = *p * *p; }
fn tally(c: ptr<storage, atomic<u32>, read_write>) { atomicAdd(c, 1u); }

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>) {
	wg[li] = x[64u * wid.x + li];
	workgroupBarrier();
	reduce(li);
	if li == 0u { o.sum[wid.x] = wg[0]; }
	if wid.x == 0u && li < 8u {
		var tmp = array<f32, 2>(x[li], 0.0);
		sq(&tmp[0]);
		let r = li / 4u;
		putRow(&o.rows[r], li % 4u, tmp[0] + scaled(&u.scale, li % 4u));
	}
	if wid.x == 1u && li == 0u {
		bumpPriv(&pv[u.k]);
		bumpPriv(&pv[u.k]);
		o.sum[2] = pv[u.k] + pv[0];
	}
	tally(&cnt[li % 2u]);
}`
	const groups = 2
	xs := make([]float32, 64*groups)
	for i := range xs {
		xs[i] = float32(i%13) - 4.5
	}
	scale := []float32{0.5, -1, 2, 3}
	params := f32s(append(scale, math.Float32frombits(2), 0, 0, 0)...)
	outBytes := 4 * (2*5 + 3)
	res := d.run(t, src, nil, nil, [3]uint32{groups, 1, 1}, f32s(xs...), make([]byte, outBytes), params, make([]byte, 8))
	out := getF32(res[1])
	for g := range groups {
		want := float32(0)
		for i := range 64 {
			want += xs[64*g+i]
		}
		if got := out[10+g]; math.Abs(float64(got-want)) > 1e-4 {
			t.Errorf("workgroup %d sum = %v, want %v", g, got, want)
		}
	}
	for li := range 8 {
		r, c := li/4, li%4
		v := xs[li]*xs[li] + scale[c]*2
		if got := out[5*r+c]; got != v {
			t.Errorf("rows[%d].v[%d] = %v, want %v", r, c, got, v)
		}
	}
	// Each row's s is written by all four invocations of the row; any of them may win.
	for r := range 2 {
		ok := false
		for c := range 4 {
			li := 4*r + c
			v := xs[li]*xs[li] + scale[c]*2
			if out[5*r+4] == out[5*r]+v || out[5*r+4] == xs[4*r]*xs[4*r]+scale[0]*2+v {
				ok = true
			}
		}
		if !ok {
			t.Errorf("rows[%d].s = %v: no invocation's value", r, out[5*r+4])
		}
	}
	if got := out[12]; got != 3 {
		t.Errorf("private element through pointers = %v, want 3", got)
	}
	if got := getU32(res[3]); got[0] != 64 || got[1] != 64 {
		t.Errorf("atomic counters through pointers = %v, want [64 64]", got)
	}
}

// TestRuntimeArraysThroughPointers passes runtime-sized buffer arrays to
// functions by pointer: indexed (clamped to the buffer's arrayLength, as
// when indexed directly) and measured with arrayLength through the pointer.
func TestRuntimeArraysThroughPointers(t *testing.T) {
	d := newDevice(t)
	src := `
struct Buf { n: u32, data: array<vec2<f32>> }
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read> s: Buf;
fn total(p: ptr<storage, array<f32>, read_write>, start: u32) -> f32 {
	var t = 0.0;
	for (var i = start; i < arrayLength(p); i++) { t += p[i]; }
	return t;
}
fn last(p: ptr<storage, array<vec2<f32>>>) -> vec2<f32> { return (*p)[arrayLength(p) - 1u]; }
fn put(p: ptr<storage, array<f32>, read_write>, i: u32, v: f32) { (*p)[i] = v; }
@compute @workgroup_size(1) fn main() {
	let sum = total(&a, 3u);
	put(&a, 0u, sum);
	put(&a, 1u, last(&s.data).y + f32(arrayLength(&s.data)));
	let q = &s.data;
	put(&a, 2u, q[s.n].x);
	put(&a, 1000u, -1.0); // clamped to the last element
}`
	as := []float32{0, 0, 0, 1.5, 2.25, -3, 4, 8}
	data := []float32{10, 11, 12, 13, 14, 15}
	sb := append(u32s(1, 0), f32s(data...)...)
	out := d.run(t, src, nil, nil, one, f32s(as...), sb)
	got := getF32(out[0])
	want := append([]float32(nil), as...)
	want[0] = 1.5 + 2.25 - 3 + 4 + 8
	want[1] = data[5] + 3
	want[2] = data[2]
	want[7] = -1
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("a[%d] = %g, want %g", i, got[i], want[i])
		}
	}
}
