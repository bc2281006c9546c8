// nll_sums: out[0] = the sum of the n blocks nll_combine.wgsl wrote, each
// (Σ nll, Σ nll²) of a block of positions: invocation li adds blocks li,
// li + WG, ... in order, and the workgroup adds those in a fixed tree.
// Deterministic, no atomics.
// One workgroup; WG must be a power of two. Dispatch: (1, 1, 1).
override WG: u32 = 256;

struct Params { n: u32 }

@group(0) @binding(0) var<storage, read> blocks: array<vec2<f32>>;   // (n)
@group(0) @binding(1) var<storage, read_write> out: array<vec2<f32>>; // (1): (Σ nll, Σ nll²)
var<push_constant> p: Params;

var<workgroup> partial: array<vec2<f32>, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32) {
	var acc = vec2<f32>(0.0);
	for (var i = li; i < p.n; i += WG) {
		acc += blocks[i];
	}
	partial[li] = acc;
	workgroupBarrier();
	for (var k = WG / 2u; k > 0u; k >>= 1u) {
		if li < k { partial[li] += partial[li + k]; }
		workgroupBarrier();
	}
	if li == 0u { out[0] = partial[0]; }
}
