package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

const bf16Text = "To be, or not to be, that is the question:\nWhether 'tis nobler in the mind to suffer\n"

// --precision bf16 is refused on a GPU device (a usage error) and, before any
// weights are read, on a CPU without AVX512_BF16, with the reason.
func TestPrecisionBF16Refused(t *testing.T) {
	isolate(t)
	t.Setenv("WGPU_EVAL_CPU_KERNELS", "")
	dir, _, _ := tinyModel(t)
	for _, c := range []struct {
		args     []string
		usage    bool
		contains string
	}{
		{[]string{"eval", "--device", "gpu", "--data", "-"}, true, "--precision bf16: runs on the cpu device only"},
		{[]string{"eval", "--device", "all", "--data", "-"}, true, "--precision bf16: runs on the cpu device only"},
		{[]string{"bench", "--device", "gpu:0"}, true, "--precision bf16: runs on the cpu device only"},
		{[]string{"generate", "--device", "gpu", "--prompt", "To be"}, true, "--precision bf16: runs on the cpu device only"},
		{[]string{"eval", "--precision", "bf17", "--data", "-"}, true, "want auto, f16, f32 or bf16"},
	} {
		args := append(c.args, "--model", dir)
		if !strings.Contains(strings.Join(args, " "), "--precision") {
			args = append(args, "--precision", "bf16")
		}
		_, _, err := cli(t, bf16Text, args...)
		if err == nil || !strings.Contains(err.Error(), c.contains) {
			t.Errorf("%v: err = %v, want %q", args, err, c.contains)
			continue
		}
		if got := exitCode(err) == 2; got != c.usage {
			t.Errorf("%v: exit code %d", args, exitCode(err))
		}
	}
	if model.CheckBF16() == nil {
		t.Skip("this CPU has AVX512_BF16: the cpu device runs bf16")
	}
	for _, args := range [][]string{
		{"eval", "--device", "cpu", "--data", "-"},
		{"eval", "--data", "-"}, // auto: bf16 means the cpu
		{"bench", "--device", "cpu", "--model", "tiny"},
		{"generate", "--device", "cpu", "--prompt", "To be"},
	} {
		_, _, err := cli(t, bf16Text, append(args, "--model", dir, "--precision", "bf16", "--quiet")...)
		const want = "--precision bf16: needs a CPU with AVX512_BF16; this CPU has none"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: err = %v, want %q", args, err, want)
		}
	}
}

// With the portable kernels forced (WGPU_EVAL_CPU_KERNELS=generic), eval
// --precision bf16 on the cpu scores what model.NewCPUBF16 scores, records
// bf16 as the precision, and merge refuses to add a bf16 shard to an f32 one.
func TestPrecisionBF16Portable(t *testing.T) {
	isolate(t)
	t.Setenv("WGPU_EVAL_CPU_KERNELS", "generic")
	dir, _, m := tinyModel(t)
	out := t.TempDir()
	res := func(path string) pipeline.Result {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var r pipeline.Result
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	bfJSON := filepath.Join(out, "bf16.json")
	if _, stderr, err := cli(t, bf16Text, "--model", dir, "--data", "-", "--device", "cpu", "--precision", "bf16",
		"--json", bfJSON, "--quiet"); err != nil {
		t.Fatalf("eval --precision bf16: %v\n%s", err, stderr)
	}
	got := res(bfJSON)
	if got.Config == nil || got.Config.Precision != "bf16" {
		t.Fatalf("config %+v: want precision bf16", got.Config)
	}
	if got.Provenance == nil || !strings.Contains(got.Provenance.Device.Kernels, "bf16-generic") {
		t.Errorf("provenance %+v: want the portable bf16 kernels named", got.Provenance)
	}
	// The expectation: the bf16 CPU of the model package, one window.
	tok, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	ids := tok.Encode(bf16Text)
	cpu, err := model.NewCPUBF16(m, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	s, err := cpu.Loss(context.Background(), []model.Sequence{{Tokens: ids, First: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if want := s.Sum.Float64() / float64(s.Count); got.Tokens != s.Count || math.Abs(got.MeanNLL-want) > 1e-9 {
		t.Errorf("bf16 eval: %d tokens, mean NLL %.9f; want %d, %.9f", got.Tokens, got.MeanNLL, s.Count, want)
	}
	wantF32, _, _ := expected(t, m, bf16Text, 64, 0)
	if d := math.Abs(got.MeanNLL - wantF32); d < 1e-6 || d > 0.05 {
		t.Errorf("bf16 mean NLL %.6f vs f32 %.6f: a difference of %.2g, want a plausible bf16 rounding effect", got.MeanNLL, wantF32, d)
	}

	// Shards of a bf16 run do not merge with shards of an f32 one.
	shard := func(i, prec string) string {
		p := filepath.Join(out, "shard-"+i+"-"+prec+".json")
		if _, stderr, err := cli(t, bf16Text, "--model", dir, "--data", "-", "--device", "cpu", "--precision", prec,
			"--shard", i+"/2", "--ctx", "8", "--json", p, "--quiet"); err != nil {
			t.Fatalf("shard %s %s: %v\n%s", i, prec, err, stderr)
		}
		return p
	}
	a, b := shard("0", "bf16"), shard("1", "f32")
	if res(a).Config.Precision != "bf16" {
		t.Errorf("shard config precision %q, want bf16", res(a).Config.Precision)
	}
	_, _, err = cli(t, "", "merge", a, b)
	if err == nil || !strings.Contains(err.Error(), "precision") || !strings.Contains(err.Error(), "bf16") {
		t.Errorf("merge of a bf16 and an f32 shard: err = %v, want a precision mismatch naming bf16", err)
	}
}
