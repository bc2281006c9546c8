// logits: the LM head for one position, for decoding: out[v0 + v] =
// dot(h[row, :], wte[v, :]) for the V ids of this binding of wte (global ids
// v0 .. v0+V-1; wte may be bound in ranges as for embed.wgsl), in f32. One
// invocation per id, a loop over C; the workgroups flattened as
// wid.y * nwg.x + wid.x. Dispatch ceil(V / WG) workgroups (see grid).
alias weight = f32;

override WG: u32 = 64;

struct Params { C: u32, V: u32, v0: u32, row: u32 }

@group(0) @binding(0) var<storage, read> h: array<f32>;          // (rows, C)
@group(0) @binding(1) var<storage, read> wte: array<weight>;     // (V, C): ids v0..v0+V-1
@group(0) @binding(2) var<storage, read_write> out: array<f32>;  // (vocabulary)
var<push_constant> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let v = gid.y * nwg.x * WG + gid.x;
	if v >= p.V { return; }
	let hb = p.row * p.C;
	let wb = v * p.C;
	var acc = 0.0;
	for (var c = 0u; c < p.C; c++) {
		acc += h[hb + c] * f32(wte[wb + c]);
	}
	out[p.v0 + v] = acc;
}
