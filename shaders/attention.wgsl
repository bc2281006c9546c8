// attention: causal multi-head self-attention over a KV cache, flash style
// (online softmax over keys, no T x T matrix). qkv (B*T, 3C) is the c_attn
// output of the current chunk of T rows per sequence (q | k | v along
// channels, H heads of hd = C/H channels each); kc, vc (B, H, S, hd) are the
// cache, which must already hold keys and values of positions 0 .. pos0+T-1
// (kv_write.wgsl). For query (b, h, t) at absolute position pos0+t:
//   out[(b*T+t)*C + h*hd + i] = Σ_{s<=pos0+t} softmax_s(q·k_s / sqrt(hd)) v_s[i].
// One invocation per query row (b, h, t), no workgroup memory, no barrier;
// q and the accumulator live in private arrays of 16 vec4, so hd <= 64 and
// hd % 4 == 0 are required (C % 4 == 0 follows).

override WG: u32 = 64;

struct Params { B: u32, T: u32, C: u32, H: u32, S: u32, pos0: u32 }

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;  // (B*T, 3C)
@group(0) @binding(1) var<storage, read> kc: array<vec4<f32>>;   // (B, H, S, hd)
@group(0) @binding(2) var<storage, read> vc: array<vec4<f32>>;   // (B, H, S, hd)
@group(0) @binding(3) var<storage, read_write> out: array<vec4<f32>>;  // (B*T, C)
var<push_constant> p: Params;

const MAXHD4: u32 = 16u; // hd <= 64

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let idx = (wid.y * nwg.x + wid.x) * WG + li;
	if idx >= p.B * p.H * p.T { return; }
	let t = idx % p.T;
	let bh = idx / p.T;          // b*H + h
	let h = bh % p.H;
	let b = bh / p.H;
	let C4 = p.C / 4u;
	let hd4 = min(C4 / p.H, MAXHD4);
	let row = b * p.T + t;
	let scale = inverseSqrt(f32(hd4 * 4u));

	var q: array<vec4<f32>, 16>;
	var acc: array<vec4<f32>, 16>;
	let qbase = row * 3u * C4 + h * hd4;
	for (var i = 0u; i < hd4; i++) {
		q[i] = qkv[qbase + i] * scale;
		acc[i] = vec4<f32>(0.0);
	}
	var m = -3.0e38;   // running max of the scores
	var l = 0.0;       // running Σ exp(score - m)
	let cbase = bh * p.S * hd4;
	let last = p.pos0 + t;
	for (var s = 0u; s <= last; s++) {
		let kb = cbase + s * hd4;
		var d4 = vec4<f32>(0.0);
		for (var i = 0u; i < hd4; i++) { d4 += q[i] * kc[kb + i]; }
		let sc = d4.x + d4.y + d4.z + d4.w;
		let mn = max(m, sc);
		let corr = exp(m - mn);
		let e = exp(sc - mn);
		l = l * corr + e;
		for (var i = 0u; i < hd4; i++) { acc[i] = acc[i] * corr + e * vc[kb + i]; }
		m = mn;
	}
	let inv = 1.0 / l;
	let obase = row * C4 + h * hd4;
	for (var i = 0u; i < hd4; i++) { out[obase + i] = acc[i] * inv; }
}
