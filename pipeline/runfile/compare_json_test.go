package runfile_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// TestCompareHugePPLRatio: B worse than A by more than ln(MaxFloat64) nats
// a token (a broken model against a working one) gives the perplexity ratio
// 1.8e308, as results cap perplexities, not +Inf: compare --json could not
// encode +Inf and wrote nothing. The verdict says no "+Inf" either.
func TestCompareHugePPLRatio(t *testing.T) {
	a := testPerTokenFile(t)
	b := *a
	b.Tokens = append([]pipeline.TokenNLL(nil), a.Tokens...)
	for i := range b.Tokens {
		b.Tokens[i].NLL += 1000 + float32(i%3)
	}
	c, err := runfile.Compare(a, &b, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.PPLRatio != math.MaxFloat64 || math.IsInf(c.PPLRatioStdErr, 0) || strings.Contains(c.Verdict, "Inf") {
		t.Errorf("ratio %v ± %v, verdict %q", c.PPLRatio, c.PPLRatioStdErr, c.Verdict)
	}
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatalf("compare --json: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil || m["ppl_ratio"] != math.MaxFloat64 {
		t.Errorf("JSON %s: %v", data, err)
	}
	// The other way round the ratio underflows to 0, which JSON holds.
	c, err = runfile.Compare(&b, a, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := json.Marshal(c); err != nil || c.PPLRatio != 0 {
		t.Errorf("B better by 1000 nats: ratio %v, %v", c.PPLRatio, err)
	}
}

// TestCompareJSONTopIsList: top is a JSON list in every report, empty when
// the runs are identical, not null (for t in j["top"] and jq's .top[] fail on
// null).
func TestCompareJSONTopIsList(t *testing.T) {
	a := testPerTokenFile(t)
	for _, top := range []int{10, 0} {
		c, err := runfile.Compare(a, a, top, nil)
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		if l, ok := m["top"].([]any); !ok || len(l) != 0 {
			t.Errorf("--top %d, identical runs: top is %#v, want []", top, m["top"])
		}
	}
}
