package model_test

import (
	"context"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// BenchmarkCPUTopLogprobs124M is BenchmarkCPULoss124M's window scored with
// LossPerToken (plain) and with LossTopLogprobs at K = 20 (top20), for the
// cost of --top-logprobs on the CPU path: one more LM head at every scored
// position. Run it alone:
//
//	go test ./model/ -run '^$' -bench CPUTopLogprobs124M -benchtime=2x
func BenchmarkCPUTopLogprobs124M(b *testing.B) {
	cpu := model.NewCPU(synth.Random(shape124M, 1), 0)
	toks, seqs := window124M()
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
