package model

import (
	"fmt"
	"math"
	"testing"
)

// The element-wise and row operations at the edges of their values, for
// every kernel set, each value both in a vector kernel's lanes and in the
// scalar tail: the other tests draw ordinary values (|x| up to 30).

// extremes are activations far outside a model's usual range: huge finite
// values (x³ overflows float32 from about 7e12 on), the exponential's clamp
// and overflow thresholds (±87.3, ±88.7, ±104), tiny and subnormal values,
// zeros of both signs.
var extremes = []float32{0, float32(math.Copysign(0, -1)), 1e-45, -1e-45, 1e-30, -1e-30, 5, -5, 9, -9, 20, -20, 50, -50,
	87.3, -87.3, 88.7, -88.7, 104, -104, 200, -200, 1e3, -1e3, 1e6, -1e6, 1e13, -1e13, 1e20, -1e20, 3e38, -3e38}

// inLanesAndTail returns, for each value of xs, a row of 41 copies of it:
// 41 = 2·16 + 9 = 5·8 + 1, so the copies run in the vector kernels of
// every set and in the scalar tail.
func inLanesAndTail(xs []float32) [][]float32 {
	rows := make([][]float32, len(xs))
	for i, x := range xs {
		rows[i] = make([]float32, 41)
		for j := range rows[i] {
			rows[i][j] = x
		}
	}
	return rows
}

// TestActivationExtremes: gelu_new, the exact GELU and silu(x)·0.5 at the
// extremes, in the lanes and in the tail of every kernel set, within 1e-6
// relative of the float64 formula plus 1e-7·|x| (the float32 tanh of gelu_new
// near -1) and 2e-38 absolute (where the vector exponential stops at the
// smallest normal float32 instead of reaching 0). Every one of them is +Inf
// at +Inf and NaN at -Inf in every set (as the formulas in IEEE arithmetic,
// and PyTorch, give; the vector exact GELU of +Inf was NaN before).
func TestActivationExtremes(t *testing.T) {
	inf := math.Inf(1)
	funcs := []struct {
		name string
		row  func([]float32)
		want func(float64) float64
		infs bool // ±Inf are checked
	}{
		{"gelu_new", geluRow, func(f float64) float64 {
			return 0.5 * f * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(f+0.044715*f*f*f)))
		}, true},
		{"exact GELU", geluErfRow, func(f float64) float64 { return 0.5 * f * math.Erfc(-f/math.Sqrt2) }, true},
		{"silu·0.5", func(x []float32) {
			u := make([]float32, len(x))
			for i := range u {
				u[i] = 0.5
			}
			swigluRow(x, u)
		}, func(f float64) float64 { return f / (1 + math.Exp(-f)) * 0.5 }, true},
	}
	for _, set := range kernelSets() {
		t.Run(set.String(), func(t *testing.T) {
			defer useKernels(set)()
			for _, fn := range funcs {
				xs := extremes
				if fn.infs {
					xs = append(xs[:len(xs):len(xs)], float32(inf), float32(-inf))
				}
				for _, row := range inLanesAndTail(xs) {
					x := float64(row[0])
					fn.row(row)
					want := fn.want(x)
					for j, got := range row {
						g := float64(got)
						ok := g == want || math.IsNaN(g) && math.IsNaN(want) ||
							math.Abs(g-want) <= 1e-6*math.Abs(want)+1e-7*math.Abs(x)+2e-38
						if !ok {
							t.Fatalf("%s(%v) = %v at index %d of 41, want %v", fn.name, x, got, j, want)
						}
					}
				}
			}
		})
	}
}

// TestExpRowsExtremes: the softmax's and the loss's exponential rows with
// the row's maximum far above the other elements (differences past the
// float32 exponential's range, -Inf, -3e38) or a single finite element
// among -Inf: each e^(x-m) within 1e-6 relative plus 1.2e-38 of float64,
// exactly 1 at the maximum, and both kernels' sums alike, in the lanes and
// in the tail of every set.
func TestExpRowsExtremes(t *testing.T) {
	ninf := float32(math.Inf(-1))
	rows := [][]float32{
		{0, -1e30, -3e38, -200, -104, -103.9, -88.8, -87.4, -87.3, -50, ninf, 3, -95, -100, 1, -1e-45, 2},
		{ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf, 1e30, ninf},
	}
	for _, set := range kernelSets() {
		t.Run(set.String(), func(t *testing.T) {
			defer useKernels(set)()
			for _, base := range rows {
				for _, n := range []int{1, 7, 8, 9, 16, 17, len(base)} {
					for rot := range len(base) { // every element at every place
						in := make([]float32, n)
						for i := range in {
							in[i] = base[(i+rot)%len(base)]
						}
						m := maxRow(in)
						if math.IsInf(float64(m), -1) {
							continue
						}
						row := append([]float32(nil), in...)
						sum := expSubRow(row, m)
						var want float64
						for i, x := range in {
							e := math.Exp(float64(x - m))
							want += e
							if g := float64(row[i]); x == m && g != 1 || math.Abs(g-e) > 1e-6*e+1.2e-38 {
								t.Fatalf("%v: e^(%v - %v) = %v, want %v", in, x, m, g, e)
							}
						}
						if s2 := sumExpSub(in, m); s2 != sum || math.Abs(float64(sum)-want) > 1e-6*want {
							t.Fatalf("%v: sums %v and %v, want %v", in, sum, s2, want)
						}
					}
				}
			}
		})
	}
}

// TestNormConstantRows: a row of one value has variance 0: LayerNorm gives
// its bias exactly (x - mean is 0 however large x is), RMSNorm x·rstd·w with
// rstd = 1/sqrt(x² + eps) (1/|x| but for eps), for the smallest and largest
// epsilons Validate accepts, in the lanes and in the tail of every set, and
// every set gives the portable set's bits.
func TestNormConstantRows(t *testing.T) {
	for _, eps := range []float64{minLayerNormEps, 1e-5, maxLayerNormEps} {
		for _, v := range []float32{0, 1, -2.5, 1e-20, 3e30, -3e38, 1e-40} {
			for _, n := range []int{1, 7, 8, 9, 16, 17, 33, 768} {
				x, w, b := make([]float32, n), make([]float32, n), make([]float32, n)
				for i := range x {
					x[i], w[i], b[i] = v, 0.5+float32(i%5)/4, float32(i%3)-1
				}
				what := fmt.Sprintf("eps %g, %d × %v", eps, n, v)
				ln := func() []float32 { o := make([]float32, n); layernormRow(o, x, w, b, eps); return o }
				rms := func() []float32 { o := make([]float32, n); rmsnormRow(o, x, w, eps); return o }
				forSets(t, what+": layernormRow", ln)
				forSets(t, what+": rmsnormRow", rms)
				for _, set := range kernelSets() {
					func() {
						defer useKernels(set)()
						if got := ln(); firstDiff(got, b) >= 0 {
							t.Fatalf("%s %s: layernormRow = %v, want the bias %v", set, what, got, b)
						}
						rstd := 1 / math.Sqrt(float64(v)*float64(v)+eps)
						for i, got := range rms() {
							want := float64(v) * rstd * float64(w[i])
							if d := math.Abs(float64(got) - want); d > 4*0x1p-24*math.Abs(want)+8*0x1p-149 {
								t.Fatalf("%s %s: rmsnormRow[%d] = %v, want %v", set, what, i, got, want)
							}
						}
					}()
				}
			}
		}
	}
}
