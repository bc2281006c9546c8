// matmul_shared: out (M, N) = x (M, K) · w (K, N) + bias (N), then an epilogue
// chosen by EPI: 0 stores y, 1 stores gelu_new(y), 2 adds y to out (the
// residual stream: out is read and written), 3 is c_attn's: of the N = 3C
// columns (q | k | v, H heads of C/H channels), q goes to out and k and v
// straight into the KV cache kc, vc (B, H, S, C/H) at the positions
// pos0 .. pos0+T-1 of row m = b*T + t, as kv_write.wgsl would copy them (the
// columns of k and v in out are not written). kc and vc are bound for every
// epilogue and written by 3 only. x and out are f32; w (Hugging
// Face Conv1D layout [in][out], row-major) and bias are weights; accumulation
// is f32, each output's products added in k order. The same bindings, push
// constants and EPI as matmul.wgsl, so the host picks either per adapter; x
// and w are read as vec4s, so K and N must be multiples of 4 (the host checks
// and otherwise runs matmul.wgsl, which takes any sizes).
//
// Workgroup-memory tiled for GPUs, in the manner of the best SIMT GEMMs. A
// workgroup computes a BM x BN tile of out (tiles numbered row-major over
// ⌈M/BM⌉ x ⌈N/BN⌉, workgroups flattened as wid.y * nwg.x + wid.x so that more
// than 65535 fit; those past the last tile return at once) with
// WG = (BM/TM) * (BN/TN) invocations, each accumulating TM x TN results in
// registers: invocation (ty, tx) holds rows ty*4 + i*(4*BM/TM) + 0..3 for
// i < TM/4 and columns tx*4 + j*(4*BN/TN) + 0..3 for j < TN/4, blocks of 4
// spread across the tile so that neighbouring invocations read neighbouring
// vec4s of workgroup memory (no bank conflict; an address shared by several
// invocations is a broadcast).
//
// K is walked in steps of BK. Workgroup memory holds two steps' tiles (double
// buffering, one barrier per step): while the invocations multiply step s from
// one buffer, they have already loaded step s+1 from global memory into
// registers, and store it into the other buffer before the barrier. x's tile
// is stored transposed, a row of BM/4 vec4s (4 consecutive rows each) per k,
// padded by one vec4 so that the transposing stores of one instruction fall in
// distinct banks; w's tile is a row of BN/4 vec4s (4 consecutive columns) per
// k, padded likewise. The inner loop reads TM/4 + TN/4 vec4s per k and does
// TM * TN multiply-adds. Global loads are vec4s: x along k, w along n (4
// weights at once, f16 or f32); elements of a tile outside x or w are zeros,
// and rows and columns of out outside (M, N) are never stored.
//
// Constraints, checked by the host: BK, TM, TN multiples of 4; BM % TM ==
// BN % TN == 0; TM, TN at most 8; BM * BK / 4 and BK * BN / 4 at most
// 4 * WG; WG at most the device's invocations; workgroup memory
// 2 * BK * (BM + BN + 8) * 4 bytes (17 KiB with the defaults 128 x 128 x 8,
// 8 x 8 per invocation, 256 invocations) at most the device's.
alias weight = f32;

override BM: u32 = 128; // rows of out per workgroup
override BN: u32 = 128; // columns of out per workgroup
override BK: u32 = 8;   // step along K
override TM: u32 = 8;   // rows per invocation
override TN: u32 = 8;   // columns per invocation
override EPI: u32 = 0;
override WG: u32 = (BM / TM) * (BN / TN); // invocations per workgroup; derived

struct Params { M: u32, N: u32, K: u32, T: u32, H: u32, S: u32, pos0: u32 } // T .. pos0: EPI 3 only

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;          // (M, K/4)
@group(0) @binding(1) var<storage, read> w: array<vec4<weight>>;       // (K, N/4)
@group(0) @binding(2) var<storage, read> bias: array<weight>;          // (N)
@group(0) @binding(3) var<storage, read_write> out: array<f32>;        // (M, N)
@group(0) @binding(4) var<storage, read_write> kc: array<f32>;         // EPI 3: (B, H, S, C/H)
@group(0) @binding(5) var<storage, read_write> vc: array<f32>;         // EPI 3: (B, H, S, C/H)
var<push_constant> p: Params;

override XS: u32 = BM / 4u + 1u; // vec4s per k in x's tile, padded
override WS: u32 = BN / 4u + 1u; // vec4s per k in w's tile, padded
override XL: u32 = (BM * BK / 4u + WG - 1u) / WG; // x's tile: vec4 loads per invocation
override WL: u32 = (BK * BN / 4u + WG - 1u) / WG; // w's tile: vec4 loads per invocation
var<workgroup> xs: array<vec4<f32>, 2u * BK * XS>; // 2 x (BK, BM/4 + 1)
var<workgroup> ws: array<vec4<f32>, 2u * BK * WS>; // 2 x (BK, BN/4 + 1)

// Private arrays need constant sizes: the largest the host allows (TM, TN <=
// 8, at most 4 loads of each tile per invocation); the loops run to the
// override values, plain constants once the pipeline is created.
const MAXT4: u32 = 2u;
const MAXL: u32 = 4u;

// gelu is GPT-2's gelu_new; the tanh argument is clamped to ±15, where tanh
// is ±1 in f32, so that no implementation overflows.
fn gelu(y: vec4<f32>) -> vec4<f32> {
	let a = clamp(0.7978845608028654 * (y + 0.044715 * y * y * y), vec4<f32>(-15.0), vec4<f32>(15.0));
	return 0.5 * y * (1.0 + tanh(a));
}

// store applies the epilogue to the 4 columns n0.. of row m, writing those in bounds.
fn store(m: u32, n0: u32, acc: vec4<f32>, b: vec4<f32>) {
	if m >= p.M || n0 >= p.N { return; }
	var y = acc + b;
	if EPI == 1u { y = gelu(y); }
	if EPI == 3u && n0 >= p.N / 3u {
		// k or v: the 4 channels are consecutive channels of one head (C/H % 4 == 0).
		let C = p.N / 3u;
		let c = n0 % C;
		let hd = C / p.H;
		let dst = (((m / p.T) * p.H + c / hd) * p.S + p.pos0 + m % p.T) * hd + c % hd;
		for (var j = 0u; j < 4u; j++) {
			if n0 < 2u * C {
				kc[dst + j] = y[j];
			} else {
				vc[dst + j] = y[j];
			}
		}
		return;
	}
	let base = m * p.N + n0;
	for (var j = 0u; j < 4u; j++) {
		if EPI == 2u {
			out[base + j] += y[j];
		} else {
			out[base + j] = y[j];
		}
	}
}

// loadX is the vec4 of x's tile number i of the step at k0 (row i / (BK/4),
// k k0 + 4 * (i % (BK/4)) ..), zeros outside x.
fn loadX(bm0: u32, k0: u32, i: u32) -> vec4<f32> {
	let r = i / (BK / 4u);
	let k = k0 + 4u * (i % (BK / 4u));
	if i >= BM * BK / 4u || bm0 + r >= p.M || k >= p.K { return vec4<f32>(0.0); }
	return x[((bm0 + r) * p.K + k) / 4u];
}

// loadW is the vec4 of w's tile number i of the step at k0 (k k0 + i / (BN/4),
// columns bn0 + 4 * (i % (BN/4)) ..), zeros outside w.
fn loadW(bn0: u32, k0: u32, i: u32) -> vec4<f32> {
	let k = k0 + i / (BN / 4u);
	let n = bn0 + 4u * (i % (BN / 4u));
	if i >= BK * BN / 4u || k >= p.K || n >= p.N { return vec4<f32>(0.0); }
	return vec4<f32>(w[(k * p.N + n) / 4u]);
}

// storeX puts vec4 number i of x's tile (loadX's) into the buffer whose
// first k row is kb, transposed: 4 consecutive k of one row go to 4 rows of
// xs, one component each.
fn storeX(kb: u32, i: u32, v: vec4<f32>) {
	if i >= BM * BK / 4u { return; }
	let r = i / (BK / 4u);
	let k = kb + 4u * (i % (BK / 4u));
	xs[(k + 0u) * XS + r / 4u][r % 4u] = v.x;
	xs[(k + 1u) * XS + r / 4u][r % 4u] = v.y;
	xs[(k + 2u) * XS + r / 4u][r % 4u] = v.z;
	xs[(k + 3u) * XS + r / 4u][r % 4u] = v.w;
}

// storeW puts vec4 number i of w's tile (loadW's) into the buffer whose first
// k row is kb: 4 consecutive columns, as they are.
fn storeW(kb: u32, i: u32, v: vec4<f32>) {
	if i >= BK * BN / 4u { return; }
	ws[(kb + i / (BN / 4u)) * WS + i % (BN / 4u)] = v;
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

	var acc: array<vec4<f32>, 16>; // (TM, TN/4): row r, column block j at r * (TN/4) + j
	for (var i = 0u; i < TM * TN / 4u; i++) { acc[i] = vec4<f32>(0.0); }
	var rx: array<vec4<f32>, MAXL>; // the next step's tiles, on their way to workgroup memory
	var rw: array<vec4<f32>, MAXL>;

	let steps = (p.K + BK - 1u) / BK;
	// Step 0 into buffer 0.
	for (var l = 0u; l < XL; l++) { rx[l] = loadX(bm0, 0u, li + l * WG); }
	for (var l = 0u; l < WL; l++) { rw[l] = loadW(bn0, 0u, li + l * WG); }
	for (var l = 0u; l < XL; l++) { storeX(0u, li + l * WG, rx[l]); }
	for (var l = 0u; l < WL; l++) { storeW(0u, li + l * WG, rw[l]); }
	workgroupBarrier();

	for (var s = 0u; s < steps; s++) {
		let cur = (s % 2u) * BK; // the k rows of this step's buffer
		let more = s + 1u < steps;
		if more { // the next step's global loads, in flight while this one multiplies
			let k0 = (s + 1u) * BK;
			for (var l = 0u; l < XL; l++) { rx[l] = loadX(bm0, k0, li + l * WG); }
			for (var l = 0u; l < WL; l++) { rw[l] = loadW(bn0, k0, li + l * WG); }
		}
		for (var k = 0u; k < BK; k++) {
			var a: array<vec4<f32>, MAXT4>;
			var b: array<vec4<f32>, MAXT4>;
			for (var i = 0u; i < TM / 4u; i++) { a[i] = xs[(cur + k) * XS + ty + i * (BM / TM)]; }
			for (var j = 0u; j < TN / 4u; j++) { b[j] = ws[(cur + k) * WS + tx + j * (BN / TN)]; }
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
			for (var l = 0u; l < XL; l++) { storeX(BK - cur, li + l * WG, rx[l]); }
			for (var l = 0u; l < WL; l++) { storeW(BK - cur, li + l * WG, rw[l]); }
		}
		workgroupBarrier();
	}

	for (var j = 0u; j < TN / 4u; j++) {
		let n0 = bn0 + tx * 4u + j * (4u * BN / TN);
		if n0 >= p.N { continue; }
		let b = vec4<f32>(f32(bias[n0]), f32(bias[n0 + 1u]), f32(bias[n0 + 2u]), f32(bias[n0 + 3u]));
		for (var i = 0u; i < TM / 4u; i++) {
			let m0 = bm0 + ty * 4u + i * (4u * BM / TM);
			for (var r = 0u; r < 4u; r++) {
				store(m0 + r, n0, acc[(4u * i + r) * (TN / 4u) + j], b);
			}
		}
	}
}
