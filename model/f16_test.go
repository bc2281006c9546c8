package model

import (
	"math"
	"runtime"
	"sync"
	"testing"

	"github.com/x448/float16"
)

// TestF16Bits checks f16Bits against x448/float16's Fromfloat32 (an
// independent implementation) on every sign and exponent with the mantissa
// patterns that decide a rounding (the kept bits at both ends, each dropped
// bit pattern around a tie), and on 2²⁵ more float32 values spread over the
// whole range by an odd multiplier; NaNs only for being NaNs, since payloads
// may differ.
func TestF16Bits(t *testing.T) {
	check := func(u uint32) bool {
		v := math.Float32frombits(u)
		got := f16Bits(v)
		if v != v {
			return got&0x7c00 == 0x7c00 && got&0x3ff != 0 && got>>15 == uint16(u>>31)
		}
		return got == float16.Fromfloat32(v).Bits()
	}
	// The mantissa's low 23 bits.
	var lows []uint32
	for _, hi := range []uint32{0, 1, 2, 0x155, 0x2aa, 0x3fe, 0x3ff} { // the 10 kept bits (normal f16s)
		for _, lo := range []uint32{0, 1, 0x7ff, 0xfff, 0x1000, 0x1001, 0x17ff, 0x1800, 0x1fff} { // the 13 dropped ones
			lows = append(lows, hi<<13|lo)
		}
	}
	for b := range 23 { // every single bit, every run of low ones, and a tie at each position (subnormals)
		lows = append(lows, 1<<b, 1<<b-1, 1<<b|1<<b>>1, 1<<b|1<<b-1, 0x7fffff&^(1<<b-1))
	}
	for se := range uint32(512) { // sign and exponent
		for _, lo := range lows {
			if u := se<<23 | lo; !check(u) {
				v := math.Float32frombits(u)
				t.Fatalf("f16Bits(%g = %#08x) = %#04x, float16 says %#04x", v, u, f16Bits(v), float16.Fromfloat32(v).Bits())
			}
		}
	}
	const n = 1 << 25
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	bad := make([]uint32, workers)
	for w := range workers {
		wg.Go(func() {
			for i := uint32(w); i < n; i += uint32(workers) {
				if u := i * 0x9e3779b1 * 127; !check(u) {
					bad[w] = u | 1<<31 // nonzero
					if u == 0 {
						bad[w] = 1
					}
					return
				}
			}
		})
	}
	wg.Wait()
	for _, u := range bad {
		if u != 0 {
			t.Fatalf("f16Bits and float16.Fromfloat32 differ near %#08x", u)
		}
	}
}

func BenchmarkF16Bits(b *testing.B) {
	x := make([]float32, 1<<16)
	for i := range x {
		x[i] = float32(math.Sin(float64(i))) * 0.05
	}
	out := make([]uint16, len(x))
	b.SetBytes(int64(4 * len(x)))
	b.Run("f16Bits", func(b *testing.B) {
		for b.Loop() {
			for i, v := range x {
				out[i] = f16Bits(v)
			}
		}
	})
	b.Run("float16", func(b *testing.B) {
		for b.Loop() {
			for i, v := range x {
				out[i] = float16.Fromfloat32(v).Bits()
			}
		}
	})
}
