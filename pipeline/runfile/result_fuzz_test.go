package runfile_test

import (
	"encoding/json"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// FuzzParseResult: no input panics, and what parses is a result whose numbers
// merge accepts: merging it as the only shard gives back its sums.
func FuzzParseResult(f *testing.F) {
	r := smallResult(&pipeline.Shard{Index: 0, Count: 1})
	good, err := json.Marshal(r)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"tokens": 9223372036854775807}`))
	f.Add([]byte(`{"nll_sum": 1, "nll_sum_exact": "0x1p+0", "tokens": 1, "mean_nll": 1, "nll_sumsq": 1, "nll_sumsq_exact": "0x1p+0"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := runfile.ParseResult(data)
		if err != nil {
			return
		}
		if r.Shard == nil || r.Shard.Count != 1 || r.Interrupted || r.Tokens == 0 {
			return
		}
		m, err := runfile.Merge([]*pipeline.Result{r})
		if err != nil {
			t.Fatalf("a result ParseResult accepts: merge says %v", err)
		}
		if m.NLLSumExact != r.NLLSumExact || m.Tokens != r.Tokens {
			t.Fatalf("merged alone: %v over %d, was %v over %d", m.NLLSumExact, m.Tokens, r.NLLSumExact, r.Tokens)
		}
	})
}
