package pipeline_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
)

// TestEvaluateProgressInsideCPUBatch: on the CPU, Evaluate's progress moves
// between batch ends, once per layer and once per LM head of every batch
// (counted, not timed): Done rises past Scored inside a batch and Scored
// catches up at its end, with the running NLL sum; the last report is the
// result's.
func TestEvaluateProgressInsideCPUBatch(t *testing.T) {
	cfg := model.Config{NLayer: 4, NHead: 2, NEmbd: 32, NPositions: 32, VocabSize: 64, LayerNormEps: 1e-5}
	m := synth.Random(cfg, 5)
	r := rand.New(rand.NewPCG(1, 2))
	ids := make([]int32, 300)
	for i := range ids {
		ids[i] = int32(r.IntN(cfg.VocabSize))
	}
	var calls []pipeline.Progress
	res, err := pipeline.Evaluate(context.Background(), backend.NewCPU(m, 2), pipeline.EvalConfig{
		Tokens: &corpus.Tokens{Docs: [][]int32{ids}}, Ctx: 32, BatchTokens: 64, VocabSize: cfg.VocabSize,
		Progress: func(p pipeline.Progress) { calls = append(calls, p) },
	})
	if err != nil {
		t.Fatal(err)
	}
	const batches = 5 // ten windows of 32 tokens or fewer, two a batch
	if want := 1 + batches*(cfg.NLayer+2); len(calls) != want {
		t.Fatalf("%d progress calls, want %d: the start, and per batch one per layer, one for the LM head and the batch's end", len(calls), want)
	}
	inside := 0
	for i, c := range calls {
		if i > 0 && (c.Done < calls[i-1].Done || c.Scored < calls[i-1].Scored) {
			t.Errorf("call %d %+v after %+v: went back", i, c, calls[i-1])
		}
		if c.Total != res.Tokens || c.Scored > c.Done {
			t.Errorf("call %d %+v: want a total of %d and no more scored than done", i, c, res.Tokens)
		}
		if c.Done > c.Scored {
			inside++
		}
	}
	if inside < batches*cfg.NLayer {
		t.Errorf("%d reports inside batches, want at least %d (one per layer): %+v", inside, batches*cfg.NLayer, calls)
	}
	last := calls[len(calls)-1]
	if last.Done != res.Tokens || last.Scored != res.Tokens || last.NLLSum != res.NLLSum || last.MeanNLL() != res.MeanNLL {
		t.Errorf("last report %+v, want the result's %d targets and NLL sum %v", last, res.Tokens, res.NLLSum)
	}
}

// TestEvaluateProgressAfterCancelInsideBatch: cancelled inside a CPU batch,
// whose layer reports counted part of it, Evaluate drops the batch and its
// last report says what the result counts (Done = Scored = the result's
// targets), so that a progress line never shows more than the result.
func TestEvaluateProgressAfterCancelInsideBatch(t *testing.T) {
	cfg := model.Config{NLayer: 4, NHead: 2, NEmbd: 32, NPositions: 32, VocabSize: 64, LayerNormEps: 1e-5}
	m := synth.Random(cfg, 5)
	r := rand.New(rand.NewPCG(3, 4))
	ids := make([]int32, 300)
	for i := range ids {
		ids[i] = int32(r.IntN(cfg.VocabSize))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls []pipeline.Progress
	res, err := pipeline.Evaluate(ctx, backend.NewCPU(m, 2), pipeline.EvalConfig{
		Tokens: &corpus.Tokens{Docs: [][]int32{ids}}, Ctx: 32, BatchTokens: 64, VocabSize: cfg.VocabSize,
		Progress: func(p pipeline.Progress) {
			calls = append(calls, p)
			if p.Scored > 0 && p.Done > p.Scored { // inside the second batch, a layer done
				cancel()
			}
		},
	})
	if !errors.Is(err, context.Canceled) || res == nil || !res.Interrupted {
		t.Fatalf("err = %v, result %+v; want the interrupted result", err, res)
	}
	if res.Tokens == 0 || res.Tokens == res.TotalTokens {
		t.Fatalf("%d of %d targets scored: want the first batch only", res.Tokens, res.TotalTokens)
	}
	if !slices.ContainsFunc(calls, func(p pipeline.Progress) bool { return p.Done > res.Tokens }) {
		t.Errorf("no report counted part of the batch cut short: %+v", calls)
	}
	last := calls[len(calls)-1]
	if last.Done != res.Tokens || last.Scored != res.Tokens || last.NLLSum != res.NLLSum || last.Total != res.TotalTokens {
		t.Errorf("last report %+v, want the result's %d of %d targets, NLL sum %v", last, res.Tokens, res.TotalTokens, res.NLLSum)
	}
}
