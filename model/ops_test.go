package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// gemmNT against a float64 product, on shapes that are and are not multiples of
// the 2x4 kernel and of its 4-wide unroll, with row strides wider than K. Every
// element must also equal dot1x1 of its two rows bit for bit: that is what makes
// the forward independent of tiling and thread count.
func TestGemmNT(t *testing.T) {
	for _, set := range kernelSets() {
		t.Run(set.String(), func(t *testing.T) {
			defer useKernels(set)()
			testGemmNT(t)
		})
	}
}

// useKernels switches the ops to set's table and returns the function that switches back.
func useKernels(set kernelSet) func() {
	old := kern
	kern = kernelTableFor(set)
	return func() { kern = old }
}

func testGemmNT(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range []struct{ M, N, K int }{
		{1, 1, 1}, {2, 4, 4}, {3, 5, 7}, {7, 9, 16}, {64, 64, 33}, {5, 130, 3}, {2, 3, 64}, {3, 6, 47}, {4, 5, 8},
	} {
		lda, ldb, ldo := s.K+3, s.K+1, s.N+2
		a := randVec(r, s.M*lda)
		b := randVec(r, s.N*ldb)
		out := make([]float32, s.M*ldo)
		for i := range out {
			out[i] = 42 // gaps between rows must stay untouched
		}
		gemmNT(out, ldo, a, lda, b, ldb, s.M, s.N, s.K)
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
					want += float64(a[i*lda+k]) * float64(b[j*ldb+k])
				}
				if d := math.Abs(float64(got) - want); d > 1e-5*float64(s.K) {
					t.Errorf("%v: out[%d][%d] = %v, want %v", s, i, j, got, want)
				}
				if e := dot1x1(a[i*lda:][:s.K], b[j*ldb:][:s.K]); got != e {
					t.Errorf("%v: out[%d][%d] = %v, but dot1x1 gives %v", s, i, j, got, e)
				}
			}
		}
	}
}

// matmulForward with bias, and with the residual add, against float64.
func TestMatmulForward(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const N, C, OC = 70, 13, 67 // more than one tile each way, ragged edges
	inp, w, bias := randVec(r, N*C), randVec(r, OC*C), randVec(r, OC)
	res := randVec(r, N*OC)
	for _, threads := range []int{1, 3} {
		c := &CPU{threads: threads}
		tile := make([]float32, threads*mmScratch)
		out := make([]float32, N*OC)
		c.matmulForward(out, inp, f32Matrix(w), bias, N, C, OC, false, tile)
		acc := append([]float32(nil), res...)
		c.matmulForward(acc, inp, f32Matrix(w), bias, N, C, OC, true, tile)
		for n := range N {
			for o := range OC {
				want := float64(bias[o])
				for k := range C {
					want += float64(inp[n*C+k]) * float64(w[o*C+k])
				}
				if d := math.Abs(float64(out[n*OC+o]) - want); d > 1e-5 {
					t.Fatalf("threads %d: out[%d][%d] = %v, want %v", threads, n, o, out[n*OC+o], want)
				}
				want += float64(res[n*OC+o])
				if d := math.Abs(float64(acc[n*OC+o]) - want); d > 1e-5 {
					t.Fatalf("threads %d: residual out[%d][%d] = %v, want %v", threads, n, o, acc[n*OC+o], want)
				}
			}
		}
	}
}

// The tiled online logsumexp against a full log-softmax in float64, with logits
// large enough that a missing max subtraction would overflow float32.
func TestLMHeadLossForward(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const P, C, V = 67, 9, 3*vocabTile + 5
	h := randVec(r, P*C)
	for i := range h {
		h[i] *= 20
	}
	head := randVec(r, V*C)
	targets := make([]int32, P)
	for p := range targets {
		targets[p] = int32(r.IntN(V))
	}
	targets[0], targets[1] = 0, V-1
	tiles := (V + vocabTile - 1) / vocabTile
	for _, threads := range []int{1, 2} {
		c := &CPU{threads: threads}
		nll := make([]float32, P)
		c.lmHeadLossForward(nll, h, f32Matrix(head), targets, P, C, V,
			make([]float32, tiles*P), make([]float32, tiles*P), make([]float32, P),
			make([]float32, threads*lossRows*vocabTile))
		for p := range P {
			logits := make([]float64, V)
			mx := math.Inf(-1)
			for v := range V {
				for k := range C {
					logits[v] += float64(h[p*C+k]) * float64(head[v*C+k])
				}
				mx = math.Max(mx, logits[v])
			}
			var sum float64
			for _, l := range logits {
				sum += math.Exp(l - mx)
			}
			want := mx + math.Log(sum) - logits[targets[p]]
			if d := math.Abs(float64(nll[p]) - want); d > 1e-5*math.Max(1, math.Abs(mx)) {
				t.Errorf("threads %d: nll[%d] = %v, want %v", threads, p, nll[p], want)
			}
		}
	}
}

// Attention of two sequences packed back to back equals attention of each alone:
// nothing leaks across the span boundary, and positions restart per sequence.
func TestAttentionForwardSpans(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const C, NH, L1, L2 = 12, 3, 37, 5
	const N = L1 + L2
	qkv := randVec(r, N*3*C)
	c := &CPU{threads: 2}
	run := func(qkv []float32, spans []span, n, maxT int) []float32 {
		_, panels := spanPanels(spans)
		kt, vt := make([]float32, C*panels*kvPanel), make([]float32, C*n)
		out := make([]float32, n*C)
		hs := heads{NH, NH, C / NH}
		c.transposeKV(kt, vt, qkv, spans, n, hs)
		c.attentionForward(out, qkv, kt, vt, spans, n, hs, 1, make([]float32, 2*attRows*maxT), maxT)
		return out
	}
	both := run(qkv, []span{{0, L1}, {L1, L2}}, N, L1)
	first := run(qkv[:L1*3*C], []span{{0, L1}}, L1, L1)
	second := run(qkv[L1*3*C:], []span{{0, L2}}, L2, L2)
	alone := append(first, second...)
	for i := range both {
		if both[i] != alone[i] {
			t.Fatalf("out[%d][%d]: packed %v, alone %v", i/C, i%C, both[i], alone[i])
		}
	}
	// The first row of a sequence attends only to itself: its output is its value.
	hd := C / NH
	for _, off := range []int{0, L1} {
		for ch := range C {
			if got, want := both[off*C+ch], qkv[off*3*C+2*C+ch]; got != want {
				t.Errorf("row %d channel %d (head %d) = %v, want its own value %v", off, ch, ch/hd, got, want)
			}
		}
	}
}

// expf is within 1 ulp of float32(math.Exp) everywhere, exact almost everywhere,
// and right at the edges (overflow, denormals, underflow, NaN, infinities).
func TestExpf(t *testing.T) {
	n, off := 0, 0
	for x := float32(-110); x < 90; x += 0.000731 {
		n++
		got, want := expf(x), float32(math.Exp(float64(x)))
		if got == want {
			continue
		}
		off++
		if got != math.Nextafter32(want, float32(math.Inf(1))) && got != math.Nextafter32(want, 0) {
			t.Fatalf("expf(%v) = %v, want %v", x, got, want)
		}
	}
	if off > n/100 {
		t.Errorf("%d of %d values off by 1 ulp", off, n)
	}
	inf := float32(math.Inf(1))
	for _, c := range []struct{ x, want float32 }{{0, 1}, {-inf, 0}, {inf, inf}, {-200, 0}, {100, inf}} {
		if got := expf(c.x); got != c.want {
			t.Errorf("expf(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	if nan := float32(math.NaN()); expf(nan) == expf(nan) {
		t.Error("expf(NaN) is not NaN")
	}
}

// The exponential rows of softmax and of the loss, for every kernel set: each
// element within 2 ulp of e^(x-m) (or below the smallest normal float32 where
// e^(x-m) is), exactly 1 at the maximum, and the returned sum that of the
// elements within float32 rounding; the summing variant gives the same sum.
func TestExpRows(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, set := range kernelSets() {
		t.Run(set.String(), func(t *testing.T) {
			defer useKernels(set)()
			for n := range 70 {
				row := make([]float32, n)
				for i := range row {
					row[i] = float32(r.NormFloat64() * 30)
				}
				if n > 3 {
					row[n/2], row[n-1] = -200, -87.5
				}
				m := float32(math.Inf(-1))
				for _, v := range row {
					m = max(m, v)
				}
				in := append([]float32(nil), row...)
				sum := expSubRow(row, m)
				var want float64
				for i, x := range in {
					e := math.Exp(float64(x - m)) // x - m rounds to float32 first, as in the ops
					want += e
					got := float64(row[i])
					switch {
					case x == m && got != 1:
						t.Fatalf("n=%d: e^0 = %v", n, got)
					case e < 1.2e-38:
						if got > 1.2e-38 {
							t.Fatalf("n=%d: e^%v = %v, want < 1.2e-38", n, x-m, got)
						}
					case math.Abs(got-e) > 2.4e-7*e:
						t.Fatalf("n=%d: e^%v = %v, want %v", n, x-m, got, e)
					}
				}
				if math.Abs(float64(sum)-want) > 1e-6*want {
					t.Fatalf("n=%d: sum %v, want %v", n, sum, want)
				}
				if s2 := sumExpSub(in, m); s2 != sum {
					t.Fatalf("n=%d: sumExpSub %v, expSubRow %v", n, s2, sum)
				}
			}
		})
	}
}

// geluRow for every kernel set against gelu_new in float64: within a few float32
// ulp, plus the absolute 1.2e-7·|x| that float32's 1 + tanh(u) loses (as
// PyTorch's float32 gelu_new does) where tanh(u) is near -1.
func TestGeluRow(t *testing.T) {
	checkActivationRow(t, 13, geluRow, func(f float64) float64 {
		return 0.5 * f * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(f+0.044715*f*f*f)))
	}, 5e-7, 1.2e-7)
}

// swigluRow for every kernel set against silu(x)·u in float64: within a few
// float32 ulp (an exponential, an add, a division and a product, each
// rounded), plus 1e-30·|u| where e^(-x) leaves the float32 range (x below
// about -87, where the vector exponential clamps and silu(x) is below
// 1e-36·|x|).
func TestSwigluRow(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	x, u := make([]float32, 1000), make([]float32, 1000)
	for i := range x {
		x[i], u[i] = float32(r.NormFloat64()*4), float32(r.NormFloat64())
	}
	x[0], x[1], x[2], x[3], x[4] = 0, -30, 30, -100, 100
	for _, set := range kernelSets() {
		t.Run(set.String(), func(t *testing.T) {
			defer useKernels(set)()
			for _, n := range []int{0, 1, 7, 8, 17, 1000} {
				got := append([]float32(nil), x[:n]...)
				swigluRow(got, u)
				for i, v := range x[:n] {
					f, w := float64(v), float64(u[i])
					want := f / (1 + math.Exp(-f)) * w
					if d := math.Abs(float64(got[i]) - want); d > 5e-7*math.Abs(want)+1e-30*math.Abs(w) {
						t.Fatalf("n=%d: silu(%v)·%v = %v, want %v", n, v, u[i], got[i], want)
					}
				}
			}
		})
	}
}

// Every vector kernel set against the portable gemmNT on random inputs with
// ragged sizes (M not a multiple of the 3- or 4-row blocks, N not a multiple of
// 4, K below, at and past one and several vector widths): each element within
// 2e-6·Σ_k|a_k·b_k| + 1e-30 of the portable one (two float32 summation orders of
// the same products, one fused), and equal bit for bit across thread-style
// splits: any sub-block of the output computed alone gives the same bits.
func TestGemmNTVecMatchesGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, set := range kernelSets() {
		if set == kernelsGeneric {
			continue
		}
		t.Run(set.String(), func(t *testing.T) {
			for _, s := range []struct{ M, N, K int }{
				{1, 1, 7}, {3, 4, 8}, {4, 4, 16}, {5, 7, 15}, {7, 13, 17}, {13, 11, 100}, {9, 4, 64}, {8, 8, 768}, {6, 5, 1023},
			} {
				lda, ldb, ldo := s.K+5, s.K+2, s.N+3
				a, b := randVec(r, s.M*lda), randVec(r, s.N*ldb)
				want := make([]float32, s.M*ldo)
				gemmNTGeneric(want, ldo, a, lda, b, ldb, s.M, s.N, s.K)
				got := make([]float32, s.M*ldo)
				func() {
					defer useKernels(set)()
					gemmNT(got, ldo, a, lda, b, ldb, s.M, s.N, s.K)
					// The lower-right part alone (as another task would compute it).
					i0, j0 := s.M/2, s.N/2
					part := make([]float32, s.M*ldo)
					gemmNT(part[i0*ldo+j0:], ldo, a[i0*lda:], lda, b[j0*ldb:], ldb, s.M-i0, s.N-j0, s.K)
					for i := i0; i < s.M; i++ {
						for j := j0; j < s.N; j++ {
							if part[i*ldo+j] != got[i*ldo+j] {
								t.Fatalf("%v: out[%d][%d] = %v alone, %v in the whole", s, i, j, part[i*ldo+j], got[i*ldo+j])
							}
						}
					}
				}()
				for i := range s.M {
					for j := range s.N {
						var mag float64
						for k := range s.K {
							mag += math.Abs(float64(a[i*lda+k]) * float64(b[j*ldb+k]))
						}
						g, w := float64(got[i*ldo+j]), float64(want[i*ldo+j])
						if d := math.Abs(g - w); d > 2e-6*mag+1e-30 {
							t.Errorf("%v: out[%d][%d] = %v, portable %v (diff %.3g, Σ|ab| %.3g)", s, i, j, g, w, d, mag)
						}
					}
				}
			}
		})
	}
}

// geluErfRow for every kernel set against float64 x·Φ(x): within 2e-6
// relative plus 1e-8·|x|. The vector kernels evaluate Numerical Recipes'
// erfc fit (fractional error 1.2e-7) in float32: z² for z = |x|/√2 up to
// about 4 is rounded by half an ulp of 16 (a relative 1e-6 of the tail's
// e^-z²), and the exponential adds an ulp or two; the absolute term covers
// the far tail, whose values are below 1e-8 (float32 gelu_new loses 6e-8·|x|
// there). The portable kernel is float64 and far inside the bound.
func TestGeluErfRow(t *testing.T) {
	checkActivationRow(t, 17, geluErfRow, func(f float64) float64 { return 0.5 * f * math.Erfc(-f/math.Sqrt2) }, 2e-6, 1e-8)
}

// checkActivationRow runs row, with every kernel set, on rows of 0 to 1000
// values N(0, 16) (seeded by seed; 0, ±30 and -5.5 among them) and fails
// unless each result is within rel·|want| + abs·|x| of want(x) in float64.
// It logs the largest relative error for x > -3, before the far tail.
func checkActivationRow(t *testing.T, seed uint64, row func([]float32), want func(float64) float64, rel, abs float64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed+1))
	x := make([]float32, 1000)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 4)
	}
	x[0], x[1], x[2], x[3] = 0, -30, 30, -5.5
	for _, set := range kernelSets() {
		t.Run(set.String(), func(t *testing.T) {
			defer useKernels(set)()
			var worst float64
			for _, n := range []int{0, 1, 7, 8, 17, 1000} {
				got := append([]float32(nil), x[:n]...)
				row(got)
				for i, v := range x[:n] {
					f := float64(v)
					w := want(f)
					d := math.Abs(float64(got[i]) - w)
					if !(d <= rel*math.Abs(w)+abs*math.Abs(f)) {
						t.Fatalf("n=%d: f(%v) = %v, want %v", n, v, got[i], w)
					}
					if w != 0 && f > -3 {
						worst = max(worst, d/math.Abs(w))
					}
				}
			}
			t.Logf("largest relative error for x > -3: %.2g", worst)
		})
	}
}
