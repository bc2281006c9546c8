package wgsl

import (
	"slices"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
)

// loopControls are the loop-control operands of a module's OpLoopMerge
// instructions, in the order they appear.
func loopControls(t *testing.T, words []uint32) []uint32 {
	t.Helper()
	const opLoopMerge = 246
	var out []uint32
	for i := 5; i < len(words); {
		n, op := int(words[i]>>16), words[i]&0xffff
		if n == 0 || i+n > len(words) {
			t.Fatalf("malformed instruction at word %d", i)
		}
		if op == opLoopMerge {
			out = append(out, words[i+3])
		}
		i += n
	}
	return out
}

// TestUnrollHint checks that native subgroup matrices get their for loops
// over an array of matrices unrolled by the emitter where the trip count is
// known (consts; overrides once specialized) and the body leaves the loop's
// control alone, LoopControl Unroll where it is not yet known or the body
// breaks, and that lowered matrices and other loops get neither; the native
// module passes the newer spirv-val.
func TestUnrollHint(t *testing.T) {
	src := sgm("override FM: u32 = 2;\nconst FN: u32 = 2u;", `
var acc: array<subgroup_matrix_result<f32, 8, 8>, 4>;
let l = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>>(&a, 0u, false, 8u);
let r = subgroupMatrixLoad<subgroup_matrix_right<f32, 8, 8>>(&a, 64u, false, 8u);
for (var s = 0u; s < wid.x; s++) {
	for (var i = 0u; i < FM; i++) {
		for (var j = 0u; j < FN; j += 1u) {
			acc[i * FN + j] = subgroupMatrixMultiplyAccumulate(l, r, acc[i * FN + j]);
		}
	}
}
for (var q = 0u; q < 4u; q++) { o[q] = 1.0; }
for (var k = 0u; k < 4u; k++) { if wid.y == k { break; } acc[k] = subgroupMatrixMultiply<f32>(l, r); }
var n = 0u;
while n < 4u { subgroupMatrixStore(&o, n * 64u, acc[n], false, 8u); n++; }
for (var i = 3u; i >= 1u; i--) { subgroupMatrixStore(&o, 256u + i * 64u, acc[i], false, 8u); }`)
	native, err := Compile("unroll.wgsl", src, Options{CooperativeMatrix: true})
	if err != nil {
		t.Fatal(err)
	}
	// s (bound wid.x: no), i (FM not yet known: the hint; j inside it
	// unrolled), q (no matrices), k (breaks: the hint), the while loop (not
	// a for loop); the count-down store loop unrolled.
	if got, want := loopControls(t, native.SPIRV), []uint32{0, 1, 0, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("native loop controls %v, want %v", got, want)
	}
	sp, err := native.Specialize("main", map[string]float64{"FM": 2})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := loopControls(t, sp.SPIRV), []uint32{0, 0, 1, 0}; !slices.Equal(got, want) { // i unrolled too
		t.Errorf("specialized loop controls %v, want %v", got, want)
	}
	spirvValNew(t, prereq.SpirvValNew(t), "unroll specialized", sp.SPIRV)
	lowered, err := Compile("unroll.wgsl", src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range loopControls(t, lowered.SPIRV) {
		if c != 0 {
			t.Fatalf("lowered matrices: loop control %d, want none", c)
		}
	}
	spirvValNew(t, prereq.SpirvValNew(t), "unroll", native.SPIRV)
}

// TestUnrollHintRegisters checks loops over small function-scope arrays in
// a module with native matrices: unrolled where the trip count, known once
// the module is specialized, is at most maxUnrollTrips; left alone past it,
// over other memory, before the overrides are known, or with lowered
// matrices for a CPU's driver (Options{}; for a GPU's, see
// TestUnrollRegistersEverywhere).
func TestUnrollHintRegisters(t *testing.T) {
	src := sgm("override XL: u32 = 8;", `
var rx: array<vec4<f32>, 64>;
for (var l = 0u; l < XL; l++) { rx[l] = vec4<f32>(a[l]); }
for (var l = 0u; l < 4u; l += 2u) { rx[l] += vec4<f32>(1.0); }
for (var q = 0u; q < 4u; q++) { o[q] = rx[0].x; }
for (var l = 0u; l < 40u; l++) { o[l] = rx[l].y; }
subgroupMatrixStore(&o, 0u, subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>>(&a, 0u, false, 8u), false, 8u);`)
	m, err := Compile("registers.wgsl", src, Options{CooperativeMatrix: true})
	if err != nil {
		t.Fatal(err)
	}
	// Unspecialized, XL's value is not known: only the 2-trip loop is
	// unrolled; the loops over rx (XL trips), o, and rx (40 trips) remain.
	if got, want := loopControls(t, m.SPIRV), []uint32{0, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("module loop controls %v, want %v", got, want)
	}
	for _, c := range []struct {
		xl   float64
		want []uint32
	}{{8, []uint32{0, 0}}, {32, []uint32{0, 0}}, {33, []uint32{0, 0, 0}}} {
		sp, err := m.Specialize("main", map[string]float64{"XL": c.xl})
		if err != nil {
			t.Fatal(err)
		}
		if got := loopControls(t, sp.SPIRV); !slices.Equal(got, c.want) {
			t.Errorf("XL %v: loop controls %v, want %v", c.xl, got, c.want)
		}
		if c.xl == 8 {
			spirvValNew(t, prereq.SpirvValNew(t), "registers", sp.SPIRV)
		}
	}
	lowered, err := Compile("registers.wgsl", src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := lowered.Specialize("main", map[string]float64{"XL": 8})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range loopControls(t, sp.SPIRV) {
		if c != 0 {
			t.Fatalf("lowered matrices: loop control %d, want none", c)
		}
	}
}

// TestUnrollRegistersEverywhere: in a module without subgroup matrices (the
// SIMT kernels) for a GPU (Options.UnrollRegisters; not for a CPU's
// driver), a loop whose counter indexes a function-scope array,
// directly or through locals computed from it, is unrolled once its trip
// count is known, so that no driver is left a run-time index into
// registers (AMD's compiler put such arrays in scratch memory where it
// declined to unroll a long loop); a loop around it whose counter indexes
// no such array stays a loop, as do loops whose counter indexes other
// memory only. (The kernels' GPU tests run such unrolled code against the
// CPU.)
func TestUnrollRegistersEverywhere(t *testing.T) {
	src := `
override TM: u32 = 4;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(1)
fn main() {
	var acc: array<f32, 8>;
	for (var k = 0u; k < 3u * TM; k++) { // k indexes only a: a loop
		let x = a[k];
		for (var i = 0u; i < TM; i++) { acc[i] += x * f32(i + 1u); } // unrolled
	}
	for (var j = 0u; j < TM; j++) { // through c and d: unrolled
		let c = j * 2u;
		var d = 0u;
		d = c / 2u;
		if d < 2u { o[d] = acc[d] + 1.0; } else { o[j] = acc[d]; }
	}
	for (var q = 0u; q < TM; q++) { o[TM + q] = a[q]; } // o only: a loop
}`
	for _, opt := range []Options{{UnrollRegisters: true}, {}} {
		m, err := Compile("registers.wgsl", src, opt)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := loopControls(t, m.SPIRV), []uint32{0, 0, 0, 0}; !slices.Equal(got, want) { // TM not yet known: all four loops
			t.Errorf("%+v: module loop controls %v, want %v", opt, got, want)
		}
		sp, err := m.Specialize("main", map[string]float64{"TM": 4})
		if err != nil {
			t.Fatal(err)
		}
		want := []uint32{0, 0} // k's and q's loops
		if !opt.UnrollRegisters {
			want = []uint32{0, 0, 0, 0} // a CPU's driver: none unrolled
		}
		if got := loopControls(t, sp.SPIRV); !slices.Equal(got, want) {
			t.Errorf("%+v: specialized loop controls %v, want %v", opt, got, want)
		}
		spirvVal(t, "registers specialized", sp.SPIRV)
	}
}

// TestUnrollCopies: nested loops are unrolled only while the copies of the
// innermost body stay within maxUnrollCopies, inner loops first: of three
// nested 16-trip loops (4096 copies), the outer one stays a loop with the
// hint and the two inside it are unrolled (256); the module stays valid.
func TestUnrollCopies(t *testing.T) {
	src := sgm("", `
var r: array<f32, 16>;
for (var i = 0u; i < 16u; i++) {
	for (var j = 0u; j < 16u; j++) {
		for (var k = 0u; k < 16u; k++) { r[k] += r[(i + j) % 16u]; }
	}
}
o[0] = r[3];
subgroupMatrixStore(&o, 0u, subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>>(&a, 0u, false, 8u), false, 8u);`)
	m, err := Compile("copies.wgsl", src, Options{CooperativeMatrix: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := loopControls(t, m.SPIRV); !slices.Equal(got, []uint32{1}) {
		t.Errorf("loop controls %v, want one loop with the hint", got)
	}
	spirvValNew(t, prereq.SpirvValNew(t), "copies", m.SPIRV)
}

// TestUnrollKeepsWrittenCounters: a loop whose body writes its counter (an
// increment, or its address passed on) stays a loop with the hint; its
// neighbour that only reads the counter is unrolled.
func TestUnrollKeepsWrittenCounters(t *testing.T) {
	src := sgm("fn bump(p: ptr<function, u32>) { *p += 1u; }", `
var r: array<f32, 16>;
for (var i = 0u; i < 8u; i++) { r[i] += 2.0; i += 1u; }
for (var i = 0u; i < 8u; i++) { r[i] += 1.0; bump(&i); }
for (var i = 0u; i < 8u; i++) { r[i] *= 3.0; }
o[0] = r[3];
subgroupMatrixStore(&o, 0u, subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>>(&a, 0u, false, 8u), false, 8u);`)
	m, err := Compile("written.wgsl", src, Options{CooperativeMatrix: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := loopControls(t, m.SPIRV), []uint32{1, 1}; !slices.Equal(got, want) {
		t.Errorf("loop controls %v, want %v", got, want)
	}
}
