package wgpueval_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	wgpueval "github.com/wgpu-eval/wgpu-eval"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// Evaluate a model folder on a text file. The example writes a tiny synthetic
// GPT-2 (package synth: untrained weights whose predictions are far from
// uniform) and a few lines of text; with a real model, pass "gpt2" (a hub id)
// and "tinyshakespeare" (a data set name) instead of the two paths.
func Example() {
	dir, err := os.MkdirTemp("", "wgpueval-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	modelDir := filepath.Join(dir, "tiny-gpt2")
	if err := synth.WriteSafetensors(modelDir, synth.Peaked(synth.TinyConfig(), 7), "F16"); err != nil {
		log.Fatal(err)
	}
	text := filepath.Join(dir, "text.txt")
	if err := os.WriteFile(text, []byte("To be, or not to be, that is the question:\nWhether 'tis nobler in the mind to suffer\n"), 0o644); err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	ev, err := wgpueval.Open(ctx, modelDir, wgpueval.Options{Device: "cpu", Offline: true})
	if err != nil {
		log.Fatal(err)
	}
	defer ev.Close()
	res, err := ev.Evaluate(ctx, text, wgpueval.EvalOptions{Ctx: 16, NoTokenCache: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d tokens scored on %s, mean NLL %.2f nats\n",
		filepath.Base(res.Data), res.Tokens, res.Device, res.MeanNLL)
	// Output:
	// text.txt: 23 tokens scored on cpu, mean NLL 8.72 nats
}
