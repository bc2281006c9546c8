package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/backendtest"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// goldenDir holds the tiny F16 GPT-2 (far from uniform: its mean NLL is about
// 12.7 nats against ln V = 10.8) and the NLL of every evaluation method that a
// float64 PyTorch reference of GPT2LMHeadModel computed for it
// (testdata/golden/gen_golden.py).
const goldenDir = "../../testdata/golden"

// TestEvalMatchesPyTorchGolden runs the command on the golden model and the
// golden's token ids (as an llm.c token file), once per evaluation method, and
// checks the JSON result against the PyTorch reference: the count exactly, the
// NLL sum to 1e-5 nats per token.
func TestEvalMatchesPyTorchGolden(t *testing.T) {
	isolate(t)
	g := backendtest.LoadGolden(t, goldenDir)
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "tokens.bin")
			if err := os.WriteFile(data, g.TokenFile(c), 0o644); err != nil {
				t.Fatal(err)
			}
			jsonPath := filepath.Join(dir, "result.json")
			args := []string{"eval", "--model", filepath.Join(goldenDir, "tiny"), "--data", data, "--device", "cpu",
				"--mode", c.Mode, "--ctx", strconv.Itoa(c.Ctx), "--json", jsonPath, "--quiet", "--no-token-cache"}
			if c.Mode != string(pipeline.ModeStream) {
				args = append(args, "--stride", strconv.Itoa(c.Stride))
			}
			if _, stderr, err := cli(t, "", args...); err != nil {
				t.Fatalf("eval: %v\nstderr: %s", err, stderr)
			}
			b, err := os.ReadFile(jsonPath)
			if err != nil {
				t.Fatal(err)
			}
			var res pipeline.Result
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatalf("result JSON: %v\n%s", err, b)
			}
			if res.Tokens != c.Count {
				t.Errorf("tokens = %d, want the reference's %d", res.Tokens, c.Count)
			}
			if d := math.Abs(res.NLLSum-c.NLLSum) / float64(c.Count); d > 1e-5 {
				t.Errorf("nll_sum = %.9f, reference %.9f (%.2g nats per token apart)", res.NLLSum, c.NLLSum, d)
			}
			if math.Abs(res.MeanNLL-c.MeanNLL) > 1e-5 || math.Abs(res.PPL-math.Exp(c.MeanNLL)) > 1e-5*math.Exp(c.MeanNLL) {
				t.Errorf("mean_nll %.9f ppl %.6g, reference %.9f and exp of it", res.MeanNLL, res.PPL, c.MeanNLL)
			}
		})
	}
}
