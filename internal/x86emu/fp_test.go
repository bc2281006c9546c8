package x86emu

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/x448/float16"
)

// exactFMA32 is a·b + c computed exactly (big.Float) and rounded once to
// float32 (big.Float.Float32 rounds to nearest even, subnormals included).
func exactFMA32(a, b, c float32) float32 {
	x := new(big.Float).SetPrec(400).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetFloat64(float64(c)))
	f, _ := x.Float32()
	return f
}

// randF32 draws finite float32s of every class: normals over the whole
// exponent range, subnormals, zeros, and values near each other's ulp.
func randF32(r *rand.Rand) float32 {
	switch r.IntN(8) {
	case 0:
		return math.Float32frombits(r.Uint32() & 0x807FFFFF) // subnormal or zero
	case 1:
		return float32(r.NormFloat64())
	}
	for {
		if f := math.Float32frombits(r.Uint32()); !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) {
			return f
		}
	}
}

// FMA rounds once: random operands of every class, and sums that cancel
// (c = -round(a·b)) or sit near a rounding midpoint, against big.Float.
func TestFMAF32SingleRounding(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(a, b, c float32) {
		t.Helper()
		want := exactFMA32(a, b, c)
		got := math.Float32frombits(fmaF32(math.Float32bits(a), math.Float32bits(b), math.Float32bits(c)))
		if math.Float32bits(got) != math.Float32bits(want) && !(math.IsNaN(float64(got)) && math.IsNaN(float64(want))) {
			t.Fatalf("fma(%g, %g, %g) = %g, want %g", a, b, c, got, want)
		}
	}
	for range 200000 {
		a, b := randF32(r), randF32(r)
		p := float32(a * b)
		var c float32
		switch r.IntN(4) {
		case 0:
			c = -p // exact cancellation leaves the product's rounding error
		case 1:
			c = float32(math.Ldexp(float64(p), -24-r.IntN(40))) // near a midpoint
		default:
			c = randF32(r)
		}
		if math.IsInf(float64(exactFMA32(a, b, c)), 0) {
			continue
		}
		check(a, b, c)
	}
	// The double-rounding trap: a·b = 1 + 2^-11 + 2^-24 is a float32 midpoint;
	// c = 2^-80 moves it up. Rounded to float64 first, c is lost and the tie
	// goes to even (down): float32(math.FMA(...)) is wrong here.
	a := float32(1 + 0x1p-12)
	c := float32(0x1p-80)
	want := float32(1 + 0x1p-11 + 0x1p-23)
	check(a, a, c)
	if naive := float32(math.FMA(float64(a), float64(a), float64(c))); naive == want {
		t.Fatal("the double-rounding case does not distinguish single rounding")
	}
}

// x86's NaN rules and the MAX/MIN operand order.
func TestNaNRules(t *testing.T) {
	const qa, qb, sa = 0x7FC00001, 0xFFC00002, 0x7F800003
	one, inf, negInf := math.Float32bits(1), math.Float32bits(float32(math.Inf(1))), math.Float32bits(float32(math.Inf(-1)))
	negZero := math.Float32bits(float32(math.Copysign(0, -1)))
	for _, c := range []struct {
		name      string
		got, want uint32
	}{
		{"qnan+qnan: first", addF32(qa, qb), qa},
		{"1+qnan: the NaN", addF32(one, qb), qb},
		{"snan*1: quieted", mulF32(sa, one), sa | quietBit},
		{"inf-inf: default NaN", addF32(inf, negInf), defaultNaN},
		{"0/0: default NaN", divF32(0, 0), defaultNaN},
		{"max(qnan, 1): second", maxF32(qa, one), one},
		{"max(1, qnan): second", maxF32(one, qa), qa},
		{"max(-0, +0): second", maxF32(negZero, 0), 0},
		{"max(+0, -0): second", maxF32(0, negZero), negZero},
		{"min(1, qnan): second", minF32(one, qa), qa},
		{"fma(1, snan, qnan): first NaN, quieted", fmaF32(one, sa, qb), sa | quietBit},
		{"fma(0, inf, 1): default NaN", fmaF32(0, inf, one), defaultNaN},
		{"fma(inf, 1, -inf): default NaN", fmaF32(inf, one, negInf), defaultNaN},
	} {
		if c.got != c.want {
			t.Errorf("%s: %#08x, want %#08x", c.name, c.got, c.want)
		}
	}
}

func TestConversions(t *testing.T) {
	for _, c := range []struct {
		x    float32
		want int32
	}{{2.5, 2}, {3.5, 4}, {-2.5, -2}, {-0.5, 0}, {1e10, math.MinInt32}, {-2147483648, math.MinInt32}, {2147483520, 2147483520}} {
		if got := int32(cvtps2dq(math.Float32bits(c.x))); got != c.want {
			t.Errorf("cvtps2dq(%g) = %d, want %d", c.x, got, c.want)
		}
	}
	if got := cvtps2dq(0x7FC00000); got != 0x80000000 {
		t.Errorf("cvtps2dq(NaN) = %#x", got)
	}
	for _, c := range []struct {
		x           float32
		scale, mode int
		want        float32
	}{
		{2.5, 0, 0, 2}, {3.5, 0, 0, 4}, {-2.5, 0, 1, -3}, {-2.5, 0, 2, -2}, {-2.5, 0, 3, -2},
		{1.3, 1, 0, 1.5}, {1.2, 2, 3, 1}, {float32(math.Copysign(0.4, -1)), 0, 0, float32(math.Copysign(0, -1))},
	} {
		got := math.Float32frombits(roundScale(math.Float32bits(c.x), c.scale, c.mode))
		if math.Float32bits(got) != math.Float32bits(c.want) {
			t.Errorf("roundScale(%g, %d, %d) = %g, want %g", c.x, c.scale, c.mode, got, c.want)
		}
	}
	// Every F16 bit pattern widens as x448/float16 widens it; NaNs keep
	// their payload with the quiet bit set.
	for h := range 1 << 16 {
		got := f16ToF32(uint16(h))
		want := math.Float32bits(float16.Frombits(uint16(h)).Float32())
		if isNaN32(want) {
			want |= quietBit
		}
		if got != want {
			t.Fatalf("f16ToF32(%#04x) = %#08x, want %#08x", h, got, want)
		}
	}
}

// bf16Nearest is an independent VCVTNEPS2BF16 for normal x: the nearer of
// the two BF16 values around x (ties to the even one), by exact distance.
func bf16Nearest(x uint32) uint16 {
	lo := uint16(x >> 16)
	hi := lo + 1
	fx := float64(math.Float32frombits(x))
	dlo := math.Abs(fx - float64(math.Float32frombits(uint32(lo)<<16)))
	h := math.Abs(float64(math.Float32frombits(uint32(hi) << 16)))
	if math.IsInf(h, 0) {
		h = 0x1p128 // where the next exponent would put it: RNE overflows to ∞ from half an ulp below it
	}
	dhi := h - math.Abs(fx)
	switch {
	case dlo < dhi || dlo == dhi && lo&1 == 0:
		return lo
	}
	return hi
}

func TestF32ToBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		x := r.Uint32()
		if e := x >> 23 & 0xFF; e == 0 || e == 0xFF {
			continue
		}
		if got, want := f32ToBF16(x), bf16Nearest(x); got != want {
			t.Fatalf("f32ToBF16(%#08x) = %#04x, want %#04x", x, got, want)
		}
	}
	for _, c := range []struct {
		x    uint32
		want uint16
	}{
		{0x3F808000, 0x3F80}, // tie, even stays
		{0x3F818000, 0x3F82}, // tie, odd rounds up
		{0x7F7FFFFF, 0x7F80}, // max float32 rounds to +Inf
		{0x00000001, 0x0000}, // denormal: zero
		{0x80400000, 0x8000}, // negative denormal: -0
		{0xFF800000, 0xFF80}, // -Inf
		{0x7F800001, 0x7FC0}, // signalling NaN: truncated, quieted
		{0xFFC12345, 0xFFC1}, // quiet NaN: truncated
	} {
		if got := f32ToBF16(c.x); got != c.want {
			t.Errorf("f32ToBF16(%#08x) = %#04x, want %#04x", c.x, got, c.want)
		}
	}
}

// dpbf16Ref is one lane of VDPBF16PS by the SDM's pseudocode computed with
// big.Float: odd pair first, then even, each sum exact then rounded once to
// float32; inputs denormal -> zero; a result whose 24-bit rounding (with an
// unbounded exponent) is below 2^-126 -> zero.
func dpbf16Ref(acc uint32, a, b [2]uint16) uint32 {
	daz := func(x uint32) float64 {
		if x&0x7F800000 == 0 {
			return math.Copysign(0, float64(math.Float32frombits(x)))
		}
		return float64(math.Float32frombits(x))
	}
	step := func(acc uint32, x, y uint16) uint32 {
		s := new(big.Float).SetPrec(400).SetFloat64(daz(uint32(x) << 16))
		s.Mul(s, new(big.Float).SetFloat64(daz(uint32(y)<<16)))
		s.Add(s, new(big.Float).SetFloat64(daz(acc)))
		r24 := new(big.Float).SetPrec(24).Set(s)
		if r24.Sign() != 0 && r24.MantExp(nil) <= -126 { // |r24| < 2^-126
			return math.Float32bits(float32(math.Copysign(0, float64(s.Sign()))))
		}
		f, _ := s.Float32()
		if f == 0 && s.Sign() == 0 {
			// exact zero: IEEE's sign of a sum (+0 unless both addends are -0)
			f = float32(daz(acc)) + float32(daz(uint32(x)<<16)*daz(uint32(y)<<16))
		}
		return math.Float32bits(f)
	}
	return step(step(acc, a[1], b[1]), a[0], b[0])
}

func TestDPBF16Lane(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	bf := func() uint16 {
		for {
			h := uint16(r.Uint32())
			if e := h >> 7 & 0xFF; e != 0xFF && (e > 60 && e < 190 || r.IntN(8) == 0 && e < 0xFF) {
				return h
			}
		}
	}
	for range 100000 {
		acc := math.Float32bits(randF32(r))
		if r.IntN(2) == 0 {
			acc = uint32(bf()) << 16
		}
		a, b := [2]uint16{bf(), bf()}, [2]uint16{bf(), bf()}
		want := dpbf16Ref(acc, a, b)
		got := fmaBF16Step(fmaBF16Step(acc, bf16ToF32(a[1]), bf16ToF32(b[1])), bf16ToF32(a[0]), bf16ToF32(b[0]))
		if got != want && !(isNaN32(got) && isNaN32(want)) {
			t.Fatalf("acc %#08x a %04x b %04x: %#08x, want %#08x", acc, a, b, got, want)
		}
	}
}
