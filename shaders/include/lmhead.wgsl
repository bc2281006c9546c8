// lmhead: the interface of the LM head's loss kernels, lmhead_loss.wgsl and
// lmhead_loss_shared.wgsl, which include this file after binding h (0) and
// wte (1), so that the host binds either the same way, and nll_combine.wgsl
// reads either's partials.
struct Params { P: u32, C: u32, V: u32, v0: u32 }

@group(0) @binding(2) var<storage, read> targets: array<u32>;          // (P), global ids
@group(0) @binding(3) var<storage, read_write> part: array<vec2<f32>>; // (partials, P): (m, s)
@group(0) @binding(4) var<storage, read_write> tgt: array<f32>;        // (P)
var<push_constant> p: Params;

const NEG_BIG: f32 = -3.0e38; // the running max before any logit
