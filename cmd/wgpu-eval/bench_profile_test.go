package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// benchProfileJSON is the part of bench's JSON the profile tests read.
type benchProfileJSON struct {
	Batches []struct {
		Batch   int `json:"batch"`
		Kernels []struct {
			Kernel     string  `json:"kernel"`
			Dispatches int     `json:"dispatches"`
			Flops      float64 `json:"flops"`
		} `json:"kernels"`
		KernelTotal *struct {
			Dispatches int `json:"dispatches"`
		} `json:"kernel_total"`
	} `json:"batches"`
}

// TestBenchProfilesManyDispatches: a profiled batch of more dispatches than
// one query set holds (2048: 4096 timestamps) is profiled whole. A GPT-2 of
// 12 layers scored in chunks of 2 positions over a 64-token window is 32
// chunks of 98 dispatches (the embedding, 8 a layer with the software
// kernels, the final LayerNorm), then the LM head and the loss: 3,138, where
// bench used to fail after timing the batch ("query set count 6280 not in
// 1..4096"), as GPT-2 124M at --ctx 1024 --chunk 32 does. The work is
// counted by hand from the shape: chunked attention does the causal half of
// the whole window's, 4*C*T(T+1)/2 a layer.
func TestBenchProfilesManyDispatches(t *testing.T) {
	isolate(t)
	as := requireVulkan(t)
	if !as[0].Features.TimestampQuery {
		t.Skipf("%s has no timestamp queries", as[0].Name)
	}
	t.Setenv("WGPU_EVAL_GPU_KERNELS", "software") // kv_write is a dispatch of its own: 8 a layer
	const layers, C, T, chunk, vocab = 12, 16, 64, 2, 512
	cfg := model.Config{NLayer: layers, NHead: 2, NEmbd: C, NPositions: T, VocabSize: vocab, LayerNormEps: 1e-5}
	dir := filepath.Join(t.TempDir(), "deep")
	if err := synth.WriteSafetensors(dir, synth.Random(cfg, 1), "F32"); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := cli(t, "", "bench", "--quiet", "--runs", "1", "--warmup", "0", "--json", "-", "--model", dir,
		"--device", "gpu:0", "--precision", "f32", "--ctx", "64", "--chunk", "2", "--batch", "1")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var r benchProfileJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	if len(r.Batches) != 1 || r.Batches[0].KernelTotal == nil {
		t.Fatalf("no profile: %s", out)
	}
	b := r.Batches[0]
	chunks := T / chunk
	if want := chunks*(1+8*layers+1) + 2; b.KernelTotal.Dispatches != want {
		t.Errorf("%d dispatches profiled, want %d", b.KernelTotal.Dispatches, want)
	}
	want := map[string]struct {
		dispatches int
		flops      float64
	}{
		"attention":      {layers * chunks, layers * 4 * C * T * (T + 1) / 2},
		"matmul K16 N48": {layers * chunks, layers * 2 * T * 3 * C * C},
		"lmhead_loss":    {1, 2 * (T - 1) * vocab * C},
	}
	for _, k := range b.Kernels {
		w, ok := want[k.Kernel]
		if !ok {
			continue
		}
		delete(want, k.Kernel)
		if k.Dispatches != w.dispatches || k.Flops != w.flops {
			t.Errorf("%s: %d dispatches, %v flops; want %d, %v", k.Kernel, k.Dispatches, k.Flops, w.dispatches, w.flops)
		}
	}
	for name := range want {
		t.Errorf("no kernel %q in the profile %+v", name, b.Kernels)
	}
	if strings.Contains(stderr, "warning") {
		t.Errorf("stderr: %s", stderr)
	}
}
