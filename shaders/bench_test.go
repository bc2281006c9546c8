package shaders

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// BenchmarkLoss scores batches of random windows with the GPU path (on the
// first adapter, or WGPU_ADAPTER) and with the CPU path in the same run,
// reporting input tokens per second. The shape is small for lavapipe
// (2 layers, C 128, 2 heads, ctx 128, GPT-2's vocabulary); WGPU_BENCH_124M=1
// takes the GPT-2 124M shape at ctx 1024, and WGPU_BENCH_BATCH sets the
// windows per batch (default 4).
func BenchmarkLoss(b *testing.B) {
	cfg := model.Config{NLayer: 2, NHead: 2, NEmbd: 128, NPositions: 128, VocabSize: 50257, LayerNormEps: 1e-5}
	if os.Getenv("WGPU_BENCH_124M") != "" {
		cfg = model.Config{NLayer: 12, NHead: 12, NEmbd: 768, NPositions: 1024, VocabSize: 50257, LayerNormEps: 1e-5}
	}
	batch := 4
	if n, err := strconv.Atoi(os.Getenv("WGPU_BENCH_BATCH")); err == nil && n > 0 {
		batch = n
	}
	m := synth.Random(cfg, 1)
	seqs := make([]model.Sequence, batch)
	for i := range seqs {
		seqs[i] = zipfSeqs(uint64(i), 1, cfg.NPositions, cfg.VocabSize)[0]
		seqs[i].Tokens = append(seqs[i].Tokens, make([]int32, cfg.NPositions-len(seqs[i].Tokens))...)
		seqs[i].First = 1
	}
	tokens := batch * cfg.NPositions
	ctx := context.Background()
	run := func(b *testing.B, loss func(context.Context, []model.Sequence) (model.LossSums, error)) {
		if _, err := loss(ctx, seqs); err != nil { // warm-up: pipelines, allocations
			b.Fatal(err)
		}
		b.ResetTimer()
		for b.Loop() {
			if _, err := loss(ctx, seqs); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tok/s")
	}
	d := newTestDev(b)
	for _, f16 := range d.weightTypes() {
		b.Run(fmt.Sprintf("gpu/f16=%v", f16), func(b *testing.B) {
			g, err := NewGPT2(context.Background(), d.dev, m.Reader(), f16, nil)
			if err != nil {
				b.Fatal(err)
			}
			run(b, g.Loss)
		})
	}
	b.Run("cpu", func(b *testing.B) { run(b, model.NewCPU(m, 0).Loss) })
}
