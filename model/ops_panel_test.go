package model

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// bigFMA32 is a·b + c computed exactly and rounded once to float32 (to
// nearest, ties to even; no operand or result near the subnormals).
func bigFMA32(a, b, c float32) float32 {
	p := new(big.Float).SetPrec(0).SetFloat64(float64(a))
	p.SetPrec(200).Mul(p, new(big.Float).SetFloat64(float64(b)))
	p.Add(p, new(big.Float).SetFloat64(float64(c)))
	f, _ := p.Float32()
	return f
}

// randMatrix returns N rows of K random elements as a matrix of dtype in
// the row layout.
func randMatrix(r *rand.Rand, dtype DType, N, K int) matrix {
	if dtype == F32 {
		return f32Matrix(randVec(r, N*K))
	}
	u := make([]uint16, N*K)
	for i := range u {
		u[i] = random16(r, dtype)
	}
	return matrix{dtype: dtype, u16: u}
}

// A matrix in the panel layout holds the row layout's elements: widen reads
// them back alike, whole rows (the embedding lookup) and any stretch.
func TestPanelLayoutWiden(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, dtype := range []DType{F32, F16, BF16} {
		for _, s := range []struct{ N, K int }{{1, 1}, {5, 3}, {32, 7}, {33, 16}, {70, 9}} {
			m := randMatrix(r, dtype, s.N, s.K)
			p := packPanels(m, s.K)
			if p.pk != s.K || p.n != s.N || p.len() != (s.N+31)/32*32*s.K {
				t.Fatalf("%v %dx%d: packed pk %d n %d len %d", dtype, s.N, s.K, p.pk, p.n, p.len())
			}
			want, got := make([]float32, s.N*s.K), make([]float32, s.N*s.K)
			m.widen(want, 0)
			for j := range s.N {
				p.widen(got[j*s.K:][:s.K], j*s.K)
			}
			if i := sameBits(got, want); i >= 0 {
				t.Fatalf("%v %dx%d: row widen [%d] %v, want %v", dtype, s.N, s.K, i, got[i], want[i])
			}
			clear(got)
			for off := 0; off < len(got); off += 5 {
				p.widen(got[off:min(len(got), off+5)], off)
			}
			if i := sameBits(got, want); i >= 0 {
				t.Fatalf("%v %dx%d: widen by 5 [%d] %v, want %v", dtype, s.N, s.K, i, got[i], want[i])
			}
		}
	}
}

// With every kernel set, a product with a panel-layout matrix does not
// depend on how it is tiled: any rows, any columns (inside or across
// panels, from any first column), any chunking of k give the bits of the
// whole product. The portable set's are dot1x1Generic's on the row layout.
func TestGemmPanelTiling(t *testing.T) {
	defer func(kc int) { panelKc = kc }(panelKc)
	r := rand.New(rand.NewPCG(7, 8))
	for _, set := range kernelSets() {
		restore := useKernels(set)
		for _, dtype := range []DType{F32, F16, BF16} {
			for _, s := range []struct{ M, N, K int }{{1, 1, 1}, {29, 70, 37}, {15, 33, 64}, {3, 96, 5}} {
				w := randMatrix(r, dtype, s.N, s.K)
				p := packPanels(w, s.K)
				a := randVec(r, s.M*s.K)
				panelKc = 2048
				whole := make([]float32, s.M*s.N)
				gemmNTW(whole, s.N, a, nil, s.K, p, 0, s.K, s.M, s.N, s.K)
				if set == kernelsGeneric {
					col := make([]float32, s.K)
					for i := range s.M {
						for j := range s.N {
							w.widen(col, j*s.K)
							if got, want := whole[i*s.N+j], dot1x1Generic(a[i*s.K:][:s.K], col); math.Float32bits(got) != math.Float32bits(want) {
								t.Fatalf("generic %v %+v: (%d,%d) %v, want %v", dtype, s, i, j, got, want)
							}
						}
					}
				}
				for _, kc := range []int{1, 5, 16} {
					panelKc = kc
					for _, tile := range []struct{ rows, cols int }{{1, 1}, {7, 5}, {14, 32}, {9, 40}} {
						got := make([]float32, s.M*s.N)
						for i0 := 0; i0 < s.M; i0 += tile.rows {
							for j0 := 0; j0 < s.N; j0 += tile.cols {
								rn, cn := min(tile.rows, s.M-i0), min(tile.cols, s.N-j0)
								gemmNTW(got[i0*s.N+j0:], s.N, a[i0*s.K:], nil, s.K, p, j0*s.K, s.K, rn, cn, s.K)
							}
						}
						if i := sameBits(got, whole); i >= 0 {
							t.Fatalf("%v %v %+v kc %d tile %+v: [%d] %v, whole %v", set, dtype, s, kc, tile, i, got[i], whole[i])
						}
					}
				}
			}
		}
		restore()
	}
}

// sameBits is the first index where a and b differ in bits, or -1.
func sameBits(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}
