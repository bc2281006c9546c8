// layernorm: out[r,:] = (x[r,:] - mean) * rstd * w + b, eps 1e-5; one workgroup per row.
// x and out are f16 in storage; statistics are accumulated in f32.
enable f16;

override WG: u32 = 256;   // threads per row, chosen per device

struct Params { rows: u32, C: u32 }

@group(0) @binding(0) var<storage, read> x: array<f16>;         // (rows, C)
@group(0) @binding(1) var<storage, read> w: array<f16>;         // (C)
@group(0) @binding(2) var<storage, read> b: array<f16>;         // (C)
@group(0) @binding(3) var<storage, read_write> out: array<f16>; // (rows, C)
var<push_constant> p: Params;

var<workgroup> partial: array<f32, WG>;

fn reduce(li: u32, v: f32) -> f32 {
	partial[li] = v;
	workgroupBarrier();
	var s = WG / 2u;
	while s > 0u {
		if li < s { partial[li] += partial[li + s]; }
		workgroupBarrier();
		s >>= 1u;
	}
	let r = partial[0];
	workgroupBarrier();
	return r;
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>) {
	let row = wid.x;
	if row >= p.rows { return; }
	let base = row * p.C;
	var sum = 0.0;
	for (var i = li; i < p.C; i += WG) { sum += f32(x[base + i]); }
	let mean = reduce(li, sum) / f32(p.C);
	var sq = 0.0;
	for (var i = li; i < p.C; i += WG) {
		let d = f32(x[base + i]) - mean;
		sq += d * d;
	}
	let rstd = inverseSqrt(reduce(li, sq) / f32(p.C) + 1e-5);
	for (var i = li; i < p.C; i += WG) {
		let y = (f32(x[base + i]) - mean) * rstd;
		out[base + i] = f16(y) * w[i] + b[i];
	}
}
