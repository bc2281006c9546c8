package backend

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strings"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// CPU is the pure-Go backend: model.CPU behind the Backend seam. It scores a
// batch inside Submit (its threads are already all busy) and takes sequences
// of any length unpadded.
type CPU struct {
	c *model.CPU
}

// NewCPU prepares m for the CPU path on threads goroutines (<= 0: GOMAXPROCS).
func NewCPU(m *model.Model, threads int) *CPU { return &CPU{model.NewCPU(m, threads)} }

// Name is "cpu".
func (c *CPU) Name() string { return c.c.Name() }

// Feed asks for DefaultBatchTokens per batch, any width, one batch at a time.
func (c *CPU) Feed() pipeline.Feed {
	return pipeline.Feed{BatchTokens: pipeline.DefaultBatchTokens, InFlight: 1}
}

// Submit scores b and returns its result; with b.PerToken, also every
// target's NLL (model.CPU.LossPerToken), and with b.TopLogprobs its
// position's top log-probabilities (model.CPU.LossTopLogprobs). b.Progress
// is called after each layer (model.WithLossProgress).
func (c *CPU) Submit(ctx context.Context, b pipeline.Batch) (pipeline.Pending, error) {
	if b.Progress != nil {
		ctx = model.WithLossProgress(ctx, func(done, _ int) { b.Progress(done) })
	}
	if b.PerToken && b.TopLogprobs > 0 {
		sums, nll, top, err := c.c.LossTopLogprobs(ctx, b.Seqs, b.TopLogprobs)
		if err != nil {
			return nil, err
		}
		return pipeline.Done{Sums: sums, NLL: nll, Top: top}, nil
	}
	if b.PerToken {
		sums, nll, err := c.c.LossPerToken(ctx, b.Seqs)
		if err != nil {
			return nil, err
		}
		return pipeline.Done{Sums: sums, NLL: nll}, nil
	}
	sums, err := c.c.Loss(ctx, b.Seqs)
	if err != nil {
		return nil, err
	}
	return pipeline.Done{Sums: sums}, nil
}

// Close does nothing: the CPU path holds only host memory.
func (c *CPU) Close() error { return nil }

// Kernels names the CPU kernel set in use (generic, avx2, avx512, neon).
func (c *CPU) Kernels() string { return c.c.Kernels() }

// Precision is "bf16" in the CPU's bf16 mode, else "f32".
func (c *CPU) Precision() string { return c.c.Precision() }

// Threads is the goroutines the CPU path uses.
func (c *CPU) Threads() int { return c.c.Threads() }

// Describe is the CPU's model, kernel set, precision and threads.
func (c *CPU) Describe() pipeline.BackendInfo {
	return pipeline.BackendInfo{
		Precision: c.Precision(),
		Threads:   c.Threads(),
		Device:    pipeline.DeviceInfo{Kind: "cpu", Name: c.Name(), CPUModel: cpuModel(), Kernels: c.Kernels()},
	}
}

// cpuModel is the processor's name from /proc/cpuinfo, else the architecture.
func cpuModel() string {
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v) + " (" + runtime.GOARCH + ")"
			}
		}
	}
	return runtime.GOARCH
}
