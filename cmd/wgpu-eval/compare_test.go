package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// TestPerTokenAndCompare: --per-token writes every target of the run with its
// config and provenance; compare of the file with itself reports no
// difference; of another corpus it refuses, naming the corpus; a
// --top-logprobs out of range or without --per-token is a usage error.
func TestPerTokenAndCompare(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	data := runText(t, 12)
	ptk := filepath.Join(t.TempDir(), "a.ptk")
	res := resultJSON(t, "--model", dir, "--data", data, "--ctx", "24", "--device", "cpu", "--per-token", ptk)
	f, err := runfile.ReadPerToken(ptk)
	if err != nil {
		t.Fatal(err)
	}
	h := f.Header
	if len(f.Tokens) != res.Tokens || h.Targets != res.Tokens || h.NLLSum != res.NLLSum || h.Tokenizer != "gpt2-builtin" ||
		h.Config == nil || h.Config.Ctx != 24 || h.Provenance == nil || h.Provenance.Corpus.SHA256 != res.Provenance.Corpus.SHA256 {
		t.Fatalf("per-token file: header %+v with %d records; result %d tokens, nll_sum %v", h, len(f.Tokens), res.Tokens, res.NLLSum)
	}
	sum := 0.0
	for _, r := range f.Tokens {
		sum += float64(r.NLL)
	}
	if math.Abs(sum-res.NLLSum) > 1e-12*res.NLLSum {
		t.Errorf("per-token NLLs sum to %.17g, nll_sum %.17g", sum, res.NLLSum)
	}

	out, stderr, err := cli(t, "", "compare", "--top", "3", "--json", "-", ptk, ptk)
	if err != nil {
		t.Fatalf("compare: %v\n%s", err, stderr)
	}
	var c runfile.Comparison
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	if !strings.HasPrefix(out, "{\n  \"format\": \"wgpu-eval compare\",\n  \"format_version\": 1,\n  \"targets\": ") {
		t.Errorf("compare's JSON does not start with its mark: %.100s", out)
	}
	if c.Targets != res.Tokens || c.MeanDiff != 0 || c.IdenticalShare != 1 || c.MeanNLLA != c.MeanNLLB ||
		c.PPLRatio != 1 || c.PPLRatioStdErr != 0 || !strings.Contains(out, `"ppl_ratio": 1,`) ||
		!strings.Contains(stderr, "verdict: identical") || !strings.Contains(stderr, "PPL(B)/PPL(A): 1.000000 ± 0 ") {
		t.Errorf("self comparison: %+v\n%s", c, stderr)
	}

	topk := filepath.Join(t.TempDir(), "top.ptk")
	if _, stderr, err := cli(t, "", "--model", dir, "--data", data, "--ctx", "24", "--device", "cpu", "--quiet", "--per-token", topk, "--top-logprobs", "5"); err != nil {
		t.Fatalf("--top-logprobs 5: %v\n%s", err, stderr)
	}
	out, stderr, err = cli(t, "", "compare", "--json", "-", topk, topk)
	if err != nil {
		t.Fatalf("compare: %v\n%s", err, stderr)
	}
	c = runfile.Comparison{}
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	if c.KL == nil || c.KL.Mean != 0 || c.KL.Max != 0 || c.KL.SameTopShare != 1 || c.KL.TopKA != 5 || !strings.Contains(stderr, "KL divergence") ||
		c.KL.DeltaP != (runfile.Percentiles{}) || !strings.Contains(out, `"delta_p_percentiles": {`) || !strings.Contains(out, `"p99": 0,`) {
		t.Errorf("self comparison with top logprobs: %+v\n%s", c.KL, stderr)
	}
	if out, _, err = cli(t, "", "compare", ptk, topk); err != nil || !strings.Contains(out, "no KL divergence without both") {
		t.Errorf("compare of a file without top logprobs and one with: err %v, report:\n%s", err, out)
	}

	other := filepath.Join(t.TempDir(), "b.ptk")
	if _, stderr, err := cli(t, "", "--model", dir, "--data", runText(t, 13), "--ctx", "24", "--device", "cpu", "--quiet", "--per-token", other); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if _, _, err := cli(t, "", "compare", ptk, other); err == nil || !strings.Contains(err.Error(), "corpus") {
		t.Errorf("another corpus: err = %v", err)
	}
	if _, _, err := cli(t, "", "--model", dir, "--data", data, "--top-logprobs", "5"); exitCode(err) != 2 || !strings.Contains(err.Error(), "--per-token") {
		t.Errorf("--top-logprobs without --per-token: err = %v, want a usage error", err)
	}
	if _, _, err := cli(t, "", "--model", dir, "--data", data, "--per-token", other, "--top-logprobs", "101"); exitCode(err) != 2 || !strings.Contains(err.Error(), "1 to 100") {
		t.Errorf("--top-logprobs 101: err = %v, want a usage error", err)
	}
	if _, _, err := cli(t, "", "compare", ptk); exitCode(err) != 2 {
		t.Errorf("compare with one file: err = %v, want a usage error", err)
	}
}

// TestFormatComparisonText: the largest differences are shown with their
// decoded text when there is one, else their id.
func TestFormatComparisonText(t *testing.T) {
	s := formatComparison(&runfile.Comparison{A: "a", B: "b", Targets: 2, Verdict: "v",
		Top: []runfile.TokenDiff{{Pos: 4, Token: 13, Text: " the", Diff: 0.5}, {Pos: 9, Token: 70000, Diff: -0.25}}})
	for _, want := range []string{`doc 0 pos 4 " the" (id 13)`, "doc 0 pos 9 id 70000", "verdict: v"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "KL") {
		t.Errorf("a report without top logprobs speaks of KL:\n%s", s)
	}
	s = formatComparison(&runfile.Comparison{A: "a", B: "b", Targets: 8, Verdict: "v",
		PPLRatio: 1.0125, PPLRatioStdErr: 0.0031,
		KL: &runfile.KLStats{TopKA: 5, TopKB: 7, Mean: 0.0125, Max: 0.5, MaxDoc: 2, MaxPos: 9, SameTop: 6, SameTopShare: 0.75,
			DeltaP: runfile.Percentiles{Min: -0.5, P1: -0.25, P5: -0.125, P10: -0.0625, P25: -0.01, Median: 0, P75: 0.01, P90: 0.0625, P95: 0.125, P99: 0.25, Max: 0.75}}})
	for _, want := range []string{"from top-5 of A and top-7 of B", "a lower bound", "mean 0.0125", "max 0.5 (doc 2 pos 9)", "same top token (argmax equal): 75.000% (6 of 8)",
		"PPL(B)/PPL(A): 1.012500 ± 0.0031 (exp(B - A); SE by the delta method)",
		"percentiles: min -0.5  1% -0.25  5% -0.125  10% -0.0625  25% -0.01  median +0  75% +0.01  90% +0.0625  95% +0.125  99% +0.25  max +0.75"} {
		if !strings.Contains(s, want) {
			t.Errorf("KL report lacks %q:\n%s", want, s)
		}
	}
}
