package runfile

import (
	"math"
	"slices"

	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// KLMethod says how KLStats are computed from the top-K lists, for the
// report and the JSON.
const KLMethod = "KL(A||B) per target position over the tokens in both runs' top-K lists plus one bucket " +
	"for every other token (mass 1 - the listed ones' in each run); grouping tokens never raises KL, so this is a " +
	"lower bound of the full-vocabulary KL, equal to it when the top-K lists hold nearly all the mass"

// KLStats is what llama.cpp's KL-divergence mode reports, for two per-token
// files that both carry top log-probabilities (--top-logprobs): the
// distribution of KL(A‖B) over the targets' positions, how often the two runs
// agree on the most likely token, and how the target's probability moves.
type KLStats struct {
	TopKA  int    `json:"top_k_a"`
	TopKB  int    `json:"top_k_b"`
	Method string `json:"method"` // KLMethod
	// Mean is the mean KL in nats, StdErr its standard error; the rest are
	// quantiles of the per-position KL (linear between order statistics).
	Mean   float64 `json:"mean"`
	StdErr float64 `json:"stderr"`
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	P999   float64 `json:"p99_9"`
	Max    float64 `json:"max"`
	// MaxDoc and MaxPos are where the largest KL is.
	MaxDoc int `json:"max_doc"`
	MaxPos int `json:"max_pos"`
	// SameTop is the number of positions where both runs' most likely token
	// (the argmax of the logits) is the same; SameTopShare that over the targets.
	SameTop      int     `json:"same_top"`
	SameTopShare float64 `json:"same_top_share"`
	// MeanDeltaP is the mean of p_B(target) − p_A(target), with p = exp(−NLL);
	// DeltaPStdErr its standard error and RMSDeltaP its root mean square;
	// DeltaP its percentiles over the targets, as llama.cpp lists them.
	MeanDeltaP   float64     `json:"mean_delta_p"`
	DeltaPStdErr float64     `json:"delta_p_stderr"`
	RMSDeltaP    float64     `json:"rms_delta_p"`
	DeltaP       Percentiles `json:"delta_p_percentiles"`
}

// Percentiles are the minimum, the 1st, 5th, 10th, 25th, 50th (median), 75th,
// 90th, 95th and 99th percentiles and the maximum of a sample, each computed
// by quantile (linear interpolation between order statistics, numpy's
// default); all 0 for an empty sample.
type Percentiles struct {
	Min    float64 `json:"min"`
	P1     float64 `json:"p1"`
	P5     float64 `json:"p5"`
	P10    float64 `json:"p10"`
	P25    float64 `json:"p25"`
	Median float64 `json:"median"`
	P75    float64 `json:"p75"`
	P90    float64 `json:"p90"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	Max    float64 `json:"max"`
}

// percentiles is the Percentiles of sorted xs.
func percentiles(xs []float64) Percentiles {
	q := func(p float64) float64 { return quantile(xs, p) }
	return Percentiles{Min: q(0), P1: q(0.01), P5: q(0.05), P10: q(0.1), P25: q(0.25), Median: q(0.5),
		P75: q(0.75), P90: q(0.9), P95: q(0.95), P99: q(0.99), Max: q(1)}
}

// klStats computes KLStats for two files of the same targets (sameTargets
// checked), both with top log-probabilities.
func klStats(a, b *PerTokenFile) *KLStats {
	n := len(a.Tokens)
	s := &KLStats{TopKA: a.Header.TopLogprobs, TopKB: b.Header.TopLogprobs, Method: KLMethod}
	kls, dps := make([]float64, n), make([]float64, n)
	var sum, sumSq, dp, dpSq float64
	for i, x := range a.Tokens {
		y := b.Tokens[i]
		kl := topKL(x.Top, y.Top)
		kls[i] = kl
		sum += kl
		sumSq += kl * kl
		if kl > s.Max || i == 0 {
			s.Max, s.MaxDoc, s.MaxPos = kl, x.Doc, x.Pos
		}
		if len(x.Top) > 0 && len(y.Top) > 0 && x.Top[0].ID == y.Top[0].ID {
			s.SameTop++
		}
		d := math.Exp(-float64(y.NLL)) - math.Exp(-float64(x.NLL))
		dps[i] = d
		dp += d
		dpSq += d * d
	}
	if n == 0 {
		return s
	}
	s.Mean = sum / float64(n)
	s.StdErr = pipeline.StdErr(sum, sumSq, n)
	s.SameTopShare = float64(s.SameTop) / float64(n)
	s.MeanDeltaP = dp / float64(n)
	s.DeltaPStdErr = pipeline.StdErr(dp, dpSq, n)
	s.RMSDeltaP = math.Sqrt(dpSq / float64(n))
	slices.Sort(kls)
	s.Median, s.P90, s.P95, s.P99, s.P999 = quantile(kls, 0.5), quantile(kls, 0.9), quantile(kls, 0.95), quantile(kls, 0.99), quantile(kls, 0.999)
	slices.Sort(dps)
	s.DeltaP = percentiles(dps)
	return s
}

// topKL is KL(A‖B) of one position from the two top-K lists (see KLMethod):
// the tokens listed in both, and one bucket for the rest.
func topKL(a, b []pipeline.TokenLogprob) float64 {
	inB := make(map[int32]float64, len(b))
	for _, x := range b {
		inB[x.ID] = float64(x.Logprob)
	}
	kl, pShared, qShared := 0.0, 0.0, 0.0
	for _, x := range a {
		lq, ok := inB[x.ID]
		if !ok {
			continue
		}
		lp := float64(x.Logprob)
		p := math.Exp(lp)
		kl += p * (lp - lq)
		pShared += p
		qShared += math.Exp(lq)
	}
	// The rest bucket; a tiny floor keeps rounding (a rest of 0 in B while A
	// has 1e-9 left) from blowing up.
	const floor = 1e-10
	if pRest := 1 - pShared; pRest > floor {
		kl += pRest * math.Log(pRest/max(1-qShared, floor))
	}
	return max(kl, 0) // the shared masses can exceed 1 by rounding
}

// quantile is the q-quantile (0 ≤ q ≤ 1) of xs, sorted in increasing order,
// by linear interpolation between order statistics: numpy.quantile's default
// method "linear" (R's type 7). With n values and h = q·(n−1), it is
// xs[⌊h⌋] + (h − ⌊h⌋)·(xs[⌊h⌋+1] − xs[⌊h⌋]), so q = 0 gives the minimum,
// q = 1 the maximum, and q = 0.5 the median (the mean of the two middle
// values when n is even). It is 0 for an empty xs.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	h := q * float64(len(xs)-1)
	lo := int(h)
	if lo+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[lo] + (h-float64(lo))*(xs[lo+1]-xs[lo])
}
