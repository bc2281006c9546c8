package pipeline

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/model"
)

func shardCorpus() EvalConfig {
	rng := rand.New(rand.NewPCG(10, 11))
	var docs [][]int32
	for range 30 {
		docs = append(docs, randomIDs(rng, 1+rng.IntN(90)))
	}
	return EvalConfig{Tokens: &corpus.Tokens{Docs: docs}, Mode: ModeDocuments, Ctx: 32, Stride: 16, EOT: 3, BatchTokens: 128, TokenLen: fakeLen}
}

// TestShardsAddUp: three shards of a run score disjoint parts of it whose
// exact sums, counts and bytes add up to the unsharded run's (runfile's
// TestMerge merges such results).
func TestShardsAddUp(t *testing.T) {
	cfg := shardCorpus()
	whole, err := Evaluate(context.Background(), &fakeBackend{t: t, ctx: 64, batchTokens: 128}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var sums model.LossSums
	bytes, samples := 0, 0
	for i := range 3 {
		c := cfg
		c.Shard = Shard{i, 3}
		r, err := Evaluate(context.Background(), &fakeBackend{t: t, ctx: 64, batchTokens: 128}, c)
		if err != nil {
			t.Fatal(err)
		}
		if r.Shard == nil || *r.Shard != c.Shard || r.Tokens == 0 || r.Tokens >= whole.Tokens || r.InputTokens != whole.InputTokens {
			t.Fatalf("shard %d: %+v", i, r)
		}
		sums.Add(r.Sums())
		bytes += r.ScoredBytes
		samples += r.Samples
	}
	if sums != whole.Sums() || bytes != whole.ScoredBytes || samples != whole.Samples {
		t.Errorf("shards add up to %v, %d bytes, %d samples; whole %v, %d, %d", sums, bytes, samples, whole.Sums(), whole.ScoredBytes, whole.Samples)
	}
	c := cfg
	c.Shard = Shard{3, 3}
	if _, err := Evaluate(context.Background(), &fakeBackend{t: t, ctx: 64}, c); err == nil {
		t.Error("shard 3/3 accepted")
	}
}

// TestParseShard: I/N, N with the index from Kubernetes or Slurm, Slurm alone,
// and bad values.
func TestParseShard(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, c := range []struct {
		flag string
		env  func(string) string
		want Shard
	}{
		{"2/5", env(), Shard{2, 5}},
		{"", env(), Shard{}},
		{"4", env("JOB_COMPLETION_INDEX", "3"), Shard{3, 4}},
		{"4", env("SLURM_ARRAY_TASK_ID", "7", "SLURM_ARRAY_TASK_MIN", "5"), Shard{2, 4}},
		{"", env("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_COUNT", "3"), Shard{1, 3}},
	} {
		got, err := ParseShard(c.flag, c.env)
		if err != nil || got != c.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", c.flag, got, err, c.want)
		}
	}
	for _, c := range []struct {
		flag string
		env  func(string) string
	}{{"5/5", env()}, {"-1/2", env()}, {"a/b", env()}, {"4", env()}, {"4", env("JOB_COMPLETION_INDEX", "4")}, {"0", env()}, {"0/0", env()}, {"0/-1", env()}} {
		if got, err := ParseShard(c.flag, c.env); err == nil {
			t.Errorf("ParseShard(%q) = %v, accepted", c.flag, got)
		}
	}
}

// TestResume: a run stopped after some batches (its last state kept; runfile
// saves it in a checkpoint file) and resumed gives totals bit-identical to an uninterrupted
// run, also after a batch ran out of memory and the budget halved; a
// cancelled run returns its partial result.
func TestResume(t *testing.T) {
	cfg := shardCorpus()
	for _, mem := range []int{1 << 20, 100} {
		newB := func() *asyncBackend {
			return &asyncBackend{fakeBackend: fakeBackend{t: t, ctx: 64, batchTokens: 128, widths: []int{16, 32}, inFlight: 2}, memTokens: mem}
		}
		whole, err := Evaluate(context.Background(), newB(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		var saved State
		stop := errors.New("killed")
		c := cfg
		batches := 0
		c.OnBatch = func(s State) error {
			saved = s
			if batches++; batches == 3 {
				return stop
			}
			return nil
		}
		if _, err := Evaluate(context.Background(), newB(), c); !errors.Is(err, stop) {
			t.Fatalf("mem %d: err = %v", mem, err)
		}
		c.OnBatch, c.Resume = nil, &saved
		got, err := Evaluate(context.Background(), newB(), c)
		if err != nil {
			t.Fatal(err)
		}
		if got.NLLSum != whole.NLLSum || got.NLLSumSq != whole.NLLSumSq || got.Tokens != whole.Tokens || got.ScoredBytes != whole.ScoredBytes {
			t.Errorf("mem %d: resumed %v/%v/%d, uninterrupted %v/%v/%d: not identical", mem, got.NLLSum, got.NLLSumSq, got.Tokens, whole.NLLSum, whole.NLLSumSq, whole.Tokens)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := cfg
	c.Progress = func(p Progress) {
		if p.Done > p.Total/2 {
			cancel()
		}
	}
	r, err := Evaluate(ctx, &fakeBackend{t: t, ctx: 64, batchTokens: 128}, c)
	if !errors.Is(err, context.Canceled) || r == nil || !r.Interrupted || r.Tokens == 0 {
		t.Fatalf("cancelled: %+v, %v", r, err)
	}
	bad := State{Samples: 2, Sums: r.Sums()}
	c = cfg
	c.Resume = &bad
	if _, err := Evaluate(context.Background(), &fakeBackend{t: t, ctx: 64}, c); err == nil || !strings.Contains(err.Error(), "resume") {
		t.Errorf("a state of another run: err = %v", err)
	}
}
