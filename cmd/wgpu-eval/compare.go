package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wgpu-eval/wgpu-eval/internal/clobber"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

const compareUsage = `Usage: wgpu-eval compare [--json OUT] [--top N] A B

Compares two --per-token files of the same corpus and tokenizer (two devices,
two precisions, two builds, two models) token by token: the mean NLL of each,
the difference B - A with its paired standard error, the perplexity ratio
PPL(B)/PPL(A) = exp(B - A) with its standard error (delta method), the
largest per-token differences with their positions and text, the share of
bit-identical values, and a verdict. Refuses files of different corpora,
tokenizers or targets, naming what differs. When both files carry
--top-logprobs, it also reports what llama.cpp's KL-divergence mode does:
KL(A||B) per position (mean with its standard error, median, p90, p95, p99,
p99.9, max), the share of positions where both runs' most likely token is the
same, and the change of the target's probability p_B - p_A (mean, RMS, and
min, 1%, 5%, 10%, 25%, median, 75%, 90%, 95%, 99%, max). KL from top-K lists
is taken over the tokens in both lists plus one bucket for all others: a
lower bound of the full-vocabulary KL.

Example:
  wgpu-eval --device cpu --per-token cpu.ptk --top-logprobs 20
  wgpu-eval --device gpu --precision f16 --per-token f16.ptk --top-logprobs 20
  wgpu-eval compare cpu.ptk f16.ptk

Flags:
`

func runCompare(args []string, stdout, stderr io.Writer) error {
	var jsonOut string
	top := 10
	register := func(fs *pflag.FlagSet) {
		fs.StringVar(&jsonOut, "json", "", "also write the comparison as JSON to FILE (- for stdout)")
		fs.IntVar(&top, "top", top, "how many of the largest per-token differences to list")
	}
	paths, err := parseFlagsArgs("compare", compareUsage, register, args, stdout)
	if err != nil {
		return err
	}
	jsonOut = asStdout(jsonOut, stdout)
	if len(paths) != 2 {
		return usageError{errors.New("compare: give two --per-token files, A and B")}
	}
	if top < 0 {
		return usageError{errors.New("--top must not be negative")}
	}
	if err := notClobbering("compare", []clobber.File{{Role: "--json", Path: jsonOut}},
		[]clobber.File{{Role: "per-token file A", Path: paths[0]}, {Role: "per-token file B", Path: paths[1]}}); err != nil {
		return err
	}
	var files [2]*runfile.PerTokenFile
	for i, path := range paths {
		f, err := runfile.ReadPerToken(path)
		if err != nil {
			return err
		}
		files[i] = f
	}
	decode, err := tokenDecoder(files[0].Header.Tokenizer)
	if err != nil {
		return err
	}
	c, err := runfile.Compare(files[0], files[1], top, decode)
	if err != nil {
		return err
	}
	c.A, c.B = paths[0], paths[1]
	summary := stdout
	if jsonOut == "-" {
		summary = stderr
	}
	fmt.Fprint(summary, formatComparison(c))
	if jsonOut != "" {
		return writeJSON(jsonOut, stdout, c)
	}
	return nil
}

// tokenDecoder gives a token's text for the tokenizer a per-token file names
// when it is the built-in GPT-2 one (the empty text for an id outside its
// vocabulary), and nil for any other tokenizer, whose vocabulary is not at hand.
func tokenDecoder(id string) (func(int32) string, error) {
	if id != tokenizer.BuiltinID {
		return nil, nil
	}
	tok, err := tokenizer.GPT2()
	if err != nil {
		return nil, err
	}
	return func(id int32) string {
		if id < 0 || int(id) >= tok.VocabSize() {
			return ""
		}
		return tok.Decode([]int32{id})
	}, nil
}

// formatComparison is the human report of compare.
func formatComparison(c *runfile.Comparison) string {
	var b strings.Builder
	fmt.Fprintf(&b, "A %s: mean NLL %.6f\nB %s: mean NLL %.6f\n", c.A, c.MeanNLLA, c.B, c.MeanNLLB)
	fmt.Fprintf(&b, "B - A: %+.6g ± %.2g nats/token (paired SE) over %d targets; max |diff| %.3g; bit-identical %.2f%% (%d)\n",
		c.MeanDiff, c.DiffStdErr, c.Targets, c.MaxAbsDiff, 100*c.IdenticalShare, c.Identical)
	ratio := fmt.Sprintf("%.6f", c.PPLRatio)
	if c.PPLRatio >= 1e6 {
		ratio = bigPPL(c.PPLRatio) // not hundreds of digits; >1.798e+308 past float64's range
	}
	fmt.Fprintf(&b, "PPL(B)/PPL(A): %s ± %.2g (exp(B - A); SE by the delta method)\n", ratio, c.PPLRatioStdErr)
	for _, n := range c.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if len(c.Top) > 0 {
		fmt.Fprintf(&b, "largest per-token differences:\n")
		for _, d := range c.Top {
			what := fmt.Sprintf("id %d", d.Token)
			if d.Text != "" {
				what = fmt.Sprintf("%q (id %d)", d.Text, d.Token)
			}
			fmt.Fprintf(&b, "  doc %d pos %d %s: A %.6f B %.6f diff %+.3g\n", d.Doc, d.Pos, what, d.NLLA, d.NLLB, d.Diff)
		}
	}
	if k := c.KL; k != nil {
		fmt.Fprintf(&b, "KL divergence KL(A||B), nats, from top-%d of A and top-%d of B (the tokens in both lists plus one bucket for the rest: a lower bound of the full KL):\n", k.TopKA, k.TopKB)
		fmt.Fprintf(&b, "  mean %.6g ± %.2g  median %.4g  p90 %.4g  p95 %.4g  p99 %.4g  p99.9 %.4g  max %.4g (doc %d pos %d)\n",
			k.Mean, k.StdErr, k.Median, k.P90, k.P95, k.P99, k.P999, k.Max, k.MaxDoc, k.MaxPos)
		fmt.Fprintf(&b, "  same top token (argmax equal): %.3f%% (%d of %d)\n", 100*k.SameTopShare, k.SameTop, c.Targets)
		fmt.Fprintf(&b, "  target probability p_B - p_A: mean %+.4g ± %.2g, RMS %.4g\n", k.MeanDeltaP, k.DeltaPStdErr, k.RMSDeltaP)
		p := k.DeltaP
		fmt.Fprintf(&b, "    percentiles: min %+.4g  1%% %+.4g  5%% %+.4g  10%% %+.4g  25%% %+.4g  median %+.4g  75%% %+.4g  90%% %+.4g  95%% %+.4g  99%% %+.4g  max %+.4g\n",
			p.Min, p.P1, p.P5, p.P10, p.P25, p.Median, p.P75, p.P90, p.P95, p.P99, p.Max)
	}
	fmt.Fprintf(&b, "verdict: %s\n", c.Verdict)
	return b.String()
}
