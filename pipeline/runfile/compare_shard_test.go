package runfile_test

import (
	"context"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// TestCompareWholeShard: a --shard 0/1 run's per-token file (its header
// says shard 0/1: the whole corpus) compares with an unsharded run's, the
// same targets; a shard of two does not.
func TestCompareWholeShard(t *testing.T) {
	cfg := synth.TinyConfig()
	m := synth.Peaked(cfg, 5)
	doc := make([]int32, 50)
	for i := range doc {
		doc[i] = int32(i * 7 % cfg.VocabSize)
	}
	toks := &corpus.Tokens{Docs: [][]int32{doc}}
	file := func(sh pipeline.Shard) *runfile.PerTokenFile {
		t.Helper()
		res, err := pipeline.Evaluate(context.Background(), backend.NewCPU(m, 1), pipeline.EvalConfig{Tokens: toks, EOT: 0, Ctx: 16,
			VocabSize: cfg.VocabSize, PerToken: true, Shard: sh})
		if err != nil {
			t.Fatal(err)
		}
		return runfile.NewPerTokenFile(res, "test")
	}
	whole, one := file(pipeline.Shard{}), file(pipeline.Shard{Index: 0, Count: 1})
	if one.Header.Shard == nil || *one.Header.Shard != (pipeline.Shard{Index: 0, Count: 1}) {
		t.Fatalf("--shard 0/1's header shard %v, want 0/1", one.Header.Shard)
	}
	c, err := runfile.Compare(whole, one, 0, nil)
	if err != nil {
		t.Fatalf("unsharded vs 0/1: %v", err)
	}
	if c.Targets != len(whole.Tokens) {
		t.Errorf("compared %d targets, want %d", c.Targets, len(whole.Tokens))
	}
	if _, err := runfile.Compare(whole, file(pipeline.Shard{Index: 0, Count: 2}), 0, nil); err == nil || !strings.Contains(err.Error(), "shard") {
		t.Errorf("unsharded vs 0/2: err = %v, want a different shard", err)
	}
}
