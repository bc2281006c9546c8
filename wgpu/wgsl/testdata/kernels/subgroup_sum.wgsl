// subgroup_sum: out[wg] = sum of x over the workgroup, via subgroupAdd then workgroup memory.
enable subgroups;

const WG = 256u;
const MAX_SUBGROUPS = 64u; // subgroup size is at least 4

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;

var<workgroup> sums: array<f32, MAX_SUBGROUPS>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) li: u32,
        @builtin(workgroup_id) wid: vec3<u32>, @builtin(subgroup_invocation_id) sid: u32,
        @builtin(subgroup_size) ssize: u32) {
	var v = 0.0;
	if gid.x < arrayLength(&x) { v = x[gid.x]; }
	let s = subgroupAdd(v);
	let nsub = (WG + ssize - 1u) / ssize;
	if sid == 0u { sums[li / ssize] = s; }
	workgroupBarrier();
	if li == 0u {
		var total = 0.0;
		for (var i = 0u; i < nsub; i++) { total += sums[i]; }
		out[wid.x] = total;
	}
}
