package wgsl

import (
	"strings"
	"testing"
)

// bigCopySrc copies arrays of n elements, and structs holding them, whole
// between storage, uniform and workgroup memory and values: lets, vars,
// value parameters and results.
func bigCopySrc(n string) string {
	return strings.ReplaceAll(`
struct S { n: u32, a: array<vec2<f32>, N>, m: array<array<f32, N>, 2> }
@group(0) @binding(0) var<storage, read_write> b: array<S, 2>;
@group(0) @binding(1) var<uniform> u: array<vec4<f32>, N>;
var<workgroup> w: array<f32, N>;
fn f(s: S, i: u32) -> f32 { return s.a[i].x + s.m[1][i]; }
fn g() -> S { return b[1]; }
@compute @workgroup_size(1) fn main(@builtin(local_invocation_index) li: u32) {
	let x = b[0];
	var y = x;
	y.n = 7u;
	b[1] = y;
	b[0].m = g().m;
	let v = u;
	w = b[0].m[0];
	b[1].a[li] = vec2(v[li].x, w[li]) + vec2(f(x, li)) + vec2(f(b[1], li));
}`, "N", n)
}

// TestBigCopySize checks that whole copies of large aggregates are emitted
// as loops (emit_copy.go): the module is valid and its size does not depend
// on the array length, where one composite per element would add words for
// each element.
func TestBigCopySize(t *testing.T) {
	words := map[string]int{}
	for _, n := range []string{"100", "4096", "65535"} {
		m := compileOK(t, "bigcopy"+n+".wgsl", bigCopySrc(n))
		words[n] = len(m.SPIRV)
	}
	if words["100"] != words["4096"] || words["100"] != words["65535"] {
		t.Errorf("SPIR-V words by array length: %v, want the same for all", words)
	}
	t.Logf("SPIR-V words: %v", words)
	if w := words["100"]; w > 4000 {
		t.Errorf("%d SPIR-V words for the copies, want at most 4000", w)
	}
	// Small arrays are rebuilt inline, and stay valid.
	compileOK(t, "bigcopy4.wgsl", bigCopySrc("4"))
}
