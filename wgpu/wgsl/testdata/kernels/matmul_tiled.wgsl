// matmul_tiled: c[m,n] = sum_k a[m,k] * b[k,n] (+ bias[n]); a (M,K) f32, b (K,N) f16, c (M,N) f32.
// One workgroup computes a TILE x TILE block of c through workgroup memory.
enable f16;

override TILE: u32 = 16;

struct Dims { M: u32, N: u32, K: u32, has_bias: u32 }

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f16>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> c: array<f32>;

var<workgroup> ta: array<f32, TILE * TILE>;
var<workgroup> tb: array<f32, TILE * TILE>;

@compute @workgroup_size(TILE, TILE)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
	let row = wid.y * TILE + lid.y;
	let col = wid.x * TILE + lid.x;
	var acc = 0.0;
	let tiles = (dims.K + TILE - 1u) / TILE;
	for (var t = 0u; t < tiles; t++) {
		let ka = t * TILE + lid.x;
		let kb = t * TILE + lid.y;
		var va = 0.0;
		if row < dims.M && ka < dims.K { va = a[row * dims.K + ka]; }
		var vb = 0.0;
		if kb < dims.K && col < dims.N { vb = f32(b[kb * dims.N + col]); }
		ta[lid.y * TILE + lid.x] = va;
		tb[lid.y * TILE + lid.x] = vb;
		workgroupBarrier();
		for (var k = 0u; k < TILE; k++) {
			acc = fma(ta[lid.y * TILE + k], tb[k * TILE + lid.x], acc);
		}
		workgroupBarrier();
	}
	if row < dims.M && col < dims.N {
		if dims.has_bias != 0u { acc += bias[col]; }
		c[row * dims.N + col] = acc;
	}
}
