// matmul: out (M, N) = x (M, K) · w (K, N) + bias (N), then the epilogue
// EPI names (include/matmul_epilogue.wgsl: EPI_STORE, EPI_GELU, EPI_GELU_ERF, EPI_ADD,
// EPI_SWIGLU; not EPI_QKV, matmul_shared.wgsl's only).
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

//#include "include/matmul_epilogue.wgsl"

// storeKV is EPI_QKV's write of k and v, which this kernel has not (no KV
// cache bindings): the host gives it EPI_STORE and runs kv_write.wgsl.
fn storeKV(m: u32, n: u32, v: f32) {}

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
