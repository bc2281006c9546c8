package pipeline_test

import (
	"context"
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/backendtest"
	"github.com/wgpu-eval/wgpu-eval/model"
)

// The Llama-family goldens are written by testdata/golden/gen_llama_golden.py:
// one folder per variant under llamaGoldenDir, each a small byte-level model
// (hidden 64, 2 layers, intermediate 176, vocabulary 320: bytes, BOS 256, EOS
// 257) trained on TinyShakespeare's train split and saved as transformers
// saves that class (config.json, safetensors), with golden.json: held-out val
// bytes and paragraphs, and the NLL of every evaluation method computed by a
// float64 PyTorch reference written from transformers' definitions.
//
//	llama2   LlamaForCausalLM, MHA, rope_theta 1e4, untied, F32
//	llama3   LlamaForCausalLM, GQA, rope_scaling llama3, tied, BF16 in two shards
//	mistral  MistralForCausalLM, GQA, untied, F16
//	qwen2    Qwen2ForCausalLM, GQA, q/k/v biases, tied, BF16
//	qwen3    Qwen3ForCausalLM, GQA, q_norm/k_norm, head_dim 32 > 64/4, tied, F32
//
// Documents mode prepends BOS (golden.json's "eot"). The ctx-2048 cases use
// every position the configs allow (max_position_embeddings 2048).
var llamaGoldenDir = filepath.Join(backendtest.GoldenDir(), "llama")

var llamaVariants = backendtest.LlamaGoldenVariants

// llamaWindowTol bounds, per scored target, how far one window's float32 NLL
// sum may be from the float64 reference's: |sum - reference| <= llamaWindowTol
// * scored. It is goldenTol spread over the window's targets (windows that all
// meet it keep their case's mean within goldenTol), and float32 stays far
// inside it: gen_llama_golden.py runs a float32 forward of the same stored
// weights (cos and sin rounded once to float32, as the Go side does) over
// every window and records in golden.json's "f32_check" the largest
// differences from the reference. Over the five variants: 1.5e-6 per target
// for a window's sum (at most 1.5e-6 also for the windows of 8 targets or fewer,
// none longer than 104 tokens), 1.7e-7 for a case's mean. Single tokens differ
// by up to 3.2e-5, which is why the bound is per target of a window and not
// per token: such errors average out over the targets of a window.
const llamaWindowTol = goldenTol

// TestLlamaGoldenWindows checks, without running a model, that the pipeline
// cuts the Llama goldens' cases into exactly the windows the reference
// scored (ctx 64 to 2048; documents after BOS).
func TestLlamaGoldenWindows(t *testing.T) {
	for _, v := range llamaVariants {
		t.Run(v, func(t *testing.T) {
			g := backendtest.LoadGolden(t, filepath.Join(llamaGoldenDir, v))
			if g.EOT != 256 {
				t.Errorf("eot %d, want BOS 256", g.EOT)
			}
			for _, c := range g.Cases {
				t.Run(c.Name, func(t *testing.T) { checkWindows(t, g, c) })
			}
		})
	}
}

// TestLlamaGoldenNLL opens every variant with model.OpenCheckpoint and
// model.LoadCPU, runs every case's windows (cut by the pipeline) through the
// CPU forward, and checks the count exactly, the mean NLL within goldenTol of
// the float64 reference, every window's NLL sum within llamaWindowTol per
// scored target, and that a rerun is bit-identical.
func TestLlamaGoldenNLL(t *testing.T) {
	ctx := context.Background()
	for _, v := range llamaVariants {
		t.Run(v, func(t *testing.T) {
			dir := filepath.Join(llamaGoldenDir, v)
			g := backendtest.LoadGolden(t, dir)
			ck, err := model.OpenCheckpoint(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer ck.Close()
			if got := ck.Config().VocabSize; got != 320 {
				t.Fatalf("vocab size %d, want 320", got)
			}
			cpu, err := model.LoadCPU(ctx, ck, 0, model.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range g.Cases {
				t.Run(c.Name, func(t *testing.T) {
					seqs := sequences(t, g, c)
					got, err := cpu.Loss(ctx, seqs)
					if err != nil {
						t.Fatal(err)
					}
					if got.Count != c.Count {
						t.Errorf("count %d, want %d", got.Count, c.Count)
					}
					mean := got.Sum.Float64() / float64(got.Count)
					diff := math.Abs(mean - c.MeanNLL)
					t.Logf("mean NLL %.9f, reference %.9f, |diff| %.2e", mean, c.MeanNLL, diff)
					if !(diff <= goldenTol) { // NaN fails too
						t.Errorf("mean NLL %.9f, want %.9f (|diff| %.2e > %.0e)", mean, c.MeanNLL, diff, goldenTol)
					}

					want := scoringWindows(c)
					if len(seqs) != len(want) {
						t.Fatalf("%d sequences, %d reference windows (see TestLlamaGoldenWindows)", len(seqs), len(want))
					}
					bad, worst := 0, 0.0
					for i, s := range seqs {
						one, err := cpu.Loss(ctx, []model.Sequence{s})
						if err != nil {
							t.Fatal(err)
						}
						w := want[i]
						d := math.Abs(one.Sum.Float64() - w.NLLSum)
						worst = max(worst, d/float64(w.Scored))
						if one.Count == w.Scored && d <= llamaWindowTol*float64(w.Scored) {
							continue
						}
						if bad++; bad <= 5 {
							t.Errorf("window %d %s: NLL sum %.9f over %d targets, reference %.9f over %d (|diff| %.2e)",
								i, windowName(w), one.Sum.Float64(), one.Count, w.NLLSum, w.Scored, d)
						}
					}
					if bad > 5 {
						t.Errorf("%d windows of %d off the reference in all", bad, len(seqs))
					}
					t.Logf("%d windows: largest |sum - reference| per target %.2e", len(seqs), worst)

					again, err := cpu.Loss(ctx, seqs)
					if err != nil {
						t.Fatal(err)
					}
					if a, b := again.Sum.Float64(), got.Sum.Float64(); math.Float64bits(a) != math.Float64bits(b) || again.Count != got.Count {
						t.Errorf("rerun: NLL sum %v over %d, first run %v over %d: not bit-identical", a, again.Count, b, got.Count)
					}
				})
			}
		})
	}
}

// TestLlamaGoldenTransformers5Config: every variant's config.json rewritten
// as transformers 5 saves it (rope_theta and rope_scaling moved into
// rope_parameters, "dtype" for "torch_dtype"; for llama2 a null top-level
// rope_theta left behind, as some tools write it) gives the same Config as
// the transformers 4 file, and the same mean NLL on the first case. Read as
// transformers 4 read it, such a file has rotary base 10000: llama3's 5e5,
// mistral's and the Qwens' 1e6 would be silently lost.
func TestLlamaGoldenTransformers5Config(t *testing.T) {
	ctx := context.Background()
	for _, v := range llamaVariants {
		t.Run(v, func(t *testing.T) {
			src := filepath.Join(llamaGoldenDir, v)
			g := backendtest.LoadGolden(t, src)
			dir := t.TempDir()
			entries, err := os.ReadDir(src)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if e.Name() != "config.json" {
					if err := os.Symlink(filepath.Join(src, e.Name()), filepath.Join(dir, e.Name())); err != nil {
						t.Fatal(err)
					}
				}
			}
			old, err := os.ReadFile(filepath.Join(src, "config.json"))
			if err != nil {
				t.Fatal(err)
			}
			var c map[string]any
			if err := json.Unmarshal(old, &c); err != nil {
				t.Fatal(err)
			}
			rp := map[string]any{"rope_type": "default"}
			if rs, ok := c["rope_scaling"].(map[string]any); ok {
				maps.Copy(rp, rs)
			}
			rp["rope_theta"] = c["rope_theta"]
			c["rope_parameters"], c["dtype"] = rp, c["torch_dtype"]
			delete(c, "rope_scaling")
			delete(c, "torch_dtype")
			delete(c, "rope_theta")
			if v == "llama2" {
				c["rope_theta"] = nil
			}
			data, err := json.MarshalIndent(c, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			want, err := model.ParseConfig(old)
			if err != nil {
				t.Fatal(err)
			}
			ck, err := model.OpenCheckpoint(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer ck.Close()
			if got := ck.Config(); got != want {
				t.Fatalf("config\n%+v\nwant (transformers 4's file)\n%+v", got, want)
			}
			cpu, err := model.LoadCPU(ctx, ck, 0, model.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			gc := g.Cases[0]
			got, err := cpu.Loss(ctx, sequences(t, g, gc))
			if err != nil {
				t.Fatal(err)
			}
			mean := got.Sum.Float64() / float64(got.Count)
			if d := math.Abs(mean - gc.MeanNLL); !(d <= goldenTol) || got.Count != gc.Count {
				t.Errorf("%s: mean NLL %.9f over %d, want %.9f over %d", gc.Name, mean, got.Count, gc.MeanNLL, gc.Count)
			}
		})
	}
}
