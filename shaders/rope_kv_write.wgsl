// rope_kv_write: the Llama family's rotary embedding of q and k, and the KV
// cache write, for the qkv matmul's output qkv (B*T, ld) of the current
// chunk of T rows per sequence: per row, H query heads, then KV key heads,
// then KV value heads, hd channels each (ld = (H + 2*KV) * hd). Row
// m = b*T + t is at position pos = pos0 + t. For each query and key head x
// (hd values), with QKNORM = 1 first x = x * rstd * wn (Qwen3's q_norm /
// k_norm over head_dim, rstd = 1/sqrt(mean(x²) + eps), wn the layer's
// weights, which the rope binding holds past the table from its pair norm
// on: hd/2 pairs (qn[i], qn[i + hd/2]), then hd/2 pairs of kn's, as f32, so
// that the kernel binds 4 storage buffers, Vulkan's minimum), then the
// rotate-half rotation of transformers: for i < hd/2, with (c, s) = rope[pos,
// i] (cos and sin of the angle, computed on the host in float64),
//   x'[i] = x[i]*c - x[i+hd/2]*s,  x'[i+hd/2] = x[i+hd/2]*c + x[i]*s.
// Rotated queries are written back in place (attention reads them from
// qkv); rotated keys go to kc and values, as they are, to vc, both
// (B, KV, S, hd) at position pos. kv_write.wgsl's job, for models with
// rotary positions, so that no dispatch is added for the rotation.
//
// One invocation per pair of channels (i, i + hd/2) of a (row, head): the
// invocations of a head are neighbours, so that each load and store of a
// subgroup is of consecutive words (a value head's pairs are copied). A
// workgroup of WG invocations, a multiple of hd/2 that the host sets
// (ropeWG), takes whole heads; with QKNORM = 1 its invocations put their
// pairs' a² + c² in workgroup memory, and after a barrier each adds its
// head's, in pair order (every invocation of a head the same sum), for
// rstd. Any hd (even: pairs of halves), pos0 + T <= S and pos0 + T <= the
// table's positions. The workgroups are flattened as wid.y * nwg.x + wid.x
// (see grid); invocations past the last pair do nothing but take part in
// the barrier.
override WG: u32 = 64;    // a multiple of hd/2 (the host's ropeWG)
override QKNORM: u32 = 0; // 1: RMSNorm each q and k head (qn, kn) before the rotation

struct Params { B: u32, T: u32, H: u32, KV: u32, hd: u32, S: u32, pos0: u32, eps: f32, norm: u32 } // norm: QKNORM only

@group(0) @binding(0) var<storage, read_write> qkv: array<f32>;  // (B*T, (H + 2*KV) * hd)
@group(0) @binding(1) var<storage, read_write> kc: array<f32>;   // (B, KV, S, hd)
@group(0) @binding(2) var<storage, read_write> vc: array<f32>;   // (B, KV, S, hd)
@group(0) @binding(3) var<storage, read> rope: array<vec2<f32>>; // (positions, hd/2): (cos, sin); QKNORM: the norms' pairs after
var<push_constant> p: Params;

var<workgroup> sq: array<f32, WG>; // QKNORM: each invocation's a² + c²

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let heads = p.H + 2u * p.KV;
	let half = p.hd / 2u;
	let idx = (wid.y * nwg.x + wid.x) * WG + li;
	let live = idx < p.B * p.T * heads * half;
	let rh = idx / half;   // row * heads + head
	let i = idx % half;    // the pair: channels i and i + half
	let row = rh / heads;  // b*T + t
	let j = rh % heads;    // the head within the row: q, then k, then v
	let b = row / p.T;
	let pos = p.pos0 + row % p.T;
	let src = rh * p.hd;
	var a = 0.0;
	var c = 0.0;
	if live {
		a = qkv[src + i];
		c = qkv[src + i + half];
	}
	if QKNORM == 1u {
		sq[li] = a * a + c * c;
		workgroupBarrier();
		let h0 = li - i; // the head's first invocation: workgroups start at heads
		var ss = 0.0;
		for (var k = 0u; k < half; k++) { ss += sq[h0 + k]; }
		let rstd = inverseSqrt(ss / f32(p.hd) + p.eps);
		if j < p.H + p.KV { // a query head's pair of q_norm, a key head's of k_norm
			let wn = rope[p.norm + select(half, 0u, j < p.H) + i];
			a = a * rstd * wn.x;
			c = c * rstd * wn.y;
		}
	}
	if !live { return; }
	if j >= p.H + p.KV { // a value head: to the cache as it is
		let dst = ((b * p.KV + j - p.H - p.KV) * p.S + pos) * p.hd;
		vc[dst + i] = a;
		vc[dst + i + half] = c;
		return;
	}
	let cs = rope[pos * half + i];
	let a2 = a * cs.x - c * cs.y;
	let c2 = c * cs.x + a * cs.y;
	if j < p.H {
		qkv[src + i] = a2;
		qkv[src + i + half] = c2;
	} else {
		let dst = ((b * p.KV + j - p.H) * p.S + pos) * p.hd;
		kc[dst + i] = a2;
		kc[dst + i + half] = c2;
	}
}
