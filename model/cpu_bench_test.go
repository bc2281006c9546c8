package model

import (
	"context"
	"math/rand/v2"
	"testing"
)

// BenchmarkCPULoss124M runs the loss of one 1024-token window through a GPT-2
// 124M-shaped model (random weights) and reports input tokens per second.
// Run it alone: go test ./model/ -run '^$' -bench CPULoss124M -benchtime=1x
func BenchmarkCPULoss124M(b *testing.B) {
	cfg := Config{NLayer: 12, NHead: 12, NEmbd: 768, NPositions: 1024, VocabSize: 50257, LayerNormEps: 1e-5}
	cpu := NewCPU(randomModel(cfg, 1, false), 0)
	r := rand.New(rand.NewPCG(2, 3))
	toks := make([]int32, cfg.NPositions)
	for i := range toks {
		toks[i] = int32(r.IntN(cfg.VocabSize))
	}
	seqs := []Sequence{{Tokens: toks, First: 1}}
	for b.Loop() {
		if _, err := cpu.Loss(context.Background(), seqs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(toks)*b.N)/b.Elapsed().Seconds(), "tokens/s")
}
