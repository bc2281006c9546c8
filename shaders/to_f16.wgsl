// to_f16: y = x rounded to f16 as the matrix units take their operands (to
// nearest, clamped to ±65504, f16's largest finite value): the same
// expression lmhead_loss_coop.wgsl applied to h at each of its loads, once
// per tile of ids (393 times per position for GPT-2's vocabulary), done once
// here, so that the LM head reads half the bytes and rounds nothing. The
// same bits as rounding at the load: the same conversion of the same
// values.
//
// n vec4s, one per invocation. Dispatch: ceil(n/WG) workgroups, spread
// over x and y as grid() does (flattened as wid.y * nwg.x + wid.x).
enable f16;

override WG: u32 = 256;

struct Params { n: u32 }

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;       // (n)
@group(0) @binding(1) var<storage, read_write> y: array<vec4<f16>>; // (n)
var<push_constant> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let i = (wid.y * nwg.x + wid.x) * WG + li;
	if i >= p.n { return; }
	y[i] = vec4<f16>(clamp(x[i], vec4<f32>(-65504.0), vec4<f32>(65504.0)));
}
