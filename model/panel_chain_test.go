package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The panel contract's reference (one FMA chain per element in increasing k)
// and the tests every set with panel kernels must pass, on any architecture:
// AVX2 and AVX-512 on amd64, NEON on arm64.

// fma32 is a·b + c rounded once to float32 (VFMADD231PS's result): the
// product is exact in float64, the sum is rounded to float64 to odd (the
// two-sum error decides), which then rounds to float32 as the exact sum
// would (53 >= 2·24 + 2 bits).
func fma32(a, b, c float32) float32 {
	p, q := float64(a)*float64(b), float64(c)
	s := p + q
	bb := s - p
	e := (p - (s - bb)) + (q - bb)
	if e != 0 && math.Float64bits(s)&1 == 0 {
		s = math.Nextafter(s, math.Copysign(math.Inf(1), e)+s)
	}
	return float32(s)
}

// panelChainRef is the panel contract's element: c, then a[k]·w[k] added by
// fused multiply-adds in increasing k.
func panelChainRef(c float32, a []float32, w []float32) float32 {
	for k := range a {
		c = fma32(a[k], w[k], c)
	}
	return c
}

// The reference itself: fma32 is one rounding of the exact a·b + c (checked
// against math/big on random operands of every magnitude, and on the
// double-rounding case of a sum exactly halfway between float32s plus a
// tiny product).
func TestFMA32IsOneRounding(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		a, b, c := mixed(r), mixed(r), mixed(r)
		if r.IntN(3) == 0 {
			c = float32(math.Ldexp(float64(c), 20))
		}
		if got, want := fma32(a, b, c), bigFMA32(a, b, c); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fma32(%g, %g, %g) = %g, want %g", a, b, c, got, want)
		}
	}
	// 1 + 2^-24 is halfway between 1 and its successor; plus 2^-60 it rounds up.
	if got, want := fma32(float32(math.Ldexp(1, -30)), float32(math.Ldexp(1, -30)), 1+float32(math.Ldexp(1, -23))), bigFMA32(float32(math.Ldexp(1, -30)), float32(math.Ldexp(1, -30)), 1+float32(math.Ldexp(1, -23))); got != want {
		t.Errorf("tiny product: %g, want %g", got, want)
	}
}

// mixed is a random float32 of mixed magnitude (2^-8 to 2^8 times a normal
// deviate), never NaN or infinite.
func mixed(r *rand.Rand) float32 {
	return float32(r.NormFloat64() * math.Ldexp(1, r.IntN(17)-8))
}

func mixedVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = mixed(r)
	}
	return v
}

// panelSets are the kernel sets of kernelSets() with panel kernels.
func panelSets() []kernelSet {
	var sets []kernelSet
	for _, s := range kernelSets() {
		if kernelTableFor(s).panelF32 != nil {
			sets = append(sets, s)
		}
	}
	return sets
}

// With every set's panel kernels (AVX2 and AVX-512 native or emulated; NEON),
// every element of a product with a panel-layout matrix is the contract's
// one FMA chain in increasing k (panelChainRef), for every row tile of the
// set (AVX-512: 14, 8, 4, 2, 1 rows; AVX2 and NEON: 6, 4, 2, 1), a partial last
// panel, and k split in chunks.
func TestGemmPanelIsFMAChain(t *testing.T) {
	sets := panelSets()
	if len(sets) == 0 {
		t.Skip("no kernel set with panel kernels runs here")
	}
	defer func(kc int) { panelKc = kc }(panelKc)
	for _, set := range sets {
		restore := useKernels(set)
		r := rand.New(rand.NewPCG(9, 10))
		for _, dtype := range []DType{F32, F16, BF16} {
			for _, kc := range []int{2048, 6} {
				panelKc = kc
				M, N, K := 29, 45, 19
				w := randMatrix(r, dtype, N, K)
				p := packPanels(w, K)
				a := mixedVec(r, M*K)
				out := make([]float32, M*N)
				gemmNTW(out, N, a, nil, K, p, 0, K, M, N, K)
				col := make([]float32, K)
				for j := range N {
					w.widen(col, j*K)
					for i := range M {
						if want := panelChainRef(0, a[i*K:][:K], col); math.Float32bits(out[i*N+j]) != math.Float32bits(want) {
							t.Fatalf("%v %v kc %d: (%d,%d) %v, want %v", set, dtype, kc, i, j, out[i*N+j], want)
						}
					}
				}
			}
		}
		restore()
	}
}
