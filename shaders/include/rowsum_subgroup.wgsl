// rowsum_subgroup: the sum over a workgroup of the norm kernels with subgroup
// operations (layernorm_subgroup.wgsl, rmsnorm_subgroup.wgsl), which include
// this file, enable subgroups and declare override WG: one subgroupAdd per
// subgroup, then a pass over the subgroups' partials in subgroup order, with
// two barriers, instead of log2(WG) rounds of a workgroup tree.
// Deterministic on a device.
var<workgroup> partial: array<f32, WG>; // one per subgroup (at most WG of them)

// total adds v over the workgroup: each subgroup's sum, then those in
// subgroup order (every invocation adds them alike). Every partial is read
// before it returns, so it may be called again.
fn total(v: f32, sid: u32, lane: u32, nsg: u32) -> f32 {
	let s = subgroupAdd(v);
	if lane == 0u { partial[sid] = s; }
	workgroupBarrier();
	var t = 0.0;
	for (var i = 0u; i < nsg; i++) { t += partial[i]; }
	workgroupBarrier(); // every partial is read before the next total writes one
	return t;
}
