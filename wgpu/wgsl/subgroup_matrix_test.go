package wgsl

import (
	"fmt"
	"strings"
	"testing"
)

// sgmDecls are the buffers the subgroup matrix programs below use: line 1
// enables the extension, lines 2-6 declare, the entry point (ent) follows.
const sgmDecls = `enable chromium_experimental_subgroup_matrix;
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
@group(0) @binding(2) var<storage, read_write> ou: array<u32>;
var<workgroup> w: array<f32, 256>;`

// sgm is an entry point (see ent) over sgmDecls plus decls; the body's first
// line is line 9 (plus the lines decls adds).
func sgm(decls, body string) string { return ent(sgmDecls+"\n"+decls, body) }

// sgmValid are programs the checker must accept, each validated by
// spirv-val in the lowered form (and in the native form by
// TestSubgroupMatrixNative).
var sgmValid = []struct{ name, src string }{
	{"load_store_all_roles", sgm("", `
let l = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 4>>(&a, 0u, false, 8u);
let r = subgroupMatrixLoad<subgroup_matrix_right<f32, 16, 8>>(&a, 32u, true, 8u);
let c = subgroupMatrixLoad<subgroup_matrix_result<f32, 16, 4>>(&w, 0, false, 16);
subgroupMatrixStore(&o, 0, l, false, 8);
subgroupMatrixStore(&o, 64, r, true, 8);
subgroupMatrixStore(&w, wid.x, c, true, 4u);`)},
	{"reinterpret_element_type", sgm("@group(0) @binding(3) var<storage, read> v: array<vec2<i32>>;", "let m = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>, row_major>(&v, 0u, 8u);")},
	{"reinterpret_every_kind", "enable f16;\n" + sgm(`@group(0) @binding(3) var<storage, read_write> words: array<u32>;
@group(0) @binding(4) var<storage, read> halves: array<vec3<f16>>;
@group(0) @binding(5) var<storage, read_write> quads: array<vec4<i32>, 64>;
var<workgroup> wf: array<vec2<f32>, 64>;`, `
let h = subgroupMatrixLoad<subgroup_matrix_left<f16, 8, 8>, col_major>(&words, 3u, 4u);
let f = subgroupMatrixLoad<subgroup_matrix_result<f32, 8, 8>, row_major>(&halves, 1, 6);
let u = subgroupMatrixLoad<subgroup_matrix_right<u8, 8, 8>, row_major>(&quads, 2u, 1u);
subgroupMatrixStore<row_major>(&words, 1u, h, 5u);
subgroupMatrixStore<col_major>(&quads, wid.x, subgroupMatrixScalarAdd(u, 1u), 1u);
subgroupMatrixStore<row_major>(&wf, 0u, f, 4u);
subgroupMatrixStore<col_major>(&wf, 32u, subgroup_matrix_left<i8, 8, 8>(-3), 1u);`)},
	{"layout_template_form", sgm("@group(0) @binding(3) var<storage, read> ia: array<i32>;", `
let l = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 4>, row_major>(&a, 0u, 8u);
let r = subgroupMatrixLoad<subgroup_matrix_right<f32, 16, 8>, col_major>(&a, 32i, 8i);
let c = subgroupMatrixLoad<subgroup_matrix_result<f32, 16, 4>, row_major>(&w, 0, 16);
let i = subgroupMatrixLoad<subgroup_matrix_left<i32, 8, 8>, col_major>(&ia, 3, 8);
subgroupMatrixStore<row_major>(&o, 0, subgroupMatrixMultiplyAccumulate(l, r, c), 16u);
subgroupMatrixStore<col_major>(&w, i32(wid.x), r, 8);`)},
	{"multiply_and_accumulate", sgm("", `
let l = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>>(&a, 0u, false, 8u);
let r = subgroupMatrixLoad<subgroup_matrix_right<f32, 8, 8>>(&a, 64u, false, 8u);
var acc = subgroup_matrix_result<f32, 8, 8>();
acc = subgroupMatrixMultiplyAccumulate(l, r, acc);
let p = subgroupMatrixMultiply<f32>(l, r);
subgroupMatrixStore(&o, 0u, acc, false, 8u);
subgroupMatrixStore(&o, 64u, p, false, 8u);`)},
	{"f16_operands_f32_result", "enable f16;\n" + sgm("@group(0) @binding(3) var<storage, read> h: array<f16>;", `
let l = subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 8>>(&h, 0u, false, 16u);
let r = subgroupMatrixLoad<subgroup_matrix_right<f16, 8, 16>>(&h, 128u, true, 16u);
let acc = subgroupMatrixMultiplyAccumulate(l, r, subgroup_matrix_result<f32, 8, 8>(1.5));
let half = subgroupMatrixMultiply<f16>(l, r);
subgroupMatrixStore(&o, 0u, acc, false, 8u);`)},
	{"integers", sgm("@group(0) @binding(3) var<storage, read> ia: array<i32>;", `
let l = subgroupMatrixLoad<subgroup_matrix_left<i32, 8, 8>>(&ia, 0u, false, 8u);
let r = subgroupMatrixLoad<subgroup_matrix_right<i32, 8, 8>>(&ia, 64u, false, 8u);
let acc = subgroupMatrixMultiply<u32>(l, r);
subgroupMatrixStore(&ou, 0u, acc, false, 8u);`)},
	{"function_arrays_structs", sgm(`
alias L = subgroup_matrix_left<f32, 8, 8>;
struct Pair { l: L, r: subgroup_matrix_right<f32, 8, 8> }
fn twice(p: Pair, acc: subgroup_matrix_result<f32, 8, 8>) -> subgroup_matrix_result<f32, 8, 8> {
	return subgroupMatrixMultiplyAccumulate(p.l, p.r, subgroupMatrixMultiplyAccumulate(p.l, p.r, acc));
}
fn load(p: ptr<storage, array<f32>, read>, at: u32) -> L {
	return subgroupMatrixLoad<L>(p, at, false, 8u);
}`, `
var keep: array<L, 2>;
keep[1] = load(&a, 8u);
var ps: array<Pair, 2>;
ps[0] = Pair(load(&a, 16u), subgroupMatrixLoad<subgroup_matrix_right<f32, 8, 8>>(&a, 0u, true, 8u));
let r = twice(ps[0], subgroup_matrix_result<f32, 8, 8>());
subgroupMatrixStore(&o, 0u, r, false, 8u);`)},
	{"uniform_offsets", sgm("@group(0) @binding(3) var<uniform> base: u32;", `
for (var i = 0u; i < 4u; i++) {
	let l = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>>(&a, base + 64u * i + wid.x, false, 8u);
	workgroupBarrier();
	subgroupMatrixStore(&w, 0u, l, false, 8u);
}`)},
	{"subgroup_id_offsets", "enable subgroups;\n" + sgmDecls + `
@compute @workgroup_size(64)
fn main(@builtin(subgroup_id) s: u32) {
	if s < 4u { // subgroup-uniform
		let l = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>, row_major>(&a, s * 64u, 8u);
		subgroupMatrixStore<row_major>(&o, s * 64u, l, 8u);
	}
}`},
	{"scalar_arithmetic", "enable f16;\n" + sgm("@group(0) @binding(3) var<storage, read_write> h: array<f16>;\n@group(0) @binding(4) var<uniform> k: i32;", `
let c = subgroupMatrixScalarAdd(subgroup_matrix_result<f32, 8, 8>(2.0), 1.5);
let d = subgroupMatrixScalarMultiply(subgroupMatrixScalarSubtract(c, 3), 0.5f);
let l = subgroupMatrixScalarMultiply(subgroupMatrixLoad<subgroup_matrix_left<f16, 8, 8>>(&h, 0u, false, 8u), 2h);
let r = subgroupMatrixScalarSubtract(subgroup_matrix_right<f16, 8, 8>(), 1);
let i = subgroupMatrixScalarAdd(subgroup_matrix_left<i32, 8, 8>(k), k * 2);
let u = subgroupMatrixScalarMultiply(subgroupMatrixMultiply<u32>(subgroup_matrix_left<u32, 8, 8>(3u), subgroup_matrix_right<u32, 8, 8>(5u)), 7u);
subgroupMatrixStore(&o, 0u, d, false, 8u);
subgroupMatrixStore(&h, 64u, subgroupMatrixMultiply<f16>(l, r), false, 8u);
subgroupMatrixStore(&ou, 0u, u, true, 8u);
subgroupMatrixStore(&ou, 64u, subgroupMatrixMultiply<u32>(i, subgroup_matrix_right<i32, 8, 8>(-1)), false, 8u);`)},
	{"i8_u8", sgm("@group(0) @binding(3) var<storage, read_write> ib: array<i32>;\nvar<workgroup> wu: array<u32, 64>;", `
let l = subgroupMatrixLoad<subgroup_matrix_left<i8, 16, 8>>(&ib, 4u, false, 16u);
let r = subgroupMatrixLoad<subgroup_matrix_right<i8, 8, 16>, col_major>(&ib, 8, 20);
let acc = subgroupMatrixMultiplyAccumulate(l, r, subgroup_matrix_result<i32, 8, 8>(-7));
let wrapped = subgroupMatrixMultiply<i8>(l, subgroupMatrixScalarAdd(r, 300));
let ul = subgroupMatrixLoad<subgroup_matrix_left<u8, 8, 8>>(&ou, 3u, true, 10u);
let ur = subgroupMatrixScalarMultiply(subgroup_matrix_right<u8, 8, 8>(200u), 2u);
let uacc = subgroupMatrixMultiplyAccumulate(ul, ur, subgroup_matrix_result<u8, 8, 8>(9u));
subgroupMatrixStore(&ib, 0u, acc, false, 8u);
subgroupMatrixStore<col_major>(&ib, 64u, wrapped, 8u);
subgroupMatrixStore(&wu, 0u, uacc, false, 8u);
workgroupBarrier();
subgroupMatrixStore(&ou, 1u, subgroupMatrixLoad<subgroup_matrix_result<u8, 8, 8>>(&wu, 0u, false, 8u), true, 12u);
subgroupMatrixStore(&ou, 128u, subgroupMatrixMultiply<u32>(ul, ur), false, 8u);`)},
	{"uniformity_rule_off", "diagnostic(off, chromium_experimental.subgroup_matrix_uniformity);\n" + sgm("", `
if li < 32u {
	let l = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>>(&a, li, false, 8u);
	subgroupMatrixStore(&o, 0u, l, false, 8u);
}`)},
	{"implies_subgroups", sgmDecls + `
@compute @workgroup_size(64)
fn main(@builtin(subgroup_id) s: u32) {
	let l = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>, row_major>(&a, s * 64u, 8u);
	subgroupMatrixStore<row_major>(&o, s * 64u, subgroupMatrixScalarAdd(l, subgroupBroadcastFirst(a[0])), 8u);
}`},
	{"uniformity_rule_off_chromium", "diagnostic(off, chromium.subgroup_matrix_uniformity);\n" + sgm("", `
if li < 32u {
	let l = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>>(&a, li, false, 8u);
	subgroupMatrixStore(&o, 0u, l, false, 8u);
}`)},
}

func TestSubgroupMatrixAccepts(t *testing.T) {
	for _, p := range sgmValid {
		t.Run(p.name, func(t *testing.T) { compileOK(t, p.name+".wgsl", p.src) })
	}
}

// sgmInvalid are programs the checker must reject, with the error.
var sgmInvalid = []struct{ name, src, want string }{
	{"missing_enable", ent("", "var m: subgroup_matrix_left<f32, 8, 8>;"),
		"4:8: 'subgroup_matrix_left' requires 'enable chromium_experimental_subgroup_matrix;'"},
	{"missing_enable_builtin", ent("@group(0) @binding(0) var<storage, read_write> o: array<f32>;", "subgroupMatrixStore(&o, 0u, o, false, 8u);"),
		"4:1: 'subgroupMatrixStore' requires 'enable chromium_experimental_subgroup_matrix;'"},
	{"zero_rows", sgm("", "var m: subgroup_matrix_left<f32, 8, 0>;"), "9:37: subgroup matrix row count must be in 1..64, got 0"},
	{"too_many_columns", sgm("", "var m: subgroup_matrix_result<f32, 128, 8>;"), "9:36: subgroup matrix column count must be in 1..64, got 128"},
	{"runtime_shape", sgm("", "let n = 8u; var m: subgroup_matrix_right<f32, n, 8>;"), "9:47: subgroup matrix column count must be a const-expression"},
	{"float_shape", sgm("", "var m: subgroup_matrix_right<f32, 8.0, 8>;"), "9:35: subgroup matrix column count must be an integer"},
	{"two_args", sgm("", "var m: subgroup_matrix_right<f32, 8>;"), "9:8: 'subgroup_matrix_right' takes 3 template arguments"},
	{"bool_components", sgm("", "var m: subgroup_matrix_left<bool, 8, 8>;"), "9:29: subgroup matrix components must be f32, f16, i32, u32, i8 or u8, not 'bool'"},
	{"vector_components", sgm("", "var m: subgroup_matrix_left<vec2<f32>, 8, 8>;"), "9:29: subgroup matrix components must be f32, f16, i32, u32, i8 or u8"},
	{"i8_from_f32", sgm("", "let m = subgroupMatrixLoad<subgroup_matrix_left<i8, 8, 8>>(&a, 0u, false, 8u);"),
		"9:60: 'subgroupMatrixLoad' needs a pointer to an array<i32> in the storage or workgroup address space, got 'ptr<storage, array<f32>, read>'"},
	{"reinterpret_bool_form", sgm("@group(0) @binding(3) var<storage, read> v: array<vec2<i32>>;", "let m = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>>(&v, 0u, false, 8u);"),
		"9:61: 'subgroupMatrixLoad' needs a pointer to an array<f32> in the storage or workgroup address space, got 'ptr<storage, array<vec2<i32>>, read>' (the form with the layout as a template argument also takes arrays of other scalars and vectors)"},
	{"reinterpret_bool_array", "enable chromium_experimental_subgroup_matrix;\nvar<workgroup> b: array<bool, 64>;\n@compute @workgroup_size(64) fn main() {\nlet m = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>, row_major>(&b, 0u, 8u);\n_ = m;\n}\n",
		"4:72: 'subgroupMatrixLoad' needs a pointer to an array of f32, f16, i32 or u32 scalars or vectors in the storage or workgroup address space, got 'ptr<workgroup, array<bool, 64>, read_write>'"},
	{"reinterpret_short_elements", "enable f16;\n" + sgm("@group(0) @binding(3) var<storage, read> h: array<f16>;", "let m = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>, row_major>(&h, 0u, 16u);"),
		"10:9: 'subgroupMatrixLoad' of f32 components through an array of 2-byte elements: its elements must be at least as long as a component (4 bytes)"},
	{"stride_below_row", sgm("", "let m = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 4>, row_major>(&a, 0u, 7u);"),
		"9:80: the stride of 'subgroupMatrixLoad' (7, 28 bytes) is less than a row of the matrix (32 bytes)"},
	{"stride_below_column", sgm("@group(0) @binding(3) var<storage, read_write> v: array<vec2<u32>>;", "subgroupMatrixStore<col_major>(&v, 0u, subgroup_matrix_left<u8, 8, 16>(), 1i);"),
		"9:75: the stride of 'subgroupMatrixStore' (1, 8 bytes) is less than a column of the matrix (16 bytes)"},
	{"past_fixed_array", sgm("", "let m = subgroupMatrixLoad<subgroup_matrix_result<f32, 16, 8>, col_major>(&w, 100u, 10u);"),
		"9:9: 'subgroupMatrixLoad' reaches 1032 bytes into an array of 1024"},
	{"reinterpret_matrix_array", sgm("@group(0) @binding(3) var<storage, read_write> v: array<mat2x2<f32>>;", "subgroupMatrixStore<col_major>(&v, 0u, subgroup_matrix_left<f32, 8, 8>(), 8u);"),
		"9:32: 'subgroupMatrixStore' needs a pointer to an array of f32, f16, i32 or u32 scalars or vectors in the storage or workgroup address space, got 'ptr<storage, array<mat2x2<f32>>, read_write>'"},
	{"i8_u8_operands", sgm("", "let p = subgroupMatrixMultiply<i32>(subgroup_matrix_left<i8, 8, 8>(), subgroup_matrix_right<u8, 8, 8>());"),
		"9:9: the operands of 'subgroupMatrixMultiply' must have the same component type, got 'i8' and 'u8'"},
	{"i32_into_i8", sgm("", "let p = subgroupMatrixMultiply<i8>(subgroup_matrix_left<i32, 8, 8>(), subgroup_matrix_right<i32, 8, 8>());"),
		"9:9: 'subgroupMatrixMultiply' of i32 operands into a i8 result: an i8 or u8 result needs i8 or u8 operands"},
	{"i8_fill_float", sgm("", "let m = subgroup_matrix_left<i8, 8, 8>(1.5);"), "9:40: cannot use a value of type 'abstract-float' as 'i32'"},
	{"i8_shadowed", sgm("alias i8 = bool;", "var m: subgroup_matrix_left<i8, 8, 8>;"), "9:29: subgroup matrix components must be f32, f16, i32, u32, i8 or u8, not 'bool'"},
	{"i8_bare", sgm("", "var x: i8;"), "9:8: "},
	{"scalar_not_matrix", sgm("", "let x = subgroupMatrixScalarAdd(1.0, 2.0);"), "9:33: the first argument of 'subgroupMatrixScalarAdd' must be a subgroup matrix, got 'abstract-float'"},
	{"scalar_wrong_type", sgm("", "let x = subgroupMatrixScalarMultiply(subgroup_matrix_left<i32, 8, 8>(), 0.5);"), "9:73: cannot use a value of type 'abstract-float' as 'i32'"},
	{"scalar_u8_negative", sgm("", "let x = subgroupMatrixScalarSubtract(subgroup_matrix_left<u8, 8, 8>(), -1);"), "9:72: "},
	{"scalar_arg_count", sgm("", "let x = subgroupMatrixScalarAdd(subgroup_matrix_left<f32, 8, 8>());"), "9:9: 'subgroupMatrixScalarAdd' takes 2 arguments (a subgroup matrix and a scalar), got 1"},
	{"scalar_template", sgm("", "let x = subgroupMatrixScalarAdd<f32>(subgroup_matrix_left<f32, 8, 8>(), 1.0);"), "9:9: 'subgroupMatrixScalarAdd' takes no template arguments"},
	{"scalar_unused", sgm("", "subgroupMatrixScalarAdd(subgroup_matrix_left<f32, 8, 8>(), 1.0);"), "9:1: the result of 'subgroupMatrixScalarAdd' must be used"},
	{"scalar_missing_enable", ent("", "let x = subgroupMatrixScalarAdd(1.0, 2.0);"), "4:9: 'subgroupMatrixScalarAdd' requires 'enable chromium_experimental_subgroup_matrix;'"},
	{"f16_without_enable", sgm("", "var m: subgroup_matrix_left<f16, 8, 8>;"), "9:29: f16 requires 'enable f16;'"},
	{"private_variable", sgm("var<private> m: array<subgroup_matrix_left<f32, 8, 8>, 2>;", ""),
		"6:17: type 'array<subgroup_matrix_left<f32, 8, 8>, 2>' cannot be used in the private address space: subgroup matrices live only in function variables"},
	{"negative_offset", sgm("", "let m = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>, row_major>(&a, -1, 8u);"), "9:76: the offset of 'subgroupMatrixLoad' must not be negative, got -1"},
	{"lane_offset", "enable subgroups;\n" + sgm("", "let m = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>, row_major>(&a, subgroupExclusiveAdd(1u), 8u);\nsubgroupMatrixStore<row_major>(&o, 0u, m, 8u);"),
		"10:76: this argument of 'subgroupMatrixLoad' must be subgroup uniform"},
	{"workgroup_variable", sgm("var<workgroup> m: subgroup_matrix_left<f32, 8, 8>;", ""),
		"6:19: type 'subgroup_matrix_left<f32, 8, 8>' cannot be used in the workgroup address space: subgroup matrices live only in function variables"},
	{"storage_struct", sgm("struct S { m: subgroup_matrix_left<f32, 8, 8> }\n@group(1) @binding(0) var<storage, read_write> s: S;", ""),
		"7:51: type 'S' cannot be used in the storage address space: subgroup matrices live only in function variables"},
	{"load_no_template", sgm("", "let m = subgroupMatrixLoad(&a, 0u, false, 8u);"), "9:9: 'subgroupMatrixLoad' needs the matrix type as its template argument"},
	{"load_template_not_matrix", sgm("", "let m = subgroupMatrixLoad<f32>(&a, 0u, false, 8u);"), "9:28: the template argument of 'subgroupMatrixLoad' must be a subgroup matrix type, not 'f32'"},
	{"load_wrong_element", sgm("", "let m = subgroupMatrixLoad<subgroup_matrix_left<u32, 8, 8>>(&a, 0u, false, 8u);"),
		"9:61: 'subgroupMatrixLoad' needs a pointer to an array<u32> in the storage or workgroup address space, got 'ptr<storage, array<f32>, read>'"},
	{"load_function_pointer", sgm("", "var x: array<f32, 64>; let m = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>>(&x, 0u, false, 8u);"),
		"9:84: 'subgroupMatrixLoad' needs a pointer to an array<f32> in the storage or workgroup address space"},
	{"load_not_pointer", sgm("", "let m = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>>(a, 0u, false, 8u);"),
		"9:61: a value of type 'array<f32>' cannot be loaded"},
	{"load_float_offset", sgm("", "let m = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>>(&a, 0.5, false, 8u);"), "9:65: the offset of 'subgroupMatrixLoad' must be an i32 or u32, got 'abstract-float'"},
	{"store_float_stride", sgm("", "subgroupMatrixStore<row_major>(&o, 0u, subgroup_matrix_left<f32, 8, 8>(), 8.0);"), "9:75: the stride of 'subgroupMatrixStore' must be an i32 or u32, got 'abstract-float'"},
	{"load_bad_layout", sgm("", "let m = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>, diagonal>(&a, 0u, 8u);"), "9:61: the layout of 'subgroupMatrixLoad' must be row_major or col_major"},
	{"store_layout_and_flag", sgm("", "subgroupMatrixStore<col_major>(&o, 0u, subgroup_matrix_left<f32, 8, 8>(), false, 8u);"), "9:1: 'subgroupMatrixStore' takes subgroupMatrixStore<row_major or col_major>(p, offset, value, stride) or subgroupMatrixStore(p, offset, value, col_major, stride), got 1 template arguments and 5 arguments"},
	{"load_runtime_layout", sgm("", "let m = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>>(&a, 0u, li == 0u, 8u);"),
		"9:69: the col_major argument of 'subgroupMatrixLoad' must be a bool const-expression"},
	{"load_wrong_arg_count", sgm("", "let m = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>>(&a, 0u, 8u);"), "9:9: 'subgroupMatrixLoad' takes subgroupMatrixLoad<T, row_major or col_major>(p, offset, stride) or subgroupMatrixLoad<T>(p, offset, col_major, stride), got 1 template arguments and 3 arguments"},
	{"load_unused", sgm("", "subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>>(&a, 0u, false, 8u);"), "9:1: the result of 'subgroupMatrixLoad' must be used"},
	{"store_read_only", sgm("", "subgroupMatrixStore(&a, 0u, subgroup_matrix_left<f32, 8, 8>(), false, 8u);"),
		"9:21: 'subgroupMatrixStore' needs a writable pointer, got 'ptr<storage, array<f32>, read>'"},
	{"store_not_matrix", sgm("", "subgroupMatrixStore(&o, 0u, 1.0, false, 8u);"), "9:29: 'subgroupMatrixStore' needs a subgroup matrix to store, got 'abstract-float'"},
	{"store_as_value", sgm("", "let x = subgroupMatrixStore(&o, 0u, subgroup_matrix_left<f32, 8, 8>(), false, 8u);"), "9:9: 'subgroupMatrixStore' does not return a value"},
	{"multiply_swapped", sgm("", "let p = subgroupMatrixMultiply<f32>(subgroup_matrix_right<f32, 8, 8>(), subgroup_matrix_left<f32, 8, 8>());"),
		"9:37: the first argument of 'subgroupMatrixMultiply' must be a subgroup_matrix_left"},
	{"multiply_no_template", sgm("", "let p = subgroupMatrixMultiply(subgroup_matrix_left<f32, 8, 8>(), subgroup_matrix_right<f32, 8, 8>());"),
		"9:9: 'subgroupMatrixMultiply' needs the result component type as its template argument"},
	{"multiply_inner_mismatch", sgm("", "let p = subgroupMatrixMultiply<f32>(subgroup_matrix_left<f32, 4, 8>(), subgroup_matrix_right<f32, 8, 8>());"),
		"9:9: the operands of 'subgroupMatrixMultiply' do not match: 'subgroup_matrix_left<f32, 4, 8>' has 4 columns (K) but 'subgroup_matrix_right<f32, 8, 8>' has 8 rows"},
	{"multiply_component_mismatch", sgm("", "let p = subgroupMatrixMultiply<f32>(subgroup_matrix_left<f32, 8, 8>(), subgroup_matrix_right<i32, 8, 8>());"),
		"9:9: the operands of 'subgroupMatrixMultiply' must have the same component type, got 'f32' and 'i32'"},
	{"multiply_mixed_kinds", sgm("", "let p = subgroupMatrixMultiply<u32>(subgroup_matrix_left<f32, 8, 8>(), subgroup_matrix_right<f32, 8, 8>());"),
		"9:9: 'subgroupMatrixMultiply' of f32 operands into a u32 result: float operands need a float result, integer operands an integer one (the mixed forms are not supported by this compiler)"},
	{"accumulate_shape", sgm("", "let p = subgroupMatrixMultiplyAccumulate(subgroup_matrix_left<f32, 8, 4>(), subgroup_matrix_right<f32, 16, 8>(), subgroup_matrix_result<f32, 8, 4>());"),
		"9:114: the accumulator of 'subgroupMatrixMultiplyAccumulate' must have 4 rows and 16 columns (those of the product), got 'subgroup_matrix_result<f32, 8, 4>'"},
	{"accumulate_not_result", sgm("", "let p = subgroupMatrixMultiplyAccumulate(subgroup_matrix_left<f32, 8, 8>(), subgroup_matrix_right<f32, 8, 8>(), subgroup_matrix_left<f32, 8, 8>());"),
		"9:113: the third argument of 'subgroupMatrixMultiplyAccumulate' must be a subgroup_matrix_result"},
	{"construct_two_args", sgm("", "let m = subgroup_matrix_left<f32, 8, 8>(1.0, 2.0);"), "9:9: 'subgroup_matrix_left<f32, 8, 8>' takes at most one argument"},
	{"construct_wrong_fill", sgm("", "let m = subgroup_matrix_left<u32, 8, 8>(1.5);"), "9:41: cannot use a value of type 'abstract-float' as 'u32'"},
	{"const_matrix", sgm("const m = subgroup_matrix_left<f32, 8, 8>();", ""), "6:11: 'subgroup_matrix_left<f32, 8, 8>' cannot be used in a const-expression"},
	{"index_matrix", sgm("", "var m: subgroup_matrix_left<f32, 8, 8>; let x = m[0];"), "9:50: cannot index a value of type 'subgroup_matrix_left<f32, 8, 8>'"},
	{"add_matrices", sgm("", "let m = subgroup_matrix_left<f32, 8, 8>(); let x = m + m;"), "9:54: operator '+' cannot be applied to 'subgroup_matrix_left<f32, 8, 8>'"},
	// uniformity (the subgroup scope, as Tint checks it)
	{"nonuniform_control_flow", sgm("", "if li < 8u {\nlet l = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>>(&a, 0u, false, 8u);\nsubgroupMatrixStore(&o, 0u, l, false, 8u);\n}"),
		"10:9: 'subgroupMatrixLoad' must only be called from subgroup uniform control flow"},
	{"nonuniform_after_return", sgm("", "if li == 3u { return; }\nlet p = subgroupMatrixMultiply<f32>(subgroup_matrix_left<f32, 8, 8>(), subgroup_matrix_right<f32, 8, 8>());\nsubgroupMatrixStore(&o, 0u, p, false, 8u);"),
		"10:9: 'subgroupMatrixMultiply' must only be called from subgroup uniform control flow"},
	{"nonuniform_offset", sgm("", "let l = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>>(&a, li, false, 8u);\nsubgroupMatrixStore(&o, 0u, l, false, 8u);"),
		"9:65: this argument of 'subgroupMatrixLoad' must be subgroup uniform"},
	{"nonuniform_stride", sgm("", "subgroupMatrixStore(&o, 0u, subgroup_matrix_left<f32, 8, 8>(), false, 8u + u32(o[0]) * 0u);"),
		"9:71: this argument of 'subgroupMatrixStore' must be subgroup uniform"},
	{"nonuniform_pointer_index", sgm("var<private> rows: array<array<f32, 64>, 4>;\n@group(1) @binding(0) var<storage, read_write> m2: array<array<f32, 64>, 4>;",
		"let l = subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>>(&m2[li % 4u], 0u, false, 8u);\nsubgroupMatrixStore(&o, 0u, l, false, 8u);"),
		"10:61: this argument of 'subgroupMatrixLoad' must be subgroup uniform"},
	{"nonuniform_fill", sgm("", "let m = subgroup_matrix_left<f32, 8, 8>(f32(li));\nsubgroupMatrixStore(&o, 0u, m, false, 8u);"),
		"9:41: this argument of 'subgroup_matrix_left' must be subgroup uniform"},
	{"nonuniform_matrix_operand", sgm("", "var l = subgroup_matrix_left<f32, 8, 8>();\nif li == 0u { l = subgroup_matrix_left<f32, 8, 8>(); }\nlet p = subgroupMatrixMultiply<f32>(l, subgroup_matrix_right<f32, 8, 8>());\nsubgroupMatrixStore(&o, 0u, p, false, 8u);"),
		"10:19: 'subgroup_matrix_left' must only be called from subgroup uniform control flow"},
	{"nonuniform_scalar", sgm("", "let m = subgroupMatrixScalarMultiply(subgroup_matrix_result<f32, 8, 8>(), f32(li));\nsubgroupMatrixStore(&o, 0u, m, false, 8u);"),
		"9:75: this argument of 'subgroupMatrixScalarMultiply' must be subgroup uniform"},
	{"nonuniform_in_callee", sgm("fn put() { subgroupMatrixStore(&o, 0u, subgroup_matrix_left<f32, 8, 8>(), false, 8u); }", "if li == 0u { put(); }"),
		"9:15: 'put' calls a subgroup matrix builtin, so it must only be called from subgroup uniform control flow"},
	{"nonuniform_pointer_param", sgm("fn fetch(p: ptr<storage, array<f32>, read>, k: u32) -> subgroup_matrix_left<f32, 8, 8> { return subgroupMatrixLoad<subgroup_matrix_left<f32, 8, 8>>(p, k, false, 8u); }",
		"subgroupMatrixStore(&o, 0u, fetch(&a, li), false, 8u);"),
		"9:39: this argument must be subgroup uniform, since the function needs it so for a subgroup operation"},
}

func TestSubgroupMatrixRejects(t *testing.T) {
	for _, p := range sgmInvalid {
		t.Run(p.name, func(t *testing.T) {
			_, err := Compile(p.name+".wgsl", p.src, Options{})
			if err == nil {
				t.Fatalf("compiled without error; want %q", p.want)
			}
			list, ok := err.(ErrorList)
			if !ok {
				t.Fatalf("error is %T, not ErrorList: %v", err, err)
			}
			var got []string
			pos, msg, _ := strings.Cut(p.want, ": ")
			for _, e := range list {
				s := fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg)
				got = append(got, s)
				if strings.HasPrefix(s, pos+": ") && strings.Contains(e.Msg, msg) {
					return
				}
			}
			t.Errorf("want %q, got:\n%s\nsource:\n%s", p.want, strings.Join(got, "\n"), p.src)
		})
	}
}

// TestSubgroupMatrixPointerParamUniform: a pointer parameter that a matrix
// builtin needs uniform is uniform at the call site when its root and
// indices are, whatever memory it points to (read_write storage here).
func TestSubgroupMatrixPointerParamUniform(t *testing.T) {
	compileOK(t, "ptr_param.wgsl", sgm(`
fn put(p: ptr<storage, array<f32>, read_write>, m: subgroup_matrix_result<f32, 8, 8>) {
	subgroupMatrixStore(p, 0u, m, false, 8u);
}`, "put(&o, subgroup_matrix_result<f32, 8, 8>(2.0));"))
}

// TestSubgroupMatrixReflection: the reflection lists each multiplication's
// configuration once, whatever calls or functions make it.
func TestSubgroupMatrixReflection(t *testing.T) {
	m := compileOK(t, "configs.wgsl", "enable f16;\n"+sgm(`
fn mul(l: subgroup_matrix_left<f16, 16, 8>, r: subgroup_matrix_right<f16, 8, 16>) -> subgroup_matrix_result<f32, 8, 8> {
	return subgroupMatrixMultiply<f32>(l, r);
}`, `
let l = subgroup_matrix_left<f16, 16, 8>();
let r = subgroup_matrix_right<f16, 8, 16>();
let p = subgroupMatrixMultiplyAccumulate(l, r, mul(l, r));
let q = subgroupMatrixMultiply<f16>(l, r);
let s = subgroupMatrixMultiply<f32>(subgroup_matrix_left<f32, 8, 16>(), subgroup_matrix_right<f32, 4, 8>());
let b = subgroupMatrixMultiply<i32>(subgroup_matrix_left<i8, 32, 8>(), subgroup_matrix_right<i8, 8, 32>());
let c = subgroupMatrixMultiplyAccumulate(subgroup_matrix_left<u8, 32, 8>(), subgroup_matrix_right<u8, 8, 32>(), subgroup_matrix_result<u8, 8, 8>());
subgroupMatrixStore<row_major>(&o, 0u, p, 8u);`))
	got := fmt.Sprint(m.Reflection.MatrixConfigs)
	want := "[{8 8 16 f16 f16} {8 8 16 f16 f32} {8 8 32 i8 i32} {8 8 32 u8 u8} {16 4 8 f32 f32}]"
	if got != want {
		t.Errorf("MatrixConfigs = %s, want %s", got, want)
	}
}
