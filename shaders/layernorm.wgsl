// layernorm: out[r,:] = (x[r,:] - mean) * rstd * w + b, rstd = 1/sqrt(var + eps),
// biased variance, all in f32; w and b are weights. For devices without
// subgroup operations (layernorm_subgroup.wgsl is the same function with them).
// One workgroup of WG invocations per row; WG = 1 needs no barrier.
// The row is read from memory once: invocation li keeps channels li, li + WG,
// ... (at most MAXE of them) in registers; channels past MAXE * WG, if any, are
// read again in each pass. The variance is the two-pass one, Σ (x - mean)² / C
// over the held values, not the cancelling E[x²] - mean². Each sum is each
// invocation's in channel order, then the invocations' partials in a fixed tree
// (include/rowsum.wgsl; deterministic).
alias weight = f32;

override WG: u32 = 64;
const MAXE: u32 = 16u; // channels per invocation held in registers

struct Params { rows: u32, C: u32, eps: f32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;          // (rows, C)
@group(0) @binding(1) var<storage, read> w: array<weight>;       // (C)
@group(0) @binding(2) var<storage, read> b: array<weight>;       // (C)
@group(0) @binding(3) var<storage, read_write> out: array<f32>;  // (rows, C)
var<push_constant> p: Params;

//#include "include/rowsum.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let row = wid.y * nwg.x + wid.x;
	if row >= p.rows { return; }
	let base = row * p.C;
	let held = MAXE * WG; // channels 0 .. held-1 stay in registers
	var v: array<f32, MAXE>;
	var sum = 0.0;
	for (var j = 0u; j < MAXE; j++) {
		let i = li + j * WG;
		var a = 0.0;
		if i < p.C { a = x[base + i]; }
		v[j] = a;
		sum += a;
	}
	for (var i = held + li; i < p.C; i += WG) { sum += x[base + i]; }
	let mean = total(li, sum) / f32(p.C);
	var sq = 0.0;
	for (var j = 0u; j < MAXE; j++) {
		if li + j * WG < p.C {
			let d = v[j] - mean;
			sq += d * d;
		}
	}
	for (var i = held + li; i < p.C; i += WG) {
		let d = x[base + i] - mean;
		sq += d * d;
	}
	let rstd = inverseSqrt(total(li, sq) / f32(p.C) + p.eps);
	for (var j = 0u; j < MAXE; j++) {
		let i = li + j * WG;
		if i < p.C {
			out[base + i] = (v[j] - mean) * rstd * f32(w[i]) + f32(b[i]);
		}
	}
	for (var i = held + li; i < p.C; i += WG) {
		out[base + i] = (x[base + i] - mean) * rstd * f32(w[i]) + f32(b[i]);
	}
}
