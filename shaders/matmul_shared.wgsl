// matmul_shared: out (M, N) = x (M, K) · w (K, N) + bias (N), then an epilogue
// chosen by EPI: 0 stores y, 1 stores gelu_new(y), 2 adds y to out (the
// residual stream: out is read and written). x and out are f32; w (Hugging
// Face Conv1D layout [in][out], row-major) and bias are weights; accumulation
// is f32. The same interface as matmul.wgsl (bindings, push constants, EPI), so
// the host picks either per adapter.
//
// Workgroup-memory tiled for GPUs. Each workgroup computes a BM x BN tile of
// out, the tiles numbered row-major over ⌈M/BM⌉ x ⌈N/BN⌉ and the workgroups
// flattened as wid.y * nwg.x + wid.x (so more than 65535 fit). Dispatch
// ⌈M/BM⌉ * ⌈N/BN⌉ workgroups in all (spread over x and y as for matmul.wgsl);
// those past the last tile return at once. A workgroup has WG = (BM/4) *
// (BN/4) invocations, each accumulating a 4x4 register tile (4 consecutive
// rows, 4 consecutive columns). For each step of BK along K, the workgroup
// loads the BM x BK tile of x and the BK x BN tile of w into workgroup memory
// as f32 (f16 weights converted on load), waits at a barrier, accumulates from
// there, and waits again before the next step: (BM + BN) * BK * 4 bytes of
// workgroup memory, 8 KiB with the defaults.
//
// Any M, N, K: elements of a tile outside x or w are stored as zeros (never
// read), and rows and columns of out outside (M, N) are never stored. BM and
// BN must be multiples of 4, and WG at most the device's invocation limit.
alias weight = f32;

override BM: u32 = 64;  // rows of out per workgroup
override BN: u32 = 64;  // columns of out per workgroup
override BK: u32 = 16;  // step along K
override EPI: u32 = 0;
override WG: u32 = (BM / 4u) * (BN / 4u); // invocations per workgroup; derived

struct Params { M: u32, N: u32, K: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;          // (M, K)
@group(0) @binding(1) var<storage, read> w: array<weight>;       // (K, N)
@group(0) @binding(2) var<storage, read> bias: array<weight>;    // (N)
@group(0) @binding(3) var<storage, read_write> out: array<f32>;  // (M, N)
var<push_constant> p: Params;

var<workgroup> xs: array<f32, BM * BK>; // (BK, BM): x's tile, transposed
var<workgroup> ws: array<f32, BK * BN>; // (BK, BN): w's tile

// gelu is GPT-2's gelu_new; the tanh argument is clamped to ±15, where tanh
// is ±1 in f32, so that no implementation overflows.
fn gelu(y: vec4<f32>) -> vec4<f32> {
	let a = clamp(0.7978845608028654 * (y + 0.044715 * y * y * y), vec4<f32>(-15.0), vec4<f32>(15.0));
	return 0.5 * y * (1.0 + tanh(a));
}

// store applies the epilogue to the 4 columns n0.. of row m, writing those in bounds.
fn store(m: u32, n0: u32, acc: vec4<f32>, b: vec4<f32>) {
	if m >= p.M { return; }
	var y = acc + b;
	if EPI == 1u { y = gelu(y); }
	let base = m * p.N + n0;
	for (var j = 0u; j < 4u; j++) {
		if n0 + j < p.N {
			if EPI == 2u {
				out[base + j] += y[j];
			} else {
				out[base + j] = y[j];
			}
		}
	}
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let tilesN = (p.N + BN - 1u) / BN;
	let tile = wid.y * nwg.x + wid.x;
	let bm0 = (tile / tilesN) * BM; // first row and column of the workgroup's tile
	let bn0 = (tile % tilesN) * BN;
	if bm0 >= p.M { return; } // uniform: the whole workgroup leaves
	let tm = (li / (BN / 4u)) * 4u; // the invocation's 4x4 tile within it
	let tn = (li % (BN / 4u)) * 4u;
	var a0 = vec4<f32>(0.0);
	var a1 = vec4<f32>(0.0);
	var a2 = vec4<f32>(0.0);
	var a3 = vec4<f32>(0.0);
	for (var k0 = 0u; k0 < p.K; k0 += BK) {
		// x's tile: consecutive invocations read consecutive k of a row.
		for (var i = li; i < BM * BK; i += WG) {
			let r = i / BK;
			let c = i % BK;
			var v = 0.0;
			if bm0 + r < p.M && k0 + c < p.K {
				v = x[(bm0 + r) * p.K + k0 + c];
			}
			xs[c * BM + r] = v;
		}
		// w's tile: consecutive invocations read consecutive n of a row.
		for (var i = li; i < BK * BN; i += WG) {
			let r = i / BN;
			let c = i % BN;
			var v = 0.0;
			if k0 + r < p.K && bn0 + c < p.N {
				v = f32(w[(k0 + r) * p.N + bn0 + c]);
			}
			ws[i] = v;
		}
		workgroupBarrier();
		for (var k = 0u; k < BK; k++) {
			let xa = k * BM + tm;
			let wa = k * BN + tn;
			let b = vec4<f32>(ws[wa], ws[wa + 1u], ws[wa + 2u], ws[wa + 3u]);
			a0 += xs[xa] * b;
			a1 += xs[xa + 1u] * b;
			a2 += xs[xa + 2u] * b;
			a3 += xs[xa + 3u] * b;
		}
		workgroupBarrier();
	}
	let m0 = bm0 + tm;
	let n0 = bn0 + tn;
	if n0 >= p.N { return; }
	let c = min(vec4<u32>(n0) + vec4<u32>(0u, 1u, 2u, 3u), vec4<u32>(p.N - 1u));
	let b = vec4<f32>(f32(bias[c.x]), f32(bias[c.y]), f32(bias[c.z]), f32(bias[c.w]));
	store(m0, n0, a0, b);
	store(m0 + 1u, n0, a1, b);
	store(m0 + 2u, n0, a2, b);
	store(m0 + 3u, n0, a3, b);
}
