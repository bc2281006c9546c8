// lmhead_loss_coop: lmhead_loss_shared.wgsl's LM head and online
// logsumexp with the logits computed on the device's matrix units
// (subgroup matrices; see matmul_coop.wgsl for the configuration, the
// constants the host rewrites and the numerics: h is rounded to f16, wte is
// f16, f32 accumulation). h comes rounded already: to_f16.wgsl rounds it
// once, as this kernel did at each of its loads (once per tile of ids), so
// that it reads half the bytes; the same bits. The same bindings (h f16),
// push constants and partials as lmhead_loss_shared.wgsl
// (include/lmhead.wgsl): slice g of NT tiles of
// VT ids gives part[(v0/(NT*VT) + g)*P + p] = (m, s) and the target logit
// logit[p][target] when the target is in the slice, so nll_combine.wgsl
// combines them, and with the same VT and NT the partials are as many.
//
// Workgroup (x, g) (headBlock's numbering, include/headblock.wgsl) takes
// positions x*BM .. x*BM + BM - 1 and slice g, tile
// by tile. A tile's logits (BM x VT) are a product (BM x C) · (C x VT): SGM x
// SGN subgroups each accumulate FM x FN result matrices over C in steps of
// BK channels, h's BM x BK and wte's VT x BK tiles staged in workgroup
// memory as f16 (both as they lie in memory, rows of BK channels padded by
// 8 values; wte's rows are the right matrix's columns: column-major loads),
// zeros outside h and wte, through registers in ST stages (as
// matmul_coop.wgsl's), one barrier after staging and one after the
// multiplies; with ST = 3 two buffers of each tile, one barrier per step
// (as matmul_coop.wgsl's; a tile's first step stages its own); with ST 2
// and 3 a tile's last step loads the next tile's first. The logits
// are folded in chunks, so that a big tile need not fit in workgroup memory
// whole: for each group of EC of its FN columns of
// result matrices (a loop uniform across the workgroup), every subgroup
// stores those into a BM x SGN*EC*SN f32 chunk of workgroup memory (rows
// padded by 4; with EC = FN, the whole tile); after a barrier, the NQ
// invocations of each row fold the chunk's logits of the row into a running
// (m, s) in registers, each over the chunk's columns tx, tx + NQ, ...
// (tx < NQ): the max over its valid ids, one rescale, then
// Σ exp(logit - m). Bank conflicts: rows lie CS words apart (CW + 4, CW a
// multiple of 8), so invocation tx of row ty reads bank CS*ty + tx + NQ*k
// (mod 32) at its k-th column; the subgroup's 32/NQ rows x NQ invocations
// hit 32 banks where CS/NQ is odd, and where it is even (NQ 1 or 2) only
// 8 or 16 (4 or 2 ways each). There (ROT = 1) each invocation walks its
// columns from its row's number on (modulo their count) and around: rows
// CS + NQ words apart, CS/NQ + 1 odd, a bank each. The one holding the target's logit
// records the target logit; a barrier before the next chunk. At the slice's end the NQ
// (m, s) of each row are combined in a fixed order through workgroup
// memory, as in lmhead_loss_shared.wgsl. Deterministic, no atomics.
//
// Any P, V, and C a multiple of 4 (vec4 loads along C). Constraints,
// checked by the host (coopHeadTiles.valid): BK a multiple of SK and of 8;
// EC divides FN; ST 1, 2 or 3; WG = SGM*SGN*SGS with SGS the device's
// subgroup size; BM and WG powers of two (NQ = WG/BM invocations per row
// when WG >= BM, else one invocation for RI = BM/WG rows), VT a multiple of
// NQ; at most 16 vec4 loads of each tile per invocation. Dispatch: (ceil(P/BM), ceil(V/(NT*VT)), 1).
enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;
// The matrices' offsets depend on subgroup_id: the same for every invocation
// of a subgroup, as the matrix units need, but not across the workgroup,
// which is what the extension's uniformity rule checks.
diagnostic(off, chromium_experimental.subgroup_matrix_uniformity);

// The configuration and the result matrices per subgroup (see
// matmul_coop.wgsl): the host rewrites these five lines.
const SM: u32 = 8u; // rows of a left and of a result matrix: positions
const SN: u32 = 8u; // columns of a right and of a result matrix: ids
const SK: u32 = 8u; // columns of a left, rows of a right matrix: channels
const FM: u32 = 2u; // result matrices per subgroup along the positions
const FN: u32 = 4u; // result matrices per subgroup along the ids

override SGM: u32 = 2;  // subgroups per workgroup along the positions
override SGN: u32 = 2;  // subgroups per workgroup along the ids
override SGS: u32 = 32; // invocations per subgroup: the device's subgroup size
override BK: u32 = 32;  // step along C
override NT: u32 = 8;   // vocabulary tiles per workgroup: its slice is NT * VT ids
override EC: u32 = 4;   // result matrices along the ids per fold chunk: divides FN
override ST: u32 = 2;   // stages, as matmul_coop.wgsl's: 2, the next step's global loads in flight during this one's multiplies; 1, a step's at its start; 3, as 2 with two tile buffers
override BM: u32 = SGM * FM * SM;   // positions per workgroup; derived
override VT: u32 = SGN * FN * SN;   // ids per tile; derived
override WG: u32 = SGM * SGN * SGS; // invocations per workgroup; derived

@group(0) @binding(0) var<storage, read> h: array<vec4<f16>>;    // (P, C/4), rounded by to_f16.wgsl
@group(0) @binding(1) var<storage, read> wte: array<vec4<f16>>;  // (V, C/4), ids v0..v0+V-1
//#include "include/lmhead.wgsl"

//#include "include/headblock.wgsl"

override HS: u32 = BK + 8u;           // f16 per row of hs
override CW: u32 = SGN * EC * SN;     // columns (ids) of a fold chunk
override CS: u32 = CW + 4u;           // f32 per row of cs
override QK: u32 = BK / 4u;           // vec4s of a row of either tile
override NQ: u32 = (WG + BM - 1u) / BM; // invocations per row of the fold: WG/BM, at least 1
override ROT: u32 = select(0u, 1u, CS % (2u * NQ) == 0u); // 1: the fold's rows start their walks at different columns (header)
override RI: u32 = BM * NQ / WG;      // rows per invocation of the fold
override XL: u32 = (BM * QK + WG - 1u) / WG; // h's tile: vec4 loads per invocation
override WL: u32 = (VT * QK + WG - 1u) / WG; // wte's tile: vec4 loads per invocation
override NB: u32 = ST / 3u + 1u;      // tile buffers: 2 with ST = 3, else 1
var<workgroup> hs: array<f16, NB * BM * HS>; // NB x (BM, BK) h's tile, rows padded
var<workgroup> ws: array<f16, NB * VT * HS>; // NB x (VT, BK) wte's tile, rows padded
var<workgroup> cs: array<f32, BM * CS>; // (BM, CW) a chunk of the tile's logits, rows padded
var<workgroup> red: array<f32, BM * NQ>; // (BM, NQ): per-invocation max, then sum

const MAXL: u32 = 16u;  // the most vec4 loads of a tile per invocation
const MAXR: u32 = 8u;  // the most rows per invocation of the fold
const NO_TARGET: u32 = 0xffffffffu; // the target of a position past P: no id

// loadH is vec4 number i of h's tile for the step at k0, as read:
// position r0 + i / QK, channels k0 + 4*(i % QK) .., whatever the bounds
// (the index is clamped into h, as every index is); tileIn says whether it
// is in h and the tile, and stageH keeps it only then. So a step's loads
// are issued without a branch and none is waited for before it is staged,
// after the multiplies the loads of ST 2 and 3 overlap (as
// matmul_coop.wgsl's loadX).
fn loadH(r0: u32, k0: u32, i: u32) -> vec4<f16> {
	return h[((r0 + i / QK) * p.C + k0 + 4u * (i % QK)) / 4u];
}

// loadW is loadH for wte's tile (ids bv0.., within the binding).
fn loadW(bv0: u32, k0: u32, i: u32) -> vec4<f16> {
	return wte[((bv0 + i / QK) * p.C + k0 + 4u * (i % QK)) / 4u];
}

// tileIn is whether vec4 i of a tile of n rows (BM of h's, VT of wte's)
// for the step at k0, its rows from r0 on, lies in the tile and in a
// binding of rows rows.
fn tileIn(n: u32, rows: u32, r0: u32, k0: u32, i: u32) -> bool {
	return i < n * QK && r0 + i / QK < rows && k0 + 4u * (i % QK) < p.C;
}

// stageH puts vec4 i of h's tile for the step at k0 (loadH's, rows from
// r0), zeros outside h, into buffer b of hs.
fn stageH(b: u32, r0: u32, k0: u32, i: u32, r: vec4<f16>) {
	if i >= BM * QK { return; }
	let f = select(vec4<f16>(0.0), r, tileIn(BM, p.P, r0, k0, i));
	let o = b * (BM * HS) + (i / QK) * HS + 4u * (i % QK);
	hs[o] = f.x;
	hs[o + 1u] = f.y;
	hs[o + 2u] = f.z;
	hs[o + 3u] = f.w;
}

// stageW puts vec4 i of wte's tile (ids from bv0) into buffer b of ws.
fn stageW(b: u32, bv0: u32, k0: u32, i: u32, r: vec4<f16>) {
	if i >= VT * QK { return; }
	let v = select(vec4<f16>(0.0), r, tileIn(VT, p.V, bv0, k0, i));
	let o = b * (VT * HS) + (i / QK) * HS + 4u * (i % QK);
	ws[o] = v.x;
	ws[o + 1u] = v.y;
	ws[o + 2u] = v.z;
	ws[o + 3u] = v.w;
}

// chunkID is the id within the tile of column c of the fold chunk of the
// result-matrix columns j0 .. j0 + EC - 1: subgroup column c / (EC*SN)'s
// matrix j0 + (c % (EC*SN)) / SN.
fn chunkID(j0: u32, c: u32) -> u32 {
	return (c / (EC * SN)) * (FN * SN) + j0 * SN + c % (EC * SN);
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(subgroup_id) sid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let blk = headBlock(wid, nwg); // the block of positions and the slice (include/headblock.wgsl)
	let bm0 = blk.x * BM;        // first position of the block
	let sv0 = blk.y * (NT * VT); // first id (within the binding) of the workgroup's slice
	if bm0 >= p.P || sv0 >= p.V { return; } // uniform: the whole workgroup leaves
	let sg = min(sid, SGM * SGN - 1u); // the subgroup (the min as matmul_coop.wgsl's: indices the compiler proves in bounds)
	let sm0 = (sg / SGN) * (FM * SM); // the subgroup's first position and id in the tile
	let sn0 = (sg % SGN) * (FN * SN);
	let ty = li / NQ; // the fold's rows: ty + i * (WG/NQ), i < RI; ids tx + j * NQ
	let tx = li % NQ;
	let steps = (p.C + BK - 1u) / BK;
	var tg: array<u32, MAXR>; // per fold row: its target, running max and sum
	var ms: array<f32, MAXR>;
	var ss: array<f32, MAXR>;
	for (var i = 0u; i < RI; i++) {
		let row = bm0 + ty + i * (WG / NQ);
		tg[i] = NO_TARGET;
		if row < p.P { tg[i] = targets[row]; }
		ms[i] = NEG_BIG;
		ss[i] = 0.0;
	}
	var rx: array<vec4<f16>, MAXL>;
	var rw: array<vec4<f16>, MAXL>;
	if ST >= 2u { // the first tile's first step's global loads
		for (var l = 0u; l < XL; l++) { rx[l] = loadH(bm0, 0u, li + l * WG); }
		for (var l = 0u; l < WL; l++) { rw[l] = loadW(sv0, 0u, li + l * WG); }
	}
	for (var tile = 0u; tile < NT; tile++) {
		let bv0 = sv0 + tile * VT;
		if bv0 >= p.V { break; } // uniform: the slice's last tile was the binding's last
		var acc: array<subgroup_matrix_result<f32, SN, SM>, FM * FN>; // zeros; (i, j) at i * FN + j
		for (var s = 0u; s < steps; s++) {
			let buf = s % NB; // the buffer of this step's tiles
			if ST == 1u { // this step's global loads, all before the first store
				for (var l = 0u; l < XL; l++) { rx[l] = loadH(bm0, s * BK, li + l * WG); }
				for (var l = 0u; l < WL; l++) { rw[l] = loadW(bv0, s * BK, li + l * WG); }
			}
			if ST != 3u || s == 0u { // ST 3 stores the later steps' tiles during the step before
				for (var l = 0u; l < XL; l++) { stageH(buf, bm0, s * BK, li + l * WG, rx[l]); }
				for (var l = 0u; l < WL; l++) { stageW(buf, bv0, s * BK, li + l * WG, rw[l]); }
				workgroupBarrier();
			}
			// The next step's global loads, in flight while this one
			// multiplies: this tile's next step, or after its last the next
			// tile's first (past the slice or the binding: loaded, never
			// staged). Without a branch, so that nothing waits for them
			// before they are staged (as matmul_coop.wgsl's).
			if ST >= 2u {
				let last = s + 1u == steps;
				let k0 = select((s + 1u) * BK, 0u, last);
				let v0 = select(bv0, bv0 + VT, last);
				for (var l = 0u; l < XL; l++) { rx[l] = loadH(bm0, k0, li + l * WG); }
				for (var l = 0u; l < WL; l++) { rw[l] = loadW(v0, k0, li + l * WG); }
			}
			let hb = buf * (BM * HS);
			let wb = buf * (VT * HS);
			for (var kq = 0u; kq < BK / SK; kq++) {
				let kk = kq * SK; // (as matmul_coop.wgsl's)
				var a: array<subgroup_matrix_left<f16, SK, SM>, FM>;
				var b: array<subgroup_matrix_right<f16, SN, SK>, FN>;
				for (var i = 0u; i < FM; i++) {
					a[i] = subgroupMatrixLoad<subgroup_matrix_left<f16, SK, SM>>(&hs, hb + (sm0 + i * SM) * HS + kk, false, HS);
				}
				for (var j = 0u; j < FN; j++) { // wte's rows are the right matrix's columns
					b[j] = subgroupMatrixLoad<subgroup_matrix_right<f16, SN, SK>>(&ws, wb + (sn0 + j * SN) * HS + kk, true, HS);
				}
				for (var i = 0u; i < FM; i++) {
					for (var j = 0u; j < FN; j++) {
						acc[i * FN + j] = subgroupMatrixMultiplyAccumulate(a[i], b[j], acc[i * FN + j]);
					}
				}
			}
			if ST == 3u && s + 1u < steps { // the next step's tiles into the other buffer, read last in the step before
				let next = (s + 1u) % NB; // 1 - buf (as matmul_coop.wgsl's)
				for (var l = 0u; l < XL; l++) { stageH(next, bm0, (s + 1u) * BK, li + l * WG, rx[l]); }
				for (var l = 0u; l < WL; l++) { stageW(next, bv0, (s + 1u) * BK, li + l * WG, rw[l]); }
			}
			workgroupBarrier(); // every read of the tiles before they are overwritten (ST 3: and the next tiles stored)
		}
		let nv = min(VT, p.V - bv0); // valid ids of the tile
		for (var j0 = 0u; j0 < FN; j0 += EC) {
			for (var i = 0u; i < FM; i++) {
				for (var j = 0u; j < EC; j++) {
					subgroupMatrixStore(&cs, (sm0 + i * SM) * CS + (sg % SGN) * (EC * SN) + j * SN, acc[i * FN + j0 + j], false, CS);
				}
			}
			workgroupBarrier();
			let nc = (CW + NQ - 1u - tx) / NQ; // the invocation's columns of the chunk: tx, tx + NQ, ...
			for (var i = 0u; i < RI; i++) {
				let rl = ty + i * (WG / NQ);
				let k0 = (rl * ROT) % max(nc, 1u); // where the row's walk starts (see the header)
				var mt = NEG_BIG;
				var k = k0;
				for (var q = 0u; q < nc; q++) {
					let c = tx + k * NQ;
					if chunkID(j0, c) < nv { mt = max(mt, cs[rl * CS + c]); }
					k++;
					if k == nc { k = 0u; }
				}
				let mn = max(ms[i], mt);
				var st = 0.0;
				k = k0;
				for (var q = 0u; q < nc; q++) {
					let c = tx + k * NQ;
					k++;
					if k == nc { k = 0u; }
					let j = chunkID(j0, c);
					if j >= nv { continue; }
					let l = cs[rl * CS + c];
					st += exp(l - mn);
					if p.v0 + bv0 + j == tg[i] { setTargetLogit(bm0 + rl, l); }
				}
				ss[i] = ss[i] * exp(ms[i] - mn) + st;
				ms[i] = mn;
			}
			if j0 + EC < FN { workgroupBarrier(); } // the chunk is read before the next one overwrites it (the next tile's staging barrier does after the last)
		}
	}
	// The slice's (m, s) of each row from its NQ invocations', in a fixed
	// order: the row's max M, then Σ s * exp(m - M) in invocation order.
	for (var i = 0u; i < RI; i++) { red[(ty + i * (WG / NQ)) * NQ + tx] = ms[i]; }
	workgroupBarrier();
	for (var i = 0u; i < RI; i++) {
		let rl = ty + i * (WG / NQ);
		var m = NEG_BIG;
		for (var q = 0u; q < NQ; q++) { m = max(m, red[rl * NQ + q]); }
		ss[i] *= exp(ms[i] - m);
		ms[i] = m;
	}
	workgroupBarrier(); // every max is read before red is overwritten
	for (var i = 0u; i < RI; i++) { red[(ty + i * (WG / NQ)) * NQ + tx] = ss[i]; }
	workgroupBarrier();
	if tx != 0u { return; }
	let gs = p.v0 / (NT * VT) + blk.y; // the slice's global index
	for (var i = 0u; i < RI; i++) {
		let rl = ty + i * (WG / NQ);
		var s = 0.0;
		for (var q = 0u; q < NQ; q++) { s += red[rl * NQ + q]; }
		if bm0 + rl < p.P {
			part[gs * p.P + bm0 + rl] = vec2<f32>(ms[i], s);
		}
	}
}
