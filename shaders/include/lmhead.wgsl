// lmhead: the interface of the LM head's loss kernels, lmhead_loss.wgsl,
// lmhead_loss_shared.wgsl and lmhead_loss_coop.wgsl, which include this file
// after binding h (0) and wte (1), so that the host binds any of them the
// same way, and nll_combine.wgsl reads any one's partials.
struct Params { P: u32, C: u32, V: u32, v0: u32 }

// targets holds 2P words: the target's global id of each position (the
// host's), then each position's target logit as f32 bits (setTargetLogit's,
// which nll_combine.wgsl reads): one binding for both, so that the LM head
// binds 4 storage buffers, Vulkan's minimum.
@group(0) @binding(2) var<storage, read_write> targets: array<u32>;    // (2, P): ids, then logits' bits
@group(0) @binding(3) var<storage, read_write> part: array<vec2<f32>>; // (partials, P): (m, s)
var<push_constant> p: Params;

// setTargetLogit records l as the logit of position row's target.
fn setTargetLogit(row: u32, l: f32) { targets[p.P + row] = bitcast<u32>(l); }

const NEG_BIG: f32 = -3.0e38; // the running max before any logit
