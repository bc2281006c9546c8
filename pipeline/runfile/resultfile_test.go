package runfile_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// TestParseResultFormat: a result this build writes starts with its mark and
// reads back; an older build's (no mark) reads; one marked as another
// format, with a later format_version or with half a mark is refused,
// naming why.
func TestParseResultFormat(t *testing.T) {
	r := smallResult(nil)
	good, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(good, []byte("{\n  \"format\": \"wgpu-eval result\",\n  \"format_version\": 1,\n  \"model\": \"m\",")) {
		t.Fatalf("the result's JSON does not start with its mark:\n%.120s", good)
	}
	back, err := runfile.ParseResult(good)
	if err != nil || back.NLLSumExact != r.NLLSumExact || back.Tokens != 3 {
		t.Fatalf("read back: %+v, %v", back, err)
	}
	mark := `"format": "wgpu-eval result",
  "format_version": 1,`
	for _, tc := range []struct {
		name, repl, err string
	}{
		{"older build", "", ""},
		{"other format", `"format": "wgpu-eval compare", "format_version": 1,`, `a "wgpu-eval compare" file, not a wgpu-eval result`},
		{"newer version", `"format": "wgpu-eval result", "format_version": 2,`, "format_version 2, written by a newer wgpu-eval: this build reads up to 1"},
		{"half a mark", `"format": "wgpu-eval result",`, "only one is there"},
	} {
		data := strings.Replace(string(good), mark, tc.repl, 1)
		if data == string(good) {
			t.Fatal("the test's mark is not in the JSON")
		}
		_, err := runfile.ParseResult([]byte(data))
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: ParseResult: %v, want %q", tc.name, err, tc.err)
		}
	}
}

// smallResult is a stream run's result of three targets (NLLs 2.5, 0.125
// and 3 over 12 bytes), of shard when it is not nil.
func smallResult(shard *pipeline.Shard) *pipeline.Result {
	var sums model.LossSums
	for _, x := range []float64{2.5, 0.125, 3} {
		sums.AddNLL(x)
	}
	r := &pipeline.Result{Model: "m", Data: "d", Mode: "stream", Ctx: 8, Stride: 8, Shard: shard}
	r.Fill(sums, 12, true)
	return r
}

// TestResultTimings: a result's timings read back; one with a part below
// zero (or not a number, as a string) is refused, naming it; merge leaves
// the shards' timings out of the merged result.
func TestResultTimings(t *testing.T) {
	r := smallResult(&pipeline.Shard{Index: 0, Count: 1})
	r.Timings = &pipeline.Timings{Tokenize: 0.25, Load: 1.5, Compile: 2, Tune: 3, Check: 0.5, Score: 4}
	good, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := runfile.ParseResult(good)
	if err != nil || back.Timings == nil || *back.Timings != *r.Timings {
		t.Fatalf("read back: %+v, %v", back.Timings, err)
	}
	for _, tc := range []struct{ repl, want string }{
		{`"tune":-3`, "timings: tune -3 is not a finite number of seconds, zero or more"},
		{`"tune":"x"`, "tune"},
		{`"tune":1e999`, "tune"},
	} {
		data := strings.Replace(string(good), `"tune":3`, tc.repl, 1)
		if data == string(good) {
			t.Fatal("the test's timing is not in the JSON")
		}
		if _, err := runfile.ParseResult([]byte(data)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ParseResult: %v, want %q", tc.repl, err, tc.want)
		}
	}
	m, err := runfile.Merge([]*pipeline.Result{back})
	if err != nil {
		t.Fatal(err)
	}
	if m.Timings != nil {
		t.Errorf("merged: timings %+v, want none", *m.Timings)
	}
}
