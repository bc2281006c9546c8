package model

import "math"

// f16Bits rounds v to binary16 (to nearest, ties to even, as IEEE 754's
// conversion and float16.Fromfloat32 do) and returns its bits; a value
// beyond f16's range becomes ±Inf, a NaN a quiet NaN. It is the weight
// loader's inner loop (every f32 weight of a checkpoint read as F16 passes
// through it), so it works on the bits with one predictable branch for
// normal values: about 4x float16.Fromfloat32, which it equals on every
// input but NaN payloads (TestF16Bits).
func f16Bits(v float32) uint16 {
	u := math.Float32bits(v)
	sign := uint16(u>>16) & 0x8000
	a := u & 0x7fffffff
	switch {
	case a >= 0x47800000: // |v| ≥ 2¹⁶ (past 65520 it rounds to Inf), Inf or NaN
		if a > 0x7f800000 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case a < 0x38800000: // below 2⁻¹⁴, f16's smallest normal: a subnormal or zero
		// Added to 0.5, v's f16 subnormal units (2⁻²⁴) land in the low bits
		// of 0.5's mantissa, rounded to nearest even by the addition itself
		// (2⁻¹⁴ itself, when it rounds up that far).
		f := math.Float32frombits(a) + 0.5
		return sign | uint16(math.Float32bits(f)-0x3f000000)
	}
	// A normal f16 (or Inf when rounding carries past 65504): rebias the
	// exponent from 127 to 15 and round the 13 dropped bits, ties to even
	// (0xfff plus the kept mantissa's lowest bit); a carry out of the
	// mantissa increments the exponent, as it should.
	a += 0xc8000fff + (a>>13)&1 // 0xc8000000: -112 << 23, modulo 2³²
	return sign | uint16(a>>13)
}

// isInfF16 reports whether h is ±Inf.
func isInfF16(h uint16) bool { return h&0x7fff == 0x7c00 }
