package model_test

import (
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// BenchmarkCPULossQwen05B is BenchmarkCPULoss124M for the Llama family: one
// 1024-token window (1023 targets) of a Qwen2.5-0.5B-shaped model (24
// layers, 14 query heads over 2 key/value heads of 64, C=896, MLP 4864,
// V=151936, q/k/v biases, tied; random weights) on GOMAXPROCS threads,
// input tokens per second. Setup (about 2 GB of weights, held once:
// NewCPUOwned) is not timed. Run it alone:
//
//	go test ./model/ -run '^$' -bench 'CPULossQwen05B$' -benchtime=1x
func BenchmarkCPULossQwen05B(b *testing.B) {
	cpu := model.NewCPUOwned(synth.Random(shapeQwen05B(b), 1), 0)
	benchLoss(b, cpu, windowQwen05B)
}

// BenchmarkCPULossQwen05BBF16 is BenchmarkCPULossQwen05B in the bf16 mode
// (NewCPUBF16, --precision bf16), skipped on a CPU without AVX512_BF16 as
// BenchmarkCPULoss124MBF16 is. The float32 model is dropped once rounded,
// so the CPU holds about 1 GB.
//
//	go test ./model/ -run '^$' -bench 'CPULossQwen05BBF16$' -benchtime=1x
func BenchmarkCPULossQwen05BBF16(b *testing.B) {
	if err := model.CheckBF16(); err != nil {
		b.Skip(err) // before drawing 2 GB of weights
	}
	cpu, err := model.NewCPUBF16(synth.Random(shapeQwen05B(b), 1), 0, false)
	if err != nil {
		b.Skip(err)
	}
	benchLoss(b, cpu, windowQwen05B)
}

// shapeQwen05B is Qwen2.5-0.5B's shape (synth.LlamaShape).
func shapeQwen05B(b *testing.B) model.Config {
	cfg, ok := synth.LlamaShape("qwen2.5-0.5b")
	if !ok {
		b.Fatal("synth.LlamaShape: no qwen2.5-0.5b")
	}
	return cfg
}

// windowQwen05B is the Qwen benchmarks' window: 1024 random ids of
// Qwen2.5's vocabulary, 1023 targets (drawn as window124M draws its ids).
func windowQwen05B() ([]int32, []model.Sequence) { return randomWindow(1024, 151936) }
