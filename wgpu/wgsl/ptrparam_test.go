package wgsl

// Pointer parameters into workgroup, storage and uniform memory, and pointers
// to elements and members (issue 8, item 9; WGSL's
// unrestricted_pointer_parameters, which Tint implements).

var ptrParamValid = []struct{ name, src string }{
	{"ptr_param_workgroup_element", `var<workgroup> w: array<f32, 8>;
fn bump(p: ptr<workgroup, f32>, v: f32) { *p += v; }
@compute @workgroup_size(8) fn main(@builtin(local_invocation_index) li: u32) { bump(&w[li], 1.0); }`},
	{"ptr_param_storage_member", `struct S { a: f32, b: array<vec2<f32>, 4>, c: array<u32> }
@group(0) @binding(0) var<storage, read_write> s: S;
@group(0) @binding(1) var<storage, read_write> t: S;
fn put(p: ptr<storage, vec2<f32>, read_write>, q: ptr<storage, f32, read_write>) { *p = vec2(*q, 2.0); }
fn twice(p: ptr<storage, vec2<f32>, read_write>, q: ptr<storage, f32, read_write>) { put(p, q); put(p, q); }
@compute @workgroup_size(1) fn main(@builtin(global_invocation_id) g: vec3<u32>) { twice(&s.b[g.x], &t.a); put(&t.b[1], &s.a); }`},
	{"ptr_param_uniform_read", `struct U { m: array<vec4<f32>, 2>, k: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
fn load1(p: ptr<uniform, vec4<f32>>) -> f32 { return (*p).y + p.z; }
@compute @workgroup_size(1) fn main() { o[0] = load1(&u.m[u.k]); }`},
	{"ptr_param_function_element", `@group(0) @binding(0) var<storage, read_write> o: array<i32>;
fn inc(p: ptr<function, i32>) { *p += 1; }
fn row(p: ptr<function, array<i32, 3>>, i: i32) { inc(&(*p)[i]); inc(&p[0]); }
@compute @workgroup_size(1) fn main() { var a: array<array<i32, 3>, 2>; row(&a[1], 2); let q = &a[0][1]; inc(q); o[0] = a[1][2] + a[1][0] * 10 + a[0][1] * 100; }`},
	{"ptr_param_atomic_workgroup", `var<workgroup> c: array<atomic<u32>, 2>;
fn add(p: ptr<workgroup, atomic<u32>>) -> u32 { return atomicAdd(p, 1u); }
@compute @workgroup_size(4) fn main(@builtin(local_invocation_index) li: u32) { _ = add(&c[li % 2u]); }`},
	{"ptr_param_private_element", `var<private> pv: array<u32, 4>;
@group(0) @binding(0) var<storage, read_write> o: array<u32>;
fn store1(p: ptr<private, u32>, v: u32) { *p = v; }
@compute @workgroup_size(1) fn main() { store1(&pv[2], 7u); o[0] = pv[2]; }`},
}

var ptrParamUniformOK = []struct{ name, src string }{
	{"ptr_param_readonly_uniform_index", ent("@group(0) @binding(0) var<storage, read> r: array<u32, 4>;\nfn load1(p: ptr<storage, u32>) -> u32 { return *p; }",
		"if load1(&r[wid.x]) == 0u { workgroupBarrier(); }")},
	{"ptr_param_uniform_buffer", ent("@group(0) @binding(0) var<uniform> n: vec4<u32>;\nfn load1(p: ptr<uniform, vec4<u32>>) -> u32 { return p.x; }",
		"for (var i = 0u; i < load1(&n); i++) { workgroupBarrier(); }")},
	{"ptr_param_workgroup_store_then_barrier", ent("var<workgroup> w: array<u32, 64>;\nfn put(p: ptr<workgroup, u32>, v: u32) { *p = v; }",
		"put(&w[li], li); workgroupBarrier();")},
}

var ptrParamUniformBad = []struct{ name, src, want string }{
	{"ptr_param_workgroup_read_nonuniform", ent("var<workgroup> w: array<u32, 4>;\nfn load1(p: ptr<workgroup, u32>) -> u32 { return *p; }",
		"if load1(&w[0]) == 0u { workgroupBarrier(); }"), "5:25: 'workgroupBarrier' must only be called from uniform control flow"},
	{"ptr_param_readonly_nonuniform_index", ent("@group(0) @binding(0) var<storage, read> r: array<u32, 64>;\nfn load1(p: ptr<storage, u32>) -> u32 { return *p; }",
		"if load1(&r[li]) == 0u { workgroupBarrier(); }"), "5:26: 'workgroupBarrier' must only be called from uniform control flow"},
	{"ptr_param_storage_rw_read", ent("@group(0) @binding(0) var<storage, read_write> r: array<u32, 4>;\nfn q(p: ptr<storage, array<u32, 4>, read_write>) -> u32 { return p[0]; }",
		"if q(&r) == 0u { workgroupBarrier(); }"), "5:18: 'workgroupBarrier' must only be called from uniform control flow"},
	{"ptr_param_private_index_read", ent("var<private> pv: array<u32, 4>;\nfn q(p: ptr<private, array<u32, 4>>) -> u32 { return p[1]; }",
		"if q(&pv) == 0u { workgroupBarrier(); }"), "5:19: 'workgroupBarrier' must only be called from uniform control flow"},
}

func init() {
	validPrograms = append(validPrograms, ptrParamValid...)
	uniformOK = append(uniformOK, ptrParamUniformOK...)
	invalidPrograms = append(invalidPrograms, ptrParamUniformBad...)
}
