// Command synthmodel writes a GPT-2-architecture model with synthetic
// weights as a Hugging Face folder (config.json and model.safetensors, the
// files transformers' save_pretrained writes; eval reads GPT-2's tokenizer
// from its own tables), for timing a whole evaluation (loading, tokenizing,
// scoring) where no real weights can be had: scripts/device-check.sh on a
// lent GPU. The weights are synth.PeakedScaled's (predictions far from
// uniform), the same bits for the same shape and seed.
//
// Usage:
//
//	synthmodel [-shape 124M] [-dtype F32] [-seed 1] DIR
//
// -shape is one of bench's GPT-2 names (tiny, gpt2 or 124M, gpt2-medium or
// 355M, gpt2-large or 774M, gpt2-xl or 1558M), -dtype F32 (as Hugging Face's
// gpt2 is stored), F16 or BF16. DIR is made if missing; files in it are
// replaced.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "synthmodel:", err)
		}
		os.Exit(2)
	}
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("synthmodel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	shape := fs.String("shape", "124M", "the model's shape: tiny, gpt2 or 124M, gpt2-medium or 355M, gpt2-large or 774M, gpt2-xl or 1558M")
	dtype := fs.String("dtype", "F32", "the stored type: F32, F16 or BF16")
	seed := fs.Uint64("seed", 1, "the weights' seed")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: synthmodel [-shape 124M] [-dtype F32] [-seed 1] DIR")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("want one folder to write the model into")
	}
	cfg, ok := synth.Shape(*shape)
	if !ok {
		return fmt.Errorf("unknown shape %q", *shape)
	}
	if cfg.Arch != model.ArchGPT2 {
		return fmt.Errorf("shape %q is of the Llama family, whose tokenizer this writes no files for: want a GPT-2 shape", *shape)
	}
	switch *dtype {
	case "F32", "F16", "BF16":
	default:
		return fmt.Errorf("dtype %q: want F32, F16 or BF16", *dtype)
	}
	dir := fs.Arg(0)
	if err := synth.WriteSafetensors(dir, synth.PeakedScaled(cfg, *seed), *dtype); err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	return nil
}
