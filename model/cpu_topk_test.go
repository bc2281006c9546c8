package model_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/refops"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// refTop is the k highest log-probabilities of logits, in float64 from
// scratch: a full sort of the vocabulary and a plain logsumexp.
func refTop(logits []float32, k int) (ids []int32, lps []float64) {
	ls := refops.LogSoftmax(logits)
	order := make([]int, len(logits))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return logits[order[a]] > logits[order[b]] })
	for _, i := range order[:k] {
		ids = append(ids, int32(i))
		lps = append(lps, ls[i])
	}
	return ids, lps
}

// TestLossTopLogprobs: every target's top-k log-probabilities equal those of
// the KV-cache generator's logits at that prefix (another forward, from
// scratch: a full sort and a float64 logsumexp) to 2e-5 nats, the ids in the
// same order wherever the reference's neighbours are apart by more than that;
// the sums and NLLs are LossPerToken's bit for bit; and -NLL is the target's
// log-probability where the target is in the top-k.
func TestLossTopLogprobs(t *testing.T) {
	cfg := synth.TinyConfig()
	m := synth.Peaked(cfg, 13)
	cpu := model.NewCPU(m, 2)
	r := rand.New(rand.NewPCG(4, 4))
	var seqs []model.Sequence
	for _, n := range []int{19, 2, 33} {
		s := model.Sequence{Tokens: make([]int32, n), First: 1 + r.IntN(min(n-1, 4))}
		for i := range s.Tokens {
			// Low ids half the time: the peaked model ranks them high, so
			// some targets are in their top-k.
			s.Tokens[i] = int32(r.IntN([]int{8, cfg.VocabSize}[r.IntN(2)]))
		}
		seqs = append(seqs, s)
	}
	const k = 7
	ctx := context.Background()
	sums, nll, top, err := cpu.LossTopLogprobs(ctx, seqs, k)
	if err != nil {
		t.Fatal(err)
	}
	wantSums, wantNLL, err := cpu.LossPerToken(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	if sums != wantSums || len(nll) != len(wantNLL) || len(top) != k*len(nll) {
		t.Fatalf("sums %+v, %d NLLs, %d top; LossPerToken %+v, %d", sums, len(nll), len(top), wantSums, len(wantNLL))
	}
	g, err := cpu.NewGenerator()
	if err != nil {
		t.Fatal(err)
	}
	i, inTop := 0, 0
	for _, s := range seqs {
		for p := s.First; p < len(s.Tokens); p++ {
			if math.Float32bits(nll[i]) != math.Float32bits(wantNLL[i]) {
				t.Errorf("target %d: NLL %v, LossPerToken %v", i, nll[i], wantNLL[i])
			}
			g.Reset()
			logits, err := g.Append(ctx, s.Tokens[:p])
			if err != nil {
				t.Fatal(err)
			}
			ids, lps := refTop(logits, k)
			got := top[i*k : (i+1)*k]
			for j, x := range got {
				if d := math.Abs(float64(x.Logprob) - lps[j]); d > 2e-5 {
					t.Errorf("target %d top %d: log-probability %v, reference %v", i, j, x.Logprob, lps[j])
				}
				apart := (j == 0 || lps[j-1]-lps[j] > 2e-5) && (j == k-1 || lps[j]-lps[j+1] > 2e-5)
				if apart && x.ID != ids[j] {
					t.Errorf("target %d top %d: id %d, reference %d", i, j, x.ID, ids[j])
				}
				if x.ID == s.Tokens[p] {
					inTop++
					if d := math.Abs(float64(x.Logprob) + float64(nll[i])); d > 2e-5 {
						t.Errorf("target %d: in the top-k with log-probability %v, NLL %v", i, x.Logprob, nll[i])
					}
				}
			}
			i++
		}
	}
	t.Logf("%d of %d targets are in their top-%d", inTop, len(nll), k)
	for _, bad := range []int{0, -1, cfg.VocabSize + 1} {
		if _, _, _, err := cpu.LossTopLogprobs(ctx, seqs, bad); err == nil || !strings.Contains(err.Error(), "top log-probabilities") {
			t.Errorf("k = %d: err = %v", bad, err)
		}
	}
}

// TestLossTopLogprobsNaN: NaN logits rank below every number and tie with
// each other (lower id first). wte rows of some ids are NaN, so those ids'
// logits are NaN at every position: a position whose prefix avoids them gives
// its finite ids in the order of the same model's logits without the NaN
// rows (the generator's, a full sort), then the NaN ids in increasing order;
// a position whose prefix holds one (its hidden state NaN, every logit NaN)
// gives ids 0 to k-1. Every log-probability is NaN (the logsumexp is). Some
// NaN ids are below k, so that they enter the top-k while it fills.
func TestLossTopLogprobsNaN(t *testing.T) {
	cfg := synth.TinyConfig()
	cfg.VocabSize = 40
	nanIDs := []int32{0, 3, 17, 39}
	isNaN := func(id int32) bool { return slices.Contains(nanIDs, id) }
	clean := synth.Peaked(cfg, 5)
	m := synth.Peaked(cfg, 5)
	C := cfg.NEmbd
	for _, id := range nanIDs {
		for c := range C {
			m.Weights.WTE[int(id)*C+c] = float32(math.NaN())
		}
	}
	seqs := []model.Sequence{
		{Tokens: []int32{5, 1, 8, 2, 30, 6}, First: 1},
		{Tokens: []int32{4, 9, 12, 7, 11}, First: 2},
		// Every target's prefix holds NaN id 3. (Not after finite targets in
		// one sequence: the loss's attention multiplies a later position's
		// values by zero weights, and 0·NaN is NaN.)
		{Tokens: []int32{3, 7, 11}, First: 1},
	}
	ctx := context.Background()
	g, err := model.NewCPU(clean, 1).NewGenerator()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{7, 38} { // 38: more than the 36 finite ids
		_, _, top, err := model.NewCPU(m, 2).LossTopLogprobs(ctx, seqs, k)
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		for _, s := range seqs {
			for p := s.First; p < len(s.Tokens); p++ {
				got := top[i*k : (i+1)*k]
				i++
				var want []int32
				var logits []float32
				if slices.ContainsFunc(s.Tokens[:p], isNaN) {
					for id := range int32(k) {
						want = append(want, id)
					}
				} else {
					g.Reset()
					if logits, err = g.Append(ctx, s.Tokens[:p]); err != nil {
						t.Fatal(err)
					}
					ids, _ := refTop(logits, cfg.VocabSize)
					for _, id := range ids {
						if !isNaN(id) {
							want = append(want, id)
						}
					}
					want = append(want, nanIDs...)[:k]
				}
				for j, x := range got {
					if !math.IsNaN(float64(x.Logprob)) {
						t.Errorf("k %d target %d top %d: log-probability %v, want NaN", k, i-1, j, x.Logprob)
					}
					// Near ties of the clean logits may come in either order.
					tied := logits != nil && !isNaN(want[j]) && slices.ContainsFunc(want, func(id int32) bool {
						return id != want[j] && !isNaN(id) && math.Abs(float64(logits[id]-logits[want[j]])) <= 2e-5
					})
					if x.ID != want[j] && !tied {
						t.Errorf("k %d target %d top %d: id %d, want %d (ids %v, want %v)", k, i-1, j, x.ID, want[j], ids(got), want)
						break
					}
				}
			}
		}
	}
}

// ids is the ids of top, in order.
func ids(top []model.TokenLogprob) []int32 {
	out := make([]int32, len(top))
	for i, x := range top {
		out[i] = x.ID
	}
	return out
}
