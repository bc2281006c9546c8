package wgpueval

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/alloctest"
	"github.com/wgpu-eval/wgpu-eval/internal/testmodel"
)

// Generate sizes the CPU's KV cache by the prompt and the new tokens, not by
// the model's positions (an llm.c file with maxT 4M asked for 6.4 GB to
// generate a few tokens).
func TestGenerateCacheSizedByNeed(t *testing.T) {
	cfg := testmodel.TinyConfig()
	cfg.NPositions = 1 << 18 // a full cache: 2 layers x 2 x 262144 x 16 floats = 67 MB
	dir := filepath.Join(t.TempDir(), "long.bin") // llm.c: no (T, T) attention mask in the file
	if err := testmodel.WriteLLMC(dir, testmodel.Peaked(cfg, 7), 3); err != nil {
		t.Fatal(err)
	}
	ev, err := Open(context.Background(), dir, Options{Device: "cpu", Threads: 1, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	if _, err := ev.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	var gen *Generation
	alloc := alloctest.During(t, func() {
		gen, err = ev.Generate(context.Background(), "The quick brown fox", GenerateOptions{MaxNewTokens: 4})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(gen.Tokens) != 4 && gen.StopReason != StopEOT {
		t.Errorf("%d tokens, stop %s", len(gen.Tokens), gen.StopReason)
	}
	if alloc > 8<<20 {
		t.Errorf("generating 4 tokens allocated %d bytes", alloc)
	}
}
