// attention_shared_subgroup: attention_shared.wgsl's function, bindings,
// push constants and scheme with QS consecutive invocations of a subgroup
// per query row, for GPUs with subgroup operations at the larger head
// sizes. Each invocation holds HD/QS channels of q and of the output
// accumulator (vec4s part, part + QS, ... of the head, so that the QS
// invocations of a row read consecutive vec4s of workgroup memory, in
// different banks), and a score is its QS partial dot products summed with
// log2(QS) subgroupShuffleXor steps: a butterfly, whose additions give the
// same bits in every invocation of the row (each adds the same two values,
// only in the other order), so all of them agree on the running max and
// sum. At head size 128 and QS 4 an invocation holds 2 x 32 f32 instead of
// 2 x 128 (which AMD's compiler spilled to scratch memory).
//
// Requires what attention_shared.wgsl does, and QS a power of two that
// divides HD/4 and the subgroup size (so that a row's invocations, QS
// consecutive local invocation indices, are in one subgroup). The
// workgroup has BQ * QS invocations; the host picks QS (attnTilesFor).
enable subgroups;
// The shuffles run under control flow that follows the query row (whether
// it exists, whether it sees the tile): the same in the QS invocations of a
// row, which are all a shuffle reads, but not across the subgroup, which
// the rule checks.
diagnostic(off, subgroup_uniformity);

override QS: u32 = 4; // invocations per query row: 1, 2 or 4

// groupSum is x summed over the QS invocations of this one's row, the same
// in each.
fn groupSum(x: f32) -> f32 {
	var s = x;
	for (var k = 1u; k < QS; k *= 2u) {
		s += subgroupShuffleXor(s, k);
	}
	return s;
}

//#include "include/attention_shared.wgsl"
