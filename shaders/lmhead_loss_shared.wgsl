// lmhead_loss_shared: the tied LM head fused with an online logsumexp, tiled
// in workgroup memory for GPUs; logits are never stored. For positions p < P
// and tokens v of this binding (global id v0 + v, v < V):
// logit[p][v] = dot(h[p,:], wte[v,:]), in f32; wte is weights. The same
// bindings and push constants as lmhead_loss.wgsl, and the same kind of
// partials, one per position and slice of the vocabulary instead of one per
// tile, so nll_combine.wgsl combines either's and the host picks one per
// adapter.
//
// The binding's vocabulary is cut into tiles of VT ids and the tiles into
// slices of NT tiles: slice g covers the binding's ids g*NT*VT .. (g+1)*NT*VT
// - 1 (fewer in the last). Workgroup (x, g) takes positions x*BM .. x*BM +
// BM - 1 and slice g: WG = (BM/4) * (VT/4) invocations, each accumulating a
// 4x4 register tile (4 consecutive positions, 4 consecutive ids) of a tile in
// f32. For each step of BK along C, the workgroup loads the BM x BK tile of h
// and the VT x BK tile of wte into workgroup memory as f32 (f16 weights
// converted on load), waits at a barrier, accumulates from there, and waits
// again. Then each position's VT logits of the tile, spread over the VT/4
// invocations of its row, are reduced through workgroup memory in a fixed
// order: each invocation's max over its valid ids, the row max m over those,
// each invocation's Σ exp(logit - m) over its valid ids, and s = the sum of
// those in id order; the invocation at the row's start folds (m, s) into the
// slice's running pair (rescaling once per tile), tile by tile in order.
// Deterministic, no atomics. It writes part[(v0/(NT*VT) + g)*P + p] = the
// slice's (m, s) and, when the target of p is in the slice,
// tgt[p] = logit[p][target] (from the one invocation holding that logit).
// With GPT-2's 50257 ids and the defaults (VT 64, NT 16) that is 50 partials
// per position, not 786, and still ceil(P/64) x 50 workgroups to fill a GPU.
//
// Ranges: wte may be bound in ranges, each dispatched with its first id v0 (a
// multiple of NT*VT) and its length V, and the same part and tgt buffers.
//
// Any P, C, V: elements of a tile outside h or wte are stored as zeros, ids
// past V take no part in m or s, and positions past P are never stored. BM
// and VT must be multiples of 4, and WG at most the device's invocation limit.
// Workgroup memory: (BM + VT + 8) * BK * 4 + BM * VT bytes, 12.5 KiB with the
// defaults (BM 64, VT 64, BK 16: 256 invocations).
//
// Dispatch: (ceil(P/BM), ceil(V/(NT*VT)), 1); x at most 65535 (P up to 4M
// with BM 64). Workgroups with x*BM >= P return at once.
alias weight = f32;

override BM: u32 = 64; // positions per workgroup
override VT: u32 = 64; // vocabulary ids per tile (and per workgroup)
override BK: u32 = 16; // step along C
override NT: u32 = 16; // vocabulary tiles per workgroup: its slice is NT * VT ids
override WG: u32 = (BM / 4u) * (VT / 4u); // invocations per workgroup; derived

struct Params { P: u32, C: u32, V: u32, v0: u32 }

@group(0) @binding(0) var<storage, read> h: array<f32>;                // (P, C)
@group(0) @binding(1) var<storage, read> wte: array<weight>;           // (V, C), ids v0..v0+V-1
@group(0) @binding(2) var<storage, read> targets: array<u32>;          // (P), global ids
@group(0) @binding(3) var<storage, read_write> part: array<vec2<f32>>; // (tiles, P): (m, s)
@group(0) @binding(4) var<storage, read_write> tgt: array<f32>;        // (P)
var<push_constant> p: Params;

// The tiles are transposed into vec4s of 4 consecutive positions (ids), one
// row of BM/4 (VT/4) vec4s per k plus one vec4 of padding, so that the
// transposing stores of consecutive k fall in different banks and the loads
// in the inner loop are whole vec4s.
var<workgroup> hs: array<vec4<f32>, BK * (BM / 4u + 1u)>; // (BK, BM/4 + 1)
var<workgroup> ws: array<vec4<f32>, BK * (VT / 4u + 1u)>; // (BK, VT/4 + 1)
var<workgroup> red: array<f32, BM * (VT / 4u)>;          // (BM, VT/4): per-invocation max, then sum

const NEG_BIG: f32 = -3.0e38;

// vmax is the largest component of a whose id is valid (ok), NEG_BIG if none.
fn vmax(a: vec4<f32>, ok: vec4<bool>) -> f32 {
	let x = select(vec4<f32>(NEG_BIG), a, ok);
	return max(max(x.x, x.y), max(x.z, x.w));
}

// vsum is Σ exp(a - m) over the components whose id is valid, in a fixed order.
fn vsum(a: vec4<f32>, m: f32, ok: vec4<bool>) -> f32 {
	let e = select(vec4<f32>(0.0), exp(a - vec4<f32>(m)), ok);
	return (e.x + e.y) + (e.z + e.w);
}

// rowMax is the max over row r's VT/4 entries of red.
fn rowMax(r: u32) -> f32 {
	var m = NEG_BIG;
	for (var q = 0u; q < VT / 4u; q++) {
		m = max(m, red[r * (VT / 4u) + q]);
	}
	return m;
}

// rowSum is the sum of row r's VT/4 entries of red, in order.
fn rowSum(r: u32) -> f32 {
	var s = 0.0;
	for (var q = 0u; q < VT / 4u; q++) {
		s += red[r * (VT / 4u) + q];
	}
	return s;
}

// storeTarget writes tgt[row] = a[j] when row is a position and its target is the
// valid id first + j (global ids; first is the invocation's first id).
fn storeTarget(row: u32, a: vec4<f32>, first: u32, ok: vec4<bool>) {
	if row >= p.P { return; }
	let tg = targets[row];
	let hit = (vec4<u32>(tg) == vec4<u32>(first) + vec4<u32>(0u, 1u, 2u, 3u)) & ok;
	if any(hit) {
		tgt[row] = dot(select(vec4<f32>(0.0), a, hit), vec4<f32>(1.0));
	}
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>) {
	let bm0 = wid.x * BM;        // first position of the block
	let sv0 = wid.y * (NT * VT); // first id (within the binding) of the workgroup's slice
	if bm0 >= p.P || sv0 >= p.V { return; } // uniform: the whole workgroup leaves
	let nq = VT / 4u;
	let q = li % nq;        // the invocation's 4 ids are bv0 + 4q ..
	let tm = (li / nq) * 4u; // and its 4 positions bm0 + tm ..
	let row = bm0 + tm;
	// The slice's running (m, s) of the invocation's 4 rows, kept by the invocations with q == 0.
	var ms = vec4<f32>(NEG_BIG);
	var ss = vec4<f32>(0.0);
	for (var tile = 0u; tile < NT; tile++) {
		let bv0 = sv0 + tile * VT;
		if bv0 >= p.V { break; } // uniform: the slice's last tile was the binding's last
		var a0 = vec4<f32>(0.0);
		var a1 = vec4<f32>(0.0);
		var a2 = vec4<f32>(0.0);
		var a3 = vec4<f32>(0.0);
		for (var k0 = 0u; k0 < p.C; k0 += BK) {
			// h's tile: consecutive invocations read consecutive c of a row.
			for (var i = li; i < BM * BK; i += WG) {
				let r = i / BK;
				let c = i % BK;
				var v = 0.0;
				if bm0 + r < p.P && k0 + c < p.C {
					v = h[(bm0 + r) * p.C + k0 + c];
				}
				hs[c * (BM / 4u + 1u) + r / 4u][r % 4u] = v;
			}
			// wte's tile: likewise along a row of wte.
			for (var i = li; i < VT * BK; i += WG) {
				let r = i / BK;
				let c = i % BK;
				var v = 0.0;
				if bv0 + r < p.V && k0 + c < p.C {
					v = f32(wte[(bv0 + r) * p.C + k0 + c]);
				}
				ws[c * (VT / 4u + 1u) + r / 4u][r % 4u] = v;
			}
			workgroupBarrier();
			for (var k = 0u; k < BK; k++) {
				let x = hs[k * (BM / 4u + 1u) + tm / 4u];
				let b = ws[k * (VT / 4u + 1u) + q];
				a0 += x.x * b;
				a1 += x.y * b;
				a2 += x.z * b;
				a3 += x.w * b;
			}
			workgroupBarrier();
		}
		let v = bv0 + 4u * q; // within the binding
		let ok = (vec4<u32>(v) + vec4<u32>(0u, 1u, 2u, 3u)) < vec4<u32>(p.V);
		// The rows' max: per invocation, then over the row's invocations.
		red[(tm + 0u) * nq + q] = vmax(a0, ok);
		red[(tm + 1u) * nq + q] = vmax(a1, ok);
		red[(tm + 2u) * nq + q] = vmax(a2, ok);
		red[(tm + 3u) * nq + q] = vmax(a3, ok);
		workgroupBarrier();
		let m = vec4<f32>(rowMax(tm), rowMax(tm + 1u), rowMax(tm + 2u), rowMax(tm + 3u));
		workgroupBarrier(); // every max is read before red is overwritten
		red[(tm + 0u) * nq + q] = vsum(a0, m.x, ok);
		red[(tm + 1u) * nq + q] = vsum(a1, m.y, ok);
		red[(tm + 2u) * nq + q] = vsum(a2, m.z, ok);
		red[(tm + 3u) * nq + q] = vsum(a3, m.w, ok);
		workgroupBarrier();
		let first = p.v0 + v; // global id of the invocation's first id
		storeTarget(row, a0, first, ok);
		storeTarget(row + 1u, a1, first, ok);
		storeTarget(row + 2u, a2, first, ok);
		storeTarget(row + 3u, a3, first, ok);
		if q == 0u {
			// Fold the tile's (m, s) into the slice's, in tile order.
			let s = vec4<f32>(rowSum(tm), rowSum(tm + 1u), rowSum(tm + 2u), rowSum(tm + 3u));
			let mn = max(ms, m);
			ss = ss * exp(ms - mn) + s * exp(m - mn);
			ms = mn;
		}
		// The next tile's first write to red follows the barriers of its k0 loop,
		// which every reader of this tile's sums has passed.
	}
	if q != 0u { return; }
	let gs = p.v0 / (NT * VT) + wid.y; // the slice's global index
	for (var i = 0u; i < 4u; i++) {
		if row + i < p.P {
			part[gs * p.P + row + i] = vec2<f32>(ms[i], ss[i]);
		}
	}
}
