// rmsnorm_subgroup: out[r,:] = x[r,:] * rstd * w, rstd = 1/sqrt(mean(x[r,:]²)
// + eps), in f32; w is weights. The function of rmsnorm.wgsl, for devices with
// subgroup operations: one workgroup of WG invocations per row reads the row
// once into registers (at most MAXE values per invocation, so C <= MAXE * WG,
// which the host checks), and sums its squares with
// include/rowsum_subgroup.wgsl. Deterministic on a device. The workgroups are
// flattened as wid.y * nwg.x + wid.x (see grid); those past the last row
// return.
enable subgroups;
alias weight = f32;

override WG: u32 = 256;
const MAXE: u32 = 8u;

struct Params { rows: u32, C: u32, eps: f32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;          // (rows, C)
@group(0) @binding(1) var<storage, read> w: array<weight>;       // (C)
@group(0) @binding(2) var<storage, read_write> out: array<f32>;  // (rows, C)
var<push_constant> p: Params;

//#include "include/rowsum_subgroup.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
	@builtin(subgroup_id) sid: u32, @builtin(subgroup_invocation_id) lane: u32, @builtin(num_subgroups) nsg: u32) {
	let row = wid.y * nwg.x + wid.x;
	if row >= p.rows { return; }
	let base = row * p.C;
	var v: array<f32, MAXE>;
	var sq = 0.0;
	for (var j = 0u; j < MAXE; j++) {
		let i = li + j * WG;
		var a = 0.0;
		if i < p.C { a = x[base + i]; }
		v[j] = a;
		sq += a * a;
	}
	let rstd = inverseSqrt(total(sq, sid, lane, nsg) / f32(p.C) + p.eps);
	for (var j = 0u; j < MAXE; j++) {
		let i = li + j * WG;
		if i < p.C {
			out[base + i] = v[j] * rstd * f32(w[i]);
		}
	}
}
