package pipeline_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/internal/refops"
	"github.com/wgpu-eval/wgpu-eval/internal/testmodel"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// TestCompareKL: on a model of 64 tokens with --top-logprobs 64 (the whole
// vocabulary) compare's KL statistics and same-top share equal the exact
// full-vocabulary KL(A‖B) computed from scratch (the KV-cache generator's
// logits of both models, float64 log-softmax) to 2e-5 nats; with top-5 the
// mean is a lower bound of it; a run against itself has KL 0 everywhere.
func TestCompareKL(t *testing.T) {
	cfg := testmodel.TinyConfig()
	cfg.VocabSize = 64
	ma := testmodel.Peaked(cfg, 21)
	mb := testmodel.Peaked(cfg, 21)
	for i := range mb.Weights.LNFW {
		mb.Weights.LNFW[i] *= 1.2 // a sharper B: small, nonzero KL
	}
	r := rand.New(rand.NewPCG(3, 3))
	doc := make([]int32, 70)
	for i := range doc {
		doc[i] = int32(r.IntN(cfg.VocabSize))
	}
	toks := &corpus.Tokens{Docs: [][]int32{doc}}
	ctx := context.Background()
	file := func(m *model.Model, k int) *pipeline.PerTokenFile {
		res, err := pipeline.Evaluate(ctx, pipeline.NewCPU(m, 1), pipeline.EvalConfig{Tokens: toks, EOT: 0, Ctx: 16,
			VocabSize: cfg.VocabSize, PerToken: true, TopLogprobs: k})
		if err != nil {
			t.Fatal(err)
		}
		return pipeline.NewPerTokenFile(res, "test")
	}

	// The reference: full distributions at every target's prefix.
	var ref []float64
	sameTop := 0
	ga, _ := model.NewCPU(ma, 1).NewGenerator()
	gb, _ := model.NewCPU(mb, 1).NewGenerator()
	for _, tg := range expectTargets(toks, pipeline.ModeStream, 16, 16) {
		prefix := tg.window.Tokens[:len(tg.window.Tokens)-1]
		ga.Reset()
		gb.Reset()
		la, err := ga.Append(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		pa := refops.LogSoftmax(la)
		lb, err := gb.Append(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		pb := refops.LogSoftmax(lb)
		kl := 0.0
		for v := range pa {
			kl += math.Exp(pa[v]) * (pa[v] - pb[v])
		}
		ref = append(ref, kl)
		if slices.Index(pa, slices.Max(pa)) == slices.Index(pb, slices.Max(pb)) {
			sameTop++
		}
	}
	mean := 0.0
	for _, x := range ref {
		mean += x / float64(len(ref))
	}
	sorted := slices.Sorted(slices.Values(ref))

	a, b := file(ma, 64), file(mb, 64)
	c, err := pipeline.Compare(a, b, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	kl := c.KL
	if kl == nil || len(ref) != c.Targets {
		t.Fatalf("KL %+v over %d targets, reference %d", kl, c.Targets, len(ref))
	}
	t.Logf("KL mean %.6g (reference %.6g), max %.4g, same top %d of %d", kl.Mean, mean, kl.Max, kl.SameTop, c.Targets)
	for _, q := range []struct {
		name      string
		got, want float64
	}{{"mean", kl.Mean, mean}, {"max", kl.Max, sorted[len(sorted)-1]}, {"median", kl.Median, (sorted[(len(sorted)-1)/2] + sorted[len(sorted)/2]) / 2}} {
		if math.Abs(q.got-q.want) > 2e-5 {
			t.Errorf("KL %s %.8g, reference %.8g", q.name, q.got, q.want)
		}
	}
	if mean < 1e-3 || kl.SameTop != sameTop || kl.SameTopShare != float64(sameTop)/float64(c.Targets) {
		t.Errorf("reference mean %v (want a clear difference); same top %d (share %v), reference %d", mean, kl.SameTop, kl.SameTopShare, sameTop)
	}

	c5, err := pipeline.Compare(file(ma, 5), file(mb, 5), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c5.KL.Mean > mean+1e-6 || c5.KL.Mean <= 0 || c5.KL.SameTop != sameTop {
		t.Errorf("top-5 KL mean %v, same top %d; full %v, %d", c5.KL.Mean, c5.KL.SameTop, mean, sameTop)
	}

	self, err := pipeline.Compare(a, a, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := self.KL; s.Mean != 0 || s.Max != 0 || s.SameTopShare != 1 || s.MeanDeltaP != 0 {
		t.Errorf("self comparison: %+v", s)
	}
}
