package model_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// A model written to disk in float32 and loaded back scores exactly as the model
// in memory: the loaders and the CPU forward agree on every tensor's layout
// (Conv1D (in, out) matrices, tied head, llm.c's padded vocabulary).
func TestCPULossOfLoadedModel(t *testing.T) {
	cfg := synth.TinyConfig()
	m := synth.Random(cfg, 42)
	seqs := []model.Sequence{
		{Tokens: []int32{50256, 464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13}, First: 1},
		{Tokens: []int32{15496, 11, 995, 0, 50256, 40, 716}, First: 3},
	}
	want, err := model.NewCPU(m, 2).Loss(context.Background(), seqs)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := synth.WriteSafetensors(dir, m, "F32"); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "model.bin")
	if err := synth.WriteLLMC(bin, m, 3); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{dir, bin} {
		loaded, err := model.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := model.NewCPU(loaded, 2).Loss(context.Background(), seqs)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: loss %+v, in memory %+v", filepath.Base(path), got, want)
		}
	}
}
