// rmsnorm: out[r,:] = x[r,:] * rstd * w, rstd = 1/sqrt(mean(x[r,:]²) + eps),
// in f32; w is weights (the Llama family's input_layernorm,
// post_attention_layernorm and norm). For devices without subgroup
// operations (rmsnorm_subgroup.wgsl is the same function with them).
// One workgroup of WG invocations per row; WG = 1 needs no barrier.
// The row is read from memory once: invocation li keeps channels li, li + WG,
// ... (at most MAXE of them) in registers; channels past MAXE * WG, if any,
// are read again for the output. The sum of squares is each invocation's in
// channel order, then the invocations' partials in a fixed tree
// (include/rowsum.wgsl; deterministic). The workgroups are flattened as
// wid.y * nwg.x + wid.x (see grid); those past the last row return.
alias weight = f32;

override WG: u32 = 64;
const MAXE: u32 = 16u; // channels per invocation held in registers

struct Params { rows: u32, C: u32, eps: f32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;          // (rows, C)
@group(0) @binding(1) var<storage, read> w: array<weight>;       // (C)
@group(0) @binding(2) var<storage, read_write> out: array<f32>;  // (rows, C)
var<push_constant> p: Params;

//#include "include/rowsum.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let row = wid.y * nwg.x + wid.x;
	if row >= p.rows { return; }
	let base = row * p.C;
	let held = MAXE * WG; // channels 0 .. held-1 stay in registers
	var v: array<f32, MAXE>;
	var sq = 0.0;
	for (var j = 0u; j < MAXE; j++) {
		let i = li + j * WG;
		var a = 0.0;
		if i < p.C { a = x[base + i]; }
		v[j] = a;
		sq += a * a;
	}
	for (var i = held + li; i < p.C; i += WG) {
		let a = x[base + i];
		sq += a * a;
	}
	let rstd = inverseSqrt(total(li, sq) / f32(p.C) + p.eps);
	for (var j = 0u; j < MAXE; j++) {
		let i = li + j * WG;
		if i < p.C {
			out[base + i] = v[j] * rstd * f32(w[i]);
		}
	}
	for (var i = held + li; i < p.C; i += WG) {
		out[base + i] = x[base + i] * rstd * f32(w[i]);
	}
}
