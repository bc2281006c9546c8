package main

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	wgpueval "github.com/wgpu-eval/wgpu-eval"
	"github.com/wgpu-eval/wgpu-eval/internal/testmodel"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
)

// peakedModel writes testmodel.Peaked (predictions far from uniform) as
// safetensors; edit, when set, changes the weights first.
func peakedModel(t *testing.T, edit func(*model.Model)) (string, *model.Model) {
	t.Helper()
	m := testmodel.Peaked(testmodel.TinyConfig(), 5)
	if edit != nil {
		edit(m)
	}
	dir := filepath.Join(t.TempDir(), "peaked-gpt2")
	if err := testmodel.WriteSafetensors(dir, m, "F32"); err != nil {
		t.Fatal(err)
	}
	return dir, m
}

func TestGenerateCLI(t *testing.T) {
	isolate(t)
	dir, m := peakedModel(t, nil)
	const prompt = "To be, or not to be"
	out, errOut, err := cli(t, "", "generate", "--model", dir, "--prompt", prompt, "--max-new-tokens", "6", "--json", "-")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var g wgpueval.Generation
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	tok, _ := tokenizer.GPT2()
	if want := tok.Encode(prompt); !slices.Equal(g.PromptTokens, want) {
		t.Errorf("prompt_tokens %v, want %v", g.PromptTokens, want)
	}
	if len(g.Tokens) != 6 || len(g.Logprobs) != 6 || g.StopReason != wgpueval.StopMaxTokens {
		t.Fatalf("%d tokens, %d logprobs, stop %q; want 6, 6, max_new_tokens", len(g.Tokens), len(g.Logprobs), g.StopReason)
	}
	if g.Text != tok.Decode(g.Tokens) {
		t.Errorf("text %q, the tokens decode to %q", g.Text, tok.Decode(g.Tokens))
	}
	var raw struct { // the options as written (TestGenerationJSON lists every key)
		MaxNewTokens *int           `json:"max_new_tokens"`
		Sampling     map[string]any `json:"sampling"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil || raw.MaxNewTokens == nil || *raw.MaxNewTokens != 6 {
		t.Errorf("max_new_tokens: %v (%v)", raw.MaxNewTokens, err)
	}
	if want := map[string]any{"temperature": 0.0, "top_k": 0.0, "top_p": 0.0, "seed": 0.0}; !maps.Equal(raw.Sampling, want) {
		t.Errorf("sampling %v, want %v", raw.Sampling, want)
	}
	if g.PrefillTokensPerSecond <= 0 || g.DecodeTokensPerSecond <= 0 {
		t.Errorf("speeds %g, %g", g.PrefillTokensPerSecond, g.DecodeTokensPerSecond)
	}
	// Every new token's logprob against the CPU forward over the whole prefix.
	cpu := model.NewCPU(m, 0)
	seq := slices.Clone(g.PromptTokens)
	for i, id := range g.Tokens {
		_, nll, err := cpu.LossPerToken(context.Background(), []model.Sequence{{Tokens: append(slices.Clone(seq), id), First: len(seq)}})
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(g.Logprobs[i] + float64(nll[0])); d > 1e-5 {
			t.Errorf("token %d: logprob %.7f, recomputed %.7f", i, g.Logprobs[i], -nll[0])
		}
		seq = append(seq, id)
	}

	// Streamed: stdout is the text; sampling is deterministic per seed.
	args := []string{"generate", "-m", dir, "-p", prompt, "-n", "12", "-t", "1", "--top-k", "50", "--top-p", "0.9", "--seed", "3", "-q"}
	a, _, err := cli(t, "", args...)
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := cli(t, "", args...)
	if a != b || a == "" {
		t.Errorf("the same seed streamed %q then %q", a, b)
	}
	jsonPath := filepath.Join(t.TempDir(), "g.json")
	c, _, err := cli(t, "", append(args, "--json", jsonPath)...)
	if err != nil {
		t.Fatal(err)
	}
	if c != a {
		t.Errorf("with --json FILE streamed %q, without %q", c, a)
	}
}

func TestGenerateStops(t *testing.T) {
	isolate(t)
	// <|endoftext|> made the most likely token: greedy stops at once.
	eotDir, _ := peakedModel(t, func(m *model.Model) { m.Weights.WTE[50256*m.Config.NEmbd] = 20 })
	out, errOut, err := cli(t, "", "generate", "-m", eotDir, "-p", "Hello", "--json", "-")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var g wgpueval.Generation
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatal(err)
	}
	if g.StopReason != wgpueval.StopEOT || !slices.Equal(g.Tokens, []int32{50256}) || g.Text != "" {
		t.Errorf("stop %q, tokens %v, text %q; want eot, [50256], empty", g.StopReason, g.Tokens, g.Text)
	}
	if !strings.Contains(errOut, "<|endoftext|>") {
		t.Errorf("no note of the stop on stderr: %q", errOut)
	}
	// Positions: 64 in the tiny model.
	dir, _ := peakedModel(t, nil)
	out, errOut, err = cli(t, "", "generate", "-m", dir, "-p", "a b c d e f g h i j", "-n", "0", "--json", "-")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatal(err)
	}
	if g.StopReason != wgpueval.StopPositions || len(g.PromptTokens)+len(g.Tokens) != 65 {
		t.Errorf("stop %q after %d+%d tokens; want positions after 64+1", g.StopReason, len(g.PromptTokens), len(g.Tokens))
	}
	if !strings.Contains(errOut, "positions are full") {
		t.Errorf("no note of the stop on stderr: %q", errOut)
	}
}

func TestGenerateBadInput(t *testing.T) {
	isolate(t)
	dir, _ := peakedModel(t, nil)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--prompt", ""}, "--prompt"},
		{[]string{}, "--prompt"},
		{[]string{"-p", "hi", "--max-new-tokens", "-1"}, "negative"},
		{[]string{"-p", "hi", "--top-k", "-2"}, "negative"},
		{[]string{"-p", "hi", "--temperature", "-0.5"}, "temperature"},
		{[]string{"-p", "hi", "--top-p", "1.5"}, "top-p"},
		{[]string{"-p", "hi", "--device", "tpu"}, "device"},
		{[]string{"-p", strings.Repeat("word ", 70)}, "longer than the model's 64 positions"},
	} {
		_, _, err := cli(t, "", append([]string{"generate", "-m", dir}, c.args...)...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want a usage error with %q", c.args, err, c.want)
		}
	}
}
