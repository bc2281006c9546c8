// matmul_coop: matmul_shared.wgsl's product on the device's matrix units
// (subgroup matrices: SPV_KHR_cooperative_matrix where the device has it,
// ordinary invocation code where the compiler lowers them): out (M, N) =
// x (M, K) · w (K, N) + bias (N), then the epilogue EPI names
// (include/matmul_epilogue.wgsl; EPI_QKV writes k and v into the KV cache
// as matmul_shared.wgsl does). The bindings, push constants and epilogues
// of matmul_shared.wgsl, so the host picks either. Any M, N, K.
//
// Numerics: the operands of the matrix units are f16: w is f16 (this kernel
// exists for f16 weights only) and x, f32 in memory, is rounded to f16 (to
// nearest, clamped to ±65504) as its tile is staged; products are exact in
// f32 and accumulated in f32, in the order the matrix units choose. So an
// output differs from matmul_shared.wgsl's by at most about
// 2⁻¹¹ · Σ_k |x_k·w_k| (the rounding of x), plus f32 accumulation error.
//
// Tiling. The subgroup-matrix configuration (SM x SK) · (SK x SN) -> SM x SN
// is the device's (16 x 16 x 16 on most NVIDIA and AMD GPUs, 8 x 16 x 16 on
// Intel's); a subgroup accumulates FM x FN result matrices (an
// FM*SM x FN*SN block of out) in f32, and a workgroup of SGM x SGN
// subgroups a BM x BN tile, BM = SGM*FM*SM, BN = SGN*FN*SN (tiles numbered
// row-major over ⌈M/BM⌉ x ⌈N/BN⌉, workgroups flattened as
// wid.y * nwg.x + wid.x; those past the last tile return at once). SM, SN,
// SK, FM and FN are constants, since a matrix type's shape must be: the
// host rewrites their lines per device (coopSource); the rest are overrides.
//
// K is walked in steps of BK (a multiple of SK). Each step stages x's BM x BK
// tile and w's BK x BN tile in workgroup memory as f16, row-major with rows
// padded by 8 values (16 bytes: row starts stay 16-byte aligned, as
// cooperative-matrix loads want, and consecutive rows start in different
// banks); elements outside x or w are stored as zeros, so ragged M, N and K
// need no other care. With WT = 1 w's tile is stored n-major instead, as
// BN columns of BK values (k contiguous, columns padded by 8 the same way),
// and the right matrices are loaded column-major from it: each invocation of
// a matrix unit's right operand holds values along k of one column, which a
// row-major tile gives only by one 2-byte load per value (AMD's RDNA3: 16
// per matrix), a column-major one by wide loads (two of 16 bytes), at the
// cost of the staging: a vec4 of w (4 consecutive n at one k) goes to 4
// columns, 4 scalar stores where WT = 0 merges them into one. Numbered as
// WT 0 numbers them (neighbouring invocations along n), at BN 64 the 16
// invocations at one k would store 4 columns apart: into 2 of 32 banks. So
// WT 1 numbers the vec4s of w's tile in bands of 8 rows instead, 8
// consecutive k at one n, then the next 4 columns (loadW): a store's 8
// invocations of a column write 16 consecutive bytes, its 32 at most 2
// dwords to a bank; a subgroup's global loads read 8 rows of w, 32 bytes of
// each. The padding of 8 keeps the matrix loads free of conflicts too: 8
// invocations' 16-byte reads, BK+8 values apart, cover the 32 banks once
// (BK 16, 32, 64). The tiles reach workgroup memory through registers
// (rx, rw; x as f32, rounded to f16 only as it is stored, so that nothing
// waits for a load before the multiplies that it overlaps), in ST
// stages: with ST = 2 the next step's global loads are issued right after
// this step's barrier and stay in flight during the multiplies, which costs
// their registers for the whole step; with ST = 1 a step's loads are issued
// at its start, all of them before the first store, and their registers are
// free during the multiplies (the big accumulator tilings need them). Then
// one barrier, ST = 2's loads, BK/SK rounds of: FN right matrices loaded
// from workgroup memory, then per row of result matrices one left matrix
// loaded and multiplied with all FN right ones (each loaded matrix serves
// FM or FN multiply-adds), and a barrier before the tiles are overwritten.
// ST = 3 keeps two of each tile in workgroup memory (NB = 2 buffers), step s
// in buffer s % 2: the next step's loads are issued before the multiplies,
// as with ST = 2, and stored into the other buffer after them, so a step
// takes one barrier instead of two (the other buffer was last read in the
// step before, which the barrier that ended it closed).
// Global loads are as in matmul_shared.wgsl: vec4s (VEC = 1, only where
// K % 4 == 0 and N % 4 == 0) or element by element (VEC = 0), zeros
// outside the bindings. The staging stores f16 scalars: subgroupMatrixLoad
// reads arrays of the matrix's scalar type, and WGSL cannot view one
// workgroup array as another type.
//
// Epilogue, in chunks so that the tile need not fit in workgroup memory
// whole: each subgroup owns a scratch region of cs, SM x EC*SN f32 (rows
// padded by 4), and for each of its FM rows of result matrices and each
// group of EC of them along N (a loop uniform across the workgroup) stores
// those EC matrices there; after a barrier, the subgroup's own SGS
// invocations (by subgroup_invocation_id) take the region's vec4s in turn
// and apply the epilogue with the bias, as matmul_shared.wgsl's invocations
// do with their registers; a barrier before the next chunk overwrites it.
// Rows and columns outside (M, N) are never stored.
//
// Constraints, checked by the host (coopTiles.valid): BK a multiple of SK
// and of 8; EC divides FN; ST 1, 2 or 3; WG = SGM*SGN*SGS with SGS the
// device's subgroup size (each subgroup is SGS whole invocations); at most
// 16 vec4 loads of each tile per invocation; WT 0 or 1; workgroup memory
// NB*(2*BM*(BK+8) + 2*BK*(BN+8)) + 4*SGM*SGN*SM*(EC*SN+4) bytes, with WT = 1
// 2*BN*(BK+8) in place of 2*BK*(BN+8).
enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;
// The matrices' offsets depend on subgroup_id: the same for every invocation
// of a subgroup, as the matrix units need, but not across the workgroup,
// which is what the extension's uniformity rule checks.
diagnostic(off, chromium_experimental.subgroup_matrix_uniformity);

// The configuration and the result matrices per subgroup (see the header):
// the host rewrites these five lines.
const SM: u32 = 8u; // rows of a left and of a result matrix (the configuration's M)
const SN: u32 = 8u; // columns of a right and of a result matrix (N)
const SK: u32 = 8u; // columns of a left, rows of a right matrix (K)
const FM: u32 = 2u; // result matrices per subgroup along M
const FN: u32 = 2u; // result matrices per subgroup along N

override SGM: u32 = 2;  // subgroups per workgroup along M
override SGN: u32 = 2;  // subgroups per workgroup along N
override SGS: u32 = 32; // invocations per subgroup: the device's subgroup size
override BK: u32 = 32;  // step along K
override EC: u32 = 2;   // result matrices along N per epilogue chunk: divides FN
override ST: u32 = 2;   // stages: 2, the next step's global loads in flight during this one's multiplies; 1, a step's at its start; 3, as 2 with two tile buffers
override EPI: u32 = 0;
override VEC: u32 = 1;  // 1: vector global loads; only where K % 4 == 0 and N % 4 == 0
override WT: u32 = 0;   // w's tile: 0 row-major, right matrices loaded row-major; 1 n-major (k contiguous), loaded column-major
override BM: u32 = SGM * FM * SM;  // rows of out per workgroup; derived
override BN: u32 = SGN * FN * SN;  // columns of out per workgroup; derived
override WG: u32 = SGM * SGN * SGS; // invocations per workgroup; derived

struct Params { M: u32, N: u32, K: u32, T: u32, H: u32, S: u32, pos0: u32 } // T .. pos0: EPI_QKV only

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;     // (M, K) as ⌈M*K/4⌉ vec4s
@group(0) @binding(1) var<storage, read> w: array<vec4<f16>>;     // (K, N) as ⌈K*N/4⌉ vec4s
@group(0) @binding(2) var<storage, read> bias: array<f16>;        // (N)
@group(0) @binding(3) var<storage, read_write> out: array<f32>;   // (M, N)
var<push_constant> p: Params;

override XS: u32 = BK + 8u; // f16 per row of xs
// f16 per row of ws (WT 0) and per column (WT 1); 0 for the layout not in
// use, whose code stays in the kernel: its offsets then stay within the
// array, which the compiler proves, so it adds no clamps. (Products, not
// selects: an array's size must be integer arithmetic of overrides for the
// module to have generic SPIR-V.)
override WS: u32 = (1u - WT) * (BN + 8u);
override WK: u32 = WT * (BK + 8u);
override WB: u32 = BK * WS + BN * WK; // f16 per buffer of ws
override CW: u32 = EC * SN; // columns of an epilogue chunk
override CS: u32 = CW + 4u; // f32 per row of a chunk in cs
override QX: u32 = BK / 4u; // vec4s of a row of x's tile
override QW: u32 = BN / 4u; // vec4s of a row of w's tile
override NB: u32 = ST / 3u + 1u; // tile buffers: 2 with ST = 3, else 1
override QC: u32 = CW / 4u; // vec4s of a row of a chunk
override NX: u32 = BM * QX; // vec4s of x's tile
override NW: u32 = BK * QW; // vec4s of w's tile
override XL: u32 = (NX + WG - 1u) / WG; // x's tile: vec4 loads per invocation
override WL: u32 = (NW + WG - 1u) / WG; // w's tile: vec4 loads per invocation
var<workgroup> xs: array<f16, NB * BM * XS>; // NB x (BM, BK) x's tile, rows padded
var<workgroup> ws: array<f16, NB * WB>; // NB x w's tile: (BK, BN), rows padded; WT 1: (BN, BK), columns padded
var<workgroup> cs: array<f32, SGM * SGN * SM * CS>; // per subgroup an (SM, CW) epilogue chunk, rows padded

const MAXL: u32 = 16u; // the most vec4 loads of a tile per invocation

//#include "include/matmul_epilogue.wgsl"

//#include "include/matmul_kv.wgsl"

// loadX is vec4 number i of x's tile for the step at k0, as f32 and as
// read: row i / QX of the tile, k0 + 4*(i % QX) .. +3 (neighbouring
// invocations read neighbouring vec4s of a row), whatever the bounds (the
// index is clamped into x, as every index is); xIn says which components
// are in x and the tile, and stageX keeps only those. Without a branch or a
// use of the value here, a step's loads are all issued before any is waited
// for, and none is waited for before stageX: after the multiplies that the
// loads of ST 2 and 3 overlap. (A load inside a branch is waited for at the
// branch's end: AMD's compiler did so, one load after another, before the
// multiplies.)
fn loadX(bm0: u32, k0: u32, i: u32) -> vec4<f32> {
	let e = (bm0 + i / QX) * p.K + k0 + 4u * (i % QX);
	if VEC == 1u { return x[e / 4u]; }
	var v: vec4<f32>;
	for (var c = 0u; c < 4u; c++) { v[c] = x[(e + c) / 4u][(e + c) % 4u]; }
	return v;
}

// xIn is which components of loadX's vec4 i are in x and in the tile
// (with VEC 1, K % 4 == 0: all or none).
fn xIn(bm0: u32, k0: u32, i: u32) -> vec4<bool> {
	let k = k0 + 4u * (i % QX);
	let in = i < NX && bm0 + i / QX < p.M;
	if VEC == 1u { return vec4<bool>(in && k < p.K); }
	return vec4<bool>(in) & (vec4<u32>(k) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(p.K));
}

// loadW is vec4 number i of w's tile for the step at k0, as read: tile row
// (k) wk = i / QW, columns wn = 4*(i % QW) .. +3 (neighbouring invocations
// read neighbouring vec4s of a row); with WT 1 in bands of 8 rows, 8
// consecutive k at one n, then the next vec4 along n (see the header);
// offset by k0 and bn0. As loadX, whatever the bounds: stageW keeps the
// components in w. stageW places it alike (selects, not a function: the
// compiler bounds the one, not the other).
fn loadW(bn0: u32, k0: u32, i: u32) -> vec4<f16> {
	let wk = select(i / QW, (i / (8u * QW)) * 8u + i % 8u, WT == 1u);
	let wn = select(4u * (i % QW), 4u * ((i % (8u * QW)) / 8u), WT == 1u);
	let e = (k0 + wk) * p.N + bn0 + wn;
	if VEC == 1u { return w[e / 4u]; }
	var v: vec4<f16>;
	for (var c = 0u; c < 4u; c++) { v[c] = w[(e + c) / 4u][(e + c) % 4u]; }
	return v;
}

// toF16 rounds activations to the matrix units' operand type, clamped to
// f16's finite range (a value beyond it would otherwise be undefined).
fn toF16(v: vec4<f32>) -> vec4<f16> {
	return vec4<f16>(clamp(v, vec4<f32>(-65504.0), vec4<f32>(65504.0)));
}

// stageX puts vec4 i of x's tile for the step at k0 (loadX's), rounded to
// f16 and zero outside x, into buffer b of xs.
fn stageX(b: u32, bm0: u32, k0: u32, i: u32, v: vec4<f32>) {
	if i >= NX { return; }
	let h = select(vec4<f16>(0.0), toF16(v), xIn(bm0, k0, i));
	let o = b * (BM * XS) + (i / QX) * XS + 4u * (i % QX);
	xs[o] = h.x;
	xs[o + 1u] = h.y;
	xs[o + 2u] = h.z;
	xs[o + 3u] = h.w;
}

// stageW puts vec4 i of w's tile for the step at k0 (loadW's), zero
// outside w, into buffer b of ws: WT 0 into one row, WT 1 into four
// columns.
fn stageW(b: u32, bn0: u32, k0: u32, i: u32, r: vec4<f16>) {
	if i >= NW { return; }
	let wk = select(i / QW, (i / (8u * QW)) * 8u + i % 8u, WT == 1u);
	let wn = select(4u * (i % QW), 4u * ((i % (8u * QW)) / 8u), WT == 1u);
	// The components in w (with VEC 1, N % 4 == 0: all or none).
	var in = vec4<bool>(k0 + wk < p.K && bn0 + wn < p.N);
	if VEC == 0u { in = vec4<bool>(k0 + wk < p.K) & (vec4<u32>(bn0 + wn) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(p.N)); }
	let v = select(vec4<f16>(0.0), r, in);
	if WT == 1u {
		let o = b * WB + wn * WK + wk;
		ws[o] = v.x;
		ws[o + WK] = v.y;
		ws[o + 2u * WK] = v.z;
		ws[o + 3u * WK] = v.w;
		return;
	}
	let o = b * WB + wk * WS + wn;
	ws[o] = v.x;
	ws[o + 1u] = v.y;
	ws[o + 2u] = v.z;
	ws[o + 3u] = v.w;
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(subgroup_id) sid: u32,
	@builtin(subgroup_invocation_id) lane: u32,
	@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let tilesN = (p.N + BN - 1u) / BN;
	let tile = wid.y * nwg.x + wid.x;
	let bm0 = (tile / tilesN) * BM; // first row and column of the workgroup's tile
	let bn0 = (tile % tilesN) * BN;
	if bm0 >= p.M { return; } // uniform: the whole workgroup leaves
	// The subgroup, below SGM*SGN since each has SGS invocations; the min
	// changes nothing but lets the compiler prove every workgroup index of
	// the kernel in bounds, so that none is clamped (a clamp per f16 store
	// would keep a driver from merging a vec4's four into one).
	let sg = min(sid, SGM * SGN - 1u);
	let sm0 = (sg / SGN) * (FM * SM); // the subgroup's first row and column in the tile
	let sn0 = (sg % SGN) * (FN * SN);

	var acc: array<subgroup_matrix_result<f32, SN, SM>, FM * FN>; // zeros; (i, j) at i * FN + j
	var rx: array<vec4<f32>, MAXL>; // the next step's tiles, on their way to workgroup memory
	var rw: array<vec4<f16>, MAXL>;
	let steps = (p.K + BK - 1u) / BK;
	if ST >= 2u { // the first step's global loads
		for (var l = 0u; l < XL; l++) { rx[l] = loadX(bm0, 0u, li + l * WG); }
		for (var l = 0u; l < WL; l++) { rw[l] = loadW(bn0, 0u, li + l * WG); }
	}
	for (var s = 0u; s < steps; s++) {
		let buf = s % NB; // the buffer of this step's tiles
		if ST == 1u { // this step's global loads, all before the first store
			for (var l = 0u; l < XL; l++) { rx[l] = loadX(bm0, s * BK, li + l * WG); }
			for (var l = 0u; l < WL; l++) { rw[l] = loadW(bn0, s * BK, li + l * WG); }
		}
		if ST != 3u || s == 0u { // ST 3 stores the later steps' tiles during the step before
			for (var l = 0u; l < XL; l++) { stageX(buf, bm0, s * BK, li + l * WG, rx[l]); }
			for (var l = 0u; l < WL; l++) { stageW(buf, bn0, s * BK, li + l * WG, rw[l]); }
			workgroupBarrier();
		}
		// The next step's global loads, in flight while this one multiplies;
		// the last step loads its own tiles again (cached), so that no branch
		// ends at these loads and keeps their registers waiting for them there
		// (AMD's compiler copied them into the merged registers at once).
		if ST >= 2u {
			let k0 = min(s + 1u, steps - 1u) * BK;
			for (var l = 0u; l < XL; l++) { rx[l] = loadX(bm0, k0, li + l * WG); }
			for (var l = 0u; l < WL; l++) { rw[l] = loadW(bn0, k0, li + l * WG); }
		}
		let xb = buf * (BM * XS);
		let wb = buf * WB;
		for (var kq = 0u; kq < BK / SK; kq++) {
			let kk = kq * SK; // (a counter of whole steps: its range, and so the loads' offsets, is known to the compiler)
			var b: array<subgroup_matrix_right<f16, SN, SK>, FN>;
			for (var j = 0u; j < FN; j++) {
				if WT == 1u { // column-major: column sn0 + j*SN + c of the matrix at wb + (sn0 + j*SN + c) * WK + kk
					b[j] = subgroupMatrixLoad<subgroup_matrix_right<f16, SN, SK>>(&ws, wb + (sn0 + j * SN) * WK + kk, true, WK);
				} else {
					b[j] = subgroupMatrixLoad<subgroup_matrix_right<f16, SN, SK>>(&ws, wb + kk * WS + sn0 + j * SN, false, WS);
				}
			}
			for (var i = 0u; i < FM; i++) { // one left matrix at a time, times every right one
				let a = subgroupMatrixLoad<subgroup_matrix_left<f16, SK, SM>>(&xs, xb + (sm0 + i * SM) * XS + kk, false, XS);
				for (var j = 0u; j < FN; j++) {
					acc[i * FN + j] = subgroupMatrixMultiplyAccumulate(a, b[j], acc[i * FN + j]);
				}
			}
		}
		if ST == 3u && s + 1u < steps { // the next step's tiles into the other buffer, read last in the step before
			let next = (s + 1u) % NB; // 1 - buf, in a form whose range the compiler knows
			for (var l = 0u; l < XL; l++) { stageX(next, bm0, (s + 1u) * BK, li + l * WG, rx[l]); }
			for (var l = 0u; l < WL; l++) { stageW(next, bn0, (s + 1u) * BK, li + l * WG, rw[l]); }
		}
		workgroupBarrier(); // every read of this step's tiles before the next step's stores (ST 3: and the next tiles stored)
	}

	// The epilogue, chunk by chunk through the subgroup's region of cs.
	let c0 = sg * (SM * CS); // the subgroup's region
	for (var i = 0u; i < FM; i++) {
		for (var j0 = 0u; j0 < FN; j0 += EC) {
			for (var j = 0u; j < EC; j++) {
				subgroupMatrixStore(&cs, c0 + j * SN, acc[i * FN + j0 + j], false, CS);
			}
			workgroupBarrier();
			let m0 = bm0 + sm0 + i * SM; // the chunk's first row and column of out
			let n0 = bn0 + sn0 + j0 * SN;
			for (var q = lane; q < SM * QC; q += SGS) {
				let r = q / QC;
				let c = 4u * (q % QC);
				let n = n0 + c;
				if n >= p.N || m0 + r >= p.M { continue; }
				var bv = vec4<f32>(0.0);
				for (var e = 0u; e < 4u; e++) {
					if n + e < p.N { bv[e] = f32(bias[n + e]); }
				}
				let o = c0 + r * CS + c;
				store(m0 + r, n, vec4<f32>(cs[o], cs[o + 1u], cs[o + 2u], cs[o + 3u]), bv);
			}
			workgroupBarrier(); // the chunk is read before the next one overwrites it
		}
	}
}
