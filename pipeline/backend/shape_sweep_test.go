package backend_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/x448/float16"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
	"github.com/wgpu-eval/wgpu-eval/shaders"
)

// TestEvalSweep evaluates $WGPU_TEST_EVAL_SWEEP random configurations
// (seed $WGPU_TEST_SHAPE_SEED) through pipeline.Evaluate on the GPU backend
// and the CPU backend and compares every per-token record (position, id,
// NLL within 20 times the tolerance relative to max(1, NLL)) and the top
// log-probabilities where asked, and the mean NLL (1e-5; 3e-4 with f16
// weights, the weights rounded to f16 for both): a tiny peaked GPT-2 or
// Llama-family model (grouped heads, head_dim apart from hidden/heads, odd
// MLP widths and vocabularies, 2 to 130 positions), a method (stream,
// strided, documents), a window of 2 up to the model's positions, a
// stride, a BOS before each window, batch budgets from one token to a few
// windows, a kernel set. Exploratory (not run by default): an audit's tool,
// e.g. WGPU_TEST_EVAL_SWEEP=40 WGPU_TEST_SHAPE_SEED=3 go test
// ./pipeline/backend -run TestEvalSweep -v (about 20 s on lavapipe).
func TestEvalSweep(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("WGPU_TEST_EVAL_SWEEP"))
	if n <= 0 {
		t.Skip("set $WGPU_TEST_EVAL_SWEEP to the number of random configurations to run")
	}
	seed, _ := strconv.ParseUint(os.Getenv("WGPU_TEST_SHAPE_SEED"), 10, 64)
	ad := testAdapter(t)
	r := rand.New(rand.NewPCG(seed, 9))
	ctx := context.Background()
	for i := range n {
		var cfg model.Config
		if r.IntN(3) == 0 {
			heads := 1 + r.IntN(6)
			cfg = model.Config{NLayer: 1 + r.IntN(2), NHead: heads, NEmbd: heads * 4 * (1 + r.IntN(8)), NPositions: []int{2, 3, 5, 17, 37, 64, 65, 100, 130}[r.IntN(9)],
				VocabSize: []int{97, 301, 1001}[r.IntN(3)], LayerNormEps: 1e-5}
		} else {
			cfg = synth.TinyLlamaConfig([]string{"llama", "mistral", "qwen2", "qwen3"}[r.IntN(4)])
			cfg.NKVHead = 1 + r.IntN(2)
			cfg.NHead = cfg.NKVHead * []int{1, 2, 4, 7}[r.IntN(4)]
			cfg.HeadSize = 4 * (1 + r.IntN(10))
			cfg.NEmbd = 4 * (1 + r.IntN(20))
			cfg.NInner = 1 + r.IntN(90)
			cfg.VocabSize = []int{97, 301, 1001}[r.IntN(3)]
			cfg.NPositions = []int{2, 3, 5, 17, 37, 64, 65, 100, 130}[r.IntN(9)]
		}
		m := synth.PeakedScaled(cfg, uint64(i))
		f16 := r.IntN(2) == 0
		if f16 { // the weights f16 holds, so that the bounds measure the arithmetic
			for _, s := range append(m.Config.Tensors(), m.Config.LMHeadSpec()) {
				x := m.Tensor(s)
				for k, v := range x {
					x[k] = float16.Fromfloat32(v).Float32()
				}
			}
		}
		toks := peakedTokens(cfg, 2+r.IntN(300))
		ec := pipeline.EvalConfig{Mode: []pipeline.Mode{pipeline.ModeStream, pipeline.ModeStrided, pipeline.ModeDocuments}[r.IntN(3)]}
		ec.Ctx = 2 + r.IntN(cfg.NPositions-1)
		if r.IntN(3) == 0 {
			ec.Ctx = min(2+r.IntN(2), cfg.NPositions)
		}
		if r.IntN(2) == 0 {
			ec.Stride = 1 + r.IntN(ec.Ctx)
		}
		ec.BOSEachWindow = r.IntN(4) == 0 && ec.Ctx > 2
		if (ec.BOSEachWindow || ec.Mode == pipeline.ModeDocuments) && ec.Stride >= ec.Ctx {
			ec.Stride = ec.Ctx - 1 // pipeline.CheckModeWindow
		}
		ec.Tokens, ec.EOT, ec.VocabSize = toks, int32(cfg.VocabSize-1), cfg.VocabSize
		ec.BatchTokens = []int{0, 1, ec.Ctx, 3 * ec.Ctx, 200}[r.IntN(5)]
		ec.PerToken = true
		if r.IntN(3) == 0 {
			ec.TopLogprobs = 1 + r.IntN(5)
		}
		set := []shaders.KernelSet{shaders.KernelsSoftware, shaders.KernelsHardware}[r.IntN(2)]
		name := fmt.Sprintf("%d/%s/%s/ctx%d/stride%d/bos%v/bt%d/top%d/f16=%v/%s", i, cfg.Describe(), ec.Mode, ec.Ctx, ec.Stride, ec.BOSEachWindow, ec.BatchTokens, ec.TopLogprobs, f16, set)
		t.Run(name, func(t *testing.T) {
			t.Setenv(shaders.KernelsEnv, string(set))
			cpu := backend.NewCPU(m, 0)
			want, werr := pipeline.Evaluate(ctx, cpu, ec)
			g := openTestGPU(t, ad, m, f16)
			defer g.Close()
			got, gerr := pipeline.Evaluate(ctx, g, ec)
			if (werr != nil) != (gerr != nil) {
				t.Fatalf("cpu error %v, gpu error %v", werr, gerr)
			}
			if werr != nil {
				t.Logf("both refuse: cpu %v; gpu %v", werr, gerr)
				return
			}
			tol := 1e-5
			if f16 {
				tol = 3e-4 // f32 weights rounded
			}
			if got.Tokens != want.Tokens || len(got.PerToken) != len(want.PerToken) {
				t.Fatalf("%d tokens (%d records), cpu %d (%d)", got.Tokens, len(got.PerToken), want.Tokens, len(want.PerToken))
			}
			for k := range got.PerToken {
				a, b := got.PerToken[k], want.PerToken[k]
				if a.Doc != b.Doc || a.Pos != b.Pos || a.Token != b.Token || !(math.Abs(float64(a.NLL-b.NLL)) <= 20*tol*math.Max(1, float64(b.NLL))) {
					t.Fatalf("record %d: %+v, cpu %+v", k, a, b)
				}
				if len(a.Top) != len(b.Top) {
					t.Fatalf("record %d: %d top, cpu %d", k, len(a.Top), len(b.Top))
				}
				for j := range a.Top {
					if math.Abs(float64(a.Top[j].Logprob-b.Top[j].Logprob)) > 20*tol*math.Max(1, math.Abs(float64(b.Top[j].Logprob))) {
						t.Fatalf("record %d top %d: %+v, cpu %+v", k, j, a.Top[j], b.Top[j])
					}
				}
			}
			if got.Tokens > 0 && !(math.Abs(got.MeanNLL-want.MeanNLL) <= tol) {
				t.Errorf("mean NLL %.7f, cpu %.7f", got.MeanNLL, want.MeanNLL)
			}
			t.Logf("%d tokens, mean %.6f cpu %.6f", got.Tokens, got.MeanNLL, want.MeanNLL)
		})
	}
}
