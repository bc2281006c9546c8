package pipeline_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/testmodel"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// TestPerTokenResume: a per-token run with top log-probabilities stopped
// after some batches, whose records went to a PerTokenLog synced at each
// state, and resumed from that state and log (after a torn record was
// appended to it) gives the records of an uninterrupted run; a log shorter
// than the state says, or records of other targets, are refused.
func TestPerTokenResume(t *testing.T) {
	m := testmodel.Peaked(testmodel.TinyConfig(), 3)
	cpu := pipeline.NewCPU(m, 1)
	cfg := pipeline.EvalConfig{Tokens: perTokenCorpus(6, 80, 3, 41), EOT: testEOT, Mode: pipeline.ModeDocuments,
		Ctx: 16, Stride: 8, BatchTokens: 32, PerToken: true, TopLogprobs: 4}
	ctx := context.Background()
	whole, err := pipeline.Evaluate(ctx, cpu, cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run.pertoken")
	log, _, err := pipeline.OpenPerTokenLog(path, 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	var saved pipeline.State
	stop := errors.New("killed")
	c := cfg
	c.OnPerToken = log.Append
	c.OnBatch = func(s pipeline.State) error {
		if n, err := log.Sync(); err != nil || n != s.Sums.Count {
			t.Fatalf("log synced %d records (%v) at %d targets", n, err, s.Sums.Count)
		}
		saved = s
		if s.Samples >= 4 {
			return stop
		}
		return nil
	}
	if _, err := pipeline.Evaluate(ctx, cpu, c); !errors.Is(err, stop) {
		t.Fatalf("err = %v", err)
	}
	log.Close()
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte{9, 9, 9}) // a torn record
	f.Close()

	if _, _, err := pipeline.OpenPerTokenLog(path, saved.Sums.Count+1, 4); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("a log shorter than the state: err = %v", err)
	}
	log, records, err := pipeline.OpenPerTokenLog(path, saved.Sums.Count, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if fi, _ := os.Stat(path); fi.Size() != int64(saved.Sums.Count)*(16+8*4) {
		t.Errorf("log of %d bytes after reopening at %d records", fi.Size(), saved.Sums.Count)
	}
	c = cfg
	c.Resume, c.ResumePerToken, c.OnPerToken = &saved, records, log.Append
	got, err := pipeline.Evaluate(ctx, cpu, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.PerToken) != len(whole.PerToken) || got.NLLSum != whole.NLLSum {
		t.Fatalf("resumed: %d records, sum %v; uninterrupted %d, %v", len(got.PerToken), got.NLLSum, len(whole.PerToken), whole.NLLSum)
	}
	for i := range got.PerToken {
		if !sameRecord(got.PerToken[i], whole.PerToken[i]) {
			t.Fatalf("record %d: resumed %+v, uninterrupted %+v", i, got.PerToken[i], whole.PerToken[i])
		}
	}
	if n, _ := log.Sync(); n != len(whole.PerToken) {
		t.Errorf("the log holds %d records at the end, the run %d", n, len(whole.PerToken))
	}

	c.ResumePerToken = append([]pipeline.TokenNLL(nil), records...)
	c.ResumePerToken[1].Pos++
	c.OnPerToken = nil
	if _, err := pipeline.Evaluate(ctx, cpu, c); err == nil || !strings.Contains(err.Error(), "per-token record 1") {
		t.Errorf("records of other targets: err = %v", err)
	}
	c.ResumePerToken = records[:len(records)-1]
	if _, err := pipeline.Evaluate(ctx, cpu, c); err == nil || !strings.Contains(err.Error(), "cannot resume") {
		t.Errorf("a record short: err = %v", err)
	}
}

// TestCheckpointPerTokenRecords: a checkpoint whose per-token record count is
// not its target count is refused as damaged; one of a run without per-token
// output is another run for one with it.
func TestCheckpointPerTokenRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.ckpt")
	ck := &pipeline.Checkpoint{Run: pipeline.RunIdentity{PerToken: true}, PerTokenRecords: 5}
	ck.State.Sums.Count = 6
	if err := ck.Save(path); err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.LoadCheckpoint(path); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("5 records for 6 targets: err = %v", err)
	}
	if d := (pipeline.RunIdentity{}).Diff(pipeline.RunIdentity{PerToken: true}); !strings.Contains(d, "per-token output: false in the checkpoint, true now") {
		t.Errorf("Diff = %q", d)
	}
}

// FuzzPerTokenLog: any file content and any valid count either opens, with
// exactly that many records read back and the file cut to them, or is
// refused; nothing panics or allocates beyond the file's size.
func FuzzPerTokenLog(f *testing.F) {
	rec := make([]byte, 16+8*2)
	rec[12], rec[15] = 0x00, 0x3f // nll 0.5
	f.Add(append(rec, rec...), 2, 2)
	f.Add(rec[:7], 1, 2)
	f.Add([]byte{}, 0, 0)
	f.Add(rec, 1, 0)
	f.Fuzz(func(t *testing.T, data []byte, valid, k int) {
		path := filepath.Join(t.TempDir(), "log")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		log, records, err := pipeline.OpenPerTokenLog(path, valid, k)
		if err != nil {
			return
		}
		defer log.Close()
		if len(records) != valid {
			t.Fatalf("%d records for %d valid", len(records), valid)
		}
		if fi, _ := os.Stat(path); fi.Size() != int64(valid*(16+8*k)) {
			t.Fatalf("log of %d bytes after opening at %d records of top-%d", fi.Size(), valid, k)
		}
	})
}
