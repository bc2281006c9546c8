// fill_random: y = n words of pseudo-random values, made on the device: the
// operands the autotuners time kernels with, whose values never matter as
// long as they are not degenerate (zeros can run faster than real data).
// Made here instead of on the host, they cost no host time, memory or
// upload: at 65536 rows a round of tuning took some 1.5 GB of them, about
// 6 s for one core to generate.
//
// Value number e is hashed from e and the seed (lowbias32, an integer hash
// with good avalanche: consecutive e give unrelated values), then mapped to
// [-1, 1) in steps of 2⁻²³ and multiplied by scale. With F16 = 0 word i is
// value i as an f32; with F16 = 1 it is values 2i (low half) and 2i + 1
// (high half) as f16s (pack2x16float; |scale| must stay below 65504).
// randomValue in fill_random.go computes the same values on the host.
//
// n words, one per invocation. Dispatch: ceil(n/WG) workgroups, spread over
// x and y as grid() does (flattened as wid.y * nwg.x + wid.x).

override WG: u32 = 256;

struct Params { n: u32, seed: u32, scale: f32, f16: u32 }

@group(0) @binding(0) var<storage, read_write> y: array<u32>; // (n)
var<push_constant> p: Params;

// hash is lowbias32 (Chris Wellons' hash-prospector): two multiplies and
// three xor-shifts; u32 arithmetic wraps.
fn hash(v: u32) -> u32 {
	var x = v;
	x ^= x >> 16u;
	x *= 0x7feb352du;
	x ^= x >> 15u;
	x *= 0x846ca68bu;
	x ^= x >> 16u;
	return x;
}

// value is value number e in [-1, 1) times scale.
fn value(e: u32) -> f32 {
	let h = hash(e ^ hash(p.seed));
	return (f32(h >> 8u) * (1.0 / 8388608.0) - 1.0) * p.scale;
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let i = (wid.y * nwg.x + wid.x) * WG + li;
	if i >= p.n { return; }
	if p.f16 == 1u {
		y[i] = pack2x16float(vec2<f32>(value(2u * i), value(2u * i + 1u)));
	} else {
		y[i] = bitcast<u32>(value(i));
	}
}
