package backend_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/backendtest"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/exactsum"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// sumsUnderBatching scores one corpus on backends made by open as one run
// with small batches, one with large batches, three shards merged, and a run
// interrupted after its second batch and resumed: all four must give the
// same bits of nll_sum and nll_sumsq, and the exact sum of the per-token
// NLLs must be the header's sum.
func sumsUnderBatching(t *testing.T, open func() pipeline.Backend) {
	t.Helper()
	m := synth.Peaked(synth.TinyConfig(), 7)
	ec := pipeline.EvalConfig{Tokens: backendtest.RandomDocs(11, 60, 45, 33, 70, 20), EOT: backendtest.EOT, Mode: pipeline.ModeStrided,
		Ctx: 32, Stride: 16, VocabSize: m.Config.VocabSize, BatchTokens: 64, PerToken: true}
	ctx := context.Background()
	small, err := pipeline.Evaluate(ctx, open(), ec)
	if err != nil {
		t.Fatal(err)
	}
	if small.MeanNLL > 0.8*math.Log(float64(m.Config.VocabSize)) {
		t.Fatalf("mean NLL %.3f: the model is too close to uniform to test anything", small.MeanNLL)
	}
	var perToken exactsum.Sum
	for _, r := range small.PerToken {
		perToken.Add(float64(r.NLL))
	}
	if perToken.Float64() != small.NLLSum {
		t.Errorf("the per-token NLLs add up exactly to %v, nll_sum %v", perToken.Float64(), small.NLLSum)
	}
	type run struct {
		name string
		res  *pipeline.Result
	}
	runs := []run{{"batches of 64 tokens", small}}

	ec.BatchTokens = 1024
	large, err := pipeline.Evaluate(ctx, open(), ec)
	if err != nil {
		t.Fatal(err)
	}
	runs = append(runs, run{"batches of 1024 tokens", large})

	ec.BatchTokens = 64
	var shards []*pipeline.Result
	for i := range 3 {
		sc := ec
		sc.Shard = pipeline.Shard{Index: i, Count: 3}
		r, err := pipeline.Evaluate(ctx, open(), sc)
		if err != nil {
			t.Fatal(err)
		}
		r.Shard = &sc.Shard
		shards = append(shards, r)
	}
	merged, err := runfile.Merge(shards)
	if err != nil {
		t.Fatal(err)
	}
	runs = append(runs, run{"three shards merged", merged})

	rc := ec
	rc.PerToken = false
	var state *pipeline.State
	stop := errors.New("stop after two batches")
	batches := 0
	rc.OnBatch = func(s pipeline.State) error {
		if batches++; batches == 2 {
			state = &s
			return stop
		}
		return nil
	}
	if _, err := pipeline.Evaluate(ctx, open(), rc); !errors.Is(err, stop) || state == nil {
		t.Fatalf("the interrupted run: %v", err)
	}
	rc.OnBatch, rc.Resume, rc.BatchTokens = nil, state, 1024
	resumed, err := pipeline.Evaluate(ctx, open(), rc)
	if err != nil {
		t.Fatal(err)
	}
	runs = append(runs, run{"resumed after two batches", resumed})

	for _, r := range runs[1:] {
		if r.res.Tokens != small.Tokens || math.Float64bits(r.res.NLLSum) != math.Float64bits(small.NLLSum) ||
			math.Float64bits(r.res.NLLSumSq) != math.Float64bits(small.NLLSumSq) || r.res.NLLSumExact != small.NLLSumExact {
			t.Errorf("%s: %d tokens, nll_sum %v (%v), nll_sumsq %v; %s: %d, %v (%v), %v",
				r.name, r.res.Tokens, r.res.NLLSum, r.res.NLLSumExact, r.res.NLLSumSq, runs[0].name, small.Tokens, small.NLLSum, small.NLLSumExact, small.NLLSumSq)
		}
	}
}

// TestSumsIndependentOfBatchingCPU: on the CPU, batching, sharding and
// resuming give the same bits.
func TestSumsIndependentOfBatchingCPU(t *testing.T) {
	m := synth.Peaked(synth.TinyConfig(), 7)
	sumsUnderBatching(t, func() pipeline.Backend { return backend.NewCPU(m, 0) })
}

// TestSumsIndependentOfBatchingGPU: on the GPU too (its batch sums were f32
// on the device, and differed in the 7th digit with the batch size).
func TestSumsIndependentOfBatchingGPU(t *testing.T) {
	ad := testAdapter(t)
	m := synth.Peaked(synth.TinyConfig(), 7)
	g := openTestGPU(t, ad, m, false)
	sumsUnderBatching(t, func() pipeline.Backend { return g }) // Evaluate does not close it
}

// TestResumedSpeedIsThisSession: a resumed run's tokens_per_second counts
// only the targets this session scored, over this session's seconds (it
// divided every target, earlier sessions' too, by this session's time).
func TestResumedSpeedIsThisSession(t *testing.T) {
	m := synth.Peaked(synth.TinyConfig(), 7)
	ec := pipeline.EvalConfig{Tokens: backendtest.RandomDocs(11, 60, 45, 33, 70, 20), EOT: backendtest.EOT, Mode: pipeline.ModeStrided,
		Ctx: 32, Stride: 16, VocabSize: m.Config.VocabSize, BatchTokens: 64}
	var state *pipeline.State
	stop := errors.New("stop")
	ec.OnBatch = func(s pipeline.State) error {
		if state == nil {
			state = &s
			return stop
		}
		return nil
	}
	if _, err := pipeline.Evaluate(context.Background(), backend.NewCPU(m, 0), ec); !errors.Is(err, stop) {
		t.Fatal(err)
	}
	ec.OnBatch, ec.Resume = nil, state
	r, err := pipeline.Evaluate(context.Background(), backend.NewCPU(m, 0), ec)
	if err != nil {
		t.Fatal(err)
	}
	want := float64(r.Tokens-state.Sums.Count) / r.Seconds
	if state.Sums.Count == 0 || math.Abs(r.TokensPerSecond-want) > 1e-9*want {
		t.Errorf("tokens_per_second %v; this session scored %d of %d targets in %v s: %v", r.TokensPerSecond, r.Tokens-state.Sums.Count, r.Tokens, r.Seconds, want)
	}
}

// TestPerplexitiesStayFinite: a text with few words (no spaces, as Chinese
// or code) puts word perplexity's exponent past float64's range; the result
// says the largest float64 instead of +Inf, and its JSON is written.
func TestPerplexitiesStayFinite(t *testing.T) {
	var sums model.LossSums
	for range 1000 {
		sums.AddNLL(9.5)
	}
	r := &pipeline.Result{Words: 2}
	r.Fill(sums, 10, true)
	if r.WordPerplexity != math.MaxFloat64 || r.BytePerplexity != math.MaxFloat64 || math.IsInf(r.PPLStdErr, 0) {
		t.Errorf("word_perplexity %v, byte_perplexity %v, ppl_stderr %v: want the largest float64 for the first two", r.WordPerplexity, r.BytePerplexity, r.PPLStdErr)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("JSON: %v", err)
	}
}
