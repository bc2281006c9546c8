package backend_test

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// shapeCheckEnv names a GPT-2 shape ("124M") for TestGPUMatchesCPUShape; unset,
// the test skips. It is the check scripts/device-check.sh runs on a real GPU
// before timing anything: the kernels at the real model's sizes (768 channels,
// 12 heads, 1024 positions, the whole vocabulary), which the conformance
// suite's tiny model does not reach.
const shapeCheckEnv = "WGPU_CHECK_SHAPE"

// TestGPUMatchesCPUShape scores two windows of a peaked model of the shape
// $WGPU_CHECK_SHAPE by every method on the GPU (f32 and, where the adapter has
// it, f16 weights) and on the CPU: the mean NLL within 1e-5 (f32) and 3e-4
// (f16) of the CPU's, the counts equal, and a rerun bit-identical.
func TestGPUMatchesCPUShape(t *testing.T) {
	shape := os.Getenv(shapeCheckEnv)
	if shape == "" {
		t.Skipf("$%s not set (a GPT-2 shape such as 124M): the full-size check is for real GPUs", shapeCheckEnv)
	}
	cfg, ok := map[string]model.Config{
		"124M": {NLayer: 12, NHead: 12, NEmbd: 768, NPositions: 1024, VocabSize: 50257, LayerNormEps: 1e-5},
		"350M": {NLayer: 24, NHead: 16, NEmbd: 1024, NPositions: 1024, VocabSize: 50257, LayerNormEps: 1e-5},
	}[shape]
	if !ok {
		t.Fatalf("$%s=%q: want 124M or 350M", shapeCheckEnv, shape)
	}
	ad := testAdapter(t)
	m := synth.PeakedScaled(cfg, 7)
	// Two windows of Zipf-like ids (and documents of a few lengths for the documents method).
	toks := peakedTokens(cfg, 2*cfg.NPositions)
	cpu := backend.NewCPU(m, 0)
	methods := []pipeline.EvalConfig{
		{Mode: pipeline.ModeStream, Ctx: cfg.NPositions},
		{Mode: pipeline.ModeStrided, Ctx: cfg.NPositions, Stride: cfg.NPositions / 2},
		{Mode: pipeline.ModeDocuments, Ctx: cfg.NPositions, Stride: cfg.NPositions / 2},
	}
	want := make([]*pipeline.Result, len(methods))
	for i, ec := range methods {
		ec.Tokens, ec.EOT, ec.VocabSize, ec.BatchTokens = toks, int32(cfg.VocabSize-1), cfg.VocabSize, 2*cfg.NPositions
		methods[i] = ec
		res, err := pipeline.Evaluate(context.Background(), cpu, ec)
		if err != nil {
			t.Fatal(err)
		}
		if lnV := math.Log(float64(cfg.VocabSize)); res.MeanNLL > lnV-1 {
			t.Fatalf("%s: the peaked model's CPU mean NLL %.4f is not well below ln V = %.4f", ec.Mode, res.MeanNLL, lnV)
		}
		want[i] = res
	}
	for _, f16 := range []bool{false, true} {
		name, tol := "f32", 1e-5
		if f16 {
			name, tol = "f16", 3e-4
			if !ad.HasFeature(wgpu.FeatureShaderF16) {
				t.Logf("%s lacks shader-f16: f16 not checked", ad.Info().Name)
				continue
			}
		}
		t.Run(name, func(t *testing.T) {
			g := openTestGPU(t, ad, m, f16)
			for i, ec := range methods {
				got, err := pipeline.Evaluate(context.Background(), g, ec)
				if err != nil {
					t.Fatal(err)
				}
				diff := math.Abs(got.MeanNLL - want[i].MeanNLL)
				t.Logf("%s %s: %d tokens, mean NLL %.9f, cpu %.9f, |diff| %.2e", g.Name(), ec.Mode, got.Tokens, got.MeanNLL, want[i].MeanNLL, diff)
				if got.Tokens != want[i].Tokens || !(diff <= tol) {
					t.Errorf("%s: %d tokens, mean NLL %.9f; cpu %d tokens, %.9f (|diff| %.2e > %.0e)",
						ec.Mode, got.Tokens, got.MeanNLL, want[i].Tokens, want[i].MeanNLL, diff, tol)
				}
				again, err := pipeline.Evaluate(context.Background(), g, ec)
				if err != nil {
					t.Fatal(err)
				}
				if again.NLLSum != got.NLLSum {
					t.Errorf("%s: rerun NLL sum %v, first %v: not bit-identical", ec.Mode, again.NLLSum, got.NLLSum)
				}
			}
		})
	}
}

// peakedTokens is n Zipf-like ids (small ids common, as in text) cut into
// documents of a few lengths, one of them longer than the model's positions
// (so the documents method strides too).
func peakedTokens(cfg model.Config, n int) *corpus.Tokens {
	r := rand.New(rand.NewPCG(12, 5))
	out := &corpus.Tokens{Separated: true}
	for _, frac := range []float64{0.6, 0.25, 0.1, 0.05} {
		d := make([]int32, max(int(frac*float64(n)), 2))
		for i := range d {
			d[i] = int32(min(int(math.Exp(r.Float64()*math.Log(float64(cfg.VocabSize))))-1, cfg.VocabSize-1))
		}
		out.Docs = append(out.Docs, d)
	}
	return out
}
