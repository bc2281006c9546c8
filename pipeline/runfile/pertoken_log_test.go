package runfile_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/wgpu-eval/wgpu-eval/internal/backendtest"
	"github.com/wgpu-eval/wgpu-eval/model/exactsum"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// TestPerTokenResume: a per-token run with top log-probabilities stopped
// after some batches, whose records went to a PerTokenLog synced at each
// state, and resumed from that state and log (after a torn record was
// appended to it) gives the records of an uninterrupted run; a log shorter
// than the state says, or records of other targets, are refused.
func TestPerTokenResume(t *testing.T) {
	m := synth.Peaked(synth.TinyConfig(), 3)
	cpu := backend.NewCPU(m, 1)
	cfg := pipeline.EvalConfig{Tokens: backendtest.RandomDocs(6, 80, 3, 41), EOT: backendtest.EOT, Mode: pipeline.ModeDocuments,
		Ctx: 16, Stride: 8, BatchTokens: 32, PerToken: true, TopLogprobs: 4}
	ctx := context.Background()
	whole, err := pipeline.Evaluate(ctx, cpu, cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run.pertoken")
	log, _, err := runfile.OpenPerTokenLog(path, 0, 4)
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

	if _, _, err := runfile.OpenPerTokenLog(path, saved.Sums.Count+1, 4); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("a log shorter than the state: err = %v", err)
	}
	log, records, err := runfile.OpenPerTokenLog(path, saved.Sums.Count, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if fi, _ := os.Stat(path); fi.Size() != int64(saved.Sums.Count)*(20+8*4) {
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
	// A record whose NLL is not the one scored: the records no longer add
	// up to the checkpoint's sum.
	c.ResumePerToken = append([]pipeline.TokenNLL(nil), records...)
	c.ResumePerToken[2].NLL = math.Nextafter32(c.ResumePerToken[2].NLL, 100)
	if _, err := pipeline.Evaluate(ctx, cpu, c); err == nil || !strings.Contains(err.Error(), "add up to") {
		t.Errorf("a record's NLL off by one ulp: err = %v", err)
	}
}

// TestPerTokenLogChecksums: one flipped bit anywhere in a log's valid
// records is refused at reopening, naming the record.
func TestPerTokenLogChecksums(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.pertoken")
	log, _, err := runfile.OpenPerTokenLog(path, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	var recs []pipeline.TokenNLL
	for i := range 5 {
		recs = append(recs, pipeline.TokenNLL{Doc: 1, Pos: i + 1, Token: int32(10 + i), NLL: float32(i) + 0.5,
			Top: []pipeline.TokenLogprob{{ID: 3, Logprob: -0.25}, {ID: 4, Logprob: -2}}})
	}
	if err := log.Append(recs); err != nil {
		t.Fatal(err)
	}
	log.Close()
	clean, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, bit := range []int{0, 8*36 + 3, 8*(2*36+12) + 30, 8*len(clean) - 1} {
		b := bytes.Clone(clean)
		b[bit/8] ^= 1 << (bit % 8)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		rec := bit / 8 / 36
		if l, _, err := runfile.OpenPerTokenLog(path, 5, 2); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("record %d fails its checksum", rec)) {
			if l != nil {
				l.Close()
			}
			t.Errorf("bit %d flipped: err = %v, want record %d refused", bit, err, rec)
		}
	}
}

// TestCheckpointRefusesDamage: a checkpoint with sums no run writes (NaN,
// -1e300, a negative sum of squares), one flipped bit, a truncated file or
// an older version is refused, naming why.
func TestCheckpointRefusesDamage(t *testing.T) {
	dir := t.TempDir()
	save := func(ck *runfile.RunCheckpoint) []byte {
		t.Helper()
		path := filepath.Join(dir, "ck")
		if err := ck.Save(path); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	good := &runfile.RunCheckpoint{Run: runfile.RunIdentity{Mode: "stream", Ctx: 8, Stride: 8}, State: pipeline.State{Samples: 2, Bytes: 40, BatchTokens: 64}}
	for _, x := range []float64{2.5, 0.125, 3} {
		good.State.Sums.AddNLL(x)
	}
	data := save(good)
	if ck, err := runfile.ParseRunCheckpoint(data); err != nil || ck.State.Sums != good.State.Sums {
		t.Fatalf("a good checkpoint: %v", err)
	}
	bad := func(name string, edit func(*runfile.RunCheckpoint)) {
		ck := *good
		edit(&ck)
		if _, err := runfile.ParseRunCheckpoint(save(&ck)); err == nil || !strings.Contains(err.Error(), "damaged") {
			t.Errorf("%s: err = %v, want damaged", name, err)
		}
	}
	bad("NaN sum", func(ck *runfile.RunCheckpoint) { ck.State.Sums.Sum.Add(math.NaN()) })
	bad("sum -1e300", func(ck *runfile.RunCheckpoint) { ck.State.Sums.Sum = exactsum.Sum{}; ck.State.Sums.Sum.Add(-1e300) })
	bad("negative sum of squares", func(ck *runfile.RunCheckpoint) { ck.State.Sums.SumSq.Add(-100) })
	bad("negative count", func(ck *runfile.RunCheckpoint) { ck.State.Sums.Count = -1 })
	bad("huge count", func(ck *runfile.RunCheckpoint) { ck.State.Samples = math.MaxInt })
	for bit := 0; bit < 8*len(data); bit += 7 {
		b := bytes.Clone(data)
		b[bit/8] ^= 1 << (bit % 8)
		if ck, err := runfile.ParseRunCheckpoint(b); err == nil {
			t.Fatalf("bit %d flipped: accepted as %+v", bit, ck.State)
		}
	}
	for _, n := range []int{0, 3, len(data) / 2, len(data) - 1} {
		if _, err := runfile.ParseRunCheckpoint(data[:n]); err == nil {
			t.Errorf("cut to %d bytes: accepted", n)
		}
	}
	old, _ := msgpack.Marshal(map[string]any{"version": 1, "state": map[string]any{"samples": 1}})
	if _, err := runfile.ParseRunCheckpoint(old); err == nil || !strings.Contains(err.Error(), "version 1") {
		t.Errorf("a version 1 checkpoint: err = %v", err)
	}
}

// FuzzParseCheckpoint: no input panics; what parses saves again to bytes
// that parse to the same state.
func FuzzParseCheckpoint(f *testing.F) {
	ck := &runfile.RunCheckpoint{Run: runfile.RunIdentity{Mode: "stream", Ctx: 8, Stride: 8, PerToken: true}, PerTokenRecords: 2}
	ck.State.Sums.AddNLL(1.5)
	ck.State.Sums.AddNLL(0.25)
	path := filepath.Join(f.TempDir(), "ck")
	if err := ck.Save(path); err != nil {
		f.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)-4])
	f.Add([]byte{0x80, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		ck, err := runfile.ParseRunCheckpoint(data)
		if err != nil {
			return
		}
		p := filepath.Join(t.TempDir(), "ck")
		if err := ck.Save(p); err != nil {
			t.Fatal(err)
		}
		again, err := runfile.LoadRunCheckpoint(p)
		if err != nil || again.State != ck.State || again.Run != ck.Run {
			t.Fatalf("saved again: %v", err)
		}
	})
}

// TestCheckpointPerTokenRecords: a checkpoint whose per-token record count is
// not its target count is refused as damaged; one of a run without per-token
// output is another run for one with it.
func TestCheckpointPerTokenRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.ckpt")
	ck := &runfile.RunCheckpoint{Run: runfile.RunIdentity{PerToken: true}, PerTokenRecords: 5}
	ck.State.Sums.Count = 6
	if err := ck.Save(path); err != nil {
		t.Fatal(err)
	}
	if _, err := runfile.LoadRunCheckpoint(path); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("5 records for 6 targets: err = %v", err)
	}
	if d := (runfile.RunIdentity{}).Diff(runfile.RunIdentity{PerToken: true}); !strings.Contains(d, "per-token output: false in the checkpoint, true now") {
		t.Errorf("Diff = %q", d)
	}
}

// FuzzPerTokenLog: any file content and any valid count either opens, with
// exactly that many records read back and the file cut to them, or is
// refused; nothing panics or allocates beyond the file's size.
func FuzzPerTokenLog(f *testing.F) {
	rec := make([]byte, 20+8*2)
	rec[12], rec[15] = 0x00, 0x3f // nll 0.5
	binary.LittleEndian.PutUint32(rec[16+8*2:], crc32.Checksum(rec[:16+8*2], crc32.MakeTable(crc32.Castagnoli)))
	f.Add(append(rec, rec...), 2, 2)
	f.Add(rec[:7], 1, 2)
	f.Add([]byte{}, 0, 0)
	f.Add(rec, 1, 0)
	f.Fuzz(func(t *testing.T, data []byte, valid, k int) {
		path := filepath.Join(t.TempDir(), "log")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		log, records, err := runfile.OpenPerTokenLog(path, valid, k)
		if err != nil {
			return
		}
		defer log.Close()
		if len(records) != valid {
			t.Fatalf("%d records for %d valid", len(records), valid)
		}
		if fi, _ := os.Stat(path); fi.Size() != int64(valid*(20+8*k)) {
			t.Fatalf("log of %d bytes after opening at %d records of top-%d", fi.Size(), valid, k)
		}
	})
}

// TestCheckpointOnAnotherFile: a --checkpoint that names a file of something
// else (a corpus, a model's weights, an empty file) is refused as not a
// checkpoint, never with the advice to delete it, and the refused run leaves
// no lock file; a checkpoint damaged after its beginning is still called
// damaged.
func TestCheckpointOnAnotherFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.ckpt")
	ck := &runfile.RunCheckpoint{Run: runfile.RunIdentity{Mode: "stream", Ctx: 8, Stride: 8}}
	ck.State.Sums.AddNLL(1.5)
	if err := ck.Save(good); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	damaged := bytes.Clone(data)
	damaged[len(damaged)-6] ^= 0xff
	st, _ := msgpack.Marshal(map[string]any{"__metadata__": map[string]string{}})
	for _, c := range []struct {
		name    string
		content []byte
		want    string
	}{
		{"text", []byte("First Citizen:\nBefore we proceed any further, hear me speak.\n"), "not a wgpu-eval checkpoint"},
		{"empty", nil, "not a wgpu-eval checkpoint"},
		{"other msgpack", st, "not a wgpu-eval checkpoint"},
		{"damaged checkpoint", damaged, "damaged"},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, c.content, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := runfile.OpenCheckpointer(path, ck.Run)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
		if strings.Contains(err.Error(), "delete") != (c.want == "damaged") {
			t.Errorf("%s: %v: advice to delete the file only for a damaged checkpoint", c.name, err)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, c.content) {
			t.Errorf("%s: the file was changed", c.name)
		}
		if _, err := os.Lstat(path + ".lock"); err == nil {
			t.Errorf("%s: the refused run left %s.lock", c.name, c.name)
		}
	}
	c, err := runfile.OpenCheckpointer(good, ck.Run)
	if err != nil {
		t.Fatalf("the good checkpoint: %v", err)
	}
	if st, _ := c.Resume(); st == nil {
		t.Error("the good checkpoint: nothing to resume")
	}
	if err := c.Finish(false); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointerNothingToKeep: a run with per-token output interrupted
// before its first batch finished leaves no checkpoint, sidecar log or lock
// file; one interrupted after a batch keeps the checkpoint and the log.
func TestCheckpointerNothingToKeep(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.ckpt")
	id := runfile.RunIdentity{PerToken: true}
	c, err := runfile.OpenCheckpointer(path, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Finish(false); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("a run interrupted before any batch left %d files: %v", len(left), left)
	}
	c, err = runfile.OpenCheckpointer(path, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AppendRecords([]pipeline.TokenNLL{{Doc: 0, Pos: 1, Token: 2, NLL: 0.5}}); err != nil {
		t.Fatal(err)
	}
	var st pipeline.State
	st.Samples, st.Batches = 1, 1
	st.Sums.AddNLL(0.5)
	if err := c.Save(st); err != nil {
		t.Fatal(err)
	}
	if err := c.Finish(false); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + ".pertoken"} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("interrupted after a batch: %v", err)
		}
	}
}

// TestRunIdentityDevices: a checkpoint of a run on several devices that are
// all the same device (--device all on identical GPUs) is the run of any
// number of them, since identical devices give identical bits (a node that
// lost one of its GPUs finishes the run on the others); other devices, other
// kernels, or a mix in another order are another run.
func TestRunIdentityDevices(t *testing.T) {
	const a, b = "GPU A (f16), driver 1 (kernels hardware)", "GPU B (f16), driver 1 (kernels hardware)"
	for _, c := range []struct {
		saved, now string
		same       bool
	}{
		{a + " + " + a, a, true},
		{a, a + " + " + a + " + " + a, true},
		{a + " + " + a, a + " + " + a, true},
		{a + " + " + b, a + " + " + b, true},
		{a + " + " + b, a, false},
		{a + " + " + b, b + " + " + a, false},
		{a, b, false},
		{a + " + " + a, "GPU A (f16), driver 1 (kernels software)", false},
		{"cpu (kernels avx2)", "cpu (kernels avx512)", false},
	} {
		d := runfile.RunIdentity{Device: c.saved}.Diff(runfile.RunIdentity{Device: c.now})
		if (d == "") != c.same {
			t.Errorf("saved on %q, resumed on %q: Diff = %q, want same %v", c.saved, c.now, d, c.same)
		}
	}
}

// TestRunIdentityNamesOption: a checkpoint resumed with another --split,
// --mode or --separator is refused naming that option, though the corpus's
// sha256 (of what is scored) differs too.
func TestRunIdentityNamesOption(t *testing.T) {
	saved := runfile.RunIdentity{CorpusSHA256: "aaaa", Mode: "stream", Split: "all"}
	for _, c := range []struct {
		now  runfile.RunIdentity
		want string
	}{
		{runfile.RunIdentity{CorpusSHA256: "bbbb", Mode: "stream", Split: "val"}, "split: all in the checkpoint, val now"},
		{runfile.RunIdentity{CorpusSHA256: "bbbb", Mode: "documents", Split: "all", Separator: "\n\n"}, "mode: stream in the checkpoint, documents now"},
		{runfile.RunIdentity{CorpusSHA256: "bbbb", Mode: "stream", Split: "all"}, "corpus (sha256): aaaa in the checkpoint, bbbb now"},
	} {
		if d := saved.Diff(c.now); !strings.Contains(d, c.want) {
			t.Errorf("Diff = %q, want %q", d, c.want)
		}
	}
}

// TestRunIdentityShard: a checkpoint of another shard is refused naming
// both, an unsharded run as "none" (not "0/0"); --shard 0/1 is the whole
// run, the same as none.
func TestRunIdentityShard(t *testing.T) {
	none, one := runfile.RunIdentity{}, runfile.RunIdentity{Shard: pipeline.Shard{Index: 0, Count: 1}}
	if d := none.Diff(runfile.RunIdentity{Shard: pipeline.Shard{Index: 1, Count: 4}}); d != "shard: none in the checkpoint, 1/4 now" {
		t.Errorf("Diff = %q, want the shards named, none for the unsharded run", d)
	}
	if d := none.Diff(one); d != "" {
		t.Errorf("unsharded vs --shard 0/1: Diff = %q, want none", d)
	}
}
