// matmul_shared: out (M, N) = x (M, K) · w (K, N) + bias (N), then the
// epilogue EPI names (include/matmul_epilogue.wgsl): EPI_STORE, EPI_GELU, EPI_GELU_ERF,
// EPI_ADD, EPI_SWIGLU, or EPI_QKV, c_attn's: of the N = 3C columns (q | k | v,
// H heads of C/H channels), q goes to out and k and v straight into the KV
// cache kc, vc (B, H, S, C/H) at the positions pos0 .. pos0+T-1 of row
// m = b*T + t, as kv_write.wgsl would copy them (storeKV). kc and vc
// (include/matmul_kv.wgsl) are bound for every epilogue and written by
// EPI_QKV only; the host leaves them out on devices with fewer than 6 storage
// buffers a stage (include/matmul_nokv.wgsl). x and out are f32;
// w (Hugging Face Conv1D layout [in][out], row-major) and bias are weights;
// accumulation is f32, each output's products added in k order, so every
// tile configuration and both load paths give the same bits. Any M, N, K.
// The bindings x, w, bias, out, the push constants M, N, K and the
// epilogues of matmul.wgsl, so the host picks either.
//
// Workgroup-memory tiled for GPUs, in the manner of the best SIMT GEMMs. A
// workgroup computes a BM x BN tile of out (tiles numbered row-major over
// ⌈M/BM⌉ x ⌈N/BN⌉, workgroups flattened as wid.y * nwg.x + wid.x so that more
// than 65535 fit; those past the last tile return at once) with
// WG = (BM/TM) * (BN/TN) invocations, each accumulating TM x TN results in
// registers. Invocation li is (ty, tx) = (li / (BN/TN), li % (BN/TN)); it holds
// rows 4*(ty + i*(BM/TM)) + 0..3 for i < TM/4 and columns
// 4*(tx + j*(BN/TN)) + 0..3 for j < TN/4: blocks of 4 spread across the tile,
// so that neighbouring invocations read neighbouring vec4s of workgroup
// memory (an address several invocations read is a broadcast).
//
// K is walked in steps of BK. Workgroup memory holds two steps' tiles, as
// vec4<f32> (double buffering, one barrier per step): step s stores its tiles
// (loaded into registers during step s-1) into buffer s % 2, whose last
// readers (step s-2) all passed step s-1's barrier, then the barrier; then it
// issues step s+1's global loads into registers, which are in flight while it
// multiplies out of buffer s % 2.
//
//   xs: per k, XS vec4s; vec4 q holds rows 4q .. 4q+3 of x's tile at that k
//       (x transposed), so the inner loop reads TM/4 whole vec4s per k. The
//       tile arrives from global memory as vec4s along k (4 consecutive k of
//       one row), each stored as 4 scalars, one per k row of xs: word
//       k*4*XS + r. Neighbouring invocations take neighbouring rows, Q2 (1 or
//       2) vec4s of a row per run of Q2 invocations (Q2 = 2 when BK/4 is even:
//       32 contiguous bytes of a row of x per pair, a whole memory sector). A
//       warp's store of component c then writes words (4*jlo + c)*4*XS + r
//       for 16 consecutive r and jlo < 2: with XS odd, 16*XS ≡ 16 (mod 32),
//       so the 32 words fall in 32 distinct banks (32 banks x 4 bytes). XS is
//       BM/4 rounded up to odd: one vec4 of padding when BM/4 is even.
//   ws: per k, BN/4 vec4s of 4 consecutive columns of w, stored as loaded
//       (consecutive invocations, consecutive vec4s: no conflict, so no
//       padding); the inner loop reads TN/4 vec4s per k.
//
// The inner loop reads TM/4 + TN/4 vec4s per k and does TM * TN multiply-
// adds; its workgroup and private indices are loop counters with constant
// bounds and lets derived from local_invocation_index (/ and % by constants),
// which the compiler proves in range, so it emits no clamp there (nor in the
// tile stores when WG divides the tiles' vec4 counts, as with the default).
// Global memory keeps the compiler's robust (clamped) access.
//
// Global loads: with VEC = 1 (the default), which the host sets only where K
// and N are multiples of 4, x's tile is read as vec4s along k and w's as 4
// weights at once along n (vec4<f16> for f16 weights); with VEC = 0, for any
// M, N, K, element by element (the same values, so the same bits). VEC picks
// the path when the pipeline is created, so each pipeline holds one (a
// run-time check in every load cost lavapipe 15-20%); VEC = 1 with other K or
// N reads wrong values, though never outside the bindings. Elements of a tile
// outside x or w are zeros; rows and columns of out outside (M, N) are never
// stored. x and w are bound as vec4 arrays: their bindings must hold
// ⌈M*K/4⌉ and ⌈K*N/4⌉ whole vec4s (always so when K % 4 == 0, resp.
// N % 4 == 0; the host checks the buffer sizes otherwise).
//
// Constraints, checked by the host (matmulTiles.valid): BK, TM, TN multiples
// of 4, TM and TN at most 16; BM % TM == BN % TN == 0; at most 8 vec4 loads of
// each tile per invocation (XL, WL); WG at most the device's invocations;
// workgroup memory 2 * BK * (XS + BN/4) * 16 bytes at most the device's
// (16.25 KiB for the default 128 x 128 x 8, 8 x 8 per invocation, 256
// invocations).
alias weight = f32;

override BM: u32 = 128; // rows of out per workgroup
override BN: u32 = 128; // columns of out per workgroup
override BK: u32 = 8;   // step along K
override TM: u32 = 8;   // rows per invocation
override TN: u32 = 8;   // columns per invocation
override EPI: u32 = 0;
override VEC: u32 = 1;  // 1: vector global loads; only where K % 4 == 0 and N % 4 == 0
override WG: u32 = (BM / TM) * (BN / TN); // invocations per workgroup; derived

struct Params { M: u32, N: u32, K: u32, T: u32, H: u32, S: u32, pos0: u32 } // T .. pos0: EPI_QKV only

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;          // (M, K) as ⌈M*K/4⌉ vec4s
@group(0) @binding(1) var<storage, read> w: array<vec4<weight>>;       // (K, N) as ⌈K*N/4⌉ vec4s
@group(0) @binding(2) var<storage, read> bias: array<weight>;          // (N)
@group(0) @binding(3) var<storage, read_write> out: array<f32>;        // (M, N)
var<push_constant> p: Params;

override QX: u32 = BK / 4u;                      // vec4s of a row of x's tile
override Q2: u32 = 2u - QX % 2u;                 // of those, read by neighbouring invocations
override XS: u32 = BM / 4u + 1u - (BM / 4u) % 2u; // vec4s per k in xs: BM/4 rounded up to odd
override WS: u32 = BN / 4u;                      // vec4s per k in ws
override NX: u32 = BM * QX;                      // vec4s of x's tile
override NW: u32 = BK * WS;                      // vec4s of w's tile
override XL: u32 = (NX + WG - 1u) / WG;          // x's tile: vec4 loads per invocation
override WL: u32 = (NW + WG - 1u) / WG;          // w's tile: vec4 loads per invocation
var<workgroup> xs: array<vec4<f32>, 2u * BK * XS>; // 2 x (BK, XS)
var<workgroup> ws: array<vec4<f32>, 2u * BK * WS>; // 2 x (BK, BN/4)

// Private arrays need constant sizes: the largest the host allows (TM, TN <=
// 16, at most 8 loads of each tile per invocation); the loops run to the
// override values, plain constants once the pipeline is created, so drivers
// unroll them and keep only the elements used, in registers.
const MAXT4: u32 = 4u;
const MAXACC: u32 = 64u;
const MAXL: u32 = 8u;

//#include "include/matmul_epilogue.wgsl"

//#include "include/matmul_kv.wgsl"

// loadX is vec4 number i of x's tile for the step at k0: row r = (i / Q2) % BM
// of the tile, k0 + 4*kq .. +3 with kq = (i / (Q2*BM)) * Q2 + i % Q2; zeros
// outside x (and for i past the tile).
fn loadX(bm0: u32, k0: u32, i: u32) -> vec4<f32> {
	let m = bm0 + (i / Q2) % BM;
	let k = k0 + 4u * ((i / (Q2 * BM)) * Q2 + i % Q2);
	if i >= NX || m >= p.M || k >= p.K { return vec4<f32>(0.0); }
	let e = m * p.K + k;
	if VEC == 1u { return x[e / 4u]; }
	var v = vec4<f32>(0.0);
	for (var c = 0u; c < 4u; c++) {
		if k + c < p.K { v[c] = x[(e + c) / 4u][(e + c) % 4u]; }
	}
	return v;
}

// loadW is vec4 number i of w's tile for the step at k0: k k0 + i / WS,
// columns bn0 + 4*(i % WS) .. +3; zeros outside w (and for i past the tile).
fn loadW(bn0: u32, k0: u32, i: u32) -> vec4<f32> {
	let k = k0 + i / WS;
	let n = bn0 + 4u * (i % WS);
	if i >= NW || k >= p.K || n >= p.N { return vec4<f32>(0.0); }
	let e = k * p.N + n;
	if VEC == 1u { return vec4<f32>(w[e / 4u]); }
	var v = vec4<f32>(0.0);
	for (var c = 0u; c < 4u; c++) {
		if n + c < p.N { v[c] = f32(w[(e + c) / 4u][(e + c) % 4u]); }
	}
	return v;
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let tilesN = (p.N + BN - 1u) / BN;
	let tile = wid.y * nwg.x + wid.x;
	let bm0 = (tile / tilesN) * BM; // first row and column of the workgroup's tile
	let bn0 = (tile % tilesN) * BN;
	if bm0 >= p.M { return; } // uniform: the whole workgroup leaves
	let ty = li / (BN / TN);
	let tx = li % (BN / TN);

	var acc: array<vec4<f32>, MAXACC>; // (TM, TN/4): row block 4i+r, column block j at (4i+r) * (TN/4) + j
	for (var i = 0u; i < TM * TN / 4u; i++) { acc[i] = vec4<f32>(0.0); }
	var rx: array<vec4<f32>, MAXL>; // the next step's tiles, on their way to workgroup memory
	var rw: array<vec4<f32>, MAXL>;

	let steps = (p.K + BK - 1u) / BK;
	for (var l = 0u; l < XL; l++) { rx[l] = loadX(bm0, 0u, li + l * WG); }
	for (var l = 0u; l < WL; l++) { rw[l] = loadW(bn0, 0u, li + l * WG); }
	for (var s = 0u; s < steps; s++) {
		let cur = (s % 2u) * BK; // the first k row of this step's buffer
		// Step s's tiles into its buffer, which nobody reads now: its last
		// readers, step s-2's, all passed step s-1's barrier since. x's
		// transposed (loadX's vec4 i: its 4 k to 4 k rows of xs, one component
		// each), w's as they are.
		for (var l = 0u; l < XL; l++) {
			let i = li + l * WG;
			if i < NX {
				let r = (i / Q2) % BM;
				let k = cur + 4u * ((i / (Q2 * BM)) * Q2 + i % Q2);
				xs[(k + 0u) * XS + r / 4u][r % 4u] = rx[l].x;
				xs[(k + 1u) * XS + r / 4u][r % 4u] = rx[l].y;
				xs[(k + 2u) * XS + r / 4u][r % 4u] = rx[l].z;
				xs[(k + 3u) * XS + r / 4u][r % 4u] = rx[l].w;
			}
		}
		for (var l = 0u; l < WL; l++) {
			let i = li + l * WG;
			if i < NW { ws[cur * WS + i] = rw[l]; }
		}
		workgroupBarrier();
		if s + 1u < steps { // the next step's global loads, in flight while this one multiplies
			let k0 = (s + 1u) * BK;
			for (var l = 0u; l < XL; l++) { rx[l] = loadX(bm0, k0, li + l * WG); }
			for (var l = 0u; l < WL; l++) { rw[l] = loadW(bn0, k0, li + l * WG); }
		}
		for (var k = 0u; k < BK; k++) {
			let xr = (cur + k) * XS + ty;
			let wr = (cur + k) * WS + tx;
			var a: array<vec4<f32>, MAXT4>;
			var b: array<vec4<f32>, MAXT4>;
			for (var i = 0u; i < TM / 4u; i++) { a[i] = xs[xr + i * (BM / TM)]; }
			for (var j = 0u; j < TN / 4u; j++) { b[j] = ws[wr + j * (BN / TN)]; }
			for (var i = 0u; i < TM / 4u; i++) {
				for (var j = 0u; j < TN / 4u; j++) {
					acc[(4u * i + 0u) * (TN / 4u) + j] += a[i].x * b[j];
					acc[(4u * i + 1u) * (TN / 4u) + j] += a[i].y * b[j];
					acc[(4u * i + 2u) * (TN / 4u) + j] += a[i].z * b[j];
					acc[(4u * i + 3u) * (TN / 4u) + j] += a[i].w * b[j];
				}
			}
		}
	}

	// (No continue for the columns past N: a loop that continues is not
	// unrolled by the compiler, and acc's indices must be constants.)
	for (var j = 0u; j < TN / 4u; j++) {
		let n0 = bn0 + 4u * (tx + j * (BN / TN));
		if n0 < p.N {
			var b = vec4<f32>(0.0);
			for (var c = 0u; c < 4u; c++) {
				if n0 + c < p.N { b[c] = f32(bias[n0 + c]); }
			}
			for (var i = 0u; i < TM / 4u; i++) {
				let m0 = bm0 + 4u * (ty + i * (BM / TM));
				for (var r = 0u; r < 4u; r++) {
					store(m0 + r, n0, acc[(4u * i + r) * (TN / 4u) + j], b);
				}
			}
		}
	}
}
