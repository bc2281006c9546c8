// Package exactsum adds float64 values exactly: the sum does not depend on
// the order of the additions, so a corpus scored in any batches, shards or
// sessions gives the same bits. It imports nothing of this module.
//
// A Sum is a two's-complement fixed-point number of limbs 64-bit words whose
// lowest bit is 2^-1074, the smallest float64 (a subnormal): every finite
// float64 is an integer multiple of it and its largest (below 2^1024) leaves
// 2^(64*limbs-1-2098) = 2^141 additions of headroom. Adding is a shift and
// two or three word additions with a carry; rounding happens once, in
// Float64.
package exactsum

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
)

// limbs is the number of 64-bit words of a Sum.
const limbs = 35

// lsbExp is the exponent of the lowest bit: 2^-1074.
const lsbExp = -1074

// Sum is an exact sum of float64 values. The zero value is 0.
type Sum struct {
	w [limbs]uint64 // little-endian two's complement
	// nonFinite is set when a NaN or an infinity was added: the sum is then
	// NaN (Float64), as float64 arithmetic would make it, and stays so.
	nonFinite bool
}

// Add adds x exactly. Adding NaN or ±Inf makes the sum NaN.
func (s *Sum) Add(x float64) {
	b := math.Float64bits(x)
	exp := int(b>>52) & 0x7ff
	mant := b & (1<<52 - 1)
	switch exp {
	case 0x7ff:
		s.nonFinite = true
		return
	case 0: // zero or subnormal: mant * 2^-1074
	default:
		mant |= 1 << 52
		exp-- // the normal value is mant * 2^(exp-1075) = (mant << (exp-1)) * 2^-1074
	}
	if mant == 0 {
		return
	}
	i, sh := exp/64, uint(exp%64)
	lo, hi := mant<<sh, uint64(0)
	if sh > 0 {
		hi = mant >> (64 - sh)
	}
	if b>>63 == 0 {
		s.add(i, lo, hi)
	} else {
		s.sub(i, lo, hi)
	}
}

// add adds hi:lo at word i, carrying upward.
func (s *Sum) add(i int, lo, hi uint64) {
	var c uint64
	s.w[i], c = bits.Add64(s.w[i], lo, 0)
	s.w[i+1], c = bits.Add64(s.w[i+1], hi, c)
	for j := i + 2; c != 0 && j < limbs; j++ {
		s.w[j], c = bits.Add64(s.w[j], 0, c)
	}
}

// sub subtracts hi:lo at word i, borrowing upward.
func (s *Sum) sub(i int, lo, hi uint64) {
	var c uint64
	s.w[i], c = bits.Sub64(s.w[i], lo, 0)
	s.w[i+1], c = bits.Sub64(s.w[i+1], hi, c)
	for j := i + 2; c != 0 && j < limbs; j++ {
		s.w[j], c = bits.Sub64(s.w[j], 0, c)
	}
}

// AddSum adds the sum o exactly.
func (s *Sum) AddSum(o Sum) {
	s.nonFinite = s.nonFinite || o.nonFinite
	var c uint64
	for j := range s.w {
		s.w[j], c = bits.Add64(s.w[j], o.w[j], c)
	}
}

// IsFinite reports whether only finite values were added.
func (s Sum) IsFinite() bool { return !s.nonFinite }

// Float64 is the sum rounded once to the nearest float64 (ties to even): NaN
// when a non-finite value was added, ±Inf when the sum is beyond float64's
// range.
func (s Sum) Float64() float64 {
	if s.nonFinite {
		return math.NaN()
	}
	var f big.Float
	f.SetInt(s.bigInt()) // exact: the precision grows to the integer's bits
	f.SetMantExp(&f, lsbExp)
	x, _ := f.Float64()
	return x
}

// bigInt is the sum in units of 2^-1074.
func (s Sum) bigInt() *big.Int {
	w := s.w
	neg := w[limbs-1]>>63 == 1
	if neg { // two's complement negation: invert and add one
		var c uint64 = 1
		for j := range w {
			w[j], c = bits.Add64(^w[j], 0, c)
		}
	}
	words := make([]big.Word, 0, 2*limbs)
	for _, x := range w { // big.Word is 32 or 64 bits
		if bits.UintSize == 64 {
			words = append(words, big.Word(x))
		} else {
			words = append(words, big.Word(uint32(x)), big.Word(x>>32))
		}
	}
	n := new(big.Int).SetBits(words)
	if neg {
		n.Neg(n)
	}
	return n
}

// String is the exact sum as MarshalText writes it.
func (s Sum) String() string {
	b, _ := s.MarshalText()
	return string(b)
}

// MarshalText writes the exact sum as a hexadecimal integer times a power of
// two, "[-]0xHEXpEXP" (for example "0x3p-1" is 1.5), the integer odd or 0,
// or "NaN" when a non-finite value was added.
func (s Sum) MarshalText() ([]byte, error) {
	if s.nonFinite {
		return []byte("NaN"), nil
	}
	n := s.bigInt()
	if n.Sign() == 0 {
		return []byte("0x0p+0"), nil
	}
	tz := n.TrailingZeroBits()
	n.Rsh(n, tz)
	sign := ""
	if n.Sign() < 0 {
		sign = "-"
		n.Neg(n)
	}
	return fmt.Appendf(nil, "%s0x%sp%+d", sign, n.Text(16), int(tz)+lsbExp), nil
}

// maxTextLen bounds the text UnmarshalText parses: a Sum's integer has at
// most limbs*16 hexadecimal digits.
const maxTextLen = limbs*16 + 16

// ErrSyntax is wrapped by UnmarshalText's errors.
var ErrSyntax = errors.New("not an exact sum")

// UnmarshalText reads what MarshalText writes, refusing text that is not of
// that form or a value that a Sum cannot hold.
func (s *Sum) UnmarshalText(text []byte) error {
	t := string(text)
	if len(t) > maxTextLen {
		return fmt.Errorf("%w: %d characters, at most %d", ErrSyntax, len(t), maxTextLen)
	}
	if t == "NaN" {
		*s = Sum{nonFinite: true}
		return nil
	}
	neg := strings.HasPrefix(t, "-")
	t = strings.TrimPrefix(t, "-")
	digits, expText, ok := strings.Cut(t, "p")
	digits, hex := strings.CutPrefix(digits, "0x")
	if !ok || !hex || digits == "" || strings.ContainsAny(digits, "+-_") {
		return fmt.Errorf("%w: %q, want [-]0xHEXp±EXP", ErrSyntax, text)
	}
	n, ok := new(big.Int).SetString(digits, 16)
	if !ok {
		return fmt.Errorf("%w: %q has a bad hexadecimal integer", ErrSyntax, text)
	}
	exp, err := strconv.Atoi(expText)
	if err != nil || exp < lsbExp || exp > 64*limbs {
		return fmt.Errorf("%w: %q has an exponent out of range", ErrSyntax, text)
	}
	if n.Sign() != 0 {
		n.Lsh(n, uint(exp-lsbExp))
	}
	if n.BitLen() > 64*limbs-1 {
		return fmt.Errorf("%w: %q is out of range", ErrSyntax, text)
	}
	var out Sum
	for j, x := range n.Bits() { // little-endian words of |n|
		if bits.UintSize == 64 {
			out.w[j] = uint64(x)
		} else {
			out.w[j/2] |= uint64(x) << (32 * (j % 2))
		}
	}
	if neg {
		var c uint64 = 1
		for j := range out.w {
			out.w[j], c = bits.Add64(^out.w[j], 0, c)
		}
	}
	*s = out
	return nil
}
