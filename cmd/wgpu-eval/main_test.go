package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// shakespeare is the shared copy of TinyShakespeare (../shared/data/README.md),
// or $WGPU_EVAL_TINYSHAKESPEARE (read before isolate clears it).
var shakespeare = prereq.TinyShakespearePath()

// isolate points every cache at a temporary folder and forbids the network.
func isolate(t *testing.T) {
	t.Helper()
	tmp := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(tmp, "cache"))
	t.Setenv("HOME", tmp)
	t.Setenv("HF_HUB_CACHE", filepath.Join(tmp, "hub"))
	t.Setenv("HF_HUB_OFFLINE", "1")
	t.Setenv(corpus.TinyShakespeareEnv, "")
	t.Setenv(progressEnv, "") // the default: no progress lines in a short run
}

// cli runs the command line in-process and returns stdout, stderr and the error.
func cli(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), err
}

// tinyModel writes a tiny GPT-2 far from uniform (synth.Peaked) as safetensors (F32) and as an llm.c v3
// checkpoint, returning the folder and the .bin path and the model.
func tinyModel(t *testing.T) (string, string, *model.Model) {
	t.Helper()
	m := synth.Peaked(synth.TinyConfig(), 7)
	dir := filepath.Join(t.TempDir(), "tiny-gpt2")
	if err := synth.WriteSafetensors(dir, m, "F32"); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "tiny_gpt2.bin")
	if err := synth.WriteLLMC(bin, m, 3); err != nil {
		t.Fatal(err)
	}
	return dir, bin, m
}

// expected scores text the long way: the built-in tokenizer, stream windows of
// ctx, each target by the CPU forward one window at a time, and the bytes of the
// scored tokens counted from their decoded text.
func expected(t *testing.T, m *model.Model, text string, ctx, maxTokens int) (mean, bpb float64, count int) {
	t.Helper()
	tok, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	ids := tok.Encode(text)
	if maxTokens > 0 && len(ids) > maxTokens {
		ids = ids[:maxTokens]
	}
	cpu := model.NewCPU(m, 1)
	var sum float64
	bytesScored := 0
	for start := 0; start < len(ids); start += ctx {
		w := ids[start:min(start+ctx, len(ids))]
		if len(w) < 2 {
			continue
		}
		s, err := cpu.Loss(context.Background(), []model.Sequence{{Tokens: w, First: 1}})
		if err != nil {
			t.Fatal(err)
		}
		sum += s.Sum.Float64()
		count += s.Count
		bytesScored += len(tok.Decode(w[1:]))
	}
	return sum / float64(count), sum / math.Ln2 / float64(bytesScored), count
}

func TestEvalEndToEnd(t *testing.T) {
	if _, err := os.Stat(shakespeare); err != nil {
		prereq.Missing(t, "tinyshakespeare", err)
	}
	isolate(t)
	dir, bin, m := tinyModel(t)
	full, err := os.ReadFile(shakespeare)
	if err != nil {
		t.Fatal(err)
	}
	val := string(full[1003854:]) // nanoGPT's val split (../shared/data/README.md)
	const ctx, maxTokens = 48, 700
	wantMean, wantBPB, wantCount := expected(t, m, val, ctx, maxTokens)

	for _, src := range []string{dir, filepath.Join(dir, "model.safetensors"), bin} {
		t.Run(filepath.Base(src), func(t *testing.T) {
			jsonPath := filepath.Join(t.TempDir(), "result.json")
			stdout, stderr, err := cli(t, "", "eval", "--model", src, "--tinyshakespeare-file", shakespeare,
				"--split", "val", "--ctx", "48", "--max-tokens", "700", "--json", jsonPath, "--batch-tokens", "100")
			if err != nil {
				t.Fatalf("eval: %v\nstderr: %s", err, stderr)
			}
			if !strings.Contains(stdout, "NLL ") || !strings.Contains(stdout, "tinyshakespeare:val") || strings.Count(stdout, "\n") != 1 {
				t.Errorf("summary line: %q", stdout)
			}
			b, err := os.ReadFile(jsonPath)
			if err != nil {
				t.Fatal(err)
			}
			var res map[string]any
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatalf("result JSON: %v\n%s", err, b)
			}
			for _, k := range []string{"model", "data", "mode", "ctx", "stride", "tokens", "input_tokens", "nll_sum",
				"mean_nll", "ppl", "bits_per_byte", "stderr", "seconds", "tokens_per_second", "device"} {
				if _, ok := res[k]; !ok {
					t.Errorf("result JSON lacks %q", k)
				}
			}
			if got := int(res["tokens"].(float64)); got != wantCount {
				t.Errorf("tokens = %d, want %d", got, wantCount)
			}
			if got := int(res["input_tokens"].(float64)); got != maxTokens {
				t.Errorf("input_tokens = %d, want %d", got, maxTokens)
			}
			mean := res["mean_nll"].(float64)
			if math.Abs(mean-wantMean) > 1e-5 {
				t.Errorf("mean_nll = %.8f, want %.8f", mean, wantMean)
			}
			if ppl := res["ppl"].(float64); math.Abs(ppl-math.Exp(wantMean)) > 1e-5*math.Exp(wantMean) {
				t.Errorf("ppl = %g, want exp(%g)", ppl, wantMean)
			}
			if bpb := res["bits_per_byte"].(float64); math.Abs(bpb-wantBPB) > 1e-5 {
				t.Errorf("bits_per_byte = %.8f, want %.8f", bpb, wantBPB)
			}
			if res["mode"] != "stream" || res["device"] != "cpu" || res["data"] != "tinyshakespeare:val" {
				t.Errorf("mode/device/data = %v/%v/%v", res["mode"], res["device"], res["data"])
			}
		})
	}
}

func TestEvalStdinJSONToStdout(t *testing.T) {
	isolate(t)
	dir, _, m := tinyModel(t)
	text := "To be, or not to be, that is the question:\nWhether 'tis nobler in the mind to suffer\n"
	wantMean, _, wantCount := expected(t, m, text, 64, 0)
	stdout, stderr, err := cli(t, text, "--model", dir, "--data", "-", "--json", "-", "--quiet")
	if err != nil {
		t.Fatalf("eval: %v\nstderr: %s", err, stderr)
	}
	if stderr != "" {
		t.Errorf("--quiet with --json - wrote to stderr: %q", stderr)
	}
	var res pipeline.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("stdout is not the JSON result: %v\n%s", err, stdout)
	}
	if res.Tokens != wantCount || math.Abs(res.MeanNLL-wantMean) > 1e-5 || res.Ctx != 64 {
		t.Errorf("got tokens %d mean %.6f ctx %d, want %d %.6f 64", res.Tokens, res.MeanNLL, res.Ctx, wantCount, wantMean)
	}
}

func TestEvalErrors(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	tmp := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := write("empty.txt", nil)
	latin1 := write("latin1.txt", []byte("caf\xe9 au lait"))
	truncated := write("model.safetensors", []byte{0x10, 0, 0, 0, 0, 0, 0, 0, '{'})
	for _, c := range []struct {
		name     string
		args     []string
		usage    bool   // exit status 2
		contains string // in the error
	}{
		{"bad mode", []string{"--model", dir, "--mode", "sideways"}, true, "sideways"},
		{"bad device", []string{"--model", dir, "--device", "tpu"}, true, "tpu"},
		{"ctx too long", []string{"--model", dir, "--data", latin1, "--ctx", "65"}, true, "64 positions"},
		{"stride too long", []string{"--model", dir, "--mode", "strided", "--ctx", "16", "--stride", "17"}, true, "stride"},
		{"unknown flag", []string{"--modle", dir}, true, "modle"},
		{"stray argument", []string{"--model", dir, "extra"}, true, "extra"},
		{"unknown command", []string{"frobnicate"}, true, "frobnicate"},
		{"missing model offline", []string{"--model", "no-such-org/no-such-model"}, false, "no-such-org/no-such-model"},
		{"truncated model", []string{"--model", truncated}, false, "model.safetensors"},
		{"empty corpus", []string{"--model", dir, "--data", empty}, false, "empty"},
		{"non-UTF-8 corpus", []string{"--model", dir, "--data", latin1}, false, "UTF-8"},
		{"missing corpus", []string{"--model", dir, "--data", filepath.Join(tmp, "nope.txt")}, false, "nope.txt"},
		{"tinyshakespeare offline", []string{"--model", dir, "--offline"}, false, "tinyshakespeare"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := cli(t, "", c.args...)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.contains) {
				t.Errorf("error %q does not mention %q", err, c.contains)
			}
			if got, want := exitCode(err) == 2, c.usage; got != want {
				t.Errorf("exit code %d for %v", exitCode(err), err)
			}
		})
	}
}

func TestHelpAndVersion(t *testing.T) {
	stdout, stderr, err := cli(t, "", "--help")
	if exitCode(err) != 0 || !strings.Contains(stdout, "--mode") || stderr != "" {
		t.Errorf("--help: err %v, stdout %q, stderr %q", err, stdout, stderr)
	}
	stdout, _, err = cli(t, "", "version")
	if err != nil || !strings.HasPrefix(stdout, "wgpu-eval ") {
		t.Errorf("version: %q %v", stdout, err)
	}
}
