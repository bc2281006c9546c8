// row_subgroup: a row of x (array<vec4<f32>>, which the including kernel
// binds) held by one subgroup, for the norm kernels that give each row to
// a subgroup (layernorm_rows.wgsl, rmsnorm_rows.wgsl), which include this
// file and enable subgroups. An invocation holds at most MAXV vec4s of its
// row in registers: C / 4 <= MAXV * the subgroup's size, which the host
// checks for the smallest size the device reports. The array costs 4
// registers a vec4 for the whole kernel, so the host writes into this line
// the MAXV its rows need in the device's smallest subgroups, ceil(C / 4 /
// size) (newRowsKernel: 6 for GPT-2's 768 channels in subgroups of 32, 3 in
// subgroups of 64), and compiles a module per width; 16, the largest it
// writes, is the file's. A subgroup smaller than the host counted on (a
// driver that runs fewer lanes than it reports: see lanes) reads the vec4s
// past its registers, its row's tail (tailStart), from memory in each pass:
// slower, never wrong; elsewhere the tail is empty and costs one compare.
const MAXV: u32 = 16u; // vec4s of a row per invocation, at most

// lanes is the invocations of the calling subgroup, which stride the row:
// counted, since subgroup_size is not that count on every driver. Without a
// required subgroup size, Vulkan makes SubgroupSize the device's
// subgroupSize, and some drivers then run fewer lanes than that, the rest
// of the subgroup inactive: Intel's (ANV reports 32 and compiles a pipeline
// for 8, 16 or 32 lanes as it likes), MoltenVK on AMD (64, over Metal's 32).
// A stride of subgroup_size there would skip channels. Called in uniform
// control flow, where every invocation of the subgroup is active (whole
// subgroups: the host's WG is a multiple of any subgroup size).
fn lanes() -> u32 {
	return subgroupAdd(1u);
}

// tailStart is the first vec4 of the row an invocation reads from memory
// rather than from its registers, which hold vec4 lane, lane + n, ... (n =
// lanes()) up to MAXV of them; it then reads every n-th. Past the row, as
// it is where the subgroup has at least the lanes the host sized MAXV for.
fn tailStart(lane: u32, n: u32) -> u32 {
	return lane + MAXV * n;
}

// loadRow is the invocation's share of the row of C4 vec4s from vec4 base
// that its registers hold, in subgroups of n lanes: vec4 lane, lane + n,
// ... in order (MAXV of them), zeros past the row.
fn loadRow(base: u32, C4: u32, lane: u32, n: u32) -> array<vec4<f32>, MAXV> {
	var v: array<vec4<f32>, MAXV>;
	for (var j = 0u; j < MAXV; j++) {
		let i = lane + j * n;
		if i < C4 { v[j] = x[base + i]; }
	}
	return v;
}

// rowTotal is the sum over the subgroup of the four lanes of s (the
// invocations' partial sums of a row): the row's total, in every invocation.
fn rowTotal(s: vec4<f32>) -> f32 {
	return subgroupAdd((s.x + s.y) + (s.z + s.w));
}
