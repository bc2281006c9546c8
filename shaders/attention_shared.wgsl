// attention_shared: causal multi-head self-attention over a KV cache, flash
// style, for GPUs: the same function, bindings and push constants as
// attention.wgsl (so the host picks either per adapter). qkv (B*T, ld) is the
// current chunk of T rows per sequence, its first C = H*HD channels the
// queries (GPT-2's c_attn output, ld = 3C; the Llama family's q|k|v,
// ld = (H + 2*KV) * HD); kc, vc (B, KV, S, HD) are the cache of KV key/value
// heads, which must already hold the keys and values of positions
// 0 .. pos0+T-1 (written by c_attn's matmul epilogue, matmul_shared.wgsl's
// epiQKV, or by kv_write.wgsl or rope_kv_write.wgsl). Query head h attends
// with key/value head g = h / (H/KV). For query (b, h, t) at absolute
// position pos0+t:
//   out[(b*T+t)*C + h*HD + i] = Σ_{s<=pos0+t} softmax_s(lscale · q·k_s / sqrt(HD)) v_s[i].
//
// A workgroup takes BQ consecutive queries of one (b, h), one invocation per
// query row: q and the output accumulator stay in private arrays of HD/4
// vec4 whose bounds are constants (the host sets HD to the model's head size),
// so a GPU compiler keeps them in registers. The keys are streamed in tiles
// of BKV positions: the workgroup copies the tile's keys and values from the
// cache into workgroup memory with vec4 loads spread over all invocations,
// waits at a barrier, and every invocation reads them from there (the same
// address in all invocations at once: a broadcast, no bank conflict). Per
// tile, an invocation first computes the scores of its visible keys (those at
// or before its position), then rescales its running sum and accumulator once
// by exp(m_old - m_new), then adds exp(score - m_new) * v. Tiles past the
// block's last query position are never loaded (the causal mask skips them
// whole); within the diagonal tile the mask is per row.
//
// Why one invocation per query row: per key it does 2·HD multiply-adds and
// HD/2 vec4 reads of workgroup memory, all broadcasts, with no exchange
// between invocations (so no subgroup feature is needed and one kernel serves
// every GPU), and 2·HD/4 vec4 of q and accumulator in registers (HD 64: 128
// registers, which NVIDIA keeps as registers because the bounds are constants
// once the pipeline is made). Several invocations per row would hold fewer
// registers but add a subgroup reduction per key (or a barrier per tile) and
// read the same workgroup memory per multiply-add; two rows per invocation
// would halve the reads but need 256 registers at HD 64 (HD 128 needs 256
// with one row per invocation already: a GPU spills some). The query heads
// of a group each load their key/value head's tiles (from L2 after the
// first). The host uses BQ 64, BKV 32 on GPUs and BQ 16, BKV 16 on CPU
// drivers (attention.go).
//
// Workgroup memory: 2 * BKV * HD * 4 bytes (16 KiB with HD 64, BKV 32).
// Dispatch: B * H * ceil(T / BQ) workgroups, spread over x and y as grid()
// does (flattened as wid.y * nwg.x + wid.x), those past the last return.
// Requires C = H * HD, HD % 4 == 0, HD <= 128, ld % 4 == 0, BKV <= 32 and
// pos0 + T <= S.

override HD: u32 = 64;  // channels per head: a multiple of 4, at most 4 * MAXHD4
override BQ: u32 = 64;  // queries (and invocations) per workgroup
override BKV: u32 = 32; // keys per tile, at most MAXBKV
override HD4: u32 = HD / 4u;

// lscale: the scores' factor besides 1/sqrt(HD): 1, or 1/(l+1) in block l of a GPT-2 with
// scale_attn_by_inverse_layer_idx (Stanford CRFM's).
struct Params { B: u32, T: u32, C: u32, H: u32, KV: u32, S: u32, pos0: u32, ld: u32, lscale: f32 }

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;  // (B*T, ld)
@group(0) @binding(1) var<storage, read> kc: array<vec4<f32>>;   // (B, KV, S, HD)
@group(0) @binding(2) var<storage, read> vc: array<vec4<f32>>;   // (B, KV, S, HD)
@group(0) @binding(3) var<storage, read_write> out: array<vec4<f32>>;  // (B*T, C)
var<push_constant> p: Params;

// Private arrays cannot be sized by overrides in WGSL: they have the largest
// sizes the host allows, and the loops run to HD4 and BKV, plain constants
// once the pipeline is created.
const MAXHD4: u32 = 32u;
const MAXBKV: u32 = 32u;
var<workgroup> ks: array<vec4<f32>, BKV * HD4>; // (BKV, HD/4): the tile's keys
var<workgroup> vs: array<vec4<f32>, BKV * HD4>; // (BKV, HD/4): its values

@compute @workgroup_size(BQ)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let blocks = (p.T + BQ - 1u) / BQ; // query blocks per (b, h)
	let wg = wid.y * nwg.x + wid.x;
	if wg >= p.B * p.H * blocks { return; } // uniform: the whole workgroup leaves
	let bh = wg / blocks; // b*H + h
	let q0 = (wg % blocks) * BQ; // the block's first query row
	let h = bh % p.H;
	let b = bh / p.H;
	let t = q0 + li;
	let live = t < p.T; // rows past T only help load tiles
	let tq = min(t, p.T - 1u);
	let g = h / (p.H / p.KV); // the key/value head
	let row = b * p.T + tq;
	let scale = inverseSqrt(f32(HD)) * p.lscale;

	var q: array<vec4<f32>, MAXHD4>;
	var acc: array<vec4<f32>, MAXHD4>;
	let qbase = row * (p.ld / 4u) + h * HD4;
	for (var i = 0u; i < HD4; i++) {
		q[i] = qkv[qbase + i] * scale;
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
		for (var i = li; i < BKV * HD4; i += BQ) {
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
		if live && s0 <= last {
			var mt = m;
			for (var j = 0u; j < BKV; j++) {
				var d4 = vec4<f32>(0.0);
				for (var i = 0u; i < HD4; i++) {
					d4 += q[i] * ks[j * HD4 + i];
				}
				let x = d4.x + d4.y + d4.z + d4.w;
				sc[j] = x;
				if s0 + j <= last {
					mt = max(mt, x);
				}
			}
			let corr = exp(m - mt);
			l *= corr;
			for (var i = 0u; i < HD4; i++) {
				acc[i] *= corr;
			}
			for (var j = 0u; j < BKV; j++) {
				if s0 + j <= last {
					let e = exp(sc[j] - mt);
					l += e;
					for (var i = 0u; i < HD4; i++) {
						acc[i] += e * vs[j * HD4 + i];
					}
				}
			}
			m = mt;
		}
		workgroupBarrier(); // every invocation is done with the tile before it is overwritten
	}
	if !live { return; }
	let inv = 1.0 / l;
	let obase = row * (p.C / 4u) + h * HD4;
	for (var i = 0u; i < HD4; i++) {
		out[obase + i] = acc[i] * inv;
	}
}
