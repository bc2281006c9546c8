package pipeline

import (
	"fmt"
	"math"

	"github.com/wgpu-eval/wgpu-eval/model/exactsum"
)

// keeper collects the per-token records of a run's batches (EvalConfig.PerToken).
type keeper struct {
	k   int                    // top log-probabilities per target
	out *[]TokenNLL            // every record so far, in batching order
	on  func([]TokenNLL) error // EvalConfig.OnPerToken
}

// batch appends the records of a waited-for batch of samples ss, which
// scores want targets, from its Pending p of the backend named name.
func (kp *keeper) batch(name string, p Pending, ss []Sample, want int) error {
	pt, ok := p.(PerTokenPending)
	if !ok {
		return fmt.Errorf("the backend %s gives no per-token NLLs", name)
	}
	nll := pt.PerToken()
	if len(nll) != want {
		return fmt.Errorf("the backend gave %d per-token NLLs for a batch of %d targets", len(nll), want)
	}
	var top []TokenLogprob
	if kp.k > 0 {
		tp, ok := p.(TopLogprobsPending)
		if !ok {
			return fmt.Errorf("the backend %s gives no top log-probabilities", name)
		}
		if top = tp.TopLogprobs(); len(top) != want*kp.k {
			return fmt.Errorf("the backend gave %d top log-probabilities for a batch of %d targets x %d", len(top), want, kp.k)
		}
	}
	start := len(*kp.out)
	i := 0
	for _, s := range ss {
		for j, id := range s.Tokens[s.First:] {
			r := TokenNLL{Doc: s.Doc, Pos: s.Pos + j, Token: id, NLL: nll[i]}
			if kp.k > 0 {
				r.Top = top[i*kp.k : (i+1)*kp.k : (i+1)*kp.k]
				if err := checkTop(r.Top, 0); err != nil {
					return fmt.Errorf("the backend %s at document %d position %d: %w", name, r.Doc, r.Pos, err)
				}
			}
			*kp.out = append(*kp.out, r)
			i++
		}
	}
	if kp.on != nil {
		return kp.on((*kp.out)[start:])
	}
	return nil
}

// checkResumeRecords reports records that are not those of samples' targets,
// in batching order, each with k top log-probabilities, whose NLLs add up
// exactly to sum (the checkpoint's).
func checkResumeRecords(records []TokenNLL, samples []Sample, k int, sum exactsum.Sum) error {
	want := 0
	for _, s := range samples {
		want += s.Scored()
	}
	if len(records) != want {
		return fmt.Errorf("%d per-token records kept for the %d samples done, which have %d targets", len(records), len(samples), want)
	}
	i := 0
	for _, s := range samples {
		for j, id := range s.Tokens[s.First:] {
			r := records[i]
			if r.Doc != s.Doc || r.Pos != s.Pos+j || r.Token != id || len(r.Top) != k {
				return fmt.Errorf("per-token record %d is token %d at document %d position %d with %d top log-probabilities; "+
					"the run has token %d at document %d position %d with %d", i, r.Token, r.Doc, r.Pos, len(r.Top), id, s.Doc, s.Pos+j, k)
			}
			if err := r.Check(0); err != nil {
				return fmt.Errorf("per-token record %d (document %d position %d): %w", i, r.Doc, r.Pos, err)
			}
			i++
		}
	}
	var got exactsum.Sum
	for _, r := range records {
		got.Add(float64(r.NLL))
	}
	if got != sum {
		return fmt.Errorf("the per-token records' NLLs add up to %v, the checkpoint's sum is %v", got.Float64(), sum.Float64())
	}
	return nil
}

// MinNLL is how far below 0 an NLL may be: a float32 logsumexp
// minus the target's logit can round slightly below 0 where the target has
// nearly all the probability.
const MinNLL = -1e-3

// Check reports a record no run writes: an NLL that is not finite or is
// below 0 beyond rounding, an id that is negative or, with vocab > 0, not in
// the vocabulary, or top log-probabilities checkTop refuses.
func (t TokenNLL) Check(vocab int) error {
	if nll := float64(t.NLL); math.IsNaN(nll) || math.IsInf(nll, 0) || nll < MinNLL {
		return fmt.Errorf("NLL %v", t.NLL)
	}
	if t.Token < 0 || vocab > 0 && int(t.Token) >= vocab {
		return fmt.Errorf("token id %d is outside the vocabulary of %d", t.Token, vocab)
	}
	return checkTop(t.Top, vocab)
}

// checkTop reports top log-probabilities that are not finite, not at most 0
// (to rounding), out of order (highest first), or of an id that is negative
// or, with vocab > 0, not in the vocabulary.
func checkTop(top []TokenLogprob, vocab int) error {
	for j, x := range top {
		lp := float64(x.Logprob)
		switch {
		case x.ID < 0 || vocab > 0 && int(x.ID) >= vocab:
			return fmt.Errorf("top log-probability %d has id %d, outside the vocabulary of %d", j, x.ID, vocab)
		case math.IsNaN(lp) || math.IsInf(lp, 0) || lp > -MinNLL:
			return fmt.Errorf("top log-probability %d is %v", j, x.Logprob)
		case j > 0 && x.Logprob > top[j-1].Logprob:
			return fmt.Errorf("top log-probabilities not in decreasing order at %d", j)
		}
	}
	return nil
}
