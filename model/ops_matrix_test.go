package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/x448/float16"
)

// gemmNT16 (b in F16 or BF16 bits) is bit-identical to gemmNT on b widened
// to float32 by an independent converter (x448/float16 for F16, the upper
// half for BF16), for every kernel set this machine runs: the vector kernels
// widen b as they load it (VCVTPH2PS; zero-extension and a shift), the tails
// one element at a time. b holds random bits of every finite class: normals
// over the whole exponent range, subnormals, zeros of both signs. Shapes cover
// the blocks' edges (M not a multiple of 3 or 4, N of 4, K of 8 or 16) and
// strides wider than K; gaps between output rows stay untouched.
func TestGemmNT16MatchesWidened(t *testing.T) {
	for _, set := range kernelSets() {
		for _, dtype := range []DType{F16, BF16} {
			t.Run(set.String()+"/"+dtype.String(), func(t *testing.T) {
				defer useKernels(set)()
				testGemmNT16(t, dtype)
			})
		}
	}
}

func testGemmNT16(t *testing.T, dtype DType) {
	r := rand.New(rand.NewPCG(11, uint64(dtype)))
	for _, s := range []struct{ M, N, K int }{
		{1, 1, 1}, {2, 4, 4}, {3, 5, 7}, {7, 9, 16}, {64, 64, 33}, {5, 130, 3}, {2, 3, 64}, {3, 6, 47}, {4, 5, 8}, {9, 8, 80},
	} {
		lda, ldb, ldo := s.K+3, s.K+1, s.N+2
		a := randVec(r, s.M*lda)
		b := make([]uint16, s.N*ldb)
		wide := make([]float32, len(b))
		for i := range b {
			b[i] = random16(r, dtype)
			if dtype == F16 {
				wide[i] = float16.Frombits(b[i]).Float32()
			} else {
				wide[i] = math.Float32frombits(uint32(b[i]) << 16)
			}
		}
		want := make([]float32, s.M*ldo)
		gemmNT(want, ldo, a, lda, wide, ldb, s.M, s.N, s.K)
		got := make([]float32, s.M*ldo)
		for i := range got {
			got[i] = 42 // gaps between rows must stay untouched
		}
		gemmNT16(got, ldo, a, lda, b, ldb, s.M, s.N, s.K, dtype)
		for i := range s.M {
			for j := range ldo {
				g := got[i*ldo+j]
				if j >= s.N {
					if g != 42 {
						t.Fatalf("%v: wrote out[%d][%d] past N", s, i, j)
					}
					continue
				}
				if w := want[i*ldo+j]; math.Float32bits(g) != math.Float32bits(w) {
					t.Errorf("%v: out[%d][%d] = %v, widened float32 gives %v", s, i, j, g, w)
				}
			}
		}
	}
}

// random16 returns random finite bits of dtype: a quarter subnormal or zero
// (exponent field 0), the rest with any exponent but the all-ones one.
func random16(r *rand.Rand, dtype DType) uint16 {
	expBits, expShift := uint16(0x1f), 10 // F16: 5 exponent bits over 10 mantissa bits
	if dtype == BF16 {
		expBits, expShift = 0xff, 7
	}
	for {
		h := uint16(r.Uint32())
		if r.IntN(4) == 0 {
			h &^= expBits << expShift
		}
		// Keep products finite: the largest exponents of BF16 (above 2^40)
		// would overflow float32 sums of products with normal a.
		e := h >> expShift & expBits
		if e != expBits && (dtype == F16 || e < 127+40) {
			return h
		}
	}
}

// gemmNN against a float64 product, for every kernel set, on shapes that are
// and are not multiples of the 4-row block and of one and two vectors of
// columns, with strides wider than the rows. Every element must also equal,
// bit for bit, the same element computed alone (a 1x1 product of its row of a
// and column of b): the attention scores then do not depend on how many keys
// or queries a block holds (Loss and the Generator agree), nor on threads.
func TestGemmNN(t *testing.T) {
	for _, set := range kernelSets() {
		t.Run(set.String(), func(t *testing.T) {
			defer useKernels(set)()
			r := rand.New(rand.NewPCG(21, 22))
			for _, s := range []struct{ M, N, K int }{
				{1, 1, 1}, {4, 16, 64}, {5, 17, 64}, {32, 40, 64}, {3, 33, 7}, {7, 8, 1}, {9, 70, 20}, {1, 7, 64}, {32, 48, 64}, {6, 57, 64}, {4, 24, 3}, {2, 100, 64},
			} {
				lda, ldb, ldo := s.K+3, s.N+5, s.N+2
				a, b := randVec(r, s.M*lda), randVec(r, s.K*ldb)
				out := make([]float32, s.M*ldo)
				for i := range out {
					out[i] = 42 // gaps between rows must stay untouched
				}
				gemmNN(out, ldo, a, lda, b, ldb, s.M, s.N, s.K)
				for i := range s.M {
					for j := range ldo {
						got := out[i*ldo+j]
						if j >= s.N {
							if got != 42 {
								t.Fatalf("%v: wrote out[%d][%d] past N", s, i, j)
							}
							continue
						}
						var want float64
						for k := range s.K {
							want += float64(a[i*lda+k]) * float64(b[k*ldb+j])
						}
						if d := math.Abs(float64(got) - want); d > 1e-5*float64(s.K) {
							t.Errorf("%v: out[%d][%d] = %v, want %v", s, i, j, got, want)
						}
						var alone [1]float32
						gemmNN(alone[:], 1, a[i*lda:], lda, b[j:], ldb, 1, 1, s.K)
						if got != alone[0] {
							t.Errorf("%v: out[%d][%d] = %v, but alone it is %v", s, i, j, got, alone[0])
						}
					}
				}
			}
		})
	}
}

// divMaxRow, maxRow and mulRow (attention's scaling, row maximum and
// normalization; the loss's row maximum) give, for every kernel set and every
// length around the vector widths, exactly the quotients, products and
// maxima of plain float32 scalar code.
func TestDivMaxMulRow(t *testing.T) {
	for _, set := range kernelSets() {
		t.Run(set.String(), func(t *testing.T) {
			defer useKernels(set)()
			r := rand.New(rand.NewPCG(31, 32))
			for n := range 70 {
				x := randVec(r, n)
				want := make([]float32, n)
				wantMax := float32(math.Inf(-1))
				for i, v := range x {
					want[i] = v / 7.3
					wantMax = max(wantMax, want[i])
				}
				xMax := float32(math.Inf(-1))
				for _, v := range x {
					xMax = max(xMax, v)
				}
				if mx := maxRow(x); mx != xMax {
					t.Errorf("n %d: maxRow %v, want %v", n, mx, xMax)
				}
				got := append([]float32(nil), x...)
				if mx := divMaxRow(got, 7.3); mx != wantMax {
					t.Errorf("n %d: max %v, want %v", n, mx, wantMax)
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("n %d: row[%d] = %v, want %v", n, i, got[i], want[i])
					}
					want[i] *= 0.37
				}
				mulRow(got, 0.37)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("n %d: row[%d]·m = %v, want %v", n, i, got[i], want[i])
					}
				}
			}
		})
	}
}
