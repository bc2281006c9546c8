package wgsl

import (
	"fmt"
	"strings"
	"testing"
)

// ep is a minimal entry point appended to snippets that test declarations.
const ep = "\n@compute @workgroup_size(1) fn main() {}\n"

// body wraps statements in an entry point; line 2 is the first body line.
func body(s string) string {
	return "@compute @workgroup_size(1) fn main() {\n" + s + "\n}\n"
}

var invalidPrograms = []struct {
	name, src string
	want      string // "line:col: message substring" of one reported error
}{
	// lexing and parsing
	{"bad_char", body("let a = 1 $ 2;"), "2:11: invalid character '$'"},
	{"unterminated_comment", "/* open\n" + ep, "1:1: unterminated block comment"},
	{"missing_semicolon", body("let a = 1\nlet b = 2;"), "3:1: expected ';', found 'let'"},
	{"reserved_word", body("let class = 1;"), "2:5: 'class' is a reserved word"},
	{"double_underscore", body("let __x = 1;"), "2:5: two underscores"},
	{"chained_compare", body("let c = 1 < 2 < 3;"), "2:15: comparisons cannot be chained"},
	{"mixed_logic", body("let c = true && false || true;"), "2:23: mixing '&&' and '||'"},
	{"mixed_bitwise", body("let c = 1 & 2 | 3;"), "2:15: mixing '&' with '|'"},
	{"switch_no_default", body("switch 1 { case 2: {} }"), "2:1: a switch needs a default clause"},
	{"switch_duplicate", body("switch 1u { case 2u, 3u: {} case 3u: {} default: {} }"), "2:34: duplicate case value 3"},
	{"switch_float", body("switch 1.0 { default: {} }"), "2:8: switch selector must be i32 or u32"},
	{"switch_runtime_case", body("let k = 1; switch 1 { case k: {} default: {} }"), "2:28: expected a const-expression"},
	{"let_at_module", "let x = 1;" + ep, "1:1: 'let' declarations are only allowed inside functions"},
	{"break_if_outside", body("loop { break if true; }"), "2:8: 'break if' is only allowed"},
	{"leading_zero", body("let a = 012;"), "2:9: leading zeros"},
	{"missing_brace", "@compute @workgroup_size(1) fn main() {\nlet a = 1;\n", "3:1: expected '}', found end of file"},
	{"directive_late", ep + "enable f16;", "3:1: directives must come before"},
	{"unknown_extension", "enable foo;" + ep, "1:8: extension 'foo' is not supported"},
	{"override_in_fn", body("override x = 1;"), "2:1: 'override' declarations are only allowed at module scope"},

	// names and types
	{"unknown_ident", body("let a = b;"), "2:9: unknown identifier 'b'"},
	{"unknown_type", body("var a: float;"), "2:8: unknown type 'float'"},
	{"redeclared", body("let a = 1; let a = 2;"), "2:16: redeclaration of 'a'"},
	{"module_redeclared", "const a = 1; const a = 2;" + ep, "1:20: redeclaration of 'a'"},
	{"shadowed_builtin_call", body("let max = 1; let b = max(1, 2);"), "2:22: 'max' is not a function"},
	{"shadowed_type", body("let f32 = 1; var x: f32;"), "2:21: 'f32' is not a type"},
	{"type_mismatch_let", body("let a: u32 = 1.5;"), "2:14: cannot use a value of type 'abstract-float' as 'u32'"},
	{"type_mismatch_binary", body("let a = 1u; let b = 2i; let c = a + b;"), "2:35: mismatched types: 'u32' and 'i32'"},
	{"u32_negative", body("let a: u32 = -1;"), "2:14: value -1 cannot be represented as 'u32'"},
	{"i32_overflow_literal", body("let a = 3000000000i;"), "2:9: does not fit in i32"},
	{"const_overflow", body("const a = 9223372036854775807 + 1;"), "2:31: '+' overflows 'abstract-int'"},
	{"const_shift_sign", body("const a = 3i << 31u;"), "2:14: '<<' overflows 'i32'"},
	{"const_div_zero", body("const a = 1 / 0;"), "2:15: integer division by zero"},
	{"f16_without_enable", body("var a: f16;"), "2:8: f16 requires 'enable f16;'"},
	{"f16_literal_without_enable", body("let a = 1.0h;"), "2:9: f16 literals require 'enable f16;'"},
	{"subgroups_without_enable", body("let a = subgroupAdd(1.0);"), "2:9: 'subgroupAdd' requires 'enable subgroups;'"},
	{"subgroup_builtin_without_enable", "@compute @workgroup_size(1) fn main(@builtin(subgroup_size) s: u32) {}", "1:46: 'subgroup_size' requires 'enable subgroups;'"},
	{"matrix_negate", body("let m = mat2x2f(); let n = -m;"), "2:28: operator '-' cannot be applied to 'mat2x2<f32>'"},
	{"matrix_int", body("var m: mat4x4<i32>;"), "2:15: matrix components must be f32 or f16"},
	{"matrix_ctor_count", body("let m = mat2x2<f32>(1.0, 2.0, 3.0);"), "2:9: 'mat2x2<f32>' needs 2 column vectors or 4 scalars, got 3"},
	{"bad_swizzle", body("let v = vec3(1.0); let w = v.xq;"), "2:30: invalid vector swizzle 'xq'"},
	{"swizzle_out_of_range", body("let v = vec2(1.0); let w = v.z;"), "2:30: invalid vector swizzle 'z'"},
	{"no_member", "struct S { a: f32 }\n" + body("var s: S; let b = s.b;"), "3:21: struct 'S' has no member 'b'"},
	{"const_index_oob", body("var a: array<f32, 4>; let b = a[4];"), "2:33: index 4 is out of bounds"},
	{"bool_arith", body("let a = true + false;"), "2:14: operator '+' cannot be applied"},
	{"not_on_int", body("let a = !1;"), "2:9: operator '!' cannot be applied to 'abstract-int'"},
	{"negate_u32", body("let a = 1u; let b = -a;"), "2:21: operator '-' cannot be applied to 'u32'"},
	{"shift_by_signed", body("let a = 1u; let b = 2i; let c = a << b;"), "2:35: the shift amount must be u32"},
	{"const_shift_too_far", body("const a = 1u << 32u;"), "2:17: the shift amount 32 is not less than"},
	{"if_not_bool", body("if 1 { }"), "2:4: if condition must be bool"},
	{"while_not_bool", body("while 1u { }"), "2:7: while condition must be bool"},
	{"vec_count", body("let v = vec3<f32>(1.0, 2.0);"), "2:9: 'vec3<f32>' needs 3 components, got 2"},
	{"vec_of_matrix", body("let v = vec2<f32>(mat2x2<f32>());"), "2:19: vector components must be scalars or vectors, not 'mat2x2<f32>'"},
	{"vec_of_abstract_matrix", body("const m = mat2x2(0, 0, 0, 10);\nlet v = vec2(m);"), "3:14: vector components must be scalars or vectors, not 'mat2x2<abstract-float>'"},
	{"array_count", body("let a = array<i32, 2>(1, 2, 3);"), "2:9: 'array<i32, 2>' needs 2 elements, got 3"},
	{"struct_args", "struct S { a: f32, b: u32 }\n" + body("let s = S(1.0);"), "3:9: 'S' has 2 members, got 1 arguments"},
	{"array_size_zero", body("var a: array<f32, 0>;"), "2:19: array element count must be positive"},
	{"array_size_runtime", body("let n = 4; var a: array<f32, n>;"), "2:30: array element count must be a const-expression"},
	{"bitcast_size", body("let a = bitcast<u32>(vec2<f32>(1.0));"), "2:9: cannot bitcast 'vec2<f32>' to 'u32'"},
	{"self_cycle", "const a = b; const b = a;" + ep, "1:7: 'a' depends on itself"},
	{"recursion", "fn f(x: i32) -> i32 { return f(x); }" + ep, "1:4: recursion is not allowed"},
	{"wrong_arg_count", "fn f(x: i32) -> i32 { return x; }\n" + body("let a = f(1, 2);"), "3:9: 'f' takes 1 arguments, got 2"},
	{"wrong_arg_type", "fn f(x: i32) -> i32 { return x; }\n" + body("let a = f(1u);"), "3:11: cannot use a value of type 'u32' as 'i32'"},
	{"missing_return", "fn f(x: i32) -> i32 { if x > 0 { return 1; } }" + ep, "1:21: must return a value on every path"},
	{"return_in_void", body("return 1;"), "2:8: does not return a value"},
	{"unused_result", body("max(1, 2);"), "2:1: the result of 'max' must be used"},
	{"void_as_value", "fn g() {}\n" + body("let a = g();"), "3:9: function 'g' does not return a value"},
	{"unknown_function", body("let a = foo(1);"), "2:9: unknown function 'foo'"},
	{"math_on_int", body("let a = 1u; let b = sqrt(a);"), "2:21: 'sqrt' needs float arguments"},
	{"select_mismatch", body("let a = select(1u, 2.0, true);"), "2:9: 'select' values must have the same type"},
	{"break_outside_loop", body("break;"), "2:1: 'break' must be inside a loop body or a switch"},
	{"continue_in_continuing", body("loop { continuing { continue; } }"), "2:21: 'continue' must be inside a loop body"},
	{"continue_past_decl", body("var i = 0;\nloop { if i > 3 { continue; } let k = i + 1; continuing { i = k; break if i > 9; } }"), "3:19: this continue skips the declaration of 'k'"},
	{"return_in_continuing", body("loop { continuing { return; } }"), "2:21: 'return' is not allowed in a continuing block"},

	// memory, address spaces, access modes
	{"assign_let", body("let a = 1; a = 2;"), "2:12: cannot assign to this expression"},
	{"assign_const", body("const a = 1; a = 2;"), "2:14: cannot assign"},
	{"write_readonly", "@group(0) @binding(0) var<storage, read> b: array<f32>;\n" + body("b[0] = 1.0;"), "3:1: cannot write to a read-only storage variable"},
	{"write_uniform", "@group(0) @binding(0) var<uniform> u: vec4<f32>;\n" + body("u.x = 1.0;"), "3:1: cannot write to a read-only uniform variable"},
	{"missing_binding", "@group(0) var<storage> b: array<f32>;" + ep, "1:24: storage variable 'b' needs @group and @binding"},
	{"no_address_space", "var x: f32;" + ep, "1:1: module-scope 'var' needs an address space"},
	{"function_at_module", "var<function> x: f32;" + ep, "1:4: 'function' variables must be declared inside a function"},
	{"bad_space", "var<texture> x: f32;" + ep, "1:5: unknown address space 'texture'"},
	{"write_only_storage", "@group(0) @binding(0) var<storage, write> b: array<f32>;" + ep, "1:27: write-only storage buffers are not allowed"},
	{"bool_in_storage", "@group(0) @binding(0) var<storage, read_write> b: array<bool>;" + ep, "1:51: not host-shareable"},
	{"runtime_array_in_uniform", "@group(0) @binding(0) var<uniform> b: array<f32>;" + ep, "1:39: runtime-sized arrays are only allowed in storage"},
	{"runtime_array_not_last", "struct S { a: array<f32>, b: u32 }" + ep, "1:12: a runtime-sized array may only be the last member"},
	{"workgroup_init", "var<workgroup> w: f32 = 1.0;" + ep, "1:25: workgroup variables cannot have an initializer"},
	{"private_runtime_init", "var<private> w: f32 = f();\nfn f() -> f32 { return 1.0; }" + ep, "1:23: functions cannot be called here"},
	{"local_in_private_space", body("var<private> x: f32;"), "2:5: variables inside functions must be in the function address space"},
	{"atomic_load_plain", "@group(0) @binding(0) var<storage, read_write> c: atomic<u32>;\n" + body("let x = c;"), "3:9: atomics can only be accessed with atomic builtins"},
	{"atomic_wrong_type", "var<workgroup> c: atomic<f32>;" + ep, "1:26: atomic needs i32 or u32"},
	{"atomic_readonly", "@group(0) @binding(0) var<storage, read> c: atomic<u32>;" + ep, "1:45: atomics need storage, read_write"},
	{"atomic_not_pointer", "var<workgroup> c: atomic<u32>;\n" + body("let x = atomicAdd(c, 1u);"), "3:19: atomics can only be accessed"},
	{"address_of_value", body("let a = 1; let p = &a;"), "2:20: cannot take the address of a value"},
	{"address_of_swizzle", body("var v = vec2(1.0); let p = &v.x;"), "2:28: cannot take the address of a vector component"},
	{"deref_non_pointer", body("let a = 1; let b = *a;"), "2:20: cannot dereference"},
	{"same_binding", "@group(0) @binding(1) var<storage, read_write> a: array<f32>;\n@group(0) @binding(1) var<storage, read_write> b: array<f32>;\n" + body("a[0] = b[0];"), "2:48: uses both 'a' and 'b' at @group(0) @binding(1)"},
	{"shadowed_address_space", "const storage = 1;\n@group(0) @binding(0) var<storage> b: array<f32>;" + ep, "2:27: 'storage' is declared in this module"},
	{"param_redeclared", "fn f(x: i32) { let x = 2; }" + ep, "1:20: redeclaration of 'x'"},
	{"abstract_to_u32_negative", body("let a = u32(-1);"), "2:9: value -1 cannot be represented as 'u32'"},
	{"runtime_div_const_zero", "@group(0) @binding(0) var<storage, read_write> b: array<u32>;\n" + body("b[0] = b[1] % 0u;"), "3:15: integer division by zero"},
	{"min_of_pointer", body("var v = 1u; let p = &v; let m = min(v, p);"), "2:33: expected scalars or vectors"},
	{"loop_no_exit", body("var i = 0; loop { i++; }"), "2:12: loop does not exit"},
	{"barrier_as_value", body("let x = f32(workgroupBarrier());"), "2:13: 'workgroupBarrier' does not return a value"},
	{"runtime_shift_too_far", "@group(0) @binding(0) var<storage, read_write> b: array<u32>;\n" + body("b[0] = b[1] >> 32u;"), "3:16: the shift amount 32 is not less than"},
	{"array_length_bad", body("var a: array<f32, 4>; let n = arrayLength(&a);"), "2:31: 'arrayLength' needs a pointer to a runtime-sized storage array"},

	// attributes, entry points, overrides
	{"no_workgroup_size", "@compute fn main() {}", "1:13: needs @workgroup_size"},
	{"workgroup_size_zero", "@compute @workgroup_size(0) fn main() {}", "1:26: @workgroup_size values must be at least 1"},
	{"workgroup_size_runtime", "var<private> n: u32 = 1u;\n@compute @workgroup_size(n) fn main() {}", "2:26: module-scope variable 'n' cannot be used here"},
	{"entry_param_without_builtin", "@compute @workgroup_size(1) fn main(x: u32) {}", "1:37: needs a @builtin attribute"},
	{"builtin_wrong_type", "@compute @workgroup_size(1) fn main(@builtin(global_invocation_id) g: u32) {}", "1:71: must have type vec3<u32>"},
	{"unknown_builtin", "@compute @workgroup_size(1) fn main(@builtin(position) g: vec4<f32>) {}", "1:46: builtin value 'position' is not available in compute shaders"},
	{"unknown_builtin_named", "@compute @workgroup_size(1) fn main(@builtin(thread_id) g: u32) {}", "1:46: unknown builtin value 'thread_id'"},
	{"vertex_stage", "@vertex fn main() {}", "1:1: only compute shaders are supported"},
	{"unknown_attribute", "@foo @compute @workgroup_size(1) fn main() {}", "1:1: attribute '@foo' is not valid on a function"},
	{"entry_returns", "@compute @workgroup_size(1) fn main() -> f32 { return 1.0; }", "1:42: a compute entry point cannot return a value"},
	{"call_entry", "@compute @workgroup_size(1) fn main() {}\nfn g() { main(); }", "2:10: entry point 'main' cannot be called"},
	{"override_no_type", "override x;" + ep, "1:10: override 'x' needs a type or an initializer"},
	{"override_vector", "override x: vec2<f32>;" + ep, "1:10: must have a concrete scalar type"},
	{"override_dup_id", "@id(1) override a: u32; @id(1) override b: u32;" + ep, "1:41: override id 1 is already used by 'a'"},
	{"override_in_const", "override a: u32 = 1u; const b = a;" + ep, "1:33: expected a const-expression; override values are not known"},
	{"override_array_private", "override n: u32 = 4u; var<private> a: array<f32, n>;" + ep, "1:39: arrays sized by an override are only allowed in the workgroup"},
	{"align_not_pow2", "struct S { @align(3) a: f32 }" + ep, "1:19: @align must be a power of two"},
	{"size_too_small", "struct S { @size(2) a: f32 }" + ep, "1:18: @size(2) is smaller than the member's size 4"},
	{"const_assert_fails", "const_assert 1 > 2;" + ep, "1:1: const_assert failed"},
	{"duplicate_member", "struct S { a: f32, a: u32 }" + ep, "1:20: duplicate member 'a'"},
	{"pointer_param_push_constant", "var<push_constant> pc: f32;\nfn f(p: ptr<push_constant, f32>) {}" + ep, "2:13: expected an address space"},
	{"group_on_private", "@group(0) var<private> x: f32;" + ep, "1:1: @group and @binding are only valid on uniform and storage"},
}

func TestInvalidPrograms(t *testing.T) {
	for _, p := range invalidPrograms {
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
			for _, e := range list {
				s := fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg)
				got = append(got, s)
				pos, msg, _ := strings.Cut(p.want, ": ")
				if strings.HasPrefix(s, pos+": ") && strings.Contains(e.Msg, msg) {
					return
				}
			}
			t.Errorf("want %q, got:\n%s", p.want, strings.Join(got, "\n"))
		})
	}
}

// ent is an entry point with a non-uniform (li) and a uniform (wid) builtin.
func ent(decls, body string) string {
	return decls + "\n@compute @workgroup_size(64)\nfn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>) {\n" + body + "\n}\n"
}

var uniformityPrograms = []struct{ name, src, want string }{
	{"barrier_in_nonuniform_if", ent("", "if li < 4u { workgroupBarrier(); }"), "4:14: 'workgroupBarrier' must only be called from uniform control flow"},
	{"barrier_after_nonuniform_return", ent("", "if li >= 8u { return; }\nstorageBarrier();"), "5:1: 'storageBarrier' must only be called from uniform control flow"},
	{"barrier_after_nonuniform_break", ent("", "loop { if li > 3u { break; } workgroupBarrier(); }"), "4:30: 'workgroupBarrier' must only be called"},
	{"barrier_after_switch_continue", ent("", "for (var k = 0u; k < 4u; k++) { switch li { case 0u: { continue; } default: {} } workgroupBarrier(); }"), "4:82: 'workgroupBarrier' must only be called"},
	{"barrier_nonuniform_var", ent("", "var n = 4u; n = li; if n > 2u { workgroupBarrier(); }"), "4:33: 'workgroupBarrier' must only be called"},
	{"barrier_nonuniform_loop", ent("", "for (var i = 0u; i < li; i++) { workgroupBarrier(); }"), "4:33: 'workgroupBarrier' must only be called"},
	{"barrier_storage_value", ent("@group(0) @binding(0) var<storage, read_write> n: u32;", "if n > 0u { workgroupBarrier(); }"), "4:13: 'workgroupBarrier' must only be called"},
	{"barrier_in_callee", ent("fn sync() { workgroupBarrier(); }", "if li == 0u { sync(); }"), "4:15: 'sync' calls a barrier"},
	{"barrier_param_nonuniform", ent("fn f(k: u32) { if k > 0u { workgroupBarrier(); } }", "f(li);"), "4:3: this argument must be uniform"},
	{"subgroup_nonuniform", "enable subgroups;\n" + ent("", "var x = 0.0; if li == 0u { x = subgroupAdd(1.0); }"), "5:32: 'subgroupAdd' must only be called from subgroup uniform control flow"},
	// workgroupUniformLoad's pointer must be uniform too: the same
	// location in every invocation.
	{"uniform_load_nonuniform_index", ent("var<workgroup> w: array<u32, 64>;", "_ = workgroupUniformLoad(&w[li]);"),
		"4:26: this argument of 'workgroupUniformLoad' must be uniform"},
	{"uniform_load_nonuniform_let_ptr", ent("var<workgroup> w: array<u32, 64>;", "let p = &w[li % 4u]; _ = workgroupUniformLoad(p);"),
		"4:47: this argument of 'workgroupUniformLoad' must be uniform"},
	{"uniform_load_param_ptr_nonuniform", ent("var<workgroup> w: array<u32, 64>;\nfn g(p: ptr<workgroup, u32>) -> u32 { return workgroupUniformLoad(p); }\n"+
		"fn f(p: ptr<workgroup, u32>) -> u32 { return g(p); }", "_ = f(&w[li]);"), "6:7: this argument must be uniform"},
	{"barrier_via_atomic", ent("var<workgroup> c: atomic<u32>;", "if atomicLoad(&c) > 0u { workgroupBarrier(); }"), "4:26: must only be called from uniform"},
}

var uniformOK = []struct{ name, src string }{
	{"uniform_param", ent("fn f(k: u32) { if k > 0u { workgroupBarrier(); } }", "f(wid.x); f(3u);")},
	{"uniform_load", ent("var<workgroup> n: u32;", "if li == 0u { n = 5u; } let m = workgroupUniformLoad(&n); for (var i = 0u; i < m; i++) { workgroupBarrier(); }")},
	{"uniform_sources", ent("@group(0) @binding(0) var<uniform> u: u32; @group(0) @binding(1) var<storage, read> r: array<u32>;",
		"var k = u + r[wid.x]; k += 1u; if k > 2u && r[0] > 0u { workgroupBarrier(); } while k > 0u { k -= 1u; storageBarrier(); }")},
	{"switch_break_reconverges", ent("", "switch li % 2u { case 0u: { if li > 3u { break; } } default: {} }\nworkgroupBarrier();")},
	{"uniform_load_uniform_ptrs", ent("var<workgroup> w: array<u32, 64>;\n@group(0) @binding(0) var<uniform> u: vec4<u32>;\n"+
		"fn g(p: ptr<workgroup, u32>) -> u32 { return workgroupUniformLoad(p); }\nfn f(p: ptr<workgroup, u32>) -> u32 { return g(p); }",
		"let p = &w[2]; let q = &w; _ = workgroupUniformLoad(p) + workgroupUniformLoad(&q[u.x]) + f(&w[wid.x]) + f(&w[1]);")},
	{"nonuniform_without_barrier", ent("@group(0) @binding(0) var<storage, read_write> o: array<u32>;", "if li < 3u { o[li] = 1u; return; }")},
}

func TestUniformityAccepts(t *testing.T) {
	for _, p := range uniformOK {
		t.Run(p.name, func(t *testing.T) { compileOK(t, p.name+".wgsl", p.src) })
	}
}

func init() {
	invalidPrograms = append(invalidPrograms, uniformityPrograms...)
}
