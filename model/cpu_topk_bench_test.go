package model_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/testmodel"
	"github.com/wgpu-eval/wgpu-eval/model"
)

// BenchmarkCPUTopLogprobs124M is BenchmarkCPULoss124M's window scored with
// LossPerToken (plain) and with LossTopLogprobs at K = 20 (top20), for the
// cost of --top-logprobs on the CPU path: one more LM head at every scored
// position. Run it alone:
//
//	go test ./model/ -run '^$' -bench CPUTopLogprobs124M -benchtime=2x
func BenchmarkCPUTopLogprobs124M(b *testing.B) {
	cfg := model.Config{NLayer: 12, NHead: 12, NEmbd: 768, NPositions: 1024, VocabSize: 50257, LayerNormEps: 1e-5}
	cpu := model.NewCPU(testmodel.Random(cfg, 1), 0)
	r := rand.New(rand.NewPCG(2, 3))
	toks := make([]int32, cfg.NPositions)
	for i := range toks {
		toks[i] = int32(r.IntN(cfg.VocabSize))
	}
	seqs := []model.Sequence{{Tokens: toks, First: 1}}
	ctx := context.Background()
	for _, c := range []struct {
		name string
		k    int
	}{{"plain", 0}, {"top20", 20}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				var err error
				if c.k == 0 {
					_, _, err = cpu.LossPerToken(ctx, seqs)
				} else {
					_, _, _, err = cpu.LossTopLogprobs(ctx, seqs, c.k)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(toks)*b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}
