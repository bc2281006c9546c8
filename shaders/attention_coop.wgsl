// attention_coop: attention_shared.wgsl's causal attention over a KV cache
// on the device's matrix units (subgroup matrices: SPV_KHR_cooperative_matrix
// where the device has them, ordinary invocation code where the compiler
// lowers them). The same bindings, push constants and semantics: qkv
// (B*T, ld) holds the chunk's T rows per sequence, the queries in its first
// C = H*HD channels; kc, vc (B, KV, S, HD) already hold the keys and values
// of positions 0 .. pos0+T-1; query head h reads key/value head
// g = h / (H/KV); for query (b, h, t) at absolute position pos0+t:
//   out[(b*T+t)*C + h*HD + i] = Σ_{s<=pos0+t} softmax_s(lscale · q·k_s / sqrt(HD)) v_s[i].
//
// Numerics: q, k and v are rounded to f16 (to nearest, clamped to ±65504) as
// they are staged in workgroup memory; the scores S = Q·Kᵀ are accumulated in
// f32 by the matrix units; the softmax (running max and sum per row, scale
// 1/sqrt(HD)) is f32; the probabilities P are rounded to f16 for P·V, which
// is accumulated in f32 (the running sum adds the unrounded f32 values).
//
// Blocking. A workgroup takes BQ = SG*FM*SM consecutive queries of one
// (b, h): SG subgroups of SGS invocations, each owning FM*SM query rows (FM
// left matrices of SM rows); the keys are walked in tiles of BKV positions,
// from position 0 to the block's last (tiles past the causal diagonal are
// never loaded: skipped whole; the diagonal tile is masked per row). Per
// tile:
//  1. all invocations stage the tile's keys and values as f16 in workgroup
//     memory (vec4 loads of the cache into registers, then the stores;
//     zeros past the block's keys; every load unconditional, from a
//     clamped position, so that they are in flight together). With PF = 0
//     a tile's loads are issued at its start, LB vec4s of keys and of
//     values (f32) before their stores; with PF = 1 the next tile's are
//     issued right after this tile's staging barrier, rounded to f16 as
//     they arrive and kept packed (2*SL vec4<f16>, two words each) until
//     the next tile's staging: the rounding waits for them there, before
//     the tile's multiplies; PF = 2 issues them there too, without a
//     branch, and keeps them as loaded (2*SL vec4<f32>, twice PF 1's
//     registers) until the staging rounds them, so that nothing waits for
//     them before the next tile's staging, where a driver leaves the loads
//     where they are written (AMD's compiler does not: it moves loads from
//     memory nothing writes past the barriers to the end of the tile,
//     which undoes the overlap);
//  2. each subgroup multiplies its query rows (left matrices kept in
//     registers for the whole kernel where QW is 0: Q is staged once; with
//     QW = 1, Q stays in workgroup memory and its left matrices are loaded
//     again for each tile) by the keys (right matrices loaded column-major
//     from the keys' rows: Kᵀ, each once for the FM row blocks) into
//     BKV/SN result matrices per row block, and stores them (f32) in
//     workgroup memory;
//  3. the subgroup's invocations run the online softmax of its rows: R
//     invocations per row (R = SGS / (FM*SM), or one invocation for several
//     rows when the rows outnumber the invocations), each over every R-th
//     score (read from workgroup memory once, into registers, masked
//     scores as -3e38, whose exp is 0; rows 8 apart start from columns R
//     apart, so that a subgroup's rows read different banks, see ROT), the
//     row's max exchanged with subgroupShuffleXor; each writes
//     p = exp(s - m_new) as f16 and keeps its row's rescale factor
//     exp(m_old - m_new) in a register;
//  4. each subgroup multiplies P (left, f16) by V (right, each loaded
//     once for the FM row blocks) into fresh result matrices (HP/SN per
//     row block) and stores them (f32) where the scores were;
//  5. each invocation rescales its share of the output accumulator (every
//     R-th group of 4 columns of its rows, f32 in registers: the output is
//     stored as vec4s) by its rows' factors and adds the new products.
// A barrier separates every step from the next (steps 2 to 5 touch only the
// subgroup's own rows, but WGSL has no subgroup-scoped memory barrier).
// Subgroups whose rows see none of a tile (the causal diagonal falls in the
// block) skip steps 2 to 5 for it.
//
// Why this scheme: the subgroup-matrix extension has no per-row operation on
// result matrices, so the online-softmax rescale of an accumulator kept in
// matrix registers is impossible; the accumulator lives in invocation
// registers instead (32 f32 per invocation at HD 64 with 16 rows of 32
// invocations), and only the tile's product passes through workgroup
// memory. The alternative, two passes (row max and sum first, then
// Σ exp(s-m)/l·V with the accumulators in matrix registers), multiplies
// Q·Kᵀ twice and stores the scores twice, for the same barriers per tile;
// on NVIDIA GPUs (mma.sync tensor cores, cheap barriers) the store and the
// merge of an HD-wide tile cost about what the second score pass's stores
// do, without its matrix work. The exps (BKV per row and tile) are SIMT work
// in both.
//
// SM, SN, SK (the device's configuration), FM, HD, BKV, SG, SGS, PF and QW
// are constants, rewritten by the host per device and model
// (attnCoopSource), since matrix and array shapes must be. QW follows from
// the others (attnCoopTiles.qw): 1 where an invocation's share of Q would
// take more than 48 f16 values of registers and the workgroup memory with
// Q kept stays within 48 KiB. The registers, per invocation: the output
// accumulator (CO f32 per row), the tile's scores in step 3 (CJ f32 per
// row), the left matrices of Q (QW 0), PF 1's keys and values (4*SL words; PF 2's 8*SL)
// and the result matrices of steps 2 and 4 with a right matrix at a time. A head size that is not a multiple
// of the matrices' widths and of 4R (the tiny Llama's 12 in the tests) is
// padded with zero channels to HP, which change no score; GPT-2's 64 and
// the Llama family's 64 and 128 are whole.
//
// Workgroup memory: 2*max(BQ, 2*BKV)*(HP+8) (Q at the start, then each
// tile's K and V, f16, rows padded by 8 values: row starts 16-byte aligned
// and in different banks; 2*(BQ+2*BKV)*(HP+8) with QW 1, Q kept before
// them) + 2*BQ*(BKV+8) (P, f16) + 4*BQ*(max(BKV, HP)+4) (scores, then the
// products, f32) bytes: 44 KiB at HD 64, BQ 64 and BKV 64. Dispatch: B*H*⌈T/BQ⌉ workgroups, flattened as wid.y*nwg.x + wid.x,
// those past the last return. Requires C = H*HD, ld % 4 == 0 and
// pos0 + T <= S (the forward pass's shapes), and of the constants (checked
// by attnCoopTiles.valid) HD a multiple of 4 and at most 128, BKV a
// multiple of SK and SN, SGS and FM*SM powers of two.
enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;
// The matrices' offsets depend on subgroup_id: uniform in a subgroup, as the
// matrix units need, not across the workgroup (what the rule checks).
diagnostic(off, chromium_experimental.subgroup_matrix_uniformity);

// The host rewrites these ten lines (see the header).
const SM: u32 = 8u;   // rows of a left and of a result matrix (the configuration's M)
const SN: u32 = 8u;   // columns of a right and of a result matrix (N)
const SK: u32 = 8u;   // columns of a left, rows of a right matrix (K)
const FM: u32 = 1u;   // left matrices (of SM query rows) per subgroup
const HD: u32 = 32u;  // channels per head
const BKV: u32 = 16u; // keys per tile
const SG: u32 = 2u;   // subgroups per workgroup
const SGS: u32 = 8u;  // invocations per subgroup: the device's subgroup size
const PF: u32 = 0u;   // 1: the next tile's loads issued during this one, after its staging, rounded at once; 2: the same held as loaded (step 1)
const QW: u32 = 0u;   // 1: Q stays in workgroup memory, its left matrices loaded for each tile (step 2)

const RPS: u32 = FM * SM;            // query rows per subgroup
const BQ: u32 = SG * RPS;            // query rows per workgroup
const WG: u32 = SG * SGS;            // invocations per workgroup
const R: u32 = max(SGS / RPS, 1u);   // invocations per row
const QR: u32 = max(RPS / SGS, 1u);  // rows per invocation
const RSTEP: u32 = SGS / R;          // between an invocation's rows (when QR > 1)
const PADW: u32 = max(max(SK, SN), 4u * R);
const HP: u32 = (HD + PADW - 1u) / PADW * PADW; // HD padded with zero channels to whole matrices
const HD4: u32 = HD / 4u;
const HP4: u32 = HP / 4u;
const NS: u32 = BKV / SN;            // score matrices per row block
const NO: u32 = HP / SN;             // product matrices per row block
const NQ: u32 = HP / SK;             // left matrices of Q per row block
const NP: u32 = BKV / SK;            // steps of P·V
const KS: u32 = HP + 8u;             // f16 per row of hs
const PS: u32 = BKV + 8u;            // f16 per row of ps
const SS: u32 = max(BKV, HP) + 4u;   // f32 per row of ss
const ROT: u32 = select(0u, 1u, SS % (2u * R) == 0u); // 1: the softmax's rows start at different columns (step 3)
const NROT: u32 = max(4u / R, 1u);  // ROT 1: row r starts R * ((r / 8) % NROT) columns on
const CJ: u32 = BKV / R;             // scores per invocation and row
const CO: u32 = HP / R;              // output columns per invocation and row
const SL: u32 = (BKV * HP4 + WG - 1u) / WG; // vec4s of a tile's keys (and of its values) an invocation stages
const LB: u32 = min(SL, 8u);         // PF 0: of which it loads at once
const KO: u32 = QW * BQ * KS;        // where the keys start in hs (after Q where QW is 1)

// lscale: the scores' factor besides 1/sqrt(HD): 1, or 1/(l+1) in block l of a GPT-2 with
// scale_attn_by_inverse_layer_idx (Stanford CRFM's).
struct Params { B: u32, T: u32, C: u32, H: u32, KV: u32, S: u32, pos0: u32, ld: u32, lscale: f32 }

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;  // (B*T, ld)
@group(0) @binding(1) var<storage, read> kc: array<vec4<f32>>;   // (B, KV, S, HD)
@group(0) @binding(2) var<storage, read> vc: array<vec4<f32>>;   // (B, KV, S, HD)
@group(0) @binding(3) var<storage, read_write> out: array<vec4<f32>>;  // (B*T, C)
var<push_constant> p: Params;

var<workgroup> hs: array<f16, (QW * BQ + max((1u - QW) * BQ, 2u * BKV)) * KS>; // Q (BQ, HD) at the start, then (after it where QW is 1) K (BKV, HD) | V (BKV, HD)
var<workgroup> ps: array<f16, BQ * PS>;               // P (BQ, BKV)
var<workgroup> ss: array<f32, BQ * SS>;               // S (BQ, BKV), then P·V (BQ, HD)

// toF16 rounds to the matrix units' operand type, clamped to f16's finite
// range (a value beyond it would otherwise be undefined).
fn toF16(v: vec4<f32>) -> vec4<f16> {
	return vec4<f16>(clamp(v, vec4<f32>(-65504.0), vec4<f32>(65504.0)));
}

// stage puts v, rounded to f16, at element o of hs.
fn stage(o: u32, v: vec4<f32>) {
	stage16(o, toF16(v));
}

// stage16 puts h at element o of hs.
fn stage16(o: u32, h: vec4<f16>) {
	hs[o] = h.x;
	hs[o + 1u] = h.y;
	hs[o + 2u] = h.z;
	hs[o + 3u] = h.w;
}

// tileAt is the cache index of vec4 i of a tile of keys or values from
// position s0, clamped to the block's keys and the head's channels (always
// a loaded vec4: tileOK says whether it is the tile's).
fn tileAt(i: u32, s0: u32, keys: u32, cbase: u32) -> u32 {
	return cbase + min(s0 + i / HP4, keys - 1u) * HD4 + min(i % HP4, HD4 - 1u);
}

// tileOK says whether vec4 i of a tile from position s0 holds a key (a
// value): not past the block's keys, a channel past HD or past the tile.
fn tileOK(i: u32, s0: u32, keys: u32) -> bool {
	return (i < BKV * HP4) & (s0 + i / HP4 < keys) & (i % HP4 < HD4);
}

// packVec is x, vec4 i of a tile of keys or values from position s0 as
// loaded, as PF 1 holds it: rounded to f16 at once, zero where not tileOK,
// packed in two words (ACO, AMD's compiler, keeps them in two registers,
// where it gives a vec4<f16> four, one per 16 bits): half PF 2's
// registers, but the rounding waits for the load where it is made.
fn packVec(x: vec4<f32>, i: u32, s0: u32, keys: u32) -> vec2<u32> {
	return select(vec2<u32>(0u), bitcast<vec2<u32>>(toF16(x)), tileOK(i, s0, keys));
}

// stageKV puts vec4 i of a tile of keys and values from position s0 (k
// and v, as loaded from tileAt), rounded to f16 and zero where not tileOK,
// into the tile's rows of hs (keys from KO, values the BKV rows after).
// The loads are unconditional (tileAt) and the zeros selected here, at the
// staging, so that a tile's loads are all in flight together and none is
// waited for before its staging (ACO, AMD's compiler, waits for a load in
// a branch at the branch's end, and for a load whose value is used at the
// use: a rounding at the load would wait there).
fn stageKV(i: u32, s0: u32, keys: u32, k: vec4<f32>, v: vec4<f32>) {
	if i >= BKV * HP4 { return; }
	let o = KO + (i / HP4) * KS + 4u * (i % HP4);
	let ok = tileOK(i, s0, keys);
	stage16(o, select(vec4<f16>(0.0), toF16(k), ok));
	stage16(BKV * KS + o, select(vec4<f16>(0.0), toF16(v), ok));
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(subgroup_id) sgid: u32,
	@builtin(subgroup_invocation_id) lane: u32,
	@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let blocks = (p.T + BQ - 1u) / BQ; // query blocks per (b, h)
	let wg = wid.y * nwg.x + wid.x;
	if wg >= p.B * p.H * blocks { return; } // uniform: the whole workgroup leaves
	let bh = wg / blocks; // b*H + h
	let q0 = (wg % blocks) * BQ; // the block's first query row
	let h = bh % p.H;
	let b = bh / p.H;
	let g = h / (p.H / p.KV); // the key/value head
	let scale = inverseSqrt(f32(HD)) * p.lscale;
	// The subgroup and the invocation in it, below SG and SGS as they are:
	// the mins only let the compiler prove the workgroup indices in bounds
	// (as matmul_coop.wgsl's).
	let sg = min(sgid, SG - 1u);
	let sid = min(lane, SGS - 1u);
	let r0 = sg * RPS; // the subgroup's first row in the block
	let part = sid % R; // which R-th of a row's scores and columns the invocation takes

	// Q, once: rows past T and channels past HD are zeros.
	for (var i = li; i < BQ * HP4; i += WG) {
		let t = q0 + i / HP4;
		let c = i % HP4;
		var v = vec4<f32>(0.0);
		if t < p.T && c < HD4 { v = qkv[(b * p.T + t) * (p.ld / 4u) + h * HD4 + c]; }
		stage((i / HP4) * KS + 4u * c, v);
	}
	workgroupBarrier();
	var qm: array<subgroup_matrix_left<f16, SK, SM>, FM * NQ>; // QW 0: (i, k) at i * NQ + k (QW 1: unused)
	for (var i = 0u; i < FM * (1u - QW); i++) {
		for (var k = 0u; k < NQ; k++) {
			qm[i * NQ + k] = subgroupMatrixLoad<subgroup_matrix_left<f16, SK, SM>>(&hs, (r0 + i * SM) * KS + k * SK, false, KS);
		}
	}
	workgroupBarrier(); // every subgroup has its Q before hs takes the keys

	// The invocation's rows: r0 + row(j) for j < QR; their last visible key
	// (rows past T as the last row: their results are dropped).
	var last: array<u32, QR>;
	var m: array<f32, QR>;      // running max of the scaled scores
	var l: array<f32, QR>;      // running Σ exp(score - m), this invocation's part
	var corr: array<f32, QR>;   // the tile's rescale factor
	var o: array<f32, QR * CO>; // output accumulator: row j, column 4*(part + R*(c/4)) + c%4 at j * CO + c
	for (var j = 0u; j < QR; j++) {
		last[j] = p.pos0 + min(q0 + r0 + j * RSTEP + sid / R, p.T - 1u);
		m[j] = -3.0e38;
		l[j] = 0.0;
	}
	for (var c = 0u; c < QR * CO; c++) { o[c] = 0.0; }

	let keys = p.pos0 + min(q0 + BQ, p.T); // keys the block sees: 0 .. keys-1
	let sgLast = p.pos0 + min(q0 + r0 + RPS, p.T) - 1u; // the subgroup's last visible key
	let cbase = (b * p.KV + g) * p.S * HD4;
	var kp: array<vec2<u32>, SL>; // PF 1: the next tile's keys and values (packVec), on their way to workgroup memory
	var vp: array<vec2<u32>, SL>;
	var kr: array<vec4<f32>, SL>; // PF 2: the same as loaded
	var vr: array<vec4<f32>, SL>;
	if PF == 2u { // the first tile's loads (the others', the tile before's)
		for (var l = 0u; l < SL; l++) {
			kr[l] = kc[tileAt(li + l * WG, 0u, keys, cbase)];
			vr[l] = vc[tileAt(li + l * WG, 0u, keys, cbase)];
		}
	}
	for (var s0 = 0u; s0 < keys; s0 += BKV) {
		// 1. The tile's keys (BKV rows of hs from KO) and values (the BKV after).
		if PF == 0u {
			// LB vec4s of keys and of values at a time: the loads first (f32,
			// into registers), then their stores (rounded to f16), so that
			// the loads are in flight together.
			for (var b0 = 0u; b0 < SL; b0 += LB) {
				var kf: array<vec4<f32>, LB>;
				var vf: array<vec4<f32>, LB>;
				for (var l = 0u; l < LB; l++) {
					kf[l] = kc[tileAt(li + (b0 + l) * WG, s0, keys, cbase)];
					vf[l] = vc[tileAt(li + (b0 + l) * WG, s0, keys, cbase)];
				}
				for (var l = 0u; l < LB; l++) { stageKV(li + (b0 + l) * WG, s0, keys, kf[l], vf[l]); }
			}
		} else if PF == 1u {
			if s0 == 0u { // the first tile's loads (the others', the tile before's)
				for (var l = 0u; l < SL; l++) {
					kp[l] = packVec(kc[tileAt(li + l * WG, 0u, keys, cbase)], li + l * WG, 0u, keys);
					vp[l] = packVec(vc[tileAt(li + l * WG, 0u, keys, cbase)], li + l * WG, 0u, keys);
				}
			}
			for (var l = 0u; l < SL; l++) {
				let i = li + l * WG;
				if i < BKV * HP4 {
					let o = KO + (i / HP4) * KS + 4u * (i % HP4);
					stage16(o, bitcast<vec4<f16>>(kp[l]));
					stage16(BKV * KS + o, bitcast<vec4<f16>>(vp[l]));
				}
			}
		} else {
			for (var l = 0u; l < SL; l++) { stageKV(li + l * WG, s0, keys, kr[l], vr[l]); }
		}
		workgroupBarrier();
		// The next tile's loads, in flight during this tile's steps; PF 2's
		// without a branch: after the last tile, its keys again (tileAt
		// clamps the positions: cached, never staged).
		if PF == 1u {
			if s0 + BKV < keys {
				for (var l = 0u; l < SL; l++) {
					kp[l] = packVec(kc[tileAt(li + l * WG, s0 + BKV, keys, cbase)], li + l * WG, s0 + BKV, keys);
					vp[l] = packVec(vc[tileAt(li + l * WG, s0 + BKV, keys, cbase)], li + l * WG, s0 + BKV, keys);
				}
			}
		}
		if PF == 2u {
			for (var l = 0u; l < SL; l++) {
				kr[l] = kc[tileAt(li + l * WG, s0 + BKV, keys, cbase)];
				vr[l] = vc[tileAt(li + l * WG, s0 + BKV, keys, cbase)];
			}
		}
		let busy = q0 + r0 < p.T && s0 <= sgLast; // subgroup-uniform
		// 2. S = Q·Kᵀ for the subgroup's rows: each right matrix once, for
		// its FM row blocks (so that the compiler keeps one at a time).
		if busy {
			var acc: array<subgroup_matrix_result<f32, SN, SM>, FM * NS>; // (i, n) at i * NS + n
			for (var k = 0u; k < NQ; k++) {
				var qa: array<subgroup_matrix_left<f16, SK, SM>, FM>;
				for (var i = 0u; i < FM; i++) {
					if QW == 1u {
						qa[i] = subgroupMatrixLoad<subgroup_matrix_left<f16, SK, SM>>(&hs, (r0 + i * SM) * KS + k * SK, false, KS);
					} else {
						qa[i] = qm[i * NQ + k];
					}
				}
				for (var n = 0u; n < NS; n++) {
					let kt = subgroupMatrixLoad<subgroup_matrix_right<f16, SN, SK>>(&hs, KO + n * SN * KS + k * SK, true, KS);
					for (var i = 0u; i < FM; i++) {
						acc[i * NS + n] = subgroupMatrixMultiplyAccumulate(qa[i], kt, acc[i * NS + n]);
					}
				}
			}
			for (var i = 0u; i < FM; i++) {
				for (var n = 0u; n < NS; n++) {
					subgroupMatrixStore(&ss, (r0 + i * SM) * SS + n * SN, acc[i * NS + n], false, SS);
				}
			}
		}
		workgroupBarrier();
		// 3. The online softmax of the subgroup's rows.
		if busy {
			for (var j = 0u; j < QR; j++) {
				let row = r0 + j * RSTEP + sid / R;
				// The invocation's scores of the row, column part + R*((c + rot) % CJ)
				// in sc[c]. Rows lie SS words apart, SS = 4 (mod 8): 8 rows in 8
				// banks 4 apart, so where SS/R is even (R 1 or 2: a subgroup's rows
				// would read ss in 8 or 16 banks) rows 8 apart start NROT-th of 4
				// banks further (ROT 1; where SS/R is odd they are already apart).
				// The rotation is small, so that all but the last NROT-1 columns
				// are at constant offsets from the row's start (the compiler keeps
				// no address per column), and the masked scores (past the row's
				// last key) are -3e38: exp(-3e38 - m) is 0, as a skipped one.
				var sc: array<f32, CJ>;
				var mt = m[j];
				let rot = select(0u, (row / 8u) % NROT, ROT == 1u);
				let sb = row * SS + part; // the row's first column in ss and ps
				let pb = row * PS + part;
				let lim = i32(last[j]) - i32(s0 + part + R * rot);
				for (var c = 0u; c < CJ; c++) {
					let w = c + NROT > CJ; // the column may wrap around (constant once unrolled)
					let cw = R * ((c + rot) % CJ);
					let v = ss[sb + select(R * (c + rot), cw, w)] * scale;
					sc[c] = select(-3.0e38, v, select(i32(R * c) <= lim, i32(cw) <= lim + i32(R * rot), w));
					mt = max(mt, sc[c]);
				}
				for (var x = 1u; x < R; x *= 2u) { mt = max(mt, subgroupShuffleXor(mt, x)); }
				corr[j] = exp(m[j] - mt);
				var sum = 0.0;
				for (var c = 0u; c < CJ; c++) {
					let w = c + NROT > CJ;
					let e = exp(sc[c] - mt);
					sum += e;
					ps[pb + select(R * (c + rot), R * ((c + rot) % CJ), w)] = f16(e);
				}
				l[j] = l[j] * corr[j] + sum;
				m[j] = mt;
			}
		}
		workgroupBarrier();
		// 4. P·V for the subgroup's rows, where the scores were (each right
		// matrix once, as in step 2).
		if busy {
			var acc: array<subgroup_matrix_result<f32, SN, SM>, FM * NO>; // (i, n) at i * NO + n
			for (var k = 0u; k < NP; k++) {
				var pm: array<subgroup_matrix_left<f16, SK, SM>, FM>;
				for (var i = 0u; i < FM; i++) {
					pm[i] = subgroupMatrixLoad<subgroup_matrix_left<f16, SK, SM>>(&ps, (r0 + i * SM) * PS + k * SK, false, PS);
				}
				for (var n = 0u; n < NO; n++) {
					let vm = subgroupMatrixLoad<subgroup_matrix_right<f16, SN, SK>>(&hs, KO + (BKV + k * SK) * KS + n * SN, false, KS);
					for (var i = 0u; i < FM; i++) {
						acc[i * NO + n] = subgroupMatrixMultiplyAccumulate(pm[i], vm, acc[i * NO + n]);
					}
				}
			}
			for (var i = 0u; i < FM; i++) {
				for (var n = 0u; n < NO; n++) {
					subgroupMatrixStore(&ss, (r0 + i * SM) * SS + n * SN, acc[i * NO + n], false, SS);
				}
			}
		}
		workgroupBarrier();
		// 5. Rescale the accumulator and add the tile's products. The next
		// tile's first barrier keeps ss until every invocation has read it.
		if busy {
			for (var j = 0u; j < QR; j++) {
				let row = r0 + j * RSTEP + sid / R;
				for (var c = 0u; c < CO; c++) {
					let col = 4u * (part + R * (c / 4u)) + c % 4u;
					o[j * CO + c] = o[j * CO + c] * corr[j] + ss[row * SS + col];
				}
			}
		}
	}

	for (var j = 0u; j < QR; j++) {
		var sum = l[j];
		for (var x = 1u; x < R; x *= 2u) { sum += subgroupShuffleXor(sum, x); }
		let t = q0 + r0 + j * RSTEP + sid / R;
		if t < p.T {
			let inv = 1.0 / sum;
			let ob = ((b * p.T + t) * p.C + h * HD) / 4u;
			for (var c4 = 0u; c4 < CO / 4u; c4++) {
				let c = j * CO + 4u * c4;
				if part + R * c4 < HD4 {
					out[ob + part + R * c4] = vec4<f32>(o[c], o[c + 1u], o[c + 2u], o[c + 3u]) * inv;
				}
			}
		}
	}
}
