package model

import "math"

// The bf16 mode of the CPU forward (LoadOptions.BF16, NewCPUBF16): the
// matrix products with weights (c_attn, attn c_proj, c_fc, mlp c_proj and the
// LM head, tied to wte or not) take both operands in bfloat16 and compute as
// AVX512_BF16's VDPBF16PS does: the weights are rounded once, when loaded, from
// float32 or F16 to bf16 (to nearest, ties to even; a BF16 checkpoint is kept
// as stored), and the activations are rounded the same way, once per matmul,
// into a bf16 panel that the kernels read. Products and sums are float32 as
// VDPBF16PS computes them (dpbf16Lane). The token embedding is read from the
// same bf16 wte (it is held once). Everything else is float32 as in the f32
// mode: LayerNorm, attention (q·k and p·v in float32: they are products of
// activations, not of weights, and are a tenth of the work), softmax, GELU,
// the residual adds, the biases, the logsumexp and the NLL; sums over targets
// are float64.
//
// A dot product of length K (a and b bf16, both rows contiguous) is computed
// in 16 float32 lanes, as one VDPBF16PS per 32 elements: in block s (elements
// k0 = 32s .. k0+31), lane j takes the pair k0+2j, k0+2j+1,
//
//	acc[j] = fma(acc[j], a[k0+2j+1], b[k0+2j+1]); acc[j] = fma(acc[j], a[k0+2j], b[k0+2j])
//
// (dpbf16Lane), the blocks in increasing k. The K%32 elements left over are
// padded with zeros (in both operands) to one more block. The 16 lanes are
// then added in the fixed tree of the float32 kernels (reduce16): lane i plus
// lane i+8, then i plus i+4, then (x0+x2)+(x1+x3), ordinary float32 adds. The
// portable kernels here and the AVX-512 ones (ops_amd64.s, dpbf*AVX512)
// compute exactly this per output element, whichever block shape or thread
// computes it, so bf16 results are bit-identical between these two kernel
// sets and for any thread count. The AMX kernels (bf16-amx, bf16_amx.go)
// sum in TDPBF16PS's order instead: bit-identical to their own scalar model
// for any thread count, not to these.

// bf16Round returns x rounded to bfloat16 bits exactly as VCVTNEPS2BF16
// converts it (Intel SDM vol. 2, VCVTNEPS2BF16, convert_fp32_to_bfloat16:
// round to nearest even, denormal inputs treated as zero, MXCSR neither
// consulted nor updated): a normal x rounds to nearest, ties to even, by
// adding 0x7FFF plus bit 16 to its bits and keeping the upper half, so
// values beyond the largest bf16 round to infinity and infinities stay; a
// NaN is truncated with its quiet bit (bit 6 of the bf16) set, keeping its
// sign and the upper bits of its payload; a float32 subnormal (or zero)
// becomes a zero of its sign, where IEEE rounding would give a bf16
// subnormal (bf16 has float32's exponent range), or 2⁻¹²⁶ for the largest
// ones. The flush changes the products almost nowhere:
// the rounded values only feed VDPBF16PS, which reads a bf16 subnormal as
// zero (DAZ; bf16In models it), so an IEEE-rounded subnormal would give
// the same products and sums bit for bit; only an input within 2⁻¹³⁴ of
// 2⁻¹²⁶, which IEEE rounding would lift to the smallest normal, contributes
// 0 instead of 2⁻¹²⁶·w to its dot products, below half a float32 ulp of any
// sum larger than about 2⁻¹⁰²·|w|. Following the hardware makes the portable
// rounding and the vector one (roundBF16AVX512) one function, so the bf16
// mode's results do not depend on which of them ran.
func bf16Round(x float32) uint16 {
	b := math.Float32bits(x)
	switch {
	case b&0x7fffffff > 0x7f800000: // NaN
		return uint16(b>>16) | 0x40
	case b&0x7f800000 == 0: // zero or subnormal
		return uint16(b>>16) & 0x8000
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// bf16RoundRows writes x rounded to bf16 (bf16Round) into dst (as long as
// x) with the bf16 kernels of set: VCVTNEPS2BF16 for bf16AVX512, and for
// bf16AMX where the CPU has AVX512_BF16 (roundBF16AVX512, whole vectors of
// 16; the rest as below), the portable loop for the others. Both give
// bf16Round's bits.
func bf16RoundRows(set bf16Set, dst []uint16, x []float32) {
	dst = dst[:len(x)]
	n := 0
	if (set == bf16AVX512 || set == bf16AMX && hasBF16Kernels()) && len(x) >= 16 {
		n = len(x) &^ 15
		roundBF16AVX512(&dst[0], &x[0], n)
	}
	for i, v := range x[n:] {
		dst[n+i] = bf16Round(v)
	}
}

// bf16In widens bf16 bits to float32 as VDPBF16PS reads its operands:
// subnormals are zero (of their sign; DAZ).
func bf16In(h uint16) float32 {
	b := uint32(h) << 16
	if b&0x7f800000 == 0 {
		b &= 0x80000000
	}
	return math.Float32frombits(b)
}

// dpbf16Lane returns acc + x·y for float32 acc and x, y widened from bf16 by
// bf16In, as one step of VDPBF16PS computes it. Source: Intel's Architecture
// Instruction Set Extensions Programming Reference and the SDM (VDPBF16PS,
// "Dot Product of BF16 Pairs Accumulated into Packed Single Precision"): the
// pseudocode does, per float32 lane i, srcdest.fp32[i] +=
// make_fp32(src1.bf16[2i+1])·make_fp32(src2.bf16[2i+1]), then the same for
// element 2i, each an "FP32 FMA with DAZ in, FTZ out and RNE rounding; MXCSR
// neither consulted nor updated". So: the product exact (two 8-bit
// significands), one rounding of the sum to float32 (nearest, ties to even,
// the exponent unbounded), and a result below the smallest normal float32
// flushed to a zero of its sign (tininess after rounding, as x86's FTZ). acc
// itself is never subnormal here: it starts at zero and every step flushes.
// NaN payloads are not modelled (a NaN in gives a NaN out).
func dpbf16Lane(acc, x, y float32) float32 {
	p := float32(x * y)
	r := acc + p
	if laneSlow(p, r) {
		return dpbf16LaneExact(acc, x, y)
	}
	return r
}

// laneSlow reports whether a step whose product rounded to p and sum to r
// must take dpbf16LaneExact. In the common case x·y is a normal float32, so
// exact, and the float32 add is the FMA's one rounding; a product that is
// not normal, or a result that is zero or subnormal, takes the exact path.
func laneSlow(p, r float32) bool {
	return (math.Float32bits(p)>>23+1)&0xfe == 0 || math.Float32bits(r)&0x7f800000 == 0
}

// dpbf16LaneExact is dpbf16Lane for any operands (it takes the cases where
// x·y is zero, subnormal or beyond the float32 range, or the result is zero
// or subnormal): the sum is formed in float64 with its rounding error
// (TwoSum), and rounded once to 24 bits with the flush to zero. An infinite
// acc plus the product of finite x and y is acc, whatever the product's
// size: the FMA does not round the product, so one beyond the float32 range
// is still finite there (an infinity of the other sign, and a NaN, would
// come only from float32(x·y)).
func dpbf16LaneExact(acc, x, y float32) float32 {
	switch {
	case !finite32(x) || !finite32(y):
		return acc + float32(x*y) // an infinite or NaN product: exact as float32
	case !finite32(acc):
		return acc
	}
	a, p := float64(acc), float64(x)*float64(y) // p exact: 16 significant bits
	s := a + p
	bb := s - a
	e := (a - (s - bb)) + (p - bb) // a + p = s + e exactly
	return round24FTZ(s, e)
}

// round24FTZ rounds s+e (|e| at most half an ulp of s; e is only consulted on
// a tie) to 24 significant bits, to nearest, ties to even, and returns it as
// float32: zero of the sign of s when below the smallest normal float32,
// infinity beyond the largest.
func round24FTZ(s, e float64) float32 {
	if s == 0 {
		return float32(s)
	}
	const drop = 52 - 23 // float64 fraction bits below float32's
	b := math.Float64bits(s)
	low := b & (1<<drop - 1)
	b &^= 1<<drop - 1
	const half = 1 << (drop - 1)
	var up bool
	switch {
	case low > half:
		up = true
	case low == half && e != 0:
		up = (e > 0) == (s > 0) // the exact value lies beyond the tie
	case low == half:
		up = b&(1<<drop) != 0 // tie: to even
	}
	if up {
		b += 1 << drop // a carry into the exponent is right
	}
	r := math.Float64frombits(b)
	if math.Abs(r) < 0x1p-126 {
		return float32(math.Copysign(0, s))
	}
	return float32(r) // exact, or ±Inf beyond the float32 range
}

func finite32(x float32) bool { return math.Float32bits(x)&0x7f800000 != 0x7f800000 }

// dpbf16 is one VDPBF16PS of 512 bits: for lane j < 16, acc[j] takes the
// pair a[2j+1]·b[2j+1], then a[2j]·b[2j] (dpbf16Lane).
func dpbf16(acc *[16]float32, a, b *[32]uint16) {
	for j := range acc {
		acc[j] = dpbf16Lane(acc[j], bf16In(a[2*j+1]), bf16In(b[2*j+1]))
		acc[j] = dpbf16Lane(acc[j], bf16In(a[2*j]), bf16In(b[2*j]))
	}
}

// reduce16 adds the 16 lanes in the fixed tree of the vector kernels: lane i
// plus lane i+8, then i plus i+4, then (x0+x2)+(x1+x3).
func reduce16(l *[16]float32) float32 {
	var y [8]float32
	for i := range y {
		y[i] = l[i] + l[i+8]
	}
	x0, x1, x2, x3 := y[0]+y[4], y[1]+y[5], y[2]+y[6], y[3]+y[7]
	return (x0 + x2) + (x1 + x3)
}

// dotBF16Ref returns the bf16 dot product of a and b (as long as a) exactly
// as the bf16 kernels compute it, one VDPBF16PS block at a time: the scalar
// model the portable and the assembly kernels are tested against.
func dotBF16Ref(a, b []uint16) float32 {
	var acc [16]float32
	var pa, pb [32]uint16
	for k := 0; k < len(a); k += 32 {
		clear(pa[:])
		clear(pb[:])
		copy(pa[:], a[k:])
		copy(pb[:], b[k:min(len(a), k+32)])
		dpbf16(&acc, &pa, &pb)
	}
	return reduce16(&acc)
}
