// topk_logits_shared: per scored position, the K largest logits over the
// vocabulary and their ids, for --top-logprobs, with one workgroup per
// position for GPUs; the same bindings, push constants and result as
// topk_logits.wgsl, so the host picks either per adapter. For position r < P
// and ids v of this dispatch's slice [lo, hi) of the binding (global id
// base + v): logit = dot(h[r,:], wte[v,:]) in f32, the order of
// lmhead_loss.wgsl.
//
// The WG invocations of a workgroup split the slice (invocation l takes ids
// lo + l, lo + l + WG, ...) and each keeps a private top-K in function memory,
// sorted best first (by include/topk.wgsl's worse: NaN below every number,
// then lower logit, or equal logit and higher id; a new logit better than
// the last kept one is inserted in place). Unless init
// is 1, the K entries of topv/topi (r, :) from the previous dispatch are
// inserted first, entry j by invocation j mod WG. Then K rounds of selection
// merge the private lists: each invocation offers the best entry it has not
// given yet, a tree reduction in workgroup memory (log2 WG steps, a barrier
// each) finds the best offer, its owner moves on, and invocation 0 stores it
// as topv/topi (r, round): the result is sorted, best first. WG must be a
// power of two; 12 x WG bytes of workgroup memory.
//
// Work per invocation: ceil((hi - lo) / WG) x (C + 1 + K) + 2K + K x (log2
// WG + 2) loop iterations at most; the host cuts the vocabulary into slices
// within an adapter's loop limit as for topk_logits.wgsl.
//
// Dispatch: P workgroups (see grid); position wid.y * nwg.x + wid.x.
alias weight = f32;

override WG: u32 = 64;
//#include "include/topk.wgsl"

var<workgroup> sv: array<f32, WG>; // the offers: logits
var<workgroup> si: array<u32, WG>; // their ids
var<workgroup> so: array<u32, WG>; // their owners

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) l: u32) {
	let r = wid.y * nwg.x + wid.x;
	if r >= p.P { return; } // uniform: the whole workgroup
	let K = min(p.K, KMAX);
	var lv: array<f32, KMAX>;
	var li: array<u32, KMAX>;
	for (var j = 0u; j < K; j++) {
		lv[j] = NEG_BIG;
		li[j] = NO_ID;
	}
	let tb = r * K;
	let hb = r * p.C;
	// The candidates: the previous dispatch's entries, then this slice's ids.
	let prev = select(K, 0u, p.init == 1u);
	let n = prev + p.hi - p.lo;
	for (var q = l; q < n; q += WG) {
		var val = 0.0;
		var id = 0u;
		if q < prev {
			val = topv[tb + q];
			id = topi[tb + q];
		} else {
			let wb = (p.lo + q - prev) * p.C;
			var acc = 0.0;
			for (var c = 0u; c < p.C; c++) {
				acc += h[hb + c] * f32(wte[wb + c]);
			}
			val = acc;
			id = p.base + p.lo + q - prev;
		}
		if worse(lv[K - 1u], li[K - 1u], val, id) {
			var j = K - 1u;
			while j > 0u && worse(lv[j - 1u], li[j - 1u], val, id) {
				lv[j] = lv[j - 1u];
				li[j] = li[j - 1u];
				j--;
			}
			lv[j] = val;
			li[j] = id;
		}
	}
	// The previous dispatch's entries, read above by the invocations that
	// took them, are overwritten below by invocation 0: only a storage
	// barrier orders a write after another invocation's read of storage
	// memory (a workgroupBarrier orders workgroup memory only).
	storageBarrier();
	// Merge: K rounds, each giving the best entry not given yet.
	var next = 0u; // how many of this invocation's entries were given
	for (var round = 0u; round < K; round++) {
		let k = min(next, K - 1u);
		sv[l] = select(NEG_BIG, lv[k], next < K);
		si[l] = select(NO_ID, li[k], next < K);
		so[l] = l;
		workgroupBarrier();
		for (var s = WG / 2u; s > 0u; s /= 2u) {
			if l < s && worse(sv[l], si[l], sv[l + s], si[l + s]) {
				sv[l] = sv[l + s];
				si[l] = si[l + s];
				so[l] = so[l + s];
			}
			workgroupBarrier();
		}
		if so[0] == l {
			next++;
		}
		if l == 0u {
			topv[tb + round] = sv[0];
			topi[tb + round] = si[0];
		}
		workgroupBarrier(); // every invocation has read the winner before the next offers
	}
}
