// nll_combine: the loss per position from the LM head's partials, and the
// sums of a block of positions. For each position p < P the parts' (m, s)
// (lmhead_loss.wgsl: one per vocabulary tile; lmhead_loss_shared.wgsl: one per
// slice) are merged in part order (m = max, s rescaled) and
// nll[p] = m + log(s) - tgt[p]. Then workgroup w adds (nll, nll²) of its WG
// positions w*WG .. w*WG + WG - 1 (zeros past P) in a fixed tree into
// blocks[w]; nll_sums.wgsl adds the blocks. Deterministic, no atomics: the
// same P gives the same order on any device.
//
// One invocation per position; WG must be a power of two. Dispatch:
// ceil(P/WG) workgroups, spread over x and y as grid() does (flattened as
// wid.y * nwg.x + wid.x).
override WG: u32 = 256;

struct Params { P: u32, tiles: u32 }

@group(0) @binding(0) var<storage, read> part: array<vec2<f32>>;         // (tiles, P): (m, s)
@group(0) @binding(1) var<storage, read> tgt: array<f32>;                // (P)
@group(0) @binding(2) var<storage, read_write> nll: array<f32>;          // (P)
@group(0) @binding(3) var<storage, read_write> blocks: array<vec2<f32>>; // (ceil(P/WG)): (Σ nll, Σ nll²)
var<push_constant> p: Params;

var<workgroup> partial: array<vec2<f32>, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let w = wid.y * nwg.x + wid.x;
	if w * WG >= p.P { return; } // uniform: the whole workgroup leaves
	let i = w * WG + li;
	var acc = vec2<f32>(0.0);
	if i < p.P {
		var m = -3.0e38;
		var s = 0.0;
		for (var t = 0u; t < p.tiles; t++) {
			let ms = part[t * p.P + i];
			let mn = max(m, ms.x);
			s = s * exp(m - mn) + ms.y * exp(ms.x - mn);
			m = mn;
		}
		let l = m + log(s) - tgt[i];
		nll[i] = l;
		acc = vec2<f32>(l, l * l);
	}
	partial[li] = acc;
	workgroupBarrier();
	for (var k = WG / 2u; k > 0u; k >>= 1u) {
		if li < k { partial[li] += partial[li + k]; }
		workgroupBarrier();
	}
	if li == 0u { blocks[w] = partial[0]; }
}
