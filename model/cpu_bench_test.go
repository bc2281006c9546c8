package model_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// BenchmarkCPULoss124M scores one 1024-token window (1023 targets) with a GPT-2
// 124M-shaped model (12 layers, 12 heads, C=768, V=50257, random weights) on
// GOMAXPROCS threads and reports input tokens per second. Setup (about 1 GB of
// weights) is not timed. Run it alone:
//
//	go test ./model/ -run '^$' -bench CPULoss124M -benchtime=1x
func BenchmarkCPULoss124M(b *testing.B) {
	benchLoss(b, model.NewCPU(synth.Random(shape124M, 1), 0), window124M)
}

// benchLoss times cpu's loss over the window window makes, reporting
// tokens/s and CPU seconds per window (reportCPU) and the kernels that ran.
func benchLoss(b *testing.B, cpu *model.CPU, window func() ([]int32, []model.Sequence)) {
	toks, seqs := window()
	cpu0 := model.ProcCPU()
	for b.Loop() {
		if _, err := cpu.Loss(context.Background(), seqs); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0, len(toks))
	b.Logf("kernels: %s", cpu.Kernels())
}

// shape124M is GPT-2 124M's shape, the CPU benchmarks' model (random weights).
var shape124M = model.Config{NLayer: 12, NHead: 12, NEmbd: 768, NPositions: 1024, VocabSize: 50257, LayerNormEps: 1e-5}

// window124M is the CPU benchmarks' window: 1024 random ids of shape124M's
// vocabulary, 1023 targets.
func window124M() ([]int32, []model.Sequence) {
	return randomWindow(shape124M.NPositions, shape124M.VocabSize)
}

// randomWindow is n random ids below vocab (seeded alike for every
// benchmark) as one sequence scoring all but the first.
func randomWindow(n, vocab int) ([]int32, []model.Sequence) {
	r := rand.New(rand.NewPCG(2, 3))
	toks := make([]int32, n)
	for i := range toks {
		toks[i] = int32(r.IntN(vocab))
	}
	return toks, []model.Sequence{{Tokens: toks, First: 1}}
}

// reportCPU reports tokens/s and the process's CPU seconds per window since
// cpu0: on a machine shared with other work the CPU time moves less than the
// wall time.
func reportCPU(b *testing.B, cpu0 time.Duration, tokens int) {
	b.ReportMetric(float64(tokens*b.N)/b.Elapsed().Seconds(), "tokens/s")
	if c := model.ProcCPU(); c > 0 {
		b.ReportMetric((c-cpu0).Seconds()/float64(b.N), "cpu-s/window")
	}
}

// BenchmarkCPULoss124MF16 is BenchmarkCPULoss124M from an F16 checkpoint read
// by LoadCPU: the matrices stay 16-bit and are widened inside the kernels.
// Setup (writing and loading the checkpoint) is not timed.
//
//	go test ./model/ -run '^$' -bench CPULoss124MF16 -benchtime=1x
func BenchmarkCPULoss124MF16(b *testing.B) {
	dir := b.TempDir()
	if err := synth.WriteSafetensors(dir, synth.Random(shape124M, 1), "F16"); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	ck, err := model.OpenCheckpoint(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	cpu, err := model.LoadCPU(ctx, ck, 0, model.LoadOptions{})
	ck.Close()
	if err != nil {
		b.Fatal(err)
	}
	benchLoss(b, cpu, window124M)
}

// BenchmarkCPULoss124MBF16 is BenchmarkCPULoss124M in the bf16 mode
// (NewCPUBF16): the VDPBF16PS kernels where the CPU has AVX512_BF16, the
// portable ones with WGPU_EVAL_CPU_KERNELS=generic (very slow: use a short
// window there), skipped otherwise.
//
//	go test ./model/ -run '^$' -bench CPULoss124MBF16 -benchtime=1x
func BenchmarkCPULoss124MBF16(b *testing.B) {
	cpu, err := model.NewCPUBF16(synth.Random(shape124M, 1), 0, false)
	if err != nil {
		b.Skip(err)
	}
	benchLoss(b, cpu, window124M)
}
