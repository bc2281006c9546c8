package shaders

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// zipfSeqs are n sequences of random lengths up to maxLen with ids drawn
// Zipf-like (small ids common, as in real text), first targets at 1 or later.
func zipfSeqs(seed uint64, n, maxLen, vocab int) []model.Sequence {
	r := rand.New(rand.NewPCG(seed, 1))
	seqs := make([]model.Sequence, n)
	for i := range seqs {
		L := 2 + r.IntN(maxLen-1)
		toks := make([]int32, L)
		for t := range toks {
			toks[t] = int32(min(int(math.Exp(r.Float64()*math.Log(float64(vocab))))-1, vocab-1))
		}
		seqs[i] = model.Sequence{Tokens: toks, First: 1 + r.IntN(L/2+1)}
		seqs[i].First = min(seqs[i].First, L)
	}
	return seqs
}

// TestGPT2MatchesCPU: the GPU forward and loss on the peaked tiny model equal
// the CPU path's: |mean NLL(gpu) - mean NLL(cpu)| <= 1e-5 with f32 weights and
// <= 3e-4 with f16 weights (f32 activations and accumulation), and every
// target's NLL within 20 times that (relative to max(1, NLL)); a rerun gives
// bit-identical sums; a sequence's NLL does not depend on its batch mates.
func TestGPT2MatchesCPU(t *testing.T) {
	d := newTestDev(t)
	m := synth.Peaked(synth.TinyConfig(), 7)
	seqs := zipfSeqs(3, 6, m.Config.NPositions, m.Config.VocabSize)
	ctx := context.Background()
	want, wantNLL, err := model.NewCPU(m, 0).LossPerToken(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	mean := want.Sum.Float64() / float64(want.Count)
	if lnV := math.Log(float64(m.Config.VocabSize)); mean > lnV-1 {
		t.Fatalf("peaked model: CPU mean NLL %.4f is not well below ln V = %.4f", mean, lnV)
	}
	for _, f16 := range d.weightTypes() {
		tol := 1e-5
		if f16 {
			tol = 3e-4
		}
		g, err := NewGPT2(context.Background(), d.dev, m.Reader(), f16, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := g.SubmitWith(ctx, seqs, 0, SubmitOptions{PerToken: true})
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got.Count != want.Count {
			t.Fatalf("f16=%v: %d targets, CPU %d", f16, got.Count, want.Count)
		}
		// Target by target, not only the aggregates: an error in one position
		// cannot hide in a mean.
		for i, x := range p.PerToken() {
			if d := math.Abs(float64(x) - float64(wantNLL[i])); d > 20*tol*math.Max(1, float64(wantNLL[i])) {
				t.Fatalf("f16=%v: target %d: NLL %.7f, CPU %.7f (|diff| %.2g)", f16, i, x, wantNLL[i], d)
			}
		}
		gm := got.Sum.Float64() / float64(got.Count)
		t.Logf("f16=%v: mean NLL gpu %.7f cpu %.7f (diff %.2g)", f16, gm, mean, gm-mean)
		if math.Abs(gm-mean) > tol {
			t.Errorf("f16=%v: mean NLL %.7f, CPU %.7f: differ by more than %g", f16, gm, mean, tol)
		}
		if ms, ws := got.SumSq.Float64()/float64(got.Count), want.SumSq.Float64()/float64(want.Count); math.Abs(ms-ws) > 10*tol*math.Max(1, ws) {
			t.Errorf("f16=%v: mean NLL² %.6f, CPU %.6f", f16, ms, ws)
		}
		again, err := g.Loss(ctx, seqs)
		if err != nil {
			t.Fatal(err)
		}
		if again != got {
			t.Errorf("f16=%v: rerun gave %+v, first run %+v", f16, again, got)
		}
		// wte bound in ranges (as when it exceeds the binding limit) gives the same sums.
		g.bindLimit = 3 * g.vt * m.Config.NEmbd * g.weightBytes()
		if n := len(g.wteRanges()); n < 10 {
			t.Fatalf("%d wte ranges", n)
		}
		split, err := g.Loss(ctx, seqs)
		g.bindLimit = 0
		if err != nil {
			t.Fatal(err)
		}
		if split != got {
			t.Errorf("f16=%v: wte in ranges gave %+v, whole %+v", f16, split, got)
		}
		// Batch independence: each sequence alone adds up to the batch within rounding.
		var alone float64
		for _, s := range seqs {
			one, err := g.Loss(ctx, []model.Sequence{s})
			if err != nil {
				t.Fatal(err)
			}
			alone += one.Sum.Float64()
		}
		if math.Abs(alone-got.Sum.Float64()) > 1e-5*math.Abs(got.Sum.Float64()) {
			t.Errorf("f16=%v: sequences scored alone sum to %.6f, in one batch %.6f", f16, alone, got.Sum.Float64())
		}
	}
}

// TestGPT2RefusesBadInput: out-of-range ids, over-long sequences and empty
// batches are refused before any work, with the problem named.
func TestGPT2RefusesBadInput(t *testing.T) {
	d := newTestDev(t)
	m := synth.Random(synth.TinyConfig(), 1)
	g, err := NewGPT2(context.Background(), d.dev, m.Reader(), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	long := make([]int32, m.Config.NPositions+1)
	for _, c := range []struct {
		name string
		seqs []model.Sequence
		want string
	}{
		{"id", []model.Sequence{{Tokens: []int32{1, 50257}, First: 1}}, "outside the vocabulary"},
		{"negative", []model.Sequence{{Tokens: []int32{-1, 2}, First: 1}}, "outside the vocabulary"},
		{"long", []model.Sequence{{Tokens: long, First: 1}}, "at most 64"},
		{"empty", nil, "empty batch"},
	} {
		_, err := g.Loss(context.Background(), c.seqs)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.Loss(ctx, zipfSeqs(1, 1, 8, 100)); err == nil {
		t.Error("cancelled context: no error")
	}
}

// TestGPT2ExactGELU: a GPT-2 with activation_function "gelu" (ExactGELU:
// c_fc's epilogue EPI_GELU_ERF) scores every target within 2e-4 relative of
// the CPU path (the mean within 1e-5) with both kernel sets, on a peaked
// model whose MLP matters (c_fc and mlp.c_proj scaled up, so that its
// pre-activations reach where erf and tanh differ); and the CPU scoring the
// same weights with gelu_new is farther from the GPU than that, so the test
// sees which GELU ran.
func TestGPT2ExactGELU(t *testing.T) {
	m := synth.Peaked(synth.TinyConfig(), 17)
	for _, l := range m.Weights.Layers {
		for i := range l.FCW {
			l.FCW[i] *= 10
		}
		for i := range l.FCProjW {
			l.FCProjW[i] *= 4
		}
	}
	m.Config.ExactGELU = true
	tanh := *m
	tanh.Config.ExactGELU = false
	checkGPT2Variant(t, m, &tanh, "gelu_new")
}

// TestGPT2LayerScaledAttention: a GPT-2 with scale_attn_by_inverse_layer_idx
// (the attention kernels' lscale) and an n_inner that is neither 4C nor a
// multiple of 4 (the MLP's matmuls at that width, element by element)
// scores as the CPU path does, with both kernel sets; the CPU scoring the
// same weights without the layer scale is farther from the GPU, so the test
// sees that the scale ran. The attention is made to matter: q and k scaled
// up, so that the scores are far from uniform in every layer.
func TestGPT2LayerScaledAttention(t *testing.T) {
	cfg := synth.TinyConfig()
	cfg.NLayer, cfg.NInner, cfg.LayerScaledAttn = 3, 42, true
	m := synth.Peaked(cfg, 23)
	C := cfg.NEmbd
	for _, l := range m.Weights.Layers {
		for i := range l.QKVW {
			if i%(3*C) < 2*C { // q and k columns of c_attn (C, 3C)
				l.QKVW[i] *= 20
			}
		}
	}
	plain := *m
	plain.Config.LayerScaledAttn = false
	checkGPT2Variant(t, m, &plain, "unscaled attention")
}

// checkGPT2Variant scores m on the GPU with both kernel sets and on the CPU:
// every target within 2e-4 relative of the CPU and the mean within 1e-5,
// while the CPU's scores of other (the same weights without the feature m
// tests, named otherName) are at least 1e-4 away from the GPU's somewhere.
func checkGPT2Variant(t *testing.T, m, other *model.Model, otherName string) {
	t.Helper()
	d := newTestDev(t)
	seqs := zipfSeqs(5, 4, m.Config.NPositions, m.Config.VocabSize)
	ctx := context.Background()
	want, wantNLL, err := model.NewCPU(m, 0).LossPerToken(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	_, otherNLL, err := model.NewCPU(other, 0).LossPerToken(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	mean := want.Sum.Float64() / float64(want.Count)
	if lnV := math.Log(float64(m.Config.VocabSize)); mean > lnV-0.5 {
		t.Fatalf("CPU mean NLL %.4f is not well below ln V = %.4f: the model predicts too little", mean, lnV)
	}
	for _, set := range kernelSets {
		t.Run(string(set), func(t *testing.T) {
			g := newLlama(t, d, m, set, false)
			p, err := g.SubmitWith(ctx, seqs, 0, SubmitOptions{PerToken: true})
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var worst, apart float64
			for i, x := range p.PerToken() {
				worst = max(worst, math.Abs(float64(x-wantNLL[i]))/math.Max(1, float64(wantNLL[i])))
				apart = max(apart, math.Abs(float64(x-otherNLL[i])))
			}
			gm := got.Sum.Float64() / float64(got.Count)
			t.Logf("mean NLL gpu %.7f cpu %.7f; worst target %.2g relative; %s's targets up to %.2g away", gm, mean, worst, otherName, apart)
			if worst > 2e-4 || math.Abs(gm-mean) > 1e-5 {
				t.Errorf("mean NLL %.7f, CPU %.7f; worst target %.2g relative", gm, mean, worst)
			}
			if apart < 1e-4 {
				t.Errorf("the GPU's NLLs are within %.2g of %s's: cannot tell which ran", apart, otherName)
			}
		})
	}
}

// TestGPT2UntiedHead: a GPT-2 whose lm_head.weight is its own matrix
// (config.json's tie_word_embeddings false: Config.UntiedHead, as the CPU
// path reads it) scores every target like the CPU with both kernel sets
// (20 times 1e-5 relative to max(1, NLL)), a rerun and the head bound in
// ranges bit-identical; and the CPU scoring the same weights tied differs
// by far more, so the test sees which head ran. NewGPT2 refused such a
// model before.
func TestGPT2UntiedHead(t *testing.T) {
	d := newTestDev(t)
	m := synth.Peaked(synth.TinyConfig(), 19)
	C := m.Config.NEmbd
	head := make([]float32, len(m.Weights.WTE))
	for i, x := range m.Weights.WTE {
		head[i] = x // the prior on channel 0
		if i%C != 0 {
			head[i] = -0.7 * m.Weights.WTE[(i+C)%len(head)] // another id's context channels
		}
	}
	m.Config.UntiedHead, m.Weights.LMHead = true, head
	seqs := zipfSeqs(20, 4, m.Config.NPositions, m.Config.VocabSize)
	want, wantNLL := cpuNLL(t, m, seqs)
	tied := *m
	tied.Config.UntiedHead, tied.Weights.LMHead = false, m.Weights.WTE
	tiedSums, _ := cpuNLL(t, &tied, seqs)
	if diff := meanDiff(tiedSums, want); diff < 0.01 {
		t.Fatalf("the tied head scores within %.2g of the untied one: the test cannot tell them apart", diff)
	}
	for _, set := range kernelSets {
		t.Run(string(set), func(t *testing.T) {
			g := newLlama(t, d, m, set, false) // any decoder
			tok, cpu, _ := llamaCheck(t, g, seqs, wantNLL, want, want.Sum.Float64()/float64(want.Count), llamaTol(false))
			t.Logf("max per-target diff %.2g, mean diff vs CPU %.2g", tok, cpu)
		})
	}
}
