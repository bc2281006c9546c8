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

// shardRuns scores cfg whole and as three shards on the CPU with a tiny
// GPT-2 far from uniform.
func shardRuns(t *testing.T, cfg pipeline.EvalConfig) (whole *pipeline.Result, shards []*pipeline.Result) {
	t.Helper()
	cpu := backend.NewCPU(synth.Peaked(synth.TinyConfig(), 5), 1)
	whole, err := pipeline.Evaluate(context.Background(), cpu, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		c := cfg
		c.Shard = pipeline.Shard{Index: i, Count: 3}
		r, err := pipeline.Evaluate(context.Background(), cpu, c)
		if err != nil {
			t.Fatal(err)
		}
		shards = append(shards, r)
	}
	return whole, shards
}

func mergeCorpus() pipeline.EvalConfig {
	return pipeline.EvalConfig{Tokens: backendtest.RandomDocs(10, 40, 0, 90, 17, 33, 61, 5, 28), EOT: backendtest.EOT,
		Mode: pipeline.ModeDocuments, Ctx: 32, Stride: 16, BatchTokens: 128, TokenLen: func(id int32) int { return int(id%4) + 1 }}
}

// TestMerge: three shards merged, in any order, equal the unsharded run
// (sums, counts and bytes exactly, the metrics to 1e-12 relative); Merge
// names a missing, a doubled and a foreign shard and an unsharded result.
func TestMerge(t *testing.T) {
	whole, shards := shardRuns(t, mergeCorpus())
	m, err := runfile.Merge([]*pipeline.Result{shards[2], shards[0], shards[1]})
	if err != nil {
		t.Fatal(err)
	}
	if m.Sums() != whole.Sums() || m.ScoredBytes != whole.ScoredBytes || m.Samples != whole.Samples || m.InputTokens != whole.InputTokens {
		t.Errorf("merged %v, %d bytes, %d samples, %d input tokens; whole %v, %d, %d, %d", m.Sums(), m.ScoredBytes, m.Samples, m.InputTokens,
			whole.Sums(), whole.ScoredBytes, whole.Samples, whole.InputTokens)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"mean", m.MeanNLL, whole.MeanNLL}, {"stderr", m.StdErr, whole.StdErr}, {"bpb", m.BitsPerByte, whole.BitsPerByte}} {
		if math.Abs(c.got-c.want) > 1e-12*math.Abs(c.want) {
			t.Errorf("merged %s %.15g, whole %.15g", c.name, c.got, c.want)
		}
	}
	if m.Shard != nil {
		t.Error("the merged result still names a shard")
	}
	other := *shards[1]
	other.Ctx = 64
	older := *shards[1] // a shard of a build before bytes counted the text only
	older.BytesCounted = ""
	if shards[1].BytesCounted != pipeline.BytesOfText {
		t.Errorf("a shard's bytes_counted is %q, want %q", shards[1].BytesCounted, pipeline.BytesOfText)
	}
	for _, c := range []struct {
		name string
		rs   []*pipeline.Result
		want string
	}{
		{"missing", shards[:2], "missing shard 2/3"},
		{"doubled", []*pipeline.Result{shards[0], shards[1], shards[1], shards[2]}, "shard 1/3 given twice"},
		{"unsharded", []*pipeline.Result{whole}, "not a shard"},
		{"another run's", []*pipeline.Result{shards[0], &other, shards[2]}, "ctx 32 vs 64"},
		{"an older build's", []*pipeline.Result{shards[0], &older, shards[2]}, `bytes counted (a build before the text-only count wrote "") text vs ""`},
	} {
		if _, err := runfile.Merge(c.rs); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

// TestMergeRefusesMixedBOS: shards of a run with BOSEachWindow merge into
// its result; a shard of the same run without the option is refused, named.
func TestMergeRefusesMixedBOS(t *testing.T) {
	cfg := mergeCorpus()
	cfg.BOSEachWindow = true
	whole, shards := shardRuns(t, cfg)
	m, err := runfile.Merge(shards)
	if err != nil {
		t.Fatal(err)
	}
	if m.Sums() != whole.Sums() || !m.BOSEachWindow {
		t.Errorf("merged %v, BOS each window %v; whole %v", m.Sums(), m.BOSEachWindow, whole.Sums())
	}
	cfg.BOSEachWindow = false
	_, plain := shardRuns(t, cfg)
	if _, err := runfile.Merge([]*pipeline.Result{shards[0], plain[1], shards[2]}); err == nil || !strings.Contains(err.Error(), "BOS each window true vs false") {
		t.Errorf("a shard without BOS each window: err = %v", err)
	}
}
