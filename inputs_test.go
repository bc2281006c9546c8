package wgpueval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/alloctest"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
)

// Generate sizes the CPU's KV cache by the prompt and the new tokens, not by
// the model's positions (an llm.c file with maxT 4M asked for 6.4 GB to
// generate a few tokens).
func TestGenerateCacheSizedByNeed(t *testing.T) {
	cfg := synth.TinyConfig()
	cfg.NPositions = 1 << 18                      // a full cache: 2 layers x 2 x 262144 x 16 floats = 67 MB
	dir := filepath.Join(t.TempDir(), "long.bin") // llm.c: no (T, T) attention mask in the file
	if err := synth.WriteLLMC(dir, synth.Peaked(cfg, 7), 3); err != nil {
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

// An llm.c checkpoint is GPT-2's: tokenizer files that happen to lie beside
// it do not replace its tokenizer (they did, silently); a warning names them.
func TestLLMCIgnoresStrayTokenizer(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "gpt2_tiny.bin")
	if err := synth.WriteLLMC(bin, synth.Peaked(synth.TinyConfig(), 7), 3); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"vocab.json": `{"!": 0, "\"": 1}`, "merges.txt": "#version: 0.2\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var logs []string
	ev, err := Open(context.Background(), bin, Options{Device: "cpu", Offline: true, Log: func(msg string) { logs = append(logs, msg) }})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	if id := ev.Tokenizer().ID(); id != tokenizer.BuiltinID {
		t.Errorf("tokenizer %s, want GPT-2's", id)
	}
	warned := false
	for _, l := range logs {
		warned = warned || strings.Contains(l, "warning") && strings.Contains(l, filepath.Join(dir, "vocab.json")) && strings.Contains(l, "merges.txt")
	}
	if !warned {
		t.Errorf("no warning naming the ignored files in %q", logs)
	}
}
