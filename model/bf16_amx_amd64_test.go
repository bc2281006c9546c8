//go:build amd64 && !purego

package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// tdpValue returns a bf16 value of one of the adversarial families of
// TestTDPBF16PSMatchesModel.
func tdpValue(r *rand.Rand, family int) uint16 {
	switch family {
	case 0: // ordinary values
		return bf16Round(float32(r.NormFloat64()))
	case 1: // any bits: every exponent, subnormals, infinities, NaN
		return uint16(r.Uint32())
	case 2: // few values: cancellation, exact ties
		v := []float32{1, -1, 0x1p-8, -0x1p-8, 3, -3, 0x1p20, -0x1p20, 0x1p-20}
		return bf16Round(v[r.IntN(len(v))])
	case 3: // tiny: subnormal and smallest normal inputs, products below 2^-126
		return uint16(r.IntN(2))<<15 | uint16(r.IntN(8))<<7 | uint16(r.IntN(128))
	case 4: // ordinary values with specials among them
		if r.IntN(4) == 0 {
			sp := []uint16{0x7f80, 0xff80, 0x7fc0, 0x0000, 0x8000, 0x0001, 0x3f80, 0x7f7f, 0xff7f}
			return sp[r.IntN(len(sp))]
		}
		return bf16Round(float32(r.NormFloat64()))
	}
	// multiples of 2^-4: sums that tie
	return bf16Round(float32(r.IntN(512)-256) * 0x1p-4)
}

// tdpAcc returns an accumulator of family: ordinary, any bits, tiny
// (subnormal or near the smallest normal), or integers of 2^-4.
func tdpAcc(r *rand.Rand, family int) float32 {
	switch family {
	case 1:
		return math.Float32frombits(r.Uint32())
	case 3:
		return math.Float32frombits(r.Uint32() & 0x80ffffff)
	case 5:
		return float32(r.IntN(1<<24)) * 0x1p-4
	}
	return float32(r.NormFloat64()) * 4
}

// One TDPBF16PS per result tile (amxChunkBF16 with one step of k, the
// result tiles loaded from acc) gives tdpbf16's bits for every element,
// from any accumulator: natively where the CPU has AMX (the hardware
// against the model, as the numerics in bf16_amx.go were established),
// elsewhere the emulator against the model. A NaN compares as any NaN.
func TestTDPBF16PSMatchesModel(t *testing.T) {
	if !hasAMX() && !amxAsmEmulated {
		t.Skip("no AMX kernels here (see TestAMXKernelsEmulated)")
	}
	r := rand.New(rand.NewPCG(81, 82))
	trials := 40
	if !hasAMX() {
		trials = 8
	}
	w := make([]uint16, 32*32)   // 32 features, k < 32
	x := make([]uint16, 32*32)   // the panel of 32 tokens: 2 groups of 16 pair rows
	acc := make([]float32, 1040) // 4 tiles of 16 x 16, 64-byte aligned inside
	for family := range 6 {
		for range trials {
			for i := range w {
				w[i], x[i] = tdpValue(r, family), tdpValue(r, family)
			}
			a := acc[(16-int(addr(&acc[0])%64/4))%16:][:1024]
			for i := range a {
				a[i] = tdpAcc(r, family)
			}
			before := append([]float32(nil), a...)
			amxChunk(&amxTileConfig[0], &w[0], 32, &x[0], 1024, 1, 1, 1, &a[0], 0)
			for f := range 32 {
				for tok := range 32 {
					var col [32]uint16
					for k := range 32 {
						col[k] = x[(tok/16)*512+(k/2)*32+(tok%16)*2+k%2]
					}
					i := ((f/16)*2+tok/16)*256 + (f%16)*16 + tok%16
					want := tdpbf16(before[i], (*[32]uint16)(w[f*32:]), &col)
					if got := a[i]; math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
						t.Fatalf("family %d, feature %d, token %d: acc %#x: %#x, model %#x", family, f, tok,
							math.Float32bits(before[i]), math.Float32bits(got), math.Float32bits(want))
					}
				}
			}
		}
	}
}
