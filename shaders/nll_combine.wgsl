// nll_combine: the loss per position from the LM head's partials. For each
// position p < P the parts' (m, s) (lmhead_loss.wgsl: one per vocabulary
// tile; lmhead_loss_shared.wgsl: one per slice) are merged in part order
// (m = max, s rescaled) and nll[p] = m + log(s) - the target logit (its
// bits at targets[P + p], include/lmhead.wgsl). The host reads nll
// back and adds it exactly (model/exactsum), so the sums do not depend on
// how targets are batched.
//
// One invocation per position. Dispatch: ceil(P/WG) workgroups, spread over x
// and y as grid() does (flattened as wid.y * nwg.x + wid.x).
override WG: u32 = 256;

struct Params { P: u32, tiles: u32 }

@group(0) @binding(0) var<storage, read> part: array<vec2<f32>>; // (tiles, P): (m, s)
@group(0) @binding(1) var<storage, read> targets: array<u32>;    // (2, P): ids, then the target logits' bits
@group(0) @binding(2) var<storage, read_write> nll: array<f32>;  // (P)
var<push_constant> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let i = (wid.y * nwg.x + wid.x) * WG + li;
	if i >= p.P { return; }
	var m = -3.0e38;
	var s = 0.0;
	for (var t = 0u; t < p.tiles; t++) {
		let ms = part[t * p.P + i];
		let mn = max(m, ms.x);
		s = s * exp(m - mn) + ms.y * exp(ms.x - mn);
		m = mn;
	}
	nll[i] = m + log(s) - bitcast<f32>(targets[p.P + i]);
}
