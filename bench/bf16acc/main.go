// Command bf16acc measures what the CPU's bf16 mode costs in accuracy
// (README, "--precision bf16"): it scores the same TinyShakespeare windows
// with a GPT-2 124M-shaped synthetic model in the f32 mode and in the bf16
// mode (the portable bf16 kernels, which compute the bits VDPBF16PS does, so
// it runs on any CPU) and prints both mean NLLs and their difference.
//
// The model is synth.Peaked at the 124M shape with the embedding's
// context channels scaled by sqrt(16/768) (std 0.3 -> 0.043), so that, as at
// Peaked's tiny shape, the context moves the logits by about a nat and the
// mean NLL on English is a few nats, not hundreds. No GPT-2 weights can be
// downloaded here; the figure is the synthetic model's.
//
//	go run ./bench/bf16acc -data ../shared/data/tinyshakespeare.txt -ctx 64 -windows 8
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"os"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
)

func main() {
	data := flag.String("data", cmp.Or(os.Getenv("WGPU_EVAL_TINYSHAKESPEARE"), "../shared/data/tinyshakespeare.txt"),
		"TinyShakespeare (its val split, from byte 1003854, is scored; default $WGPU_EVAL_TINYSHAKESPEARE, else the team's shared copy)")
	window := flag.Int("ctx", 64, "tokens per window")
	windows := flag.Int("windows", 8, "windows scored")
	threads := flag.Int("threads", 0, "CPU threads (<= 0: GOMAXPROCS)")
	flag.Parse()
	text, err := os.ReadFile(*data)
	if err != nil {
		log.Fatalf("bf16acc: -data: %v", err)
	}
	if len(text) <= 1003854 || *window < 2 || *window > 1024 || *windows < 1 {
		log.Fatal("bf16acc: -data must be TinyShakespeare, -ctx 2..1024, -windows >= 1")
	}
	tok, err := tokenizer.GPT2()
	if err != nil {
		log.Fatal(err)
	}
	ids := tok.Encode(string(text[1003854:]))
	var seqs []model.Sequence
	for i := 0; i < *windows && (i+1)**window <= len(ids); i++ {
		seqs = append(seqs, model.Sequence{Tokens: ids[i**window : (i+1)**window], First: 1})
	}

	m := synth.PeakedScaled(synth.GPT2Small(), 1)
	ctx := context.Background()
	_, f32, err := model.NewCPU(m, *threads).LossPerToken(ctx, seqs)
	if err != nil {
		log.Fatal(err)
	}
	c, err := model.NewCPUBF16(m, *threads, true)
	if err != nil {
		log.Fatal(err)
	}
	_, bf, err := c.LossPerToken(ctx, seqs)
	if err != nil {
		log.Fatal(err)
	}
	var sf, sb, sa, mx float64
	for i := range f32 {
		d := float64(bf[i]) - float64(f32[i])
		sf += float64(f32[i])
		sb += float64(bf[i])
		sa += math.Abs(d)
		mx = max(mx, math.Abs(d))
	}
	n := float64(len(f32))
	fmt.Printf("%d windows of %d tokens, %d targets; bf16 kernels %s\n", len(seqs), *window, len(f32), c.Kernels())
	fmt.Printf("mean NLL f32 %.6f, bf16 %.6f: bf16 - f32 = %+.2e; per target mean |diff| %.2e, max %.2e\n",
		sf/n, sb/n, (sb-sf)/n, sa/n, mx)
}
