package wgsl

import (
	"strings"
	"testing"
)

// Alias analysis of pointer arguments (issue 8): what WGSL rejects and what
// it allows, checked against Tint by TestTintOracle.

var aliasInvalid = []struct{ name, src, want string }{
	{"alias_two_args_written", "fn f(p: ptr<function, i32>, q: ptr<function, i32>) { *p = *q; }\nfn g() { var v: i32; f(&v, &v); }" + ep,
		"2:28: invalid aliased pointer argument: 'v' is also passed as argument 1"},
	{"alias_elements_of_one_array", "fn f(p: ptr<function, i32>, q: ptr<function, i32>) { *q = *p; }\nfn g() { var a: array<i32, 4>; f(&a[0], &a[1]); }" + ep,
		"2:41: invalid aliased pointer argument: 'a' is also passed as argument 1"},
	{"alias_through_let", "fn f(p: ptr<private, i32>, q: ptr<private, i32>) { *p += *q; }\nvar<private> x: array<i32, 2>;\nfn g() { let r = &x[1]; f(r, &x[0]); }" + ep,
		"3:30: invalid aliased pointer argument: 'x' is also passed as argument 1"},
	{"alias_written_in_callee_of_callee", "var<workgroup> w: array<atomic<u32>, 2>;\nfn h(p: ptr<workgroup, atomic<u32>>) { atomicStore(p, 1u); }\nfn f(p: ptr<workgroup, atomic<u32>>, q: ptr<workgroup, atomic<u32>>) { h(q); _ = atomicLoad(p); }\n@compute @workgroup_size(1) fn main() { f(&w[0], &w[1]); }",
		"4:50: invalid aliased pointer argument: 'w' is also passed as argument 1"},
	{"alias_param_written_global_read", "var<private> x: i32;\nfn f(p: ptr<private, i32>) -> i32 { *p = 2; return x; }\nfn g() { _ = f(&x); }" + ep,
		"3:16: invalid aliased pointer argument: 'f' writes through it and also accesses 'x' directly"},
	{"alias_param_read_global_written", "var<workgroup> w: array<f32, 4>;\nfn f(p: ptr<workgroup, f32>) { w[0] = *p; }\nfn g() { f(&w[2]); }" + ep,
		"3:12: invalid aliased pointer argument: 'f' reads through it and also writes 'w' directly"},
	{"alias_pointer_params_forwarded", "fn f(p: ptr<function, i32>, q: ptr<function, i32>) { *p = 1; _ = *q; }\nfn g(p: ptr<function, i32>) { f(p, p); }" + ep,
		"2:36: invalid aliased pointer argument: 'p' is also passed as argument 1"},
	{"alias_storage_members", "struct S { a: f32, b: f32 }\n@group(0) @binding(0) var<storage, read_write> s: S;\nfn f(p: ptr<storage, f32, read_write>, q: ptr<storage, f32, read_write>) { *p = *q; }\n@compute @workgroup_size(1) fn main() { f(&s.a, &s.b); }",
		"4:49: invalid aliased pointer argument: 's' is also passed as argument 1"},
}

var aliasValid = []struct{ name, src string }{
	{"alias_reads_only", "fn f(p: ptr<function, i32>, q: ptr<function, i32>) -> i32 { return *p + *q; }\n@compute @workgroup_size(1) fn main() { var v = 1; var a: array<i32, 2>; _ = f(&v, &v) + f(&a[0], &a[1]); }"},
	{"alias_distinct_roots", "fn f(p: ptr<function, i32>, q: ptr<function, i32>) { *p = *q; }\nvar<private> x: i32;\nfn g(p: ptr<private, i32>) -> i32 { return *p; }\n@compute @workgroup_size(1) fn main() { var u = 1; var v = 2; f(&u, &v); x = g(&x); }"},
	{"alias_global_read_both", "var<private> x: i32;\nfn f(p: ptr<private, i32>) -> i32 { return *p + x; }\n@compute @workgroup_size(1) fn main() { x = f(&x); }"},
	{"alias_written_other_unused", "fn f(p: ptr<function, i32>, q: ptr<function, i32>) { *p = 1; _ = q; }\n@compute @workgroup_size(1) fn main() { var v = 1; f(&v, &v); }"},
	{"alias_param_written_global_unused", "var<private> x: i32;\nfn f(p: ptr<private, i32>) { *p = 2; }\nfn g(p: ptr<private, i32>) -> i32 { x = 1; return 0; }\n@compute @workgroup_size(1) fn main() { f(&x); _ = g(&x); }"},
	{"alias_array_length_only", "@group(0) @binding(0) var<storage, read_write> b: array<f32>;\nfn n(p: ptr<storage, array<f32>, read_write>) -> u32 { b[0] = 1.0; return arrayLength(p); }\n@compute @workgroup_size(1) fn main() { _ = n(&b); }"},
}

// Runtime-sized arrays reached through pointers: indexed (and clamped with
// the buffer's arrayLength) and measured with arrayLength.
var runtimeArrayPtrValid = []struct{ name, src string }{
	{"runtime_array_via_pointer", "@group(0) @binding(0) var<storage, read_write> b: array<f32>;\n@compute @workgroup_size(1) fn main() { let p = &b; (*p)[1] = 2.0; p[2] = f32(arrayLength(p)); }"},
	{"runtime_array_pointer_params", `struct Buf { n: u32, data: array<vec2<f32>> }
@group(0) @binding(0) var<storage, read_write> a: array<f32>;
@group(0) @binding(1) var<storage, read> s: Buf;
fn total(p: ptr<storage, array<f32>, read_write>) -> f32 { var t = 0.0; for (var i = 0u; i < arrayLength(p); i++) { t += p[i]; } return t; }
fn last(p: ptr<storage, array<vec2<f32>>>) -> vec2<f32> { return (*p)[arrayLength(p) - 1u]; }
fn put(p: ptr<storage, array<f32>, read_write>, i: u32, v: f32) { (*p)[i] = v; }
@compute @workgroup_size(1) fn main() { put(&a, 0u, total(&a) + last(&s.data).y); let q = &s.data; put(&a, 1u, q[s.n].x); }`},
}

func init() {
	validPrograms = append(validPrograms, runtimeArrayPtrValid...)
	invalidPrograms = append(invalidPrograms, aliasInvalid...)
	validPrograms = append(validPrograms, aliasValid...)
}

// TestAliasNote checks the secondary label on an aliasing error: it points
// at the other argument.
func TestAliasNote(t *testing.T) {
	src := "fn f(p: ptr<function, i32>, q: ptr<function, i32>) { *p = *q; }\nfn g() { var v: i32; f(&v, &v); }" + ep
	_, err := Compile("alias.wgsl", src, Options{})
	l, ok := err.(ErrorList)
	if !ok || len(l) != 1 || len(l[0].Notes) != 1 {
		t.Fatalf("want one error with one note, got %v", err)
	}
	n := l[0].Notes[0]
	if n.Line != 2 || n.Col != 24 {
		t.Errorf("note at %d:%d, want 2:24", n.Line, n.Col)
	}
	want := "alias.wgsl:2:24: note: the other pointer argument to the same variable\nfn g() { var v: i32; f(&v, &v); }\n                       ^\n"
	if p := l.Pretty(); !strings.HasSuffix(p, want) {
		t.Errorf("Pretty:\n%s\nwant it to end with:\n%s", p, want)
	}
}
