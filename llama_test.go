package wgpueval

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// openLlamaFolder opens llamaFolder's model on device (offline) and loads
// its tokenizer; the Evaluator is closed when the test ends.
func openLlamaFolder(t *testing.T, modelType, tok string, device Device) (string, *Evaluator, *tokenizer.Tokenizer) {
	t.Helper()
	dir, _ := llamaFolder(t, modelType, tok)
	ev, err := Open(context.Background(), dir, Options{Device: device, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ev.Close() })
	tk, err := tokenizer.LoadJSON(filepath.Join(dir, tokenizer.TokenizerFile))
	if err != nil {
		t.Fatal(err)
	}
	return dir, ev, tk
}

// llamaFolder writes a peaked Llama-family model of modelType (BF16
// safetensors) with the tokenizer files of model/tokenizer's testdata
// folder tok, and returns the folder and the model.
func llamaFolder(t *testing.T, modelType, tok string) (string, *model.Model) {
	t.Helper()
	cfg := synth.TinyLlamaConfig(modelType)
	cfg.VocabSize = 600 // above the tokenizers' 433 and 555 ids
	m := synth.Peaked(cfg, 21)
	dir := t.TempDir()
	if err := synth.WriteSafetensors(dir, m, "BF16"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{tokenizer.TokenizerFile, tokenizer.ConfigFile} {
		data, err := os.ReadFile(filepath.Join("model", "tokenizer", "testdata", "hf", tok, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, m
}

// TestEvaluateLlamaFamily: a Llama-family folder opens with its
// tokenizer.json, runs on the CPU under --device auto, and every method
// scores exactly the windows of tokenizer(text) the pipeline cuts, each
// target's NLL bit-identical to the CPU forward run directly on them (the
// numbers themselves are checked against float64 references in model and
// pipeline; this is the wiring).
func TestEvaluateLlamaFamily(t *testing.T) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 6) + "\nAnd then: 12345 digits!\n"
	for _, c := range []struct{ modelType, tok string }{{"llama", "sp"}, {"qwen2", "bl-qwen"}, {"qwen3", "bl-llama3"}} {
		t.Run(c.modelType, func(t *testing.T) {
			dir, ev, tok := openLlamaFolder(t, c.modelType, c.tok, "auto")
			stream := tok.EncodeWithSpecials(text)
			ck, err := model.OpenCheckpoint(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			cpu, err := model.LoadCPU(context.Background(), ck, 1, model.LoadOptions{})
			ck.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, opt := range []EvalOptions{{Ctx: 32}, {Mode: "strided", Ctx: 32, Stride: 8}} {
				ptk := filepath.Join(t.TempDir(), "run.ptk")
				opt.Stdin, opt.NoTokenCache, opt.PerToken = strings.NewReader(text), true, ptk
				res, err := ev.Evaluate(context.Background(), Named("-"), opt)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(res.Device, "cpu") {
					t.Errorf("device %q: a Llama-family model runs on the CPU under auto", res.Device)
				}
				seqs := pipeline.Stream(stream, 32)
				if opt.Mode == "strided" {
					seqs = pipeline.Strided(stream, 32, 8)
				}
				_, want, err := cpu.LossPerToken(context.Background(), seqs)
				if err != nil {
					t.Fatal(err)
				}
				if len(res.PerToken) != len(want) {
					t.Fatalf("%s: %d targets, want %d", opt.Mode, len(res.PerToken), len(want))
				}
				for i, r := range res.PerToken {
					if math.Float32bits(r.NLL) != math.Float32bits(want[i]) {
						t.Fatalf("%s: target %d NLL %v, the CPU on the same windows %v", opt.Mode, i, r.NLL, want[i])
					}
				}
			}
		})
	}
}

// TestOpenLlamaWithoutTokenizer: a Llama-family folder without
// tokenizer.json is refused, naming the file (never GPT-2's tokenizer).
func TestOpenLlamaWithoutTokenizer(t *testing.T) {
	dir, _ := llamaFolder(t, "mistral", "sp")
	if err := os.Remove(filepath.Join(dir, tokenizer.TokenizerFile)); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), dir, Options{Device: "cpu", Offline: true})
	if err == nil || !strings.Contains(err.Error(), "tokenizer.json") || !strings.Contains(err.Error(), "mistral") {
		t.Fatalf("err = %v, want one naming tokenizer.json and the model type", err)
	}
	if _, _, err := LoadTokenizer(context.Background(), dir, Options{Offline: true}); err == nil || !strings.Contains(err.Error(), "tokenizer.json") {
		t.Fatalf("LoadTokenizer: err = %v, want one naming tokenizer.json", err)
	}
	if strings.Contains(err.Error(), "SentencePiece") {
		t.Errorf("err = %v: a hint about a tokenizer.model that is not there", err)
	}
	// With only SentencePiece's tokenizer.model, the error says how to get a tokenizer.json.
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.model"), []byte("\x0a\x02ab"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), dir, Options{Device: "cpu", Offline: true})
	if err == nil || !strings.Contains(err.Error(), "tokenizer.model") || !strings.Contains(err.Error(), "save_pretrained") {
		t.Fatalf("err = %v, want one naming tokenizer.model and how to write tokenizer.json", err)
	}
}

// TestSlidingWindowContext: a Mistral whose sliding_window (64) is below its
// max_position_embeddings (128) reads as 64 positions, says so on its model
// line, and a --ctx past it is refused naming the window.
func TestSlidingWindowContext(t *testing.T) {
	dir, _ := llamaFolder(t, "mistral", "sp")
	path := filepath.Join(dir, "config.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), `"sliding_window": null`, `"sliding_window": 64`, 1))
	if !strings.Contains(string(data), `"sliding_window": 64`) {
		t.Fatalf("config.json has no sliding_window to set:\n%s", data)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ev, err := Open(context.Background(), dir, Options{Device: "cpu", Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	if cfg := ev.Config(); cfg.NPositions != 64 || !strings.Contains(cfg.Describe(), "64 positions (its sliding window)") {
		t.Errorf("config %s", cfg.Describe())
	}
	_, err = ev.Evaluate(context.Background(), Text("notes", "some text to score, long enough"), EvalOptions{Ctx: 100})
	var oe *OptionError
	if !errors.As(err, &oe) || oe.Option != "Ctx" || !strings.Contains(err.Error(), "sliding window") {
		t.Errorf("err = %v, want a Ctx error naming the sliding window", err)
	}
}
