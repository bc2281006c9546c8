package backend_test

import (
	"context"
	"math"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// TestGPULlama: Llama-family checkpoints on disk (safetensors with
// config.json: the qwen3 variant with q/k norms and the llama variant with
// every bias, both with grouped key/value heads and an untied LM head),
// stored in F32, F16 and BF16 (as most of the family is released), put on
// the test adapter by NewGPU straight from the checkpoint (f32 weights from
// F32, f16 weights from F16 and BF16 where the adapter has shader-f16), score
// every method like the CPU backend on the same checkpoint: mean NLL within
// 1e-5 (f16 weights hold the F16 and BF16 files' values exactly, so the
// bound is the f32 arithmetic's there too), with both kernel sets; and
// Open opens a gpu device for such a model.
func TestGPULlama(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T) {
		ad := testAdapter(t)
		ctx := context.Background()
		for i, mt := range []string{"qwen3", "llama"} {
			m := synth.Peaked(synth.TinyLlamaConfig(mt), uint64(130+i))
			cfg := m.Config
			toks := peakedTokens(cfg, 3*cfg.NPositions)
			for _, stored := range []string{"F32", "F16", "BF16"} {
				f16 := stored != "F32"
				if f16 && !ad.HasFeature(wgpu.FeatureShaderF16) {
					t.Logf("%s lacks shader-f16: f16 weights not tested", ad.Info().Name)
					continue
				}
				dir := t.TempDir()
				if err := synth.WriteSafetensors(dir, m, stored); err != nil {
					t.Fatal(err)
				}
				ck, err := model.OpenCheckpoint(ctx, dir)
				if err != nil {
					t.Fatal(err)
				}
				defer ck.Close()
				cpu, err := backend.Open(ctx, backend.DeviceSpec{Kind: "cpu", Index: -1}, ck, backend.Options{Threads: 2})
				if err != nil {
					t.Fatal(err)
				}
				defer cpu.Close()
				g := openTestGPUFrom(t, ad, ck, f16)
				defer g.Close()
				for _, ec := range []pipeline.EvalConfig{
					{Mode: pipeline.ModeStream, Ctx: cfg.NPositions},
					{Mode: pipeline.ModeStrided, Ctx: cfg.NPositions, Stride: cfg.NPositions / 4},
					{Mode: pipeline.ModeDocuments, Ctx: cfg.NPositions, Stride: cfg.NPositions / 2},
				} {
					ec.Tokens, ec.EOT, ec.VocabSize, ec.BatchTokens = toks, 1, cfg.VocabSize, 3*cfg.NPositions
					want, err := pipeline.Evaluate(ctx, cpu, ec)
					if err != nil {
						t.Fatal(err)
					}
					got, err := pipeline.Evaluate(ctx, g, ec)
					if err != nil {
						t.Fatal(err)
					}
					diff := math.Abs(got.MeanNLL - want.MeanNLL)
					t.Logf("%s %s %s: mean NLL %.9f, cpu %.9f, |diff| %.2e", mt, stored, ec.Mode, got.MeanNLL, want.MeanNLL, diff)
					if got.Tokens != want.Tokens || !(diff <= 1e-5) {
						t.Errorf("%s %s %s: %d tokens, mean NLL %.9f; cpu %d, %.9f", mt, stored, ec.Mode, got.Tokens, got.MeanNLL, want.Tokens, want.MeanNLL)
					}
				}
			}
		}
	})
	t.Run("Open", func(t *testing.T) {
		testAdapter(t) // skips without Vulkan
		ctx := context.Background()
		m := synth.Peaked(synth.TinyLlamaConfig("mistral"), 140)
		seqs := []model.Sequence{{Tokens: []int32{1, 5, 9, 2, 40, 7, 7, 3}, First: 1}}
		want, err := model.NewCPU(m, 1).Loss(ctx, seqs)
		if err != nil {
			t.Fatal(err)
		}
		b, err := backend.Open(ctx, backend.DeviceSpec{Kind: "gpu", Index: -1}, m.Reader(), backend.Options{Precision: backend.PrecisionF32})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if _, ok := b.(*backend.GPU); !ok {
			t.Fatalf("device gpu: backend %T", b)
		}
		p, err := b.Submit(ctx, pipeline.Batch{Seqs: seqs})
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got.Count != want.Count || math.Abs(got.Sum.Float64()-want.Sum.Float64()) > 1e-5*float64(want.Count) {
			t.Errorf("%s: %+v, cpu %+v", b.Name(), got, want)
		}
	})
}
