// attention_shared: the body of the SIMT flash-attention kernels,
// attention_shared.wgsl (one invocation per query row, no subgroup
// operation) and attention_shared_subgroup.wgsl (QS invocations of a
// subgroup per query row), which include this file after declaring QS, the
// invocations per query row, and groupSum(x), the sum of x over the QS
// invocations of a row (identical in all of them). See attention_shared.wgsl
// for the function, the bindings and the scheme.

override HD: u32 = 64;  // channels per head: a multiple of 4, at most 4 * MAXHD4
override BQ: u32 = 64;  // queries per workgroup (BQ * QS invocations)
override BKV: u32 = 32; // keys per tile, at most MAXBKV
override HD4: u32 = HD / 4u;
override HQ: u32 = HD4 / QS; // the vec4s of q and of the output an invocation holds

// lscale: the scores' factor besides 1/sqrt(HD): 1, or 1/(l+1) in block l of a GPT-2 with
// scale_attn_by_inverse_layer_idx (Stanford CRFM's).
struct Params { B: u32, T: u32, C: u32, H: u32, KV: u32, S: u32, pos0: u32, ld: u32, lscale: f32 }

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;  // (B*T, ld)
@group(0) @binding(1) var<storage, read> kc: array<vec4<f32>>;   // (B, KV, S, HD)
@group(0) @binding(2) var<storage, read> vc: array<vec4<f32>>;   // (B, KV, S, HD)
@group(0) @binding(3) var<storage, read_write> out: array<vec4<f32>>;  // (B*T, C)
var<push_constant> p: Params;

// Private arrays cannot be sized by overrides in WGSL: they have the largest
// sizes the host allows, and the loops run to HQ and BKV, plain constants
// once the pipeline is created.
const MAXHD4: u32 = 32u;
const MAXBKV: u32 = 32u;
var<workgroup> ks: array<vec4<f32>, BKV * HD4>; // (BKV, HD/4): the tile's keys
var<workgroup> vs: array<vec4<f32>, BKV * HD4>; // (BKV, HD/4): its values

@compute @workgroup_size(BQ * QS)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let blocks = (p.T + BQ - 1u) / BQ; // query blocks per (b, h)
	let wg = wid.y * nwg.x + wid.x;
	if wg >= p.B * p.H * blocks { return; } // uniform: the whole workgroup leaves
	let bh = wg / blocks; // b*H + h
	let q0 = (wg % blocks) * BQ; // the block's first query row
	let h = bh % p.H;
	let b = bh / p.H;
	let t = q0 + li / QS; // the invocation's query row
	let part = li % QS;   // its channels: vec4s part, part + QS, part + 2·QS, ... of the head
	let live = t < p.T; // rows past T only help load tiles
	let tq = min(t, p.T - 1u);
	let g = h / (p.H / p.KV); // the key/value head
	let row = b * p.T + tq;
	let scale = inverseSqrt(f32(HD)) * p.lscale;

	var q: array<vec4<f32>, MAXHD4>;   // q's vec4s part + QS·i, i < HQ
	var acc: array<vec4<f32>, MAXHD4>; // the output's, likewise
	let qbase = row * (p.ld / 4u) + h * HD4 + part;
	for (var i = 0u; i < HQ; i++) {
		q[i] = qkv[qbase + QS * i] * scale;
		acc[i] = vec4<f32>(0.0);
	}
	var m = -3.0e38; // running max of the scores
	var l = 0.0;     // running Σ exp(score - m)
	let last = p.pos0 + tq;                             // the row's last visible key
	let keys = p.pos0 + min(q0 + BQ, p.T);              // keys the block sees: 0 .. keys-1
	let cbase = (b * p.KV + g) * p.S * HD4;
	// One element more than any BKV: Mesa's NIR unrolls a loop that walks a
	// whole private array whatever the loop's size (to keep the array in
	// registers), and at BKV 32 the unrolled tile (32 keys x the head's dot
	// products) took Mesa 25's lavapipe minutes to compile (LLVM 15's
	// coroutine frames: 107 s at head size 64, over 6 minutes at 128, where
	// BKV 24 or 33 elements take 2 s). A GPU's module has the loops over sc
	// unrolled by the compiler (wgsl.Options.UnrollRegisters) whatever the
	// array's length; a CPU driver keeps them rolled.
	var sc: array<f32, MAXBKV + 1u>;
	for (var s0 = 0u; s0 < keys; s0 += BKV) {
		// The tile: BKV keys and values, vec4 by vec4, zeros past the block's keys.
		for (var i = li; i < BKV * HD4; i += BQ * QS) {
			var kv = vec4<f32>(0.0);
			var vv = vec4<f32>(0.0);
			if s0 + i / HD4 < keys {
				kv = kc[cbase + s0 * HD4 + i];
				vv = vc[cbase + s0 * HD4 + i];
			}
			ks[i] = kv;
			vs[i] = vv;
		}
		workgroupBarrier();
		// The same condition in all invocations of a row (groupSum needs them together).
		if live && s0 <= last {
			var mt = m;
			for (var j = 0u; j < BKV; j++) {
				var d4 = vec4<f32>(0.0);
				for (var i = 0u; i < HQ; i++) {
					d4 += q[i] * ks[j * HD4 + part + QS * i];
				}
				let x = groupSum(d4.x + d4.y + d4.z + d4.w);
				sc[j] = x;
				if s0 + j <= last {
					mt = max(mt, x);
				}
			}
			let corr = exp(m - mt);
			l *= corr;
			for (var i = 0u; i < HQ; i++) {
				acc[i] *= corr;
			}
			for (var j = 0u; j < BKV; j++) {
				if s0 + j <= last {
					let e = exp(sc[j] - mt);
					l += e;
					for (var i = 0u; i < HQ; i++) {
						acc[i] += e * vs[j * HD4 + part + QS * i];
					}
				}
			}
			m = mt;
		}
		workgroupBarrier(); // every invocation is done with the tile before it is overwritten
	}
	if !live { return; }
	let inv = 1.0 / l;
	let obase = row * (p.C / 4u) + h * HD4 + part;
	for (var i = 0u; i < HQ; i++) {
		out[obase + QS * i] = acc[i] * inv;
	}
}
