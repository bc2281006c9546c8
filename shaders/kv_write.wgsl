// kv_write: copies the k and v parts of the c_attn output qkv (B*T, 3C) of the
// current chunk of T rows per sequence into the KV cache kc, vc (B, H, S, hd)
// at positions pos0 .. pos0+T-1:
//   kc[b][h][pos0+t][i] = qkv[(b*T+t)*3C + C + h*hd + i], vc likewise at 2C.
// One invocation per vec4 of a (b, t) row of C channels; requires C % 4 == 0
// and hd = C/H with hd % 4 == 0, pos0 + T <= S. No workgroup memory, no barrier.

override WG: u32 = 64;

struct Params { B: u32, T: u32, C: u32, H: u32, S: u32, pos0: u32 }

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;       // (B*T, 3C)
@group(0) @binding(1) var<storage, read_write> kc: array<vec4<f32>>;  // (B, H, S, hd)
@group(0) @binding(2) var<storage, read_write> vc: array<vec4<f32>>;  // (B, H, S, hd)
var<push_constant> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let idx = (wid.y * nwg.x + wid.x) * WG + li;
	let C4 = p.C / 4u;
	if idx >= p.B * p.T * C4 { return; }
	let row = idx / C4;          // b*T + t
	let c4 = idx % C4;           // vec4 within the C channels
	let b = row / p.T;
	let t = row % p.T;
	let hd4 = C4 / p.H;
	let h = c4 / hd4;
	let i4 = c4 % hd4;
	let src = row * 3u * C4 + c4;
	let dst = ((b * p.H + h) * p.S + p.pos0 + t) * hd4 + i4;
	kc[dst] = qkv[src + C4];
	vc[dst] = qkv[src + 2u * C4];
}
