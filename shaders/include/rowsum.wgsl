// rowsum: the sum over a workgroup of the norm kernels without subgroup
// operations (layernorm.wgsl, rmsnorm.wgsl), which include this file and
// declare override WG, a power of two: a tree in a fixed order
// (deterministic). WG = 1 needs no barrier.
var<workgroup> partial: array<f32, WG>;

// total adds v over the workgroup (a tree in a fixed order). Every partial is
// read before it returns, so it may be called again.
fn total(li: u32, v: f32) -> f32 {
	if WG == 1u { return v; }
	partial[li] = v;
	workgroupBarrier();
	var s = WG / 2u;
	while s > 0u {
		if li < s { partial[li] += partial[li + s]; }
		workgroupBarrier();
		s >>= 1u;
	}
	let r = partial[0];
	workgroupBarrier();
	return r;
}
