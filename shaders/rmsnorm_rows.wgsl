// rmsnorm_rows: rmsnorm.wgsl's function, out[r,:] = x[r,:] * rstd * w with
// rstd = 1/sqrt(mean(x[r,:]²) + eps), in f32; w is weights. One subgroup
// per row, as layernorm_rows.wgsl (see there): each invocation reads its
// share of the row as vec4s into registers at once (at most MAXV, sized by
// the host to the model's rows), the sum of squares is a subgroupAdd, no
// workgroup memory, no barrier. Requires C % 4 == 0, and C / 4 <= MAXV * SGS
// for the smallest subgroup size the device reports to hold the row in
// registers (the host checks both; SGS is counted, and a smaller subgroup
// reads the rest from memory: include/row_subgroup.wgsl); the subgroups
// take rows in turn over the whole dispatch.
// Deterministic on a device. The sum is in the same order at any MAXV, but
// q += v * v may be fused into fma where the driver likes, which can differ
// between two MAXVs' modules (lavapipe's differ by an ulp or two in some
// values at MAXV 1 and 2 against 16).
enable subgroups;
// The rows follow subgroup_id: the same for all of a subgroup's invocations,
// as subgroupAdd needs, but not across the workgroup, which the rule checks.
diagnostic(off, subgroup_uniformity);
alias weight = f32;

override WG: u32 = 256;

struct Params { rows: u32, C: u32, eps: f32 }

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;         // (rows, C)
@group(0) @binding(1) var<storage, read> w: array<vec4<weight>>;      // (C)
@group(0) @binding(2) var<storage, read_write> out: array<vec4<f32>>; // (rows, C)
var<push_constant> p: Params;

//#include "include/row_subgroup.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
	@builtin(subgroup_id) sid: u32, @builtin(subgroup_invocation_id) lane: u32,
	@builtin(num_subgroups) nsg: u32) {
	let n = lanes();
	let C4 = p.C / 4u;
	let step = nwg.x * nwg.y * nsg; // subgroups in the dispatch
	for (var row = (wid.y * nwg.x + wid.x) * nsg + sid; row < p.rows; row += step) {
		let base = row * C4;
		let v = loadRow(base, C4, lane, n);
		var q = vec4<f32>(0.0);
		for (var j = 0u; j < MAXV; j++) { q += v[j] * v[j]; }
		for (var i = tailStart(lane, n); i < C4; i += n) {
			let a = x[base + i];
			q += a * a;
		}
		let rstd = inverseSqrt(rowTotal(q) / f32(p.C) + p.eps);
		for (var j = 0u; j < MAXV; j++) {
			let i = lane + j * n;
			if i < C4 {
				out[base + i] = v[j] * rstd * vec4<f32>(w[i]);
			}
		}
		for (var i = tailStart(lane, n); i < C4; i += n) {
			out[base + i] = x[base + i] * rstd * vec4<f32>(w[i]);
		}
	}
}
