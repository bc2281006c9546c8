// Command cpurss measures the CPU path's peak resident memory (BENCHMARKS.md):
// it opens a checkpoint through backend.Open(cpu), scores one
// full-context window of random ids and prints the process's VmHWM (Linux).
// With -write it first writes a random GPT-2 model of -shape (124M or XL) to
// -dir (model/synth, safetensors in -dtype: F32, F16 or BF16) and
// exits, so the writer's memory is not counted:
//
//	go run ./bench/cpurss -write -dir /tmp/m124 && go run ./bench/cpurss -dir /tmp/m124
//	go run ./bench/cpurss -write -shape xl -dtype F16 -dir /tmp/xl16 && go run ./bench/cpurss -dir /tmp/xl16
//	go run ./bench/cpurss -write -shape llama-3.2-1b -dtype BF16 -dir /tmp/l1b && go run ./bench/cpurss -dir /tmp/l1b -ctx 2048
//
// -precision bf16 loads for the CPU's bf16 mode (on a CPU without
// AVX512_BF16 run it with WGPU_EVAL_CPU_KERNELS=generic, and a short -ctx).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
)

func main() {
	dir := flag.String("dir", "", "model folder (config.json + model.safetensors)")
	write := flag.Bool("write", false, "write a random model of -shape and -dtype to -dir and exit")
	shape := flag.String("shape", "124m", "with -write: 124m, xl (GPT-2 XL: 48 layers, 25 heads, C 1600), or a Llama-family shape ("+strings.Join(synth.LlamaShapeNames(), ", ")+")")
	dtype := flag.String("dtype", "F32", "with -write: the stored dtype, F32, F16 or BF16")
	threads := flag.Int("threads", 0, "CPU threads (<= 0: GOMAXPROCS)")
	precision := flag.String("precision", "f32", "the CPU's precision: f32 or bf16")
	window := flag.Int("ctx", 0, "tokens in the scored window (<= 0: the model's n_positions)")
	flag.Parse()
	if *dir == "" {
		log.Fatal("cpurss: -dir is required")
	}
	if *write {
		var cfg model.Config
		switch *shape {
		case "124m":
			cfg = synth.GPT2Small()
		case "xl":
			cfg = synth.GPT2XL()
		default:
			var ok bool
			if cfg, ok = synth.LlamaShape(*shape); !ok {
				log.Fatalf("cpurss: -shape %q: want 124m, xl or one of %s", *shape, strings.Join(synth.LlamaShapeNames(), ", "))
			}
		}
		switch *dtype {
		case "F32", "F16", "BF16":
		default:
			log.Fatalf("cpurss: -dtype %q: want F32, F16 or BF16", *dtype)
		}
		if err := synth.WriteSafetensors(*dir, synth.Random(cfg, 1), *dtype); err != nil {
			log.Fatal(err)
		}
		return
	}
	prec, err := backend.ParsePrecision(*precision)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	ck, err := model.OpenCheckpoint(ctx, *dir)
	if err != nil {
		log.Fatal(err)
	}
	b, err := backend.Open(ctx, backend.DeviceSpec{Kind: "cpu", Index: -1}, ck, backend.Options{Threads: *threads, Precision: prec})
	if err != nil {
		log.Fatal(err)
	}
	ck.Close()
	fmt.Printf("stored %s, precision %s; after load: %s\n", ck.StoredDType(), prec, hwm())
	cfg := ck.Config()
	r := rand.New(rand.NewPCG(2, 3))
	n := cfg.NPositions
	if *window > 0 {
		n = min(n, *window)
	}
	toks := make([]int32, n)
	for i := range toks {
		toks[i] = int32(r.IntN(cfg.VocabSize))
	}
	p, err := b.Submit(ctx, pipeline.Batch{Seqs: []model.Sequence{{Tokens: toks, First: 1}}})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := p.Wait(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("after one %d-token window: %s\n", len(toks), hwm())
	b.Close()
}

// hwm is the VmHWM line of /proc/self/status: the peak resident set so far.
func hwm() string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
