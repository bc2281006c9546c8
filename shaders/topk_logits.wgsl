// topk_logits: per scored position, the K largest logits over the vocabulary
// and their ids, for --top-logprobs; the fused loss never stores logits. For
// position r < P and ids v of this dispatch's slice [lo, hi) of the binding
// (global id base + v): logit = dot(h[r,:], wte[v,:]) in f32, the order of
// lmhead_loss.wgsl. One invocation per position keeps its running top-K in
// function memory: loaded from topv/topi (P, K) unless init is 1, updated
// while streaming the slice (a new logit replaces the worst kept one, by
// include/topk.wgsl's worse: NaN below every number, then lower logit, or
// equal logit and higher id), stored back. The host cuts
// the vocabulary into slices so that one invocation loops at most
// (hi - lo) x (C + 1 + K) + 3K times (Mesa's llvmpipe ends an invocation's
// loops after 65535 iterations), dispatches them in order, and sorts each
// position's K entries itself. No workgroup memory, no barrier.
//
// Dispatch: ceil(P / WG) workgroups (see grid); wid.y * nwg.x * WG + gid.x.
alias weight = f32;

override WG: u32 = 64;
//#include "include/topk.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let r = gid.y * nwg.x * WG + gid.x;
	if r >= p.P { return; }
	let K = min(p.K, KMAX);
	var lv: array<f32, KMAX>;
	var li: array<u32, KMAX>;
	let tb = r * K;
	for (var j = 0u; j < K; j++) {
		if p.init == 1u {
			lv[j] = NEG_BIG;
			li[j] = NO_ID;
		} else {
			lv[j] = topv[tb + j];
			li[j] = topi[tb + j];
		}
	}
	// wi: the worst entry kept.
	var wi = 0u;
	for (var j = 1u; j < K; j++) {
		if worse(lv[j], li[j], lv[wi], li[wi]) { wi = j; }
	}
	let hb = r * p.C;
	for (var v = p.lo; v < p.hi; v++) {
		let wb = v * p.C;
		var acc = 0.0;
		for (var c = 0u; c < p.C; c++) {
			acc += h[hb + c] * f32(wte[wb + c]);
		}
		let id = p.base + v;
		if worse(lv[wi], li[wi], acc, id) {
			lv[wi] = acc;
			li[wi] = id;
			wi = 0u;
			for (var j = 1u; j < K; j++) {
				if worse(lv[j], li[j], lv[wi], li[wi]) { wi = j; }
			}
		}
	}
	for (var j = 0u; j < K; j++) {
		topv[tb + j] = lv[j];
		topi[tb + j] = li[j];
	}
}
