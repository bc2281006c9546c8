package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	wgpueval "github.com/wgpu-eval/wgpu-eval"
	"github.com/wgpu-eval/wgpu-eval/internal/atomicfile"
	"github.com/wgpu-eval/wgpu-eval/internal/clobber"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
)

// generateFlags are the flags of `wgpu-eval generate`.
type generateFlags struct {
	model, prompt, device, precision, matrixUnits, jsonOut string
	maxNew, topK, threads                                  int
	temperature, topP                                      float64
	seed                                                   uint64
	quiet, offline, insecureSkipVerify                     bool
}

func (f *generateFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.model, "model", "m", "gpt2", "model: a hub id (gpt2, gpt2-medium, org/name@rev), a folder with config.json + model.safetensors, a .safetensors file, or an llm.c .bin checkpoint")
	fs.StringVarP(&f.prompt, "prompt", "p", "", "the text to continue (required)")
	fs.IntVarP(&f.maxNew, "max-new-tokens", "n", 64, "generate at most N tokens (0: until the end-of-text token or the model's positions)")
	fs.Float64VarP(&f.temperature, "temperature", "t", 0, "sampling temperature; 0 is greedy (the most likely token every step)")
	fs.IntVar(&f.topK, "top-k", 0, "sample only from the K most likely tokens (0: all; needs --temperature above 0)")
	fs.Float64Var(&f.topP, "top-p", 0, "sample only from the most likely tokens whose probability adds up to P (0 or 1: all; needs --temperature above 0)")
	fs.Uint64Var(&f.seed, "seed", 0, "random seed of the sampler (needs --temperature above 0): the same seed gives the same text (on the same device: see above)")
	fs.StringVar(&f.device, "device", "auto", "where to run: auto (the best hardware GPU, else the CPU), cpu, gpu or gpu:N")
	fs.StringVar(&f.precision, "precision", "", "weights: auto (the default: f16 on a GPU with shader-f16, else f32), f16 or f32; bf16 on the CPU (matmuls in bf16 with f32 sums; needs a CPU with AVX512_BF16)")
	fs.StringVar(&f.matrixUnits, "matrix-units", "", "GPU: multiply the weights and the LM head on the device's matrix units (tensor cores, VK_KHR_cooperative_matrix), activations rounded to f16 at their inputs: auto (the default, or $WGPU_EVAL_MATRIX_UNITS: where the device offers them for f16 weights and a first-use self-check against the ordinary kernels passed; the JSON says whether they ran), off, or on (fail where they cannot be used)")
	fs.IntVar(&f.threads, "threads", 0, "CPU threads (0: all cores)")
	fs.StringVar(&f.jsonOut, "json", "", "also write the prompt and new tokens, their logprobs, the text, the stop reason, the options and the speed as JSON to FILE (- for stdout, then the text is not streamed)")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no messages on stderr; only the text")
	fs.BoolVar(&f.offline, "offline", false, "never use the network: the model must be cached or local (also HF_HUB_OFFLINE=1)")
	fs.BoolVar(&f.insecureSkipVerify, "insecure-skip-verify", false, "use hub files whose content cannot be checked (an ETag that is neither a sha256 nor a git sha1: a proxy or mirror may be rewriting them); by default they are refused")
}

const generateUsage = `Usage: wgpu-eval generate --prompt TEXT [flags]

Continues TEXT with the model and streams the new text to stdout as it is
generated: the prompt is prefilled into a KV cache allocated once (for the
prompt and --max-new-tokens), then each new token runs alone through the model
(no recomputation of the prefix). The prompt gets the special tokens the
tokenizer puts before a text (Llama's BOS), as transformers' tokenizer(prompt)
does. Stops at the tokenizer's end-of-text token (<|endoftext|>,
<|end_of_text|>, else its eos_token) or an eos_token_id of the model's
generation_config.json (else config.json), after --max-new-tokens,
when the model's positions are full, or when cancelled (Ctrl-C: exit status
130, and --json still gets what was generated), with a line on stderr saying
which ("stopped: ..."; in --json, stop_reason: eot, max_new_tokens, positions
or cancelled). Runs on the device --device picks: the CPU path, or a GPU with
the KV cache on the device.

The same --seed, options, model, device and precision give the same text.
Sampling is on the host, but a GPU's logits differ from the CPU's in the last
bits (more with f16 weights, the default where the device has shader-f16), so
where two tokens are nearly tied the same seed can pick the other one there,
greedy included, and the texts part from that token on.

Examples:
  wgpu-eval generate --model gpt2 --prompt "To be, or not to be" --max-new-tokens 40
  wgpu-eval generate -m ./my-gpt2 -p "Once upon a time" -t 0.8 --top-p 0.95 --seed 1 --json out.json

Flags:
`

func runGenerate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f generateFlags
	var fs *pflag.FlagSet
	if err := parseFlags("generate", generateUsage, func(s *pflag.FlagSet) { fs = s; f.register(s) }, args, stdout); err != nil {
		return err
	}
	f.jsonOut = asStdout(f.jsonOut, stdout)
	if f.prompt == "" {
		return usageError{errors.New("generate: give the text to continue with --prompt")}
	}
	if err := notNegative(intFlag{"max-new-tokens", f.maxNew}, intFlag{"top-k", f.topK}, intFlag{"threads", f.threads}); err != nil {
		return err
	}
	if f.jsonOut != "" && f.jsonOut != "-" {
		if err := atomicfile.Check(f.jsonOut); err != nil { // before the generation, not after it
			return usageError{fmt.Errorf("generate: --json: %w", err)}
		}
	}
	boundThreads(stderr, &f.threads, f.quiet)
	sampling := model.SampleOptions{Temperature: f.temperature, TopK: f.topK, TopP: f.topP, Seed: f.seed}
	if err := sampling.Check(); err != nil {
		return usageError{fmt.Errorf("--%w", err)}
	}
	if err := greedyFlags(f, fs); err != nil {
		return err
	}
	if err := checkPrecision(f.precision, f.matrixUnits, f.device); err != nil {
		return err
	}
	if f.device == string(wgpueval.DeviceAll) { // Generate refuses it too, but only once the weights are on every GPU
		return usageError{errors.New("--device all: generate runs on one device; use gpu:N or cpu")}
	}
	note := func(format string, a ...any) {
		if !f.quiet {
			fmt.Fprintf(stderr, format+"\n", a...)
		}
	}
	ev, err := wgpueval.Open(ctx, f.model, wgpueval.Options{
		Device: wgpueval.Device(f.device), Precision: wgpueval.Precision(f.precision), MatrixUnits: wgpueval.MatrixUnits(f.matrixUnits), Threads: f.threads, Offline: f.offline, InsecureSkipVerify: f.insecureSkipVerify,
		Log: func(msg string) {
			if f.quiet && strings.HasPrefix(msg, backend.ValidationPrefix) {
				fmt.Fprintln(stderr, msg) // asked for with $WGPU_EVAL_VALIDATION: shown under --quiet too
				return
			}
			note("%s", msg)
		},
	})
	if err != nil {
		return flagError(err) // an option the device refuses: --matrix-units on without matrix units
	}
	defer ev.Close()
	if err := notClobbering("generate", []clobber.File{{Role: "--json", Path: f.jsonOut}}, clobber.ModelFiles(ev.Files())); err != nil {
		return err
	}

	stream := f.jsonOut != "-"
	g, err := ev.Generate(ctx, f.prompt, wgpueval.GenerateOptions{
		MaxNewTokens: f.maxNew,
		Sampling:     sampling,
		OnText: func(s string) {
			if stream {
				io.WriteString(stdout, s)
			}
		},
	})
	if stream && g != nil {
		fmt.Fprintln(stdout)
	}
	if g == nil {
		return flagError(err) // an empty prompt or one longer than the positions: a usage error
	}
	if err != nil && g.StopReason != wgpueval.StopCancelled {
		return err
	}
	switch g.StopReason {
	case wgpueval.StopEOT:
		note("stopped: the model generated %s", tokenName(ev.Tokenizer(), g.Tokens[len(g.Tokens)-1]))
	case wgpueval.StopMaxTokens:
		note("stopped: %s, the --max-new-tokens limit", tokenCount(len(g.Tokens), "new token"))
	case wgpueval.StopPositions:
		if n := ev.Config().NPositions; g.Positions < n {
			note("stopped: the %d positions %s holds are full, of the model's %d (prompt %s + %d new)", g.Positions, g.Device, n, tokenCount(len(g.PromptTokens), "token"), len(g.Tokens))
		} else {
			note("stopped: the model's %d positions are full (prompt %s + %d new)", n, tokenCount(len(g.PromptTokens), "token"), len(g.Tokens))
		}
	case wgpueval.StopCancelled: // printed even with --quiet, in place of the error
		fmt.Fprintf(stderr, "stopped: cancelled after %s\n", tokenCount(len(g.Tokens), "new token"))
	}
	switch {
	case len(g.Tokens) > 1:
		note("%s at %.0f tok/s, %d new at %.1f tok/s (%s)",
			tokenCount(len(g.PromptTokens), "prompt token"), g.PrefillTokensPerSecond, len(g.Tokens), g.DecodeTokensPerSecond, g.Device)
	case len(g.Tokens) == 1: // no decode step: no decoding speed
		note("%s at %.0f tok/s, 1 new (%s)", tokenCount(len(g.PromptTokens), "prompt token"), g.PrefillTokensPerSecond, g.Device)
	}
	if f.jsonOut != "" {
		if werr := writeJSON(f.jsonOut, stdout, g); werr != nil {
			return werr
		}
	}
	if err != nil {
		return interrupted{err} // the exit status says it: 130, or 143 for SIGTERM
	}
	return nil
}

// tokenCount is n and noun, the noun plural unless n is 1: "1 prompt
// token", "12 new tokens".
func tokenCount(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// tokenName names the token a generation stopped at: its text where that is
// a special token's (<|endoftext|>, </s>, <|eot_id|>), else the text quoted
// with its id.
func tokenName(tok *wgpueval.Tokenizer, id int32) string {
	s := tok.TokenText(id)
	if len(s) > 2 && strings.HasPrefix(s, "<") && strings.HasSuffix(s, ">") && !strings.ContainsAny(s, " \n") {
		return s
	}
	return fmt.Sprintf("%q (id %d)", s, id)
}

// greedyFlags refuses the sampling flags that would change nothing because
// the temperature is 0 (greedy decoding, the default), as transformers'
// generate warns of top_k and top_p without do_sample: a user who gives
// --top-p or --seed expects sampled text.
func greedyFlags(f generateFlags, fs *pflag.FlagSet) error {
	if f.temperature != 0 {
		return nil
	}
	for _, c := range []struct {
		name, value string
		set         bool
	}{
		{"top-k", strconv.Itoa(f.topK), f.topK > 0},
		{"top-p", strconv.FormatFloat(f.topP, 'g', -1, 64), f.topP > 0 && f.topP < 1},
		{"seed", strconv.FormatUint(f.seed, 10), fs.Changed("seed")},
	} {
		if c.set {
			return usageError{fmt.Errorf("generate: --%s %s has no effect at --temperature 0 (the default: greedy decoding, the most likely token every step); give a --temperature above 0 to sample", c.name, c.value)}
		}
	}
	return nil
}
