// lmhead_loss_shared: the tied LM head fused with an online logsumexp, tiled
// in workgroup memory for GPUs; logits are never stored. For positions p < P
// and tokens v of this binding (global id v0 + v, v < V):
// logit[p][v] = dot(h[p,:], wte[v,:]), in f32; wte is weights. The same
// bindings and push constants as lmhead_loss.wgsl, and the same kind of
// partials, one per position and slice of the vocabulary instead of one per
// tile, so nll_combine.wgsl combines either's and the host picks one per
// adapter.
//
// The binding's vocabulary is cut into tiles of VT ids and the tiles into
// slices of NT tiles: slice g covers the binding's ids g*NT*VT .. (g+1)*NT*VT
// - 1 (fewer in the last). Workgroup (x, g) (headBlock's numbering, which
// keeps what the resident workgroups read within the L2 cache) takes
// positions x*BM .. x*BM + BM - 1 and slice g, tile by tile. The logits of a tile are computed as
// matmul_shared.wgsl computes its tiles (the same layout, read the comments
// there): WG = (BM/TM) * (VT/TN) invocations each accumulate TM positions x TN
// ids in f32, spread across the tile in blocks of 4; h and wte are read as
// vec4s along C (so C must be a multiple of 4: GPT2's always is, as NewGPT2
// takes head sizes that are multiples of 4 only; lmhead_loss.wgsl reads
// scalars and takes any C), stored
// transposed in workgroup memory (vec4s of 4 consecutive positions or ids per
// channel, rows padded against bank conflicts), two steps of BK channels
// double-buffered with one barrier per step; the inner loop reads whole vec4s
// with indices the compiler proves in bounds. After a tile's last step each
// invocation folds the tile's logits into a running (m, s) per row, in
// registers: the max over its valid ids of the tile, one rescale of s, then
// Σ exp(logit - m) over them in id order; no workgroup memory, no barrier. At
// the slice's end the NQ = VT/TN invocations of each row give the slice's
// (m, s) in a fixed order through workgroup memory: the row max M of theirs,
// then Σ s * exp(m - M) in invocation order, added by the row's first.
// Deterministic, no atomics. It writes part[(v0/(NT*VT) + g)*P + p] = the
// slice's (m, s) and, when the target of p is in the slice,
// logit[p][target] as its target logit (setTargetLogit, from the one
// invocation holding that logit).
// With GPT-2's 50257 ids and the defaults (VT 128, NT 8) that is 50 partials
// per position, not 786, and still ceil(P/64) x 50 workgroups to fill a GPU.
//
// Ranges: wte may be bound in ranges, each dispatched with its first id v0 (a
// multiple of NT*VT) and its length V, and the same part and targets buffers.
//
// Any P, V and C a multiple of 4: elements of a tile outside h or wte are
// stored as zeros, ids past V take no part in m or s, and positions past P are
// never stored. Constraints (of the tilings the tests run; the host runs the
// defaults only): BK, TM, TN multiples of 4, TM and TN at most 8,
// BM % TM == VT % TN == 0, at most 4 vec4 loads of each tile per invocation,
// WG at most the device's invocations. Workgroup memory:
// 2 * BK * (BM + VT + 8) * 4 + BM * (VT/TN) * 4 + BM * 4 bytes, 16.75 KiB
// with the defaults (BM 64, VT 128, BK 8, 8 x 8 per invocation: 128
// invocations): past the 16 KiB Vulkan promises, within the 32 KiB of
// lavapipe and SwiftShader and GPUs' 32 to 64; where a device has less, the
// host sets BM 32 (12.6 KiB; the same bits).
//
// Dispatch: (ceil(P/BM), ceil(V/(NT*VT)), 1); x at most 65535 (P up to 4M
// with BM 64). Workgroups with x*BM >= P return at once.
alias weight = f32;

override BM: u32 = 64;  // positions per workgroup
override VT: u32 = 128; // vocabulary ids per tile
override BK: u32 = 8;   // step along C
override TM: u32 = 8;   // positions per invocation
override TN: u32 = 8;   // ids per invocation
override NT: u32 = 8;   // vocabulary tiles per workgroup: its slice is NT * VT ids
override WG: u32 = (BM / TM) * (VT / TN); // invocations per workgroup; derived

@group(0) @binding(0) var<storage, read> h: array<vec4<f32>>;          // (P, C/4)
@group(0) @binding(1) var<storage, read> wte: array<vec4<weight>>;     // (V, C/4), ids v0..v0+V-1
//#include "include/lmhead.wgsl"

//#include "include/headblock.wgsl"

override HS: u32 = BM / 4u + 1u; // vec4s per channel in h's tile, padded
override WS: u32 = VT / 4u + 1u; // vec4s per channel in wte's tile, padded
override NQ: u32 = VT / TN;       // invocations per row of the tile
override XL: u32 = (BM * BK / 4u + WG - 1u) / WG; // h's tile: vec4 loads per invocation
override WL: u32 = (VT * BK / 4u + WG - 1u) / WG; // wte's tile: vec4 loads per invocation
var<workgroup> hs: array<vec4<f32>, 2u * BK * HS>; // 2 x (BK, BM/4 + 1)
var<workgroup> ws: array<vec4<f32>, 2u * BK * WS>; // 2 x (BK, VT/4 + 1)
var<workgroup> red: array<f32, BM * NQ>;           // (BM, VT/TN): per-invocation max, then sum
var<workgroup> tgs: array<u32, BM>;                // the block's targets (NO_TARGET past P)

// Private arrays need constant sizes: the largest the host allows.
const MAXT4: u32 = 2u;
const MAXL: u32 = 4u;
const MAXT: u32 = 8u;
const NO_TARGET: u32 = 0xffffffffu; // the target of a position past P: no id

// vmax is the largest component of a whose id is valid (ok), NEG_BIG if none.
fn vmax(a: vec4<f32>, ok: vec4<bool>) -> f32 {
	let x = select(vec4<f32>(NEG_BIG), a, ok);
	return max(max(x.x, x.y), max(x.z, x.w));
}

// vsum is Σ exp(a - m) over the components whose id is valid, in a fixed order.
fn vsum(a: vec4<f32>, m: f32, ok: vec4<bool>) -> f32 {
	let e = select(vec4<f32>(0.0), exp(a - vec4<f32>(m)), ok);
	return (e.x + e.y) + (e.z + e.w);
}

// idOK says which of the 4 ids of an invocation's vec4 j of a tile (the
// binding's ids bv0 + tx*4 + j*(4*VT/TN) ..) are in the binding.
fn idOK(bv0: u32, tx: u32, j: u32) -> vec4<bool> {
	let v = bv0 + tx * 4u + j * (4u * VT / TN);
	return (vec4<u32>(v) + vec4<u32>(0u, 1u, 2u, 3u)) < vec4<u32>(p.V);
}

// storeTarget records a[k] as the target logit of position row when its target tg is
// the valid id first + k (global ids; first is the first id of a's 4).
fn storeTarget(row: u32, tg: u32, a: vec4<f32>, first: u32, ok: vec4<bool>) {
	let hit = (vec4<u32>(tg) == vec4<u32>(first) + vec4<u32>(0u, 1u, 2u, 3u)) & ok;
	if any(hit) {
		setTargetLogit(row, dot(select(vec4<f32>(0.0), a, hit), vec4<f32>(1.0)));
	}
}

// loadH is the vec4 of h's tile number i of the step at k0 (position
// i / (BK/4), channels k0 + 4 * (i % (BK/4)) ..), zeros outside h.
fn loadH(bm0: u32, k0: u32, i: u32) -> vec4<f32> {
	let r = i / (BK / 4u);
	let k = k0 + 4u * (i % (BK / 4u));
	if i >= BM * BK / 4u || bm0 + r >= p.P || k >= p.C { return vec4<f32>(0.0); }
	return h[((bm0 + r) * p.C + k) / 4u];
}

// loadW is the vec4 of wte's tile number i of the step at k0 (id bv0 +
// i / (BK/4), channels k0 + 4 * (i % (BK/4)) ..), zeros outside wte.
fn loadW(bv0: u32, k0: u32, i: u32) -> vec4<f32> {
	let r = i / (BK / 4u);
	let k = k0 + 4u * (i % (BK / 4u));
	if i >= VT * BK / 4u || bv0 + r >= p.V || k >= p.C { return vec4<f32>(0.0); }
	return vec4<f32>(wte[((bv0 + r) * p.C + k) / 4u]);
}

// storeH puts vec4 number i of h's tile (loadH's: 4 channels of a position)
// into the buffer whose first channel row is kb, transposed: one component
// into each of 4 rows.
fn storeH(kb: u32, i: u32, v: vec4<f32>) {
	if i >= BM * BK / 4u { return; }
	let r = i / (BK / 4u);
	let k = kb + 4u * (i % (BK / 4u));
	hs[(k + 0u) * HS + r / 4u][r % 4u] = v.x;
	hs[(k + 1u) * HS + r / 4u][r % 4u] = v.y;
	hs[(k + 2u) * HS + r / 4u][r % 4u] = v.z;
	hs[(k + 3u) * HS + r / 4u][r % 4u] = v.w;
}

// storeW is storeH for wte's tile.
fn storeW(kb: u32, i: u32, v: vec4<f32>) {
	if i >= VT * BK / 4u { return; }
	let r = i / (BK / 4u);
	let k = kb + 4u * (i % (BK / 4u));
	ws[(k + 0u) * WS + r / 4u][r % 4u] = v.x;
	ws[(k + 1u) * WS + r / 4u][r % 4u] = v.y;
	ws[(k + 2u) * WS + r / 4u][r % 4u] = v.z;
	ws[(k + 3u) * WS + r / 4u][r % 4u] = v.w;
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let blk = headBlock(wid, nwg); // the block of positions and the slice (include/headblock.wgsl)
	let bm0 = blk.x * BM;        // first position of the block
	let sv0 = blk.y * (NT * VT); // first id (within the binding) of the workgroup's slice
	if bm0 >= p.P || sv0 >= p.V { return; } // uniform: the whole workgroup leaves
	let ty = li / NQ;
	let tx = li % NQ;
	let steps = (p.C + BK - 1u) / BK;
	// Per row of the invocation (4 * i + c: row ty*4 + i*(4*BM/TM) + c of the
	// block): the running (m, s) over the invocation's ids of the slice's
	// tiles so far. The block's targets wait in workgroup memory, not in 8
	// registers of each invocation's for the whole kernel (AMD's compiler then
	// gives it 120 VGPRs, not 136: 2 subgroups per SIMD on GCN, not 1, 8 on
	// RDNA2, not 6), for a read of workgroup memory per row and tile; the
	// first step's barrier orders their stores before any read.
	var ms: array<f32, MAXT>;
	var ss: array<f32, MAXT>;
	for (var r = 0u; r < TM; r++) {
		ms[r] = NEG_BIG;
		ss[r] = 0.0;
	}
	for (var r = li; r < BM; r += WG) {
		tgs[r] = NO_TARGET;
		if bm0 + r < p.P { tgs[r] = targets[bm0 + r]; }
	}
	var acc: array<vec4<f32>, 16>; // (TM, TN/4)
	var rx: array<vec4<f32>, MAXL>;
	var rw: array<vec4<f32>, MAXL>;
	for (var tile = 0u; tile < NT; tile++) {
		let bv0 = sv0 + tile * VT;
		if bv0 >= p.V { break; } // uniform: the slice's last tile was the binding's last
		for (var i = 0u; i < TM * TN / 4u; i++) { acc[i] = vec4<f32>(0.0); }
		// Step 0 into buffer 0: every read of the last tile's buffers was before the barrier ending its last step.
		for (var l = 0u; l < XL; l++) { rx[l] = loadH(bm0, 0u, li + l * WG); }
		for (var l = 0u; l < WL; l++) { rw[l] = loadW(bv0, 0u, li + l * WG); }
		for (var l = 0u; l < XL; l++) { storeH(0u, li + l * WG, rx[l]); }
		for (var l = 0u; l < WL; l++) { storeW(0u, li + l * WG, rw[l]); }
		workgroupBarrier();
		for (var s = 0u; s < steps; s++) {
			let cur = (s % 2u) * BK;
			let more = s + 1u < steps;
			if more {
				let k0 = (s + 1u) * BK;
				for (var l = 0u; l < XL; l++) { rx[l] = loadH(bm0, k0, li + l * WG); }
				for (var l = 0u; l < WL; l++) { rw[l] = loadW(bv0, k0, li + l * WG); }
			}
			for (var k = 0u; k < BK; k++) {
				var a: array<vec4<f32>, MAXT4>;
				var b: array<vec4<f32>, MAXT4>;
				for (var i = 0u; i < TM / 4u; i++) { a[i] = hs[(cur + k) * HS + ty + i * (BM / TM)]; }
				for (var j = 0u; j < TN / 4u; j++) { b[j] = ws[(cur + k) * WS + tx + j * (VT / TN)]; }
				for (var i = 0u; i < TM / 4u; i++) {
					for (var j = 0u; j < TN / 4u; j++) {
						acc[(4u * i + 0u) * (TN / 4u) + j] += a[i].x * b[j];
						acc[(4u * i + 1u) * (TN / 4u) + j] += a[i].y * b[j];
						acc[(4u * i + 2u) * (TN / 4u) + j] += a[i].z * b[j];
						acc[(4u * i + 3u) * (TN / 4u) + j] += a[i].w * b[j];
					}
				}
			}
			if more { // into the other buffer, which no invocation reads in this step
				for (var l = 0u; l < XL; l++) { storeH(BK - cur, li + l * WG, rx[l]); }
				for (var l = 0u; l < WL; l++) { storeW(BK - cur, li + l * WG, rw[l]); }
			}
			workgroupBarrier();
		}
		// Fold the tile into each row's running (m, s), in registers: the max over
		// the invocation's valid ids of the tile, one rescale, then the exps.
		for (var r = 0u; r < TM; r++) {
			var mt = NEG_BIG;
			for (var j = 0u; j < TN / 4u; j++) {
				mt = max(mt, vmax(acc[r * (TN / 4u) + j], idOK(bv0, tx, j)));
			}
			let mn = max(ms[r], mt);
			var st = 0.0;
			for (var j = 0u; j < TN / 4u; j++) {
				let v = bv0 + tx * 4u + j * (4u * VT / TN);
				let a = acc[r * (TN / 4u) + j];
				let ok = idOK(bv0, tx, j);
				st += vsum(a, mn, ok);
				let rl = ty * 4u + (r / 4u) * (4u * BM / TM) + r % 4u;
				storeTarget(bm0 + rl, tgs[rl], a, p.v0 + v, ok);
			}
			ss[r] = ss[r] * exp(ms[r] - mn) + st;
			ms[r] = mn;
		}
	}
	// The slice's (m, s) of each row from its NQ invocations', in a fixed order:
	// the row's max M, then Σ s * exp(m - M) in invocation order. Row 4*i + c
	// of the invocation is row ty*4 + i*(4*BM/TM) + c of the block.
	for (var r = 0u; r < TM; r++) {
		red[(ty * 4u + (r / 4u) * (4u * BM / TM) + r % 4u) * NQ + tx] = ms[r];
	}
	workgroupBarrier();
	for (var r = 0u; r < TM; r++) {
		let rl = ty * 4u + (r / 4u) * (4u * BM / TM) + r % 4u;
		var m = NEG_BIG;
		for (var q = 0u; q < NQ; q++) { m = max(m, red[rl * NQ + q]); }
		ss[r] *= exp(ms[r] - m);
		ms[r] = m;
	}
	workgroupBarrier(); // every max is read before red is overwritten
	for (var r = 0u; r < TM; r++) {
		red[(ty * 4u + (r / 4u) * (4u * BM / TM) + r % 4u) * NQ + tx] = ss[r];
	}
	workgroupBarrier();
	if tx != 0u { return; }
	let gs = p.v0 / (NT * VT) + blk.y; // the slice's global index
	for (var r = 0u; r < TM; r++) {
		let rl = ty * 4u + (r / 4u) * (4u * BM / TM) + r % 4u;
		var s = 0.0;
		for (var q = 0u; q < NQ; q++) { s += red[rl * NQ + q]; }
		if bm0 + rl < p.P {
			part[gs * p.P + bm0 + rl] = vec2<f32>(ms[r], s);
		}
	}
}
