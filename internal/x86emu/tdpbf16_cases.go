package x86emu

import "math"

// TDPBF16Case is one output element of a TDPBF16PS step: the accumulator,
// the products at even (Even) and odd (Odd) positions of k as (a, b) pairs
// of values exact in bf16, in k order, and the float32 bits the instruction
// leaves (a NaN's payload as measured; a model that does not keep payloads
// compares NaN as NaN).
type TDPBF16Case struct {
	Name      string
	Acc       float32
	Even, Odd [][2]float32
	Want      uint32
}

// TDPBF16Cases are single TDPBF16PS steps measured on a Xeon with AMX-BF16
// (2026-12-05), where accumulating pair after pair (the intrinsics guide's
// pseudocode) would give another answer, with the flushes and the special
// values: what the emulator (TestTDPBF16PS) and the model package's scalar
// model of the instruction (TestTDPBF16Hardware) must both give. The
// hardware sums the even products in k order, the odd ones apart, adds the
// two sums, then adds that to the accumulator, each step one float32
// rounding to nearest even with subnormal inputs and results flushed to
// zero.
func TDPBF16Cases() []TDPBF16Case {
	// p2 is a pair whose product is 2^e.
	p2 := func(e int) [2]float32 { return [2]float32{float32(math.Ldexp(1, e/2)), float32(math.Ldexp(1, e-e/2))} }
	neg := func(p [2]float32) [2]float32 { return [2]float32{-p[0], p[1]} }
	inf := float32(math.Inf(1))
	negZero := float32(math.Copysign(0, -1))
	return []TDPBF16Case{
		// The evens and the odds are summed apart, then together, then
		// added to acc: -2^30 + 1 rounds to -2^30 before meeting acc.
		{"pair sum rounded first", 0x1p30, [][2]float32{neg(p2(30))}, [][2]float32{{1, 1}}, 0},
		// Pair after pair into acc would lose the 1 (1 + 2^30 rounds to 2^30).
		{"pair sum exact", 1, [][2]float32{p2(30)}, [][2]float32{neg(p2(30))}, 0x3f800000},
		// Evens one after another, each rounded: two half-ulps are lost.
		{"evens in sequence", 0, [][2]float32{{1, 1}, p2(-24), p2(-24)}, nil, 0x3f800000},
		// But the sum of the evens and the sum of the odds is one rounding.
		{"evens plus odds", 1, [][2]float32{p2(-24)}, [][2]float32{p2(-24)}, 0x3f800001},
		// A product is exact in the sum, but a sum below 2^-126 is flushed.
		{"tiny product kept", 0, [][2]float32{p2(-126), p2(-140)}, nil, 0x00800200},
		{"tiny sum flushed", 0, [][2]float32{p2(-140), p2(-126)}, nil, 0x00800000},
		{"subnormal partial sum flushed", 0, [][2]float32{{1.5, 0x1p-126}, {-1, 0x1p-126}, p2(-126)}, nil, 0x00800000},
		// The accumulator's subnormal reads as zero (DAZ), and a subnormal
		// input too.
		{"subnormal acc", 0x1p-130, [][2]float32{p2(-126)}, nil, 0x00800000},
		{"subnormal input", 0, [][2]float32{{0x1p-130, 0x1p10}}, nil, 0},
		// A product beyond float32's range overflows in its sum.
		{"overflow", 0, [][2]float32{p2(200), neg(p2(200))}, nil, 0x7f800000},
		{"inf minus inf", 0, [][2]float32{{inf, 1}}, [][2]float32{{-inf, 1}}, 0xffc00000},
		{"zero times inf", 0, [][2]float32{{inf, 0}}, nil, 0xffc00000},
		{"NaN payload", 0, [][2]float32{{math.Float32frombits(0x7f810000), 1}}, nil, 0x7fc10000},
		// Zero results are +0.
		{"negative zeros", negZero, [][2]float32{{negZero, 1}}, nil, 0},
		{"negative zeros, both halves", negZero, [][2]float32{{negZero, 1}}, [][2]float32{{negZero, 1}}, 0},
	}
}
