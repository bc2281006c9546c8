// row_subgroup: a row of x (array<vec4<f32>>, which the including kernel
// binds) held by one subgroup, for the norm kernels that give each row to
// a subgroup (layernorm_rows.wgsl, rmsnorm_rows.wgsl), which include this
// file and enable subgroups. An invocation holds at most MAXV vec4s of its
// row: C / 4 <= MAXV * the subgroup's size, which the host checks. The
// array costs 4 registers a vec4 for the whole kernel, so the host writes
// into this line the MAXV its rows need in the device's smallest subgroups,
// ceil(C / 4 / size) (newRowsKernel: 6 for GPT-2's 768 channels in
// subgroups of 32, 3 in subgroups of 64), and compiles a module per width;
// 16, the largest it writes, is the file's.
const MAXV: u32 = 16u; // vec4s of a row per invocation, at most

// loadRow is the invocation's share of the row of C4 vec4s from vec4 base:
// vec4 lane, lane + sgs, ... in order, zeros past the row.
fn loadRow(base: u32, C4: u32, lane: u32, sgs: u32) -> array<vec4<f32>, MAXV> {
	var v: array<vec4<f32>, MAXV>;
	for (var j = 0u; j < MAXV; j++) {
		let i = lane + j * sgs;
		if i < C4 { v[j] = x[base + i]; }
	}
	return v;
}

// rowTotal is the sum over the subgroup of the four lanes of s (the
// invocations' partial sums of a row): the row's total, in every invocation.
fn rowTotal(s: vec4<f32>) -> f32 {
	return subgroupAdd((s.x + s.y) + (s.z + s.w));
}
