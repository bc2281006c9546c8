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
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range []struct{ M, N, K int }{
		{1, 1, 1}, {2, 4, 4}, {3, 5, 7}, {7, 9, 16}, {64, 64, 33}, {5, 130, 3}, {2, 3, 64},
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
		tile := make([]float32, threads*mmRows*mmCols)
		out := make([]float32, N*OC)
		c.matmulForward(out, inp, w, bias, N, C, OC, false, tile)
		acc := append([]float32(nil), res...)
		c.matmulForward(acc, inp, w, bias, N, C, OC, true, tile)
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
		c.lmHeadLossForward(nll, h, head, targets, P, C, V,
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
		vt := make([]float32, C*n)
		out := make([]float32, n*C)
		c.transposeV(vt, qkv, n, C)
		c.attentionForward(out, qkv, vt, spans, n, C, NH, make([]float32, 2*attRows*maxT), maxT)
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
