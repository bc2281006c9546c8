package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/internal/backendtest"
	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// goldenDir holds the tiny F16 GPT-2 trained on TinyShakespeare (its
// predictions are peaked: mean NLL 5.3 to 5.5 nats on held-out text against
// ln V = 10.8) and the NLL of every evaluation method that a float64 PyTorch
// reference of GPT2LMHeadModel computed for it (testdata/golden/gen_golden.py).
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

// textGolden is testdata/golden/shakespeare_val.json (gen_text_golden.py).
type textGolden struct {
	IDsSHA256 string `json:"ids_sha256"`
	NIDs      int    `json:"n_ids"`
	Cases     []struct {
		Name, Mode  string
		Ctx, Stride int
		NLLSum      float64 `json:"nll_sum"`
		Count       int
		MeanNLL     float64 `json:"mean_nll"`
	}
}

// TestEvalShakespeareMatchesPyTorch runs the command as a user would, on
// TinyShakespeare's val split (text read, split, tokenized, windowed, scored),
// with the golden model, and checks the result against the float64 PyTorch
// reference that gen_text_golden.py computed from the split's GPT-2 ids. Those
// ids are committed; they are checked against the sha256 that
// ../shared/data/README.md publishes and against the command's own tokenizer.
func TestEvalShakespeareMatchesPyTorch(t *testing.T) {
	if testing.Short() {
		t.Skip("about 10 s of CPU: the whole val split")
	}
	if _, err := os.Stat(shakespeare); err != nil {
		prereq.Missing(t, "tinyshakespeare", err)
	}
	isolate(t)
	b, err := os.ReadFile(filepath.Join(goldenDir, "shakespeare_val.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g textGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	c, err := corpus.Load(context.Background(), filepath.Join(goldenDir, "shakespeare_val.tokens"), corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	full, err := os.ReadFile(shakespeare)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	if ids := tok.Encode(string(full[1003854:])); len(c.Tokens) != g.NIDs || idsSHA256(c.Tokens) != g.IDsSHA256 ||
		!slices.Equal(ids, c.Tokens) {
		t.Fatalf("the golden's ids (%d, sha256 %s) are not the README's %d val ids (%s) or not what the tokenizer gives (%d ids)",
			len(c.Tokens), idsSHA256(c.Tokens), g.NIDs, g.IDsSHA256, len(ids))
	}
	for _, gc := range g.Cases {
		t.Run(gc.Name, func(t *testing.T) {
			jsonPath := filepath.Join(t.TempDir(), "result.json")
			args := []string{"eval", "--model", filepath.Join(goldenDir, "tiny"), "--tinyshakespeare-file", shakespeare,
				"--split", "val", "--device", "cpu", "--mode", gc.Mode, "--ctx", strconv.Itoa(gc.Ctx), "--json", jsonPath, "--quiet"}
			if gc.Mode == string(pipeline.ModeStrided) {
				args = append(args, "--stride", strconv.Itoa(gc.Stride))
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
				t.Fatal(err)
			}
			if res.Tokens != gc.Count || res.InputTokens != g.NIDs {
				t.Errorf("%d targets of %d ids, want the reference's %d of %d", res.Tokens, res.InputTokens, gc.Count, g.NIDs)
			}
			if math.Abs(res.MeanNLL-gc.MeanNLL) > 1e-5 {
				t.Errorf("mean_nll %.9f, reference %.9f", res.MeanNLL, gc.MeanNLL)
			}
			// Bits per byte: the reference's NLL over the UTF-8 bytes of the scored
			// targets, the split's 111,540 bytes (../shared/data/README.md) less
			// those of the tokens no window scores (each stream window's first; the
			// split's first in strided mode).
			unscored := 0
			for i := 0; i < len(c.Tokens); i += gc.Ctx {
				if i == 0 || gc.Mode == string(pipeline.ModeStream) {
					unscored += len(tok.Decode(c.Tokens[i : i+1]))
				}
			}
			wantBytes := 111540 - unscored
			if res.ScoredBytes != wantBytes || math.Abs(res.BitsPerByte-gc.NLLSum/math.Ln2/float64(wantBytes)) > 1e-5 {
				t.Errorf("bits_per_byte %.6f over %d bytes; reference %.6f over %d", res.BitsPerByte, res.ScoredBytes,
					gc.NLLSum/math.Ln2/float64(wantBytes), wantBytes)
			}
		})
	}
}

// idsSHA256 is the digest ../shared/data/README.md gives for token ids: sha256
// over the ids as little-endian uint32.
func idsSHA256(ids []int32) string {
	h := sha256.New()
	for _, id := range ids {
		h.Write(binary.LittleEndian.AppendUint32(nil, uint32(id)))
	}
	return hex.EncodeToString(h.Sum(nil))
}
