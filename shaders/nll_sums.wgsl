// nll_sums: combines lmhead_loss.wgsl's partials. For each position p < P the
// tiles' (m, s) are merged in tile order (m = max, s rescaled) and
// nll[p] = m + log(s) - tgt[p]; then out[0] = (Σ nll, Σ nll²), each invocation
// summing its positions p = li, li + WG, ... in order and the workgroup adding
// those in a fixed tree: deterministic, no atomics.
// One workgroup; WG must be a power of two. Dispatch: (1, 1, 1).
override WG: u32 = 256;

struct Params { P: u32, tiles: u32 }

@group(0) @binding(0) var<storage, read> part: array<vec2<f32>>;      // (tiles, P): (m, s)
@group(0) @binding(1) var<storage, read> tgt: array<f32>;             // (P)
@group(0) @binding(2) var<storage, read_write> nll: array<f32>;       // (P)
@group(0) @binding(3) var<storage, read_write> out: array<vec2<f32>>; // (1): (Σ nll, Σ nll²)
var<push_constant> p: Params;

var<workgroup> partial: array<vec2<f32>, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32) {
	var acc = vec2<f32>(0.0);
	for (var i = li; i < p.P; i += WG) {
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
		acc += vec2<f32>(l, l * l);
	}
	partial[li] = acc;
	workgroupBarrier();
	var k = WG / 2u;
	while k > 0u {
		if li < k { partial[li] += partial[li + k]; }
		workgroupBarrier();
		k >>= 1u;
	}
	if li == 0u { out[0] = partial[0]; }
}
