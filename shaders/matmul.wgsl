// matmul: out (M, N) = x (M, K) · w (K, N) + bias (N), then an epilogue chosen
// by EPI: 0 stores y, 1 stores gelu_new(y), 2 adds y to out (the residual
// stream: out is read and written), 4 is the SwiGLU of the Llama family's MLP:
// w's columns are gate and up interleaved (column 2i gate_proj's row i,
// 2i+1 up_proj's), N even, and out (M, N/2) gets
// out[m, i] = silu(y[m, 2i]) * y[m, 2i+1], silu(g) = g / (1 + e^-g).
// x and out are f32; w (Hugging Face Conv1D layout [in][out], row-major; the
// host transposes nn.Linear's) and bias are weights; accumulation is f32.
//
// Register-tiled for software rasterizers: no workgroup memory, no barriers.
// Each invocation computes a 4x4 tile of out (4 rows, 4 consecutive columns),
// the tiles numbered row-major over ⌈M/4⌉ x ⌈N/4⌉, WG tiles per workgroup, and
// the workgroups flattened as wid.y * nwg.x + wid.x (so more than 65535 fit).
// Any M, N, K: loads at a ragged edge are clamped to the last row or column
// (always in bounds) and those lanes are never stored; w is bound as scalars,
// so N need not be a multiple of 4.
alias weight = f32;

override WG: u32 = 64;
override EPI: u32 = 0;

struct Params { M: u32, N: u32, K: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;          // (M, K)
@group(0) @binding(1) var<storage, read> w: array<weight>;       // (K, N)
@group(0) @binding(2) var<storage, read> bias: array<weight>;    // (N)
@group(0) @binding(3) var<storage, read_write> out: array<f32>;  // (M, N)
var<push_constant> p: Params;

// gelu is GPT-2's gelu_new; the tanh argument is clamped to ±15, where tanh
// is ±1 in f32, so that no implementation overflows.
fn gelu(y: vec4<f32>) -> vec4<f32> {
	let a = clamp(0.7978845608028654 * (y + 0.044715 * y * y * y), vec4<f32>(-15.0), vec4<f32>(15.0));
	return 0.5 * y * (1.0 + tanh(a));
}

// silu is x / (1 + e^-x) (e^-x is +inf for x below -88: the quotient is then -0).
fn silu(x: f32) -> f32 { return x / (1.0 + exp(-x)); }

// store applies the epilogue to the 4 columns n0.. of row m, writing those in bounds.
fn store(m: u32, n0: u32, acc: vec4<f32>, b: vec4<f32>) {
	if m >= p.M { return; }
	var y = acc + b;
	if EPI == 4u { // n0 is a multiple of 4: two (gate, up) pairs, both in bounds or not (N is even)
		let base = m * (p.N / 2u) + n0 / 2u;
		if n0 < p.N { out[base] = silu(y.x) * y.y; }
		if n0 + 2u < p.N { out[base + 1u] = silu(y.z) * y.w; }
		return;
	}
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
	let tilesN = (p.N + 3u) / 4u;
	let tile = (wid.y * nwg.x + wid.x) * WG + li;
	let m0 = (tile / tilesN) * 4u;
	let n0 = (tile % tilesN) * 4u;
	if m0 >= p.M { return; }
	// Clamped column and row indices: in bounds, duplicates never stored.
	let c = min(vec4<u32>(n0) + vec4<u32>(0u, 1u, 2u, 3u), vec4<u32>(p.N - 1u));
	let r = min(vec4<u32>(m0) + vec4<u32>(0u, 1u, 2u, 3u), vec4<u32>(p.M - 1u)) * p.K;
	var a0 = vec4<f32>(0.0);
	var a1 = vec4<f32>(0.0);
	var a2 = vec4<f32>(0.0);
	var a3 = vec4<f32>(0.0);
	for (var k = 0u; k < p.K; k++) {
		let wr = k * p.N;
		let wv = vec4<f32>(f32(w[wr + c.x]), f32(w[wr + c.y]), f32(w[wr + c.z]), f32(w[wr + c.w]));
		a0 += x[r.x + k] * wv;
		a1 += x[r.y + k] * wv;
		a2 += x[r.z + k] * wv;
		a3 += x[r.w + k] * wv;
	}
	let b = vec4<f32>(f32(bias[c.x]), f32(bias[c.y]), f32(bias[c.z]), f32(bias[c.w]));
	store(m0, n0, a0, b);
	store(m0 + 1u, n0, a1, b);
	store(m0 + 2u, n0, a2, b);
	store(m0 + 3u, n0, a3, b);
}
