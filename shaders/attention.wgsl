// attention: causal multi-head self-attention over a KV cache, flash style
// (online softmax over keys, no T x T matrix), with grouped key/value heads.
// qkv (B*T, ld) is the current chunk of T rows per sequence, its first
// C = H*HD channels the queries (H heads of HD channels; GPT-2's c_attn output
// has ld = 3C, the Llama family's q|k|v ld = (H + 2*KV) * HD); kc, vc
// (B, KV, S, HD) are the cache of KV key/value heads, which must already hold
// the keys and values of positions 0 .. pos0+T-1 (kv_write.wgsl,
// rope_kv_write.wgsl). Query head h attends with key/value head
// g = h / (H/KV) (GPT-2: KV = H). For query (b, h, t) at position pos0+t:
//   out[(b*T+t)*C + h*HD + i] = Σ_{s<=pos0+t} softmax_s(lscale · q·k_s / sqrt(HD)) v_s[i].
// One invocation per query row (b, h, t), no workgroup memory, no barrier;
// q and the accumulator live in private arrays of HD/4 vec4 (at most MAXHD4),
// so HD <= 128 and HD % 4 == 0 are required, and ld % 4 == 0.
//
// The loops over a head's channels run to HD4, a constant once the pipeline
// is created: Mesa's llvmpipe unrolls them (at most 32 iterations), so that
// an invocation's loop iterations, which it limits to 65535 in all, are about
// its keys (TestAttentionLoopLimit), not keys x HD/2.

override WG: u32 = 64;
override HD: u32 = 64; // channels per head: a multiple of 4, at most 4 * MAXHD4
override HD4: u32 = HD / 4u;

// lscale: the scores' factor besides 1/sqrt(HD): 1, or 1/(l+1) in block l of a GPT-2 with
// scale_attn_by_inverse_layer_idx (Stanford CRFM's).
struct Params { B: u32, T: u32, C: u32, H: u32, KV: u32, S: u32, pos0: u32, ld: u32, lscale: f32 }

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;  // (B*T, ld)
@group(0) @binding(1) var<storage, read> kc: array<vec4<f32>>;   // (B, KV, S, HD)
@group(0) @binding(2) var<storage, read> vc: array<vec4<f32>>;   // (B, KV, S, HD)
@group(0) @binding(3) var<storage, read_write> out: array<vec4<f32>>;  // (B*T, C)
var<push_constant> p: Params;

const MAXHD4: u32 = 32u; // HD <= 128

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let idx = (wid.y * nwg.x + wid.x) * WG + li;
	if idx >= p.B * p.H * p.T { return; }
	let t = idx % p.T;
	let bh = idx / p.T;          // b*H + h
	let h = bh % p.H;
	let b = bh / p.H;
	let g = h / (p.H / p.KV);    // the key/value head
	let row = b * p.T + t;
	let scale = inverseSqrt(f32(HD)) * p.lscale;

	var q: array<vec4<f32>, MAXHD4>;
	var acc: array<vec4<f32>, MAXHD4>;
	let qbase = row * (p.ld / 4u) + h * HD4;
	for (var i = 0u; i < HD4; i++) {
		q[i] = qkv[qbase + i] * scale;
		acc[i] = vec4<f32>(0.0);
	}
	var m = -3.0e38;   // running max of the scores
	var l = 0.0;       // running Σ exp(score - m)
	let cbase = (b * p.KV + g) * p.S * HD4;
	let last = p.pos0 + t;
	for (var s = 0u; s <= last; s++) {
		let kb = cbase + s * HD4;
		var d4 = vec4<f32>(0.0);
		for (var i = 0u; i < HD4; i++) { d4 += q[i] * kc[kb + i]; }
		let sc = d4.x + d4.y + d4.z + d4.w;
		let mn = max(m, sc);
		let corr = exp(m - mn);
		let e = exp(sc - mn);
		l = l * corr + e;
		for (var i = 0u; i < HD4; i++) { acc[i] = acc[i] * corr + e * vc[kb + i]; }
		m = mn;
	}
	let inv = 1.0 / l;
	let obase = row * (p.C / 4u) + h * HD4;
	for (var i = 0u; i < HD4; i++) { out[obase + i] = acc[i] * inv; }
}
