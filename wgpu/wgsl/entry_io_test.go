package wgsl

// Programs for subgroup builtin values and struct entry point inputs; init
// adds them to the shared corpora, so the Tint oracle judges them too.
var entryIOValid = []struct{ name, src string }{
	{"subgroup_id_builtins", `enable subgroups;
@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(subgroup_id) sid: u32, @builtin(num_subgroups) n: u32, @builtin(local_invocation_index) li: u32) {
	o[li] = sid * 1000u + n;
}
`},
	{"struct_inputs", `struct In {
	@builtin(global_invocation_id) gid: vec3<u32>,
	@builtin(local_invocation_index) li: u32,
	@builtin(workgroup_id) wid: vec3<u32>,
}
@group(0) @binding(0) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(8)
fn main(in: In, @builtin(num_workgroups) nw: vec3<u32>) {
	o[in.gid.x] = in.li + in.wid.x * nw.x;
}
`},
	{"struct_inputs_uniform", `struct U {
	@builtin(workgroup_id) wid: vec3<u32>,
	@builtin(num_workgroups) nw: vec3<u32>,
}
@compute @workgroup_size(8)
fn main(u: U) {
	if u.wid.x < u.nw.x { workgroupBarrier(); }
}
`},
}

var entryIOInvalid = []struct{ name, src, want string }{
	{"subgroup_id_no_enable", "@compute @workgroup_size(1) fn main(@builtin(subgroup_id) s: u32) {}", "1:46: 'subgroup_id' requires 'enable subgroups;'"},
	{"num_subgroups_type", "enable subgroups;\n@compute @workgroup_size(1) fn main(@builtin(num_subgroups) s: i32) {}", "2:64: @builtin(num_subgroups) must have type u32"},
	{"struct_input_missing_builtin", "struct In { @builtin(local_invocation_index) li: u32, x: u32 }\n@compute @workgroup_size(1) fn main(in: In) {}",
		"2:37: entry point parameter 'in' needs a @builtin attribute"},
	{"struct_input_duplicate", "struct In { @builtin(local_invocation_index) li: u32 }\n@compute @workgroup_size(1) fn main(in: In, @builtin(local_invocation_index) l: u32) {}",
		"2:78: builtin value 'local_invocation_index' appears twice"},
	{"struct_input_nonuniform", "struct In { @builtin(workgroup_id) w: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32> }\n@compute @workgroup_size(4) fn main(in: In) {\nif in.w.x > 0u { workgroupBarrier(); } }",
		"3:18: 'workgroupBarrier' must only be called from uniform control flow"},
	{"struct_member_bad_builtin", "struct In { @builtin(vertex_index) v: u32 }\n@compute @workgroup_size(1) fn main(in: In) {}", "2:37: builtin value 'vertex_index' (member 'v' of 'In') is not available in compute shaders"},
}

func init() {
	validPrograms = append(validPrograms, entryIOValid...)
	invalidPrograms = append(invalidPrograms, entryIOInvalid...)
}
