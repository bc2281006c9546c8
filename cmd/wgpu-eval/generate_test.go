package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	wgpueval "github.com/wgpu-eval/wgpu-eval"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
)

// peakedModel writes synth.Peaked (predictions far from uniform) as
// safetensors; edit, when set, changes the weights first.
func peakedModel(t *testing.T, edit func(*model.Model)) (string, *model.Model) {
	t.Helper()
	m := synth.Peaked(synth.TinyConfig(), 5)
	if edit != nil {
		edit(m)
	}
	dir := filepath.Join(t.TempDir(), "peaked-gpt2")
	if err := synth.WriteSafetensors(dir, m, "F32"); err != nil {
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
	var raw struct { // the options as written (TestGenerateJSONKeys lists every key)
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

// TestGenerateStops: every stop reason is in --json's stop_reason and on a
// "stopped:" line of stderr: <|endoftext|>, --max-new-tokens, the model's
// positions, and a cancelled run (exit status 130; the line is printed even
// with --quiet, and --json gets what was generated).
func TestGenerateStops(t *testing.T) {
	isolate(t)
	dir, _ := peakedModel(t, nil)
	// <|endoftext|> made the most likely token: greedy stops at once.
	eotDir, _ := peakedModel(t, func(m *model.Model) { m.Weights.WTE[50256*m.Config.NEmbd] = 20 })
	eosDir, _ := peakedModel(t, nil)
	setJSONKey(t, filepath.Join(eosDir, "config.json"), "eos_token_id", 0)
	for _, c := range []struct {
		name, dir string
		args      []string
		stop      string
		line      string // on stderr
		tokens    int    // new tokens; -1: prompt + new = 65, the positions + 1
	}{
		{"eot", eotDir, []string{"-p", "Hello"}, wgpueval.StopEOT, "stopped: the model generated <|endoftext|>\n", 1},
		{"max", dir, []string{"-p", "Hello", "-n", "6"}, wgpueval.StopMaxTokens, "stopped: 6 new tokens, the --max-new-tokens limit\n", 6},
		{"max one", dir, []string{"-p", "Hello", "-n", "1"}, wgpueval.StopMaxTokens, "stopped: 1 new token, the --max-new-tokens limit\n1 prompt token at ", 1},
		{"positions", dir, []string{"-p", "a b c d e f g h i j", "-n", "0"}, wgpueval.StopPositions, "stopped: the model's 64 positions are full (prompt 10 tokens + 55 new)\n", -1},
		// config.json's eos_token_id names "!", the model's first greedy token: the line names it.
		{"eos_token_id", eosDir, []string{"-p", "Hello"}, wgpueval.StopEOT, "stopped: the model generated \"!\" (id 0)\n", 1},
	} {
		out, errOut, err := cli(t, "", append([]string{"generate", "-m", c.dir, "--json", "-"}, c.args...)...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, errOut)
		}
		var g wgpueval.Generation
		if err := json.Unmarshal([]byte(out), &g); err != nil {
			t.Fatal(err)
		}
		if c.tokens < 0 {
			c.tokens = 65 - len(g.PromptTokens)
		}
		if g.StopReason != c.stop || len(g.Tokens) != c.tokens {
			t.Errorf("%s: stop %q after %d tokens; want %s after %d", c.name, g.StopReason, len(g.Tokens), c.stop, c.tokens)
		}
		if !strings.Contains(errOut, c.line) {
			t.Errorf("%s: no line %q on stderr:\n%s", c.name, c.line, errOut)
		}
	}
	// Cancelled: the text streamed to stdout cancels the run at its third piece.
	for _, quiet := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		stdout := &cancelAfter{n: 3, cancel: cancel}
		var stderr strings.Builder
		jsonPath := filepath.Join(t.TempDir(), "g.json")
		args := []string{"generate", "-m", dir, "-p", "Hello", "-n", "0", "--json", jsonPath}
		if quiet {
			args = append(args, "-q")
		}
		err := run(ctx, args, strings.NewReader(""), stdout, &stderr)
		if !errors.As(err, new(interrupted)) || exitCode(err) != 130 {
			t.Fatalf("cancelled: error %v (exit status %d), want interrupted, 130\n%s", err, exitCode(err), stderr.String())
		}
		data, err := os.ReadFile(jsonPath)
		if err != nil {
			t.Fatal(err)
		}
		var g wgpueval.Generation
		if err := json.Unmarshal(data, &g); err != nil {
			t.Fatal(err)
		}
		if g.StopReason != wgpueval.StopCancelled || len(g.Tokens) < 3 || len(g.Tokens) > 60 {
			t.Errorf("cancelled: stop %q after %d tokens", g.StopReason, len(g.Tokens))
		}
		line := fmt.Sprintf("stopped: cancelled after %d new tokens\n", len(g.Tokens))
		if !strings.Contains(stderr.String(), line) || quiet && stderr.String() != line {
			t.Errorf("cancelled (quiet %v): stderr %q, want the line %q", quiet, stderr.String(), line)
		}
		if got := strings.TrimSuffix(stdout.String(), "\n"); got != g.Text {
			t.Errorf("cancelled: streamed %q, --json's text %q", got, g.Text)
		}
	}
}

// cancelAfter is a stdout that calls cancel at its n-th write.
type cancelAfter struct {
	b      strings.Builder
	n      int
	cancel func()
}

func (w *cancelAfter) Write(p []byte) (int, error) {
	if w.n--; w.n == 0 {
		w.cancel()
	}
	return w.b.Write(p)
}

func (w *cancelAfter) String() string { return w.b.String() }

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
		{[]string{"-p", "hi", "--device", "all"}, "--device all: generate runs on one device"}, // before any weights are on the GPUs
		{[]string{"-p", strings.Repeat("word ", 70)}, "longer than the model's 64 positions"},
		// Sampling flags at the default temperature 0 (greedy) would change nothing.
		{[]string{"-p", "hi", "--top-k", "5"}, "--top-k 5 has no effect at --temperature 0"},
		{[]string{"-p", "hi", "--top-p", "0.9", "--seed", "1"}, "--top-p 0.9 has no effect at --temperature 0"},
		{[]string{"-p", "hi", "-t", "0", "--seed", "1"}, "--seed 1 has no effect at --temperature 0"},
	} {
		_, _, err := cli(t, "", append([]string{"generate", "-m", dir}, c.args...)...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want a usage error with %q", c.args, err, c.want)
		}
	}
}

// setJSONKey sets key to v in the JSON object of the file at path.
func setJSONKey(t *testing.T, path, key string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m[key] = v
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGenerateJSONPathChecked: a --json path that cannot be written (its
// folder missing, a folder itself) is a usage error before anything is
// generated, as eval's outputs are, not an error after the generation.
func TestGenerateJSONPathChecked(t *testing.T) {
	isolate(t)
	dir, _ := peakedModel(t, nil)
	tmp := t.TempDir()
	for _, path := range []string{filepath.Join(tmp, "missing", "g.json"), tmp} {
		out, errOut, err := cli(t, "", "generate", "-m", dir, "-p", "Hello", "-n", "8", "--json", path)
		if !errors.As(err, new(usageError)) || out != "" {
			t.Errorf("--json %s: error %v, stdout %q, want a usage error and nothing generated\n%s", path, err, out, errOut)
		}
	}
}
