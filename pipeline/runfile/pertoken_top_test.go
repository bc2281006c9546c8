package runfile_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// topFile is a small per-token file with k top log-probabilities per target.
func topFile(k int) *runfile.PerTokenFile {
	f := &runfile.PerTokenFile{Header: runfile.PerTokenHeader{Model: "m", Data: "d", Mode: "stream", Ctx: 8, Stride: 8,
		Tokenizer: "gpt2-builtin", TopLogprobs: k}}
	for i := range 3 {
		r := pipeline.TokenNLL{Pos: i + 1, Token: int32(10 + i), NLL: 1.5 + float32(i)}
		for j := range k {
			r.Top = append(r.Top, pipeline.TokenLogprob{ID: int32(100*i + j), Logprob: -0.25 - float32(j)})
		}
		f.Tokens = append(f.Tokens, r)
	}
	return f
}

// decodeVersion is the version field of a marshalled per-token file.
func decodeVersion(t *testing.T, data []byte) int {
	t.Helper()
	var v struct {
		Version int `msgpack:"version"`
	}
	if err := msgpack.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v.Version
}

// TestPerTokenFileTopLogprobs: a file with top log-probabilities is version 2
// and reads back as written; one without is still version 1, and a file of
// the version-1 layout written by an independent encoder (no top columns, no
// top_logprobs in the header) reads; damaged top-k sections are refused.
func TestPerTokenFileTopLogprobs(t *testing.T) {
	f := topFile(3)
	data, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if v := decodeVersion(t, data); v != 2 {
		t.Errorf("with top logprobs: version %d, want 2", v)
	}
	got, err := runfile.ParsePerToken(data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Header.TopLogprobs != 3 || len(got.Tokens) != 3 {
		t.Fatalf("read back %+v", got.Header)
	}
	for i := range f.Tokens {
		if !sameRecord(got.Tokens[i], f.Tokens[i]) {
			t.Errorf("record %d: %+v, wrote %+v", i, got.Tokens[i], f.Tokens[i])
		}
	}
	plain, err := topFile(0).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if v := decodeVersion(t, plain); v != 1 || bytes.Contains(plain, []byte("top_")) {
		t.Errorf("without top logprobs: version %d, top fields present %v", v, bytes.Contains(plain, []byte("top_")))
	}

	// The version-1 layout, encoded by hand as a map.
	le := func(vs ...uint32) []byte {
		var b []byte
		for _, v := range vs {
			b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
		}
		return b
	}
	old, err := msgpack.Marshal(map[string]any{
		"format": runfile.PerTokenFormat, "version": 1,
		"header": map[string]any{"model": "m", "data": "d", "mode": "stream", "ctx": 8, "stride": 8, "tokenizer": "t", "targets": 2, "nll_sum": 3.0},
		"doc":    le(0, 0), "pos": le(1, 2), "token": le(5, 6), "nll": le(0x3fc00000, 0x3fc00000), // 1.5, 1.5
	})
	if err != nil {
		t.Fatal(err)
	}
	v1, err := runfile.ParsePerToken(old)
	if err != nil {
		t.Fatalf("a version-1 file: %v", err)
	}
	if len(v1.Tokens) != 2 || v1.Tokens[1].Pos != 2 || v1.Tokens[1].Token != 6 || v1.Tokens[1].NLL != 1.5 || v1.Tokens[1].Top != nil {
		t.Errorf("version-1 file read as %+v", v1.Tokens)
	}

	for _, c := range []struct {
		name string
		edit func(*runfile.PerTokenFile)
		want string
	}{
		{"top-k above the maximum", func(f *runfile.PerTokenFile) { f.Header.TopLogprobs = pipeline.MaxTopLogprobs + 1 }, "top-logprobs"},
		{"a short top list", func(f *runfile.PerTokenFile) { f.Tokens[1].Top = f.Tokens[1].Top[:2] }, "top log-probabilities"},
	} {
		g := topFile(3)
		c.edit(g)
		if _, err := g.Marshal(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("marshal %s: err = %v", c.name, err)
		}
	}
	bad := topFile(3)
	bad.Tokens[2].Top[0], bad.Tokens[2].Top[1] = bad.Tokens[2].Top[1], bad.Tokens[2].Top[0]
	data, err = bad.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runfile.ParsePerToken(data); err == nil || !strings.Contains(err.Error(), "decreasing") {
		t.Errorf("top list out of order: err = %v", err)
	}
	// A header that claims more top values than the columns hold.
	var d map[string]any
	data, _ = topFile(3).Marshal()
	if err := msgpack.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	d["header"].(map[string]any)["top_logprobs"] = 4
	data, _ = msgpack.Marshal(d)
	if _, err := runfile.ParsePerToken(data); err == nil || !strings.Contains(err.Error(), "column top_id") {
		t.Errorf("top-k larger than the columns: err = %v", err)
	}
}
