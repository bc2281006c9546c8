// layernorm_rows: layernorm.wgsl's function, out[r,:] = (x[r,:] - mean) *
// rstd * w + b with rstd = 1/sqrt(var + eps) (the biased variance, in two
// passes: the sum of x, then of (x - mean)²), all in f32; w and b are
// weights. One subgroup per row: each invocation reads its share of the
// row as vec4s, all of them at once into registers (vec4 lane, lane + SGS,
// ... of the row: at most MAXV, which the host sizes to the model's rows in
// the device's smallest subgroups: include/row_subgroup.wgsl), and each sum
// is a subgroupAdd, so the
// kernel has no workgroup memory and no barrier and a workgroup holds
// WG / SGS rows. layernorm_subgroup.wgsl's workgroup per row issues a few
// scalar loads per invocation between two barriers, too little in flight to
// cover the latency of memory at GPT-2's widths.
//
// Requires C % 4 == 0, and C / 4 <= MAXV * SGS for the smallest subgroup
// size the device reports to hold the row in registers (the host checks
// both). SGS is the lanes a subgroup runs, counted (include/row_subgroup.wgsl's
// lanes), and a subgroup smaller than the host counted on reads the rest
// of its row from memory. The subgroups take rows in turn over the whole
// dispatch (row r, then r + the dispatch's subgroups, ...), so every row is
// done whatever subgroup size the driver picks, and the host sizes the
// dispatch for one row per subgroup at the device's usual size.
// Deterministic on a device: a row's sums depend only on the subgroup size
// (and not on MAXV: the vec4s past the row are zeros, added last to sums
// that start at +0).
enable subgroups;
// The rows follow subgroup_id: the same for all of a subgroup's invocations,
// as subgroupAdd needs, but not across the workgroup, which the rule checks.
diagnostic(off, subgroup_uniformity);
alias weight = f32;

override WG: u32 = 256;

struct Params { rows: u32, C: u32, eps: f32 }

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;         // (rows, C)
@group(0) @binding(1) var<storage, read> w: array<vec4<weight>>;      // (C)
@group(0) @binding(2) var<storage, read> b: array<vec4<weight>>;      // (C)
@group(0) @binding(3) var<storage, read_write> out: array<vec4<f32>>; // (rows, C)
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
		var s = vec4<f32>(0.0);
		for (var j = 0u; j < MAXV; j++) { s += v[j]; }
		for (var i = tailStart(lane, n); i < C4; i += n) { s += x[base + i]; }
		let mean = rowTotal(s) / f32(p.C);
		var q = vec4<f32>(0.0);
		for (var j = 0u; j < MAXV; j++) {
			if lane + j * n < C4 {
				let d = v[j] - mean;
				q += d * d;
			}
		}
		for (var i = tailStart(lane, n); i < C4; i += n) {
			let d = x[base + i] - mean;
			q += d * d;
		}
		let rstd = inverseSqrt(rowTotal(q) / f32(p.C) + p.eps);
		for (var j = 0u; j < MAXV; j++) {
			let i = lane + j * n;
			if i < C4 {
				out[base + i] = (v[j] - mean) * rstd * vec4<f32>(w[i]) + vec4<f32>(b[i]);
			}
		}
		for (var i = tailStart(lane, n); i < C4; i += n) {
			out[base + i] = (x[base + i] - mean) * rstd * vec4<f32>(w[i]) + vec4<f32>(b[i]);
		}
	}
}
