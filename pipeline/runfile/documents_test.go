package runfile_test

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// TestDocumentScoresHugePerplexity: a document whose mean NLL passes
// ln(MaxFloat64) (a broken or overflowing model) has the perplexity
// 1.8e308, as the JSON result's, not +Inf, which JSON cannot hold: before,
// the per-document file failed to encode and the run's outputs were lost.
// Every line parses as JSON into the documented fields.
func TestDocumentScoresHugePerplexity(t *testing.T) {
	recs := []pipeline.TokenNLL{{Doc: 0, Pos: 0, Token: 1, NLL: 2}, {Doc: 2, Pos: 0, Token: 1, NLL: 800}, {Doc: 2, Pos: 1, Token: 2, NLL: 900}}
	docs := runfile.DocumentScores(recs, func(pipeline.TokenNLL) int { return 3 })
	if len(docs) != 2 || docs[1].Doc != 2 || docs[1].PPL != math.MaxFloat64 || docs[0].PPL != math.Exp(2) {
		t.Fatalf("scores %+v", docs)
	}
	path := filepath.Join(t.TempDir(), "docs.jsonl")
	if err := runfile.WriteDocumentScores(path, docs); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	var lines []map[string]any
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 2 || lines[1]["ppl"] != math.MaxFloat64 || lines[1]["nll_sum"] != 1700.0 || lines[1]["targets"] != 2.0 {
		t.Errorf("lines %v", lines)
	}
	for _, m := range lines {
		for _, k := range []string{"doc", "targets", "nll_sum", "mean_nll", "ppl", "bytes", "bits_per_byte"} {
			if _, ok := m[k]; !ok || len(m) != 7 {
				t.Errorf("line %v: want the 7 documented fields", m)
			}
		}
	}
}
