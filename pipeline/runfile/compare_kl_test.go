package runfile_test

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/internal/refops"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// TestCompareKL: on a model of 64 tokens with --top-logprobs 64 (the whole
// vocabulary) compare's KL statistics and same-top share equal the exact
// full-vocabulary KL(A‖B) computed from scratch (the KV-cache generator's
// logits of both models, float64 log-softmax) to 2e-5 nats; with top-5 the
// mean is a lower bound of it; a run against itself has KL 0 everywhere.
func TestCompareKL(t *testing.T) {
	cfg := synth.TinyConfig()
	cfg.VocabSize = 64
	ma := synth.Peaked(cfg, 21)
	mb := synth.Peaked(cfg, 21)
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
	file := func(m *model.Model, k int) *runfile.PerTokenFile {
		res, err := pipeline.Evaluate(ctx, backend.NewCPU(m, 1), pipeline.EvalConfig{Tokens: toks, EOT: 0, Ctx: 16,
			VocabSize: cfg.VocabSize, PerToken: true, TopLogprobs: k})
		if err != nil {
			t.Fatal(err)
		}
		return runfile.NewPerTokenFile(res, "test")
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
	c, err := runfile.Compare(a, b, 0, nil)
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

	c5, err := runfile.Compare(file(ma, 5), file(mb, 5), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c5.KL.Mean > mean+1e-6 || c5.KL.Mean <= 0 || c5.KL.SameTop != sameTop {
		t.Errorf("top-5 KL mean %v, same top %d; full %v, %d", c5.KL.Mean, c5.KL.SameTop, mean, sameTop)
	}

	self, err := runfile.Compare(a, a, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := self.KL; s.Mean != 0 || s.Max != 0 || s.SameTopShare != 1 || s.MeanDeltaP != 0 {
		t.Errorf("self comparison: %+v", s)
	}
}

// TestComparePPLRatio: PPL(B)/PPL(A) is the ratio of the two perplexities
// computed from scratch, exp(mean B)/exp(mean A), and its standard error the
// delta method's ratio · paired SE, with the paired SE worked out by hand for
// differences 0.5, 0, 0.25, 0.5; a file against itself gives 1 ± 0.
func TestComparePPLRatio(t *testing.T) {
	pair := func(nllA, nllB []float32) (*runfile.PerTokenFile, *runfile.PerTokenFile) {
		h := runfile.PerTokenHeader{Model: "m", Data: "d", Mode: "stream", Ctx: 8, Stride: 8, Tokenizer: "test"}
		a, b := &runfile.PerTokenFile{Header: h}, &runfile.PerTokenFile{Header: h}
		for i := range nllA {
			a.Tokens = append(a.Tokens, pipeline.TokenNLL{Pos: i + 1, Token: int32(i), NLL: nllA[i]})
			b.Tokens = append(b.Tokens, pipeline.TokenNLL{Pos: i + 1, Token: int32(i), NLL: nllB[i]})
		}
		return a, b
	}
	a, b := pair([]float32{1, 2, 3, 4}, []float32{1.5, 2, 3.25, 4.5})
	c, err := runfile.Compare(a, b, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	// mean A 2.5, mean B 2.8125; differences' mean 0.3125, squared
	// deviations 0.03515625 + 0.09765625 + 0.00390625 + 0.03515625 = 0.171875,
	// sample variance 0.171875/3, SE sqrt(0.171875/3/4).
	ratio := math.Exp(2.8125) / math.Exp(2.5)
	se := math.Sqrt(0.171875 / 12)
	if math.Abs(c.PPLRatio-ratio) > 1e-12 || math.Abs(c.DiffStdErr-se) > 1e-12 || math.Abs(c.PPLRatioStdErr-ratio*se) > 1e-12 {
		t.Errorf("PPL ratio %v ± %v (paired SE %v), want %v ± %v (%v)", c.PPLRatio, c.PPLRatioStdErr, c.DiffStdErr, ratio, ratio*se, se)
	}
	self, err := runfile.Compare(a, a, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if self.PPLRatio != 1 || self.PPLRatioStdErr != 0 {
		t.Errorf("self comparison: PPL ratio %v ± %v, want 1 ± 0", self.PPLRatio, self.PPLRatioStdErr)
	}
}

// TestCompareDeltaPPercentiles: the percentiles of p_B − p_A equal values
// worked out by hand with linear interpolation between order statistics
// (h = q·(n−1), numpy's default): A is sure of every target (NLL 0, p = 1) and
// B gives the targets p = 0.6, 0.1, 0.9, 0.5, 0.8, so the sorted Δp are
// −0.9, −0.5, −0.4, −0.2, −0.1.
func TestCompareDeltaPPercentiles(t *testing.T) {
	h := runfile.PerTokenHeader{Model: "m", Data: "d", Mode: "stream", Ctx: 8, Stride: 8, Tokenizer: "test", TopLogprobs: 1}
	a, b := &runfile.PerTokenFile{Header: h}, &runfile.PerTokenFile{Header: h}
	for i, p := range []float64{0.6, 0.1, 0.9, 0.5, 0.8} {
		nll := float32(-math.Log(p))
		a.Tokens = append(a.Tokens, pipeline.TokenNLL{Pos: i + 1, Token: 3, NLL: 0, Top: []pipeline.TokenLogprob{{ID: 3, Logprob: 0}}})
		b.Tokens = append(b.Tokens, pipeline.TokenNLL{Pos: i + 1, Token: 3, NLL: nll, Top: []pipeline.TokenLogprob{{ID: 3, Logprob: -nll}}})
	}
	c, err := runfile.Compare(a, b, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.KL == nil {
		t.Fatal("no KL block for files with top log-probabilities")
	}
	got := c.KL.DeltaP
	// min: h = 0; 1%: h = 0.04, −0.9 + 0.04·0.4; 5%: h = 0.2, −0.9 + 0.2·0.4;
	// 10%: h = 0.4, −0.9 + 0.4·0.4; 25%: h = 1; median: h = 2; 75%: h = 3;
	// 90%: h = 3.6, −0.2 + 0.6·0.1; 95%: h = 3.8; 99%: h = 3.96; max: h = 4.
	want := runfile.Percentiles{Min: -0.9, P1: -0.884, P5: -0.82, P10: -0.74, P25: -0.5, Median: -0.4, P75: -0.2,
		P90: -0.14, P95: -0.12, P99: -0.104, Max: -0.1}
	gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range gv.NumField() {
		// float32 NLLs move p by up to ~1e-7.
		if g, w := gv.Field(i).Float(), wv.Field(i).Float(); math.Abs(g-w) > 1e-6 {
			t.Errorf("Δp %s = %.9g, want %.9g", gv.Type().Field(i).Name, g, w)
		}
	}
	if math.Abs(c.KL.MeanDeltaP-(-2.1/5)) > 1e-6 {
		t.Errorf("mean Δp %v, want -0.42", c.KL.MeanDeltaP)
	}
	self, err := runfile.Compare(b, b, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if self.KL.DeltaP != (runfile.Percentiles{}) {
		t.Errorf("self comparison: Δp percentiles %+v, want all 0", self.KL.DeltaP)
	}
}
