package model_test

import (
	"context"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/sysmem"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// A thread count far above the cores is bounded: each thread has its own
// scratch (--threads 100000 asked for 7.2 GB).
func TestCPUThreadsBounded(t *testing.T) {
	m := synth.Peaked(synth.TinyConfig(), 3)
	if got := model.NewCPU(m, 100000).Threads(); got != model.MaxThreads() || got > max(64, 4*runtime.NumCPU()) {
		t.Errorf("100000 threads asked: %d used, MaxThreads %d", got, model.MaxThreads())
	}
	if got := model.NewCPU(m, 3).Threads(); got != 3 {
		t.Errorf("3 threads asked: %d used", got)
	}
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := synth.WriteSafetensors(dir, m, "F32"); err != nil {
		t.Fatal(err)
	}
	ck, err := model.OpenCheckpoint(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	c, err := model.LoadCPU(context.Background(), ck, 100000, model.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Threads() != model.MaxThreads() {
		t.Errorf("LoadCPU: %d threads", c.Threads())
	}
	// Weights larger than the memory available are refused before loading.
	t.Setenv(sysmem.Env, "100000")
	_, err = model.LoadCPU(context.Background(), ck, 1, model.LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "weights") || !strings.Contains(err.Error(), "only 100.0 kB is available") {
		t.Errorf("err %v", err)
	}
}

// A Generator for fewer positions than the model's gives the same logits,
// refuses tokens past its size, and checks its memory first.
func TestGeneratorFor(t *testing.T) {
	ctx := context.Background()
	cpu := model.NewCPU(synth.Peaked(synth.TinyConfig(), 5), 2)
	full, err := cpu.NewGenerator()
	if err != nil {
		t.Fatal(err)
	}
	small, err := cpu.NewGeneratorFor(len(genPrompt) + 2)
	if err != nil {
		t.Fatal(err)
	}
	if small.Cap() != len(genPrompt)+2 || full.Cap() != synth.TinyConfig().NPositions {
		t.Errorf("caps %d, %d", small.Cap(), full.Cap())
	}
	for _, toks := range [][]int32{genPrompt, {262}, {2068}} {
		a, err := full.Append(ctx, toks)
		if err != nil {
			t.Fatal(err)
		}
		a = slices.Clone(a)
		b, err := small.Append(ctx, toks)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a, b) {
			t.Fatalf("after %d tokens the logits differ", full.Len())
		}
	}
	if _, err := small.Append(ctx, []int32{1}); err == nil || !strings.Contains(err.Error(), "generator's 9 positions") {
		t.Errorf("err %v", err)
	}
	t.Setenv(sysmem.Env, "1000")
	if _, err := cpu.NewGeneratorFor(0); err == nil || !strings.Contains(err.Error(), "KV cache of 64 positions") {
		t.Errorf("err %v", err)
	}
}
