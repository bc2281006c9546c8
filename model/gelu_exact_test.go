package model_test

import (
	"context"
	"math"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// TestCPUExactGELU: a GPT-2 whose config says activation_function "gelu"
// (erf, as Cerebras-GPT's and nanoGPT's) gets every target's NLL within 1e-5
// of the float64 reference computing x·Φ(x), on a peaked model, through
// config.json; and the same weights under gelu_new score measurably
// differently (the test tells the two apart).
func TestCPUExactGELU(t *testing.T) {
	cfg := model.Config{NLayer: 2, NHead: 2, NEmbd: 16, NPositions: 96, VocabSize: 300, LayerNormEps: 1e-5}
	m := synth.PeakedScaled(cfg, 31)
	for _, l := range m.Weights.Layers { // the MLP's pre-activations of order 1, where erf and tanh differ most, and its output felt
		for i := range l.FCW {
			l.FCW[i] *= 40
		}
		for i := range l.FCProjW {
			l.FCProjW[i] *= 20
		}
	}
	m.Config.ExactGELU = true
	dir := t.TempDir()
	if err := synth.WriteSafetensors(dir, m, "F32"); err != nil {
		t.Fatal(err)
	}
	loaded, err := model.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !loaded.Config.ExactGELU {
		t.Fatal("config.json's activation_function \"gelu\" was not read")
	}
	toks := randomTokens(5, cfg.NPositions, cfg.VocabSize) // Zipf-like, as the peaked model predicts
	want := model.RefNLL(m, toks)
	ctx := context.Background()
	_, got, err := model.NewCPU(loaded, 2).LossPerToken(ctx, []model.Sequence{{Tokens: toks, First: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var worst, mean float64
	for i, w := range want {
		worst = max(worst, math.Abs(float64(got[i])-w))
		mean += w / float64(len(want))
	}
	t.Logf("mean NLL %.6f (ln V %.3f), worst token %.2e", mean, math.Log(float64(cfg.VocabSize)), worst)
	if worst > 1e-5 {
		t.Errorf("worst per-token difference from the reference %.2e", worst)
	}
	if mean > math.Log(float64(cfg.VocabSize))-0.5 {
		t.Errorf("mean NLL %.3f: the model predicts too little to test anything", mean)
	}
	tanh := *loaded
	tanh.Config.ExactGELU = false
	_, other, err := model.NewCPU(&tanh, 2).LossPerToken(ctx, []model.Sequence{{Tokens: toks, First: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var diff float64
	for i := range other {
		diff = max(diff, math.Abs(float64(other[i]-got[i])))
	}
	if diff < 1e-4 {
		t.Errorf("gelu_new and the exact GELU differ by at most %.2e per token: the test cannot tell them apart", diff)
	}
}
