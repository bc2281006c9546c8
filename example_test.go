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

// Evaluate a model folder on text held in memory. The example writes a tiny
// synthetic GPT-2 (package synth: untrained weights whose predictions are
// far from uniform); with a real model, pass "gpt2" (a hub id) instead of
// the folder, and wgpueval.Named("tinyshakespeare") (a data set) or
// wgpueval.Named(path) (a file) instead of the text.
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
	text := wgpueval.Text("hamlet", "To be, or not to be, that is the question:\nWhether 'tis nobler in the mind to suffer\n")

	ctx := context.Background()
	ev, err := wgpueval.Open(ctx, modelDir, wgpueval.Options{Device: wgpueval.DeviceCPU, Offline: true})
	if err != nil {
		log.Fatal(err)
	}
	defer ev.Close()
	res, err := ev.Evaluate(ctx, text, wgpueval.EvalOptions{Ctx: 16})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d tokens scored on %s, mean NLL %.2f nats\n", res.Data, res.Tokens, res.Device, res.MeanNLL)
	// Output:
	// hamlet: 23 tokens scored on cpu, mean NLL 8.72 nats
}

// Score token ids a program already has, in strided windows, and receive
// every target's NLL as the batches finish (no file written).
func ExampleEvaluator_Evaluate_perToken() {
	dir, err := os.MkdirTemp("", "wgpueval-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := synth.WriteSafetensors(dir, synth.Peaked(synth.TinyConfig(), 7), "F16"); err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	ev, err := wgpueval.Open(ctx, dir, wgpueval.Options{Device: wgpueval.DeviceCPU, Offline: true})
	if err != nil {
		log.Fatal(err)
	}
	defer ev.Close()
	ids := []int32{464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13, 198, 464, 2068, 7586}
	worst := wgpueval.TokenNLL{}
	res, err := ev.Evaluate(ctx, wgpueval.TokenIDs("ids", ids), wgpueval.EvalOptions{
		Mode: wgpueval.ModeStrided, Ctx: 8, Stride: 4,
		OnScored: func(batch []wgpueval.TokenNLL) error {
			for _, t := range batch {
				if t.NLL > worst.NLL {
					worst = t
				}
			}
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d targets, mean NLL %.2f; the hardest is token %d at position %d (%.2f nats)\n",
		res.Tokens, res.MeanNLL, worst.Token, worst.Pos, worst.NLL)
	// Output:
	// 13 targets, mean NLL 9.95; the hardest is token 18045 at position 4 (12.75 nats)
}
