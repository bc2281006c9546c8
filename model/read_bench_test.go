package model_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// BenchmarkReadTensorsF16 reads every tensor of a GPT-2 124M-shaped F32
// checkpoint as F16, as the GPU path loads Hugging Face's gpt2 (548 MB): the
// read, the checks and the conversion, from the page cache. MB/s counts the
// file's bytes.
func BenchmarkReadTensorsF16(b *testing.B) {
	benchmarkReadTensors(b, "F32", model.F16)
}

// BenchmarkReadTensorsF32 is BenchmarkReadTensorsF16 with F32 results (no
// conversion: the CPU path's f32 mode and the GPU's f32 weights).
func BenchmarkReadTensorsF32(b *testing.B) {
	benchmarkReadTensors(b, "F32", model.F32)
}

func benchmarkReadTensors(b *testing.B, stored string, dt model.DType) {
	dir := b.TempDir()
	cfg := synth.GPT2Small()
	if err := synth.WriteSafetensors(dir, synth.Random(cfg, 1), stored); err != nil {
		b.Fatal(err)
	}
	if err := synth.WriteConfig(dir, cfg); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	ck, err := model.OpenCheckpoint(ctx, filepath.Join(dir, "model.safetensors"))
	if err != nil {
		b.Fatal(err)
	}
	defer ck.Close()
	specs := ck.Config().Tensors()
	var bytes int64
	for _, s := range specs {
		bytes += int64(s.NumElements()) * 4
	}
	b.SetBytes(bytes)
	for b.Loop() {
		for _, s := range specs {
			if _, err := ck.ReadTensor(ctx, s, dt); err != nil {
				b.Fatal(err)
			}
		}
	}
}
