// embed: out[n,:] = wte[tokens[n],:] + wpe[pos0 + n % T,:] for the N = B*T rows of
// a chunk (B sequences of T rows, positions starting at pos0); with WPE = 0
// (rotary models, the Llama family) out[n,:] = wte[tokens[n],:] and wpe is
// not read (bind any buffer). wte may be bound in ranges of V ids starting at
// v0 (a binding holds at most the device's binding limit): a dispatch writes
// only the rows whose token is in its range.
alias weight = f32;

override WG: u32 = 64;
override WPE: u32 = 1; // 1: add the learned position embeddings (GPT-2)

struct Params { N: u32, T: u32, C: u32, pos0: u32, v0: u32, V: u32 }

@group(0) @binding(0) var<storage, read> tokens: array<u32>;     // (N)
@group(0) @binding(1) var<storage, read> wte: array<weight>;     // (V, C): ids v0..v0+V-1
@group(0) @binding(2) var<storage, read> wpe: array<weight>;     // (positions, C)
@group(0) @binding(3) var<storage, read_write> out: array<f32>;  // (N, C)
var<push_constant> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let i = gid.y * nwg.x * WG + gid.x;
	if i >= p.N * p.C { return; }
	let n = i / p.C;
	let c = i % p.C;
	let id = tokens[n];
	if id < p.v0 || id - p.v0 >= p.V { return; }
	let e = f32(wte[(id - p.v0) * p.C + c]);
	if WPE == 0u {
		out[i] = e;
		return;
	}
	let pos = p.pos0 + n % p.T;
	out[i] = e + f32(wpe[pos * p.C + c]);
}
