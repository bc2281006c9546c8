package x86emu

import "math"

// Floating point as SSE/AVX computes it under MXCSR's default (0x1F80: round
// to nearest even, all exceptions masked, DAZ and FTZ off). Sources of the
// rules: Intel SDM vol. 1, 4.8.3.5 ("QNaN floating-point indefinite") and
// table 4-7 ("Rules for handling NaNs"), and each instruction's operation in
// vol. 2.
//
//   - Arithmetic on float32 values is IEEE 754 binary32 with one rounding to
//     nearest even, subnormals kept: Go's float32 operations, each result
//     converted explicitly to float32 so that no two are fused.
//   - NaNs: if the first source is a NaN, the result is it, quieted (bit 22
//     set); else if the second is, it, quieted; an invalid operation on
//     non-NaNs (∞-∞, 0·∞, 0/0, ∞/∞) gives the default NaN 0xFFC00000.
//   - MAX/MIN return the second source when either is a NaN or both are zero
//     (of any sign): dest = src1 > src2 ? src1 : src2 (SDM MAXPS, MINPS).
//   - FMA (a·b + c) rounds once. a·b of two float32 is exact in float64 (48
//     significant bits); the sum a·b + c is then formed in float64 rounded
//     to odd (the rounded sum s and its exact error e from TwoSum; if e ≠ 0
//     and s is even, s moves one ulp toward e), and rounded to float32. A
//     53-bit round-to-odd result rounds to 24 bits exactly as the exact value
//     would (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums:
//     proved algorithms using rounding to odd", IEEE TC 2008), so the result
//     is the correctly rounded a·b + c, subnormal results included.
//   - NaNs in FMA: the first NaN of a, b, c (the multiplicands, then the
//     addend), quieted; 0·∞ + c with c not a NaN gives the default NaN. The
//     SDM words the priority by operand position; the kernels carry no NaN,
//     so this order is documented here, not validated against hardware.

const (
	defaultNaN = 0xFFC00000
	quietBit   = 0x00400000
)

func isNaN32(b uint32) bool { return b&0x7F800000 == 0x7F800000 && b&0x7FFFFF != 0 }

// nan2 is the result when a or b is a NaN (first operand first), ok false if
// neither is.
func nan2(a, b uint32) (uint32, bool) {
	switch {
	case isNaN32(a):
		return a | quietBit, true
	case isNaN32(b):
		return b | quietBit, true
	}
	return 0, false
}

// arith wraps a float32 operation with the NaN rules.
func arith(a, b uint32, f func(x, y float32) float32) uint32 {
	if r, ok := nan2(a, b); ok {
		return r
	}
	r := f(math.Float32frombits(a), math.Float32frombits(b))
	if r != r {
		return defaultNaN
	}
	return math.Float32bits(r)
}

func addF32(a, b uint32) uint32 {
	return arith(a, b, func(x, y float32) float32 { return float32(x + y) })
}
func subF32(a, b uint32) uint32 {
	return arith(a, b, func(x, y float32) float32 { return float32(x - y) })
}
func mulF32(a, b uint32) uint32 {
	return arith(a, b, func(x, y float32) float32 { return float32(x * y) })
}
func divF32(a, b uint32) uint32 {
	return arith(a, b, func(x, y float32) float32 { return float32(x / y) })
}

func maxF32(a, b uint32) uint32 {
	if math.Float32frombits(a) > math.Float32frombits(b) { // false for NaNs and for ±0 pairs
		return a
	}
	return b
}

func minF32(a, b uint32) uint32 {
	if math.Float32frombits(a) < math.Float32frombits(b) {
		return a
	}
	return b
}

func xor32(a, b uint32) uint32  { return a ^ b }
func addI32(a, b uint32) uint32 { return a + b }

// fmaOdd returns a·b + c rounded to odd in float64 (see the comment above),
// for finite, non-NaN inputs whose a·b + c does not overflow float64.
func fmaOdd(a, b, c float32) float64 {
	p := float64(a) * float64(b) // exact
	cc := float64(c)
	s := p + cc
	if math.IsInf(s, 0) {
		return s
	}
	// TwoSum (Knuth): s + e == p + cc exactly.
	bb := s - p
	e := (p - (s - bb)) + (cc - bb)
	if e != 0 && math.Float64bits(s)&1 == 0 {
		if e > 0 {
			s = math.Nextafter(s, math.Inf(1))
		} else {
			s = math.Nextafter(s, math.Inf(-1))
		}
	}
	return s
}

// fmaF32 is x86's VFMADD on one lane: a·b + c with one rounding.
func fmaF32(a, b, c uint32) uint32 {
	switch {
	case isNaN32(a):
		return a | quietBit
	case isNaN32(b):
		return b | quietBit
	case isNaN32(c):
		return c | quietBit
	}
	fa, fb, fc := math.Float32frombits(a), math.Float32frombits(b), math.Float32frombits(c)
	if math.IsInf(float64(fa), 0) || math.IsInf(float64(fb), 0) || math.IsInf(float64(fc), 0) {
		// No rounding question: float64 gives the exact special result.
		r := float32(float64(fa)*float64(fb) + float64(fc))
		if r != r {
			return defaultNaN
		}
		return math.Float32bits(r)
	}
	return math.Float32bits(float32(fmaOdd(fa, fb, fc)))
}

// cvtps2dq converts with round to nearest even; NaN and out-of-range values
// give the integer indefinite 0x80000000 (SDM CVTPS2DQ).
func cvtps2dq(a uint32) uint32 {
	f := float64(math.Float32frombits(a))
	if f != f {
		return 0x80000000
	}
	r := math.RoundToEven(f)
	if r < -2147483648 || r > 2147483647 {
		return 0x80000000
	}
	return uint32(int32(r))
}

// roundScale is ROUNDPS (m = 0) and RNDSCALEPS: x rounded to a multiple of
// 2^-m by mode (0 nearest even, 1 down, 2 up, 3 toward zero); a NaN is
// returned quieted (SDM VRNDSCALEPS: "QNaN(SRC)" for a NaN source).
func roundScale(a uint32, m int, mode int) uint32 {
	if isNaN32(a) {
		return a | quietBit
	}
	f := float64(math.Float32frombits(a))
	if math.IsInf(f, 0) || f == 0 {
		return a
	}
	scaled := math.Ldexp(f, m) // exact: m <= 15 and float32's range is far inside float64's
	var r float64
	switch mode {
	case 0:
		r = math.RoundToEven(scaled)
	case 1:
		r = math.Floor(scaled)
	case 2:
		r = math.Ceil(scaled)
	default:
		r = math.Trunc(scaled)
	}
	out := float32(math.Ldexp(r, -m)) // exact: a multiple of 2^-m no larger than |x| rounded up
	if out == 0 && math.Signbit(f) {
		out = float32(math.Copysign(0, -1)) // results keep the source's sign
	}
	return math.Float32bits(out)
}

// f16ToF32 widens IEEE binary16 bits exactly (VCVTPH2PS; a NaN keeps its
// payload, quieted; MXCSR.DAZ does not apply to this instruction).
func f16ToF32(h uint16) uint32 {
	sign := uint32(h>>15) << 31
	exp := int(h >> 10 & 31)
	frac := uint32(h & 0x3FF)
	switch {
	case exp == 31 && frac == 0:
		return sign | 0x7F800000
	case exp == 31:
		return sign | 0x7F800000 | quietBit | frac<<13
	case exp == 0 && frac == 0:
		return sign
	case exp == 0: // subnormal: frac·2^-24
		return sign | math.Float32bits(float32(frac)*0x1p-24)
	}
	return sign | uint32(exp-15+127)<<23 | frac<<13
}

// BF16 arithmetic of AVX512_BF16 (Intel SDM vol. 2, VDPBF16PS and
// VCVTNEPS2BF16; also the ISA extensions reference, document 319433): round to
// nearest even always, MXCSR neither read nor written, input denormals
// treated as zero (DAZ), denormal results flushed to zero (FTZ).

// daz is x with a denormal replaced by a zero of its sign.
func daz(x uint32) uint32 {
	if x&0x7F800000 == 0 {
		return x & 0x80000000
	}
	return x
}

// fmaBF16Step is one step of VDPBF16PS: acc + x·y (x, y widened from BF16)
// as an FP32 FMA "with daz in, ftz out and RNE rounding" (the SDM's comment
// in the pseudocode). Tininess for FTZ is detected after rounding, as x86
// does (so says Berkeley SoftFloat's 8086 specialization): a result whose
// magnitude, rounded to 24 bits with an unbounded exponent, is below 2^-126
// becomes a zero of its sign.
func fmaBF16Step(acc, x, y uint32) uint32 {
	acc, x, y = daz(acc), daz(x), daz(y)
	r := fmaF32(x, y, acc)
	if isNaN32(r) || r&0x7FFFFFFF == 0x7F800000 {
		return r
	}
	if r&0x7F800000 != 0 && r&0x7FFFFFFF > 0x00800000 {
		return r // normal and above the smallest normal: not tiny
	}
	// Near or below 2^-126: decide tininess after rounding, unbounded exponent.
	fa, fb, fc := math.Float32frombits(x), math.Float32frombits(y), math.Float32frombits(acc)
	odd := fmaOdd(fa, fb, fc) // exact up to round-to-odd
	scaled := float32(odd * 0x1p100)
	if math.Abs(float64(scaled)) < 0x1p-26 { // |rounded| < 2^-126
		return r & 0x80000000
	}
	return r
}

// bf16ToF32 widens BF16 bits (the upper half of a float32).
func bf16ToF32(h uint16) uint32 { return uint32(h) << 16 }

// f32ToBF16 is the SDM's convert_fp32_to_bfloat16 (VCVTNEPS2BF16): zeros and
// denormals give a zero of their sign; infinities truncate; a NaN truncates
// with its quiet bit (bit 6) set; a normal rounds to nearest even by adding
// 0x7FFF plus bit 16 to the bits and truncating.
func f32ToBF16(x uint32) uint16 {
	switch {
	case x&0x7F800000 == 0:
		return uint16(x>>16) & 0x8000
	case x&0x7FFFFFFF == 0x7F800000:
		return uint16(x >> 16)
	case isNaN32(x):
		return uint16(x>>16) | 0x40
	}
	return uint16((x + 0x7FFF + (x >> 16 & 1)) >> 16)
}
