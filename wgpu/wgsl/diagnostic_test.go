package wgsl

// Programs for diagnostic filters and requires directives; init adds them
// to the shared corpora, so the Tint oracle judges them too.
var diagValid = []struct{ name, src string }{
	{"diagnostic_directive_off", "diagnostic(off, subgroup_uniformity);\nenable subgroups;\n" +
		ent("@group(0) @binding(0) var<storage, read_write> o: array<f32>;", "if li == 0u { o[0] = subgroupAdd(1.0); }")},
	{"diagnostic_fn_attr", "enable subgroups;\n@group(0) @binding(0) var<storage, read_write> o: array<f32>;\n" +
		"@diagnostic(off, subgroup_uniformity) fn f(k: u32) { if k == 0u { o[0] = subgroupAdd(1.0); } }\n" + ent("", "f(li);")},
	{"diagnostic_stmt_attr", "enable subgroups;\n" + ent("@group(0) @binding(0) var<storage, read_write> o: array<f32>;",
		"@diagnostic(off, subgroup_uniformity) if li == 0u { o[0] = subgroupAdd(1.0); }\n"+
			"@diagnostic(warning, subgroup_uniformity) { for (var i = li; i < 4u; i++) { o[1] = subgroupMax(2.0); } }\n"+
			"@diagnostic(info, subgroup_uniformity) while li > 7u { o[2] = subgroupMin(2.0); break; }")},
	{"diagnostic_other_rules", "diagnostic(warning, derivative_uniformity);\ndiagnostic(info, chromium.unreachable_code);\ndiagnostic(off, subgroup_uniformity,);\n" + ep},
	{"requires_more_features", "requires unrestricted_pointer_parameters, subgroup_id, subgroup_uniformity;\nrequires readonly_and_readwrite_storage_textures, texture_and_sampler_let, texture_formats_tier1;\nenable subgroups;\n" +
		"@group(0) @binding(0) var<storage, read_write> o: array<u32>;\nfn put(p: ptr<storage, u32, read_write>, v: u32) { *p = v; }\n" +
		"@compute @workgroup_size(64) fn main(@builtin(subgroup_id) s: u32, @builtin(local_invocation_index) li: u32) { put(&o[li], s); }"},
	{"requires_features", "requires packed_4x8_integer_dot_product, pointer_composite_access;\nstruct S { a: f32, b: array<f32, 2> }\n" +
		"fn g(p: ptr<function, S>) -> f32 { return p.a + p.b[1]; }\n" +
		kernel("", "var s = S(fo[0], array(1.0, 2.0)); fo[1] = g(&s); ou[0] = dot4U8Packed(ou[1], ou[2]);")},
}

var diagInvalid = []struct{ name, src, want string }{
	{"diagnostic_barrier_not_filtered", "diagnostic(off, subgroup_uniformity);\n" + ent("", "if li == 0u { workgroupBarrier(); }"),
		"5:15: 'workgroupBarrier' must only be called from uniform control flow"},
	{"diagnostic_stmt_error_again", "diagnostic(off, subgroup_uniformity);\nenable subgroups;\n" +
		ent("@group(0) @binding(0) var<storage, read_write> o: array<f32>;", "@diagnostic(error, subgroup_uniformity) if li == 0u { o[0] = subgroupAdd(1.0); }"),
		"6:62: 'subgroupAdd' must only be called from subgroup uniform control flow"},
	{"diagnostic_bad_severity", "diagnostic(loud, subgroup_uniformity);" + ep, "1:1: unknown diagnostic severity 'loud'"},
	{"diagnostic_conflict", "diagnostic(off, subgroup_uniformity);\ndiagnostic(error, subgroup_uniformity);" + ep,
		"2:19: conflicting diagnostic directive for 'subgroup_uniformity'"},
	{"requires_unknown", "requires no_such_feature;" + ep, "1:10: language feature 'no_such_feature' is not supported"},
	{"stmt_attr_not_diagnostic", body("@align(4) if true {}"), "2:1: attribute '@align' is not valid on a statement"},
	{"stmt_attr_on_let", body("@diagnostic(off, subgroup_uniformity) let a = 1;"), "2:39: attributes may only precede"},
}

func init() {
	validPrograms = append(validPrograms, diagValid...)
	invalidPrograms = append(invalidPrograms, diagInvalid...)
}

// Filters on compound statements, loop and switch bodies and function bodies,
// and @location on members of structs that are not compute inputs.
var diagValid2 = []struct{ name, src string }{
	{"diagnostic_body_attrs", "enable subgroups;\n" + ent(`@group(0) @binding(0) var<storage, read_write> o: array<f32>;
fn f(k: u32) @diagnostic(off, subgroup_uniformity) { if k == 0u { o[3] = subgroupAdd(1.0); } }
struct V { @location(0) c: vec4<f32>, @builtin(position) p: vec4<f32> }`,
		"if li == 0u @diagnostic(off, subgroup_uniformity) { o[0] = subgroupAdd(1.0); }\n"+
			"loop @diagnostic(off, subgroup_uniformity) { if li > 2u { o[1] = subgroupMax(1.0); } break; }\n"+
			"switch li @diagnostic(off, subgroup_uniformity) { case 1u: { o[2] = subgroupMin(1.0); } default: {} }\nf(li);")},
}

var diagInvalid2 = []struct{ name, src, want string }{
	{"diagnostic_if_body_only", "enable subgroups;\n" + ent("@group(0) @binding(0) var<storage, read_write> o: array<f32>;",
		"if li == 0u @diagnostic(off, subgroup_uniformity) { o[0] = subgroupAdd(1.0); } else { o[1] = subgroupAdd(2.0); }"),
		"5:94: 'subgroupAdd' must only be called from subgroup uniform control flow"},
	{"location_member_as_input", "struct V { @location(0) c: vec4<f32> }\n@compute @workgroup_size(1) fn main(v: V) {}", "2:37: entry point parameter 'v' needs a @builtin"},
}

func init() {
	validPrograms = append(validPrograms, diagValid2...)
	invalidPrograms = append(invalidPrograms, diagInvalid2...)
}

// var<immediate> is WGSL's spelling of push constants (wgpu's push_constant).
var immediateValid = []struct{ name, src string }{
	{"immediate_address_space", `struct PC { n: u32, alpha: f32 }
var<immediate> pc: PC;
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(16) fn main(@builtin(global_invocation_id) gid: vec3<u32>) { if gid.x < pc.n { o[gid.x] *= pc.alpha; } }`},
	{"immediate_requires", "requires immediate_address_space;\nvar<immediate> k: vec2<u32>;\n@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n@compute @workgroup_size(1) fn main() { o[k.x] = k.y; }"},
}

// linear_indexing's builtin values.
var linearValid = []struct{ name, src string }{
	{"linear_indexing", "requires linear_indexing;\noverride W: u32 = 8;\n@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n" +
		"@compute @workgroup_size(W, 2, 2) fn main(@builtin(global_invocation_index) g: u32, @builtin(workgroup_index) w: u32) { o[g] = w; }"},
}

var linearInvalid = []struct{ name, src, want string }{
	{"linear_index_nonuniform", "@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n" +
		"@compute @workgroup_size(4) fn main(@builtin(global_invocation_index) g: u32) { if g == 0u { workgroupBarrier(); } }", "2:94: 'workgroupBarrier' must only be called from uniform control flow"},
	{"linear_index_type", "@compute @workgroup_size(4) fn main(@builtin(workgroup_index) g: i32) {}", "1:66: @builtin(workgroup_index) must have type u32"},
}

func init() {
	validPrograms = append(validPrograms, immediateValid...)
	validPrograms = append(validPrograms, linearValid...)
	invalidPrograms = append(invalidPrograms, linearInvalid...)
}

// swizzle_assignment: assignment and compound assignment to swizzles.
var swizzleValid = []struct{ name, src string }{
	{"swizzle_assignment", "requires swizzle_assignment;\n" + kernel("struct S { v: vec4<f32> }\nfn put(p: ptr<function, vec3<f32>>) { p.zx = vec2(5.0, 6.0); }",
		`var v = vec4(1.0, 2.0, 3.0, 4.0); v.xy = vec2(fo[0], fo[1]); v.wz += vec2(1.0); var s: S; s.v.gr = v.ba;
		var w = vec3<f32>(); put(&w); var a = array<vec2<u32>, 2>(); a[ou[0] % 2u].yx = vec2(7u, 8u); ou[1] = a[1].x;
		fo[2] = v.x + s.v.y + w.z;`)},
	{"swizzle_assignment_storage", "@group(0) @binding(0) var<storage, read_write> o: array<vec4<i32>>;\n@compute @workgroup_size(1) fn main() { o[1].zy = vec2(3, 4); o[0].xw *= vec2(2); }"},
}

var swizzleInvalid = []struct{ name, src, want string }{
	{"swizzle_assign_repeated", body("var v = vec2(1.0); v.xx = vec2(2.0);"), "2:20: cannot assign to a swizzle that names a component twice"},
	{"swizzle_assign_value", body("let v = vec2(1.0); v.xy = vec2(2.0);"), "2:20: cannot assign to this expression"},
	{"swizzle_assign_read_only", "@group(0) @binding(0) var<storage> r: vec4<f32>;\n" + body("r.xy = vec2(2.0);"), "3:1: cannot write to a read-only storage variable"},
}

func init() {
	validPrograms = append(validPrograms, swizzleValid...)
	invalidPrograms = append(invalidPrograms, swizzleInvalid...)
}
