// topk: the interface of topk_logits.wgsl and topk_logits_shared.wgsl, which
// include this file after declaring override WG and alias weight, so that
// the host binds either the same way, and their ranking of the entries kept.
const KMAX: u32 = 100u; // pipeline.MaxTopLogprobs

struct Params { P: u32, C: u32, K: u32, lo: u32, hi: u32, base: u32, init: u32 }

@group(0) @binding(0) var<storage, read> h: array<f32>;             // (P, C)
@group(0) @binding(1) var<storage, read> wte: array<weight>;        // (ids of the binding, C)
@group(0) @binding(2) var<storage, read_write> topv: array<f32>;    // (P, K) logits
@group(0) @binding(3) var<storage, read_write> topi: array<u32>;    // (P, K) global ids
var<push_constant> p: Params;

const NEG_BIG: f32 = -3.0e38; // the logit of an empty entry
const NO_ID: u32 = 0xffffffffu; // the id of an empty entry, ranked below every other

// isNaN reports whether x is a NaN, from its bits: a compiler may fold a
// comparison x != x away, assuming no NaN.
fn isNaN(x: f32) -> bool {
	return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

// worse reports whether (a, ia) ranks below (b, ib): an empty entry (id
// NO_ID) below every other, a NaN logit below every number, else a lower
// logit; on equal logits (NaN equal to NaN) a higher id. This is the CPU's
// order (model's logitID.worse, Go's cmp.Compare), so that a position with
// NaN logits keeps its finite ones in order, one all NaN ids 0 to K-1, and
// every slot is filled wherever K is at most the vocabulary.
fn worse(a: f32, ia: u32, b: f32, ib: u32) -> bool {
	if ia == NO_ID || ib == NO_ID {
		return ia == NO_ID && ib != NO_ID;
	}
	let na = isNaN(a);
	let nb = isNaN(b);
	if na || nb {
		return na && (!nb || ia > ib);
	}
	return a < b || (a == b && ia > ib);
}
