// lmhead_loss: the tied LM head fused with an online logsumexp; logits are
// never stored. For positions p < P and tokens v of this binding (global id
// v0 + v, v < V): logit[p][v] = dot(h[p,:], wte[v,:]), in f32; wte is weights.
//
// The binding's vocabulary is cut into tiles of VT tokens: tile t covers global
// ids v0 + t*VT .. min(v0 + (t+1)*VT, v0 + V) - 1. One invocation handles R = 4
// positions x one tile (workgroup_id.y = t), looping over the tile's tokens and
// keeping per position a running max m and s = Σ exp(logit - m) (rescaled when
// m grows). It writes part[(v0/VT + t)*P + p] = (m, s) and, when the target of
// p is in the tile, its target logit (setTargetLogit). No workgroup memory,
// no barrier.
//
// Ranges: when wte exceeds the binding limit the host binds it in ranges, each
// dispatched with its first id v0 (a multiple of VT) and its length V, and the
// same part and targets buffers: partial tile indices are then global tiles, so
// part is (ceil over ranges of tiles, P) for nll_sums.wgsl.
//
// Dispatch: (ceil(ceil(P/4)/WG), ceil(V/VT), 1).
alias weight = f32;

override WG: u32 = 64;
override VT: u32 = 256;

@group(0) @binding(0) var<storage, read> h: array<f32>;                // (P, C)
@group(0) @binding(1) var<storage, read> wte: array<weight>;           // (V, C), ids v0..v0+V-1
//#include "include/lmhead.wgsl"

// emit writes position row's partial and, when its target id tg is in
// [lo, hi), its target logit.
fn emit(row: u32, gt: u32, m: f32, s: f32, tl: f32, tg: u32, lo: u32, hi: u32) {
	if row >= p.P { return; }
	part[gt * p.P + row] = vec2<f32>(m, s);
	if tg >= lo && tg < hi { setTargetLogit(row, tl); }
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
	let r0 = gid.x * 4u;
	if r0 >= p.P { return; }
	let t = wid.y;
	let first = t * VT;                    // within this binding
	let last = min(first + VT, p.V);
	if first >= last { return; }
	let rl = p.P - 1u;
	let r = vec4<u32>(r0, min(r0 + 1u, rl), min(r0 + 2u, rl), min(r0 + 3u, rl));
	let hb = r * p.C;
	let tg = vec4<u32>(targets[r.x], targets[r.y], targets[r.z], targets[r.w]);
	var m = vec4<f32>(NEG_BIG);
	var s = vec4<f32>(0.0);
	var tl = vec4<f32>(0.0);
	for (var v = first; v < last; v++) {
		let wb = v * p.C;
		var acc = vec4<f32>(0.0);
		for (var c = 0u; c < p.C; c++) {
			let w = f32(wte[wb + c]);
			acc += vec4<f32>(h[hb.x + c], h[hb.y + c], h[hb.z + c], h[hb.w + c]) * w;
		}
		let mn = max(m, acc);
		s = s * exp(m - mn) + exp(acc - mn);
		m = mn;
		tl = select(tl, acc, tg == vec4<u32>(p.v0 + v));
	}
	let gt = p.v0 / VT + t;
	let lo = p.v0 + first;
	let hi = p.v0 + last;
	emit(r0, gt, m.x, s.x, tl.x, tg.x, lo, hi);
	emit(r0 + 1u, gt, m.y, s.y, tl.y, tg.y, lo, hi);
	emit(r0 + 2u, gt, m.z, s.z, tl.z, tg.z, lo, hi);
	emit(r0 + 3u, gt, m.w, s.w, tl.w, tg.w, lo, hi);
}
