// nll_lse: per position, online logsumexp over a vocabulary tile of logits and
// nll = lse - logit[target]; one workgroup per position. Deterministic: no float atomics.
override WG: u32 = 64;

struct Shape { positions: u32, vocab: u32 }

@group(0) @binding(0) var<uniform> shape: Shape;
@group(0) @binding(1) var<storage, read> logits: array<f32>;  // (positions, vocab)
@group(0) @binding(2) var<storage, read> targets: array<u32>; // (positions)
@group(0) @binding(3) var<storage, read_write> nll: array<f32>; // (positions)

var<workgroup> wmax: array<f32, WG>;
var<workgroup> wsum: array<f32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>) {
	let pos = wid.x;
	if pos >= shape.positions { return; }
	let base = pos * shape.vocab;
	var m = -3.0e38;
	var s = 0.0;
	for (var v = li; v < shape.vocab; v += WG) {
		let z = logits[base + v];
		if z > m { s = s * exp(m - z) + 1.0; m = z; } else { s += exp(z - m); }
	}
	wmax[li] = m;
	wsum[li] = s;
	workgroupBarrier();
	var stride = WG / 2u;
	loop {
		if stride == 0u { break; }
		if li < stride {
			let m2 = wmax[li + stride];
			let s2 = wsum[li + stride];
			let mm = max(wmax[li], m2);
			wsum[li] = wsum[li] * exp(wmax[li] - mm) + s2 * exp(m2 - mm);
			wmax[li] = mm;
		}
		workgroupBarrier();
		continuing { stride /= 2u; }
	}
	if li == 0u {
		let lse = wmax[0] + log(wsum[0]);
		nll[pos] = lse - logits[base + targets[pos]];
	}
}
