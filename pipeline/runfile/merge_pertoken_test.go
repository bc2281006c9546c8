package runfile_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/backendtest"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// TestMergePerToken: the per-token files of three shards (with top
// log-probabilities) merged are the unsharded run's records, in corpus
// order, with its nll_sum to 1e-12 relative; a missing, a doubled and a
// foreign shard are refused, named.
func TestMergePerToken(t *testing.T) {
	m := synth.Peaked(synth.TinyConfig(), 5)
	cpu := backend.NewCPU(m, 1)
	cfg := pipeline.EvalConfig{Tokens: backendtest.RandomDocs(8, 50, 7, 33, 12), EOT: backendtest.EOT, Mode: pipeline.ModeStrided,
		Ctx: 16, Stride: 6, BatchTokens: 48, PerToken: true, TopLogprobs: 2}
	ctx := context.Background()
	file := func(c pipeline.EvalConfig) *runfile.PerTokenFile {
		res, err := pipeline.Evaluate(ctx, cpu, c)
		if err != nil {
			t.Fatal(err)
		}
		res.Config = &pipeline.RunConfig{Mode: res.Mode, Ctx: c.Ctx, Stride: c.Stride, Split: "all", Precision: "f32"}
		return runfile.NewPerTokenFile(res, "gpt2-builtin")
	}
	whole := file(cfg)
	var shards []*runfile.PerTokenFile
	for _, i := range []int{2, 0, 1} { // any order
		c := cfg
		c.Shard = pipeline.Shard{Index: i, Count: 3}
		shards = append(shards, file(c))
	}
	got, err := runfile.MergePerToken(shards)
	if err != nil {
		t.Fatal(err)
	}
	if got.Header.Shard != nil || got.Header.Targets != len(whole.Tokens) || len(got.Tokens) != len(whole.Tokens) ||
		math.Abs(got.Header.NLLSum-whole.Header.NLLSum) > 1e-12*whole.Header.NLLSum || got.Header.TopLogprobs != 2 {
		t.Fatalf("merged header %+v with %d records; whole %+v with %d", got.Header, len(got.Tokens), whole.Header, len(whole.Tokens))
	}
	for i := range whole.Tokens {
		if !sameRecord(got.Tokens[i], whole.Tokens[i]) {
			t.Fatalf("record %d: merged %+v, whole %+v", i, got.Tokens[i], whole.Tokens[i])
		}
	}
	if _, err := got.Marshal(); err != nil {
		t.Errorf("merged file does not marshal: %v", err)
	}
	for _, c := range []struct {
		name  string
		files []*runfile.PerTokenFile
		want  string
	}{
		{"missing", shards[:2], "missing shard 1/3"},
		{"doubled", []*runfile.PerTokenFile{shards[0], shards[1], shards[2], shards[1]}, "shard 0/3 given twice"},
		{"unsharded", []*runfile.PerTokenFile{whole}, "not a shard"},
	} {
		if _, err := runfile.MergePerToken(c.files); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	foreign := *shards[1]
	foreign.Header.Config = &pipeline.RunConfig{Mode: "strided", Ctx: 16, Stride: 6, Split: "all", Precision: "f16"}
	if _, err := runfile.MergePerToken([]*runfile.PerTokenFile{shards[0], &foreign, shards[2]}); err == nil || !strings.Contains(err.Error(), "precision") {
		t.Errorf("another precision: err = %v", err)
	}
	foreign = *shards[1]
	foreign.Header.TopLogprobs = 3
	if _, err := runfile.MergePerToken([]*runfile.PerTokenFile{shards[0], &foreign, shards[2]}); err == nil || !strings.Contains(err.Error(), "top logprobs") {
		t.Errorf("another top-k: err = %v", err)
	}
}

// TestMergePerTokenBadShard: a per-token file whose header has a shard no
// run writes (a damaged or edited file: a count of 0, negative or huge) is
// refused, naming the file, or reported missing shards; it never panics
// or sizes an allocation by the count.
func TestMergePerTokenBadShard(t *testing.T) {
	for _, c := range []struct {
		shard pipeline.Shard
		want  string
	}{
		{pipeline.Shard{Index: 0, Count: -1}, "file 1 has an invalid shard 0/-1"},
		{pipeline.Shard{Index: 0, Count: 0}, "file 1 has an invalid shard 0/0"},
		{pipeline.Shard{Index: 3, Count: 2}, "file 1 has an invalid shard 3/2"},
		{pipeline.Shard{Index: 5, Count: 1 << 50}, "missing shard 0/1125899906842624"},
	} {
		s := c.shard
		data, err := (&runfile.PerTokenFile{Header: runfile.PerTokenHeader{Shard: &s}}).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		f, err := runfile.ParsePerToken(data)
		if err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("shard %v: panic: %v", s, r)
				}
			}()
			if _, err := runfile.MergePerToken([]*runfile.PerTokenFile{f}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("shard %v: err = %v, want %q", s, err, c.want)
			}
		}()
	}
}
