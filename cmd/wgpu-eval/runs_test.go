package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// runText is a corpus of a few thousand tokens.
func runText(t *testing.T, lines int) string {
	t.Helper()
	var b strings.Builder
	for i := range lines {
		b.WriteString([]string{"Now is the winter of our discontent ", "Made glorious summer by this sun of York; ",
			"And all the clouds that lour'd upon our house ", "In the deep bosom of the ocean buried.\n"}[i%4])
	}
	path := filepath.Join(t.TempDir(), "text.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func resultJSON(t *testing.T, args ...string) pipeline.Result {
	t.Helper()
	out, stderr, err := cli(t, "", append(args, "--quiet", "--json", "-")...)
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, stderr)
	}
	var r pipeline.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %v in %q", args, err, out)
	}
	return r
}

// TestShardsAndMerge: three --shard runs merged by `wgpu-eval merge` equal
// the unsharded run bit for bit (the sums are exact), and their --per-token
// files merged by `merge --per-token` hold the unsharded run's records and
// sum; merge refuses a missing shard, shards of another run, an output that is
// one of its inputs (leaving it intact), and shards whose numbers no run
// writes.
func TestShardsAndMerge(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	data := runText(t, 40)
	base := []string{"--model", dir, "--data", data, "--ctx", "24", "--device", "cpu", "--mode", "strided", "--stride", "8"}
	wholePT := filepath.Join(t.TempDir(), "whole.ptk")
	whole := resultJSON(t, append(base, "--per-token", wholePT)...)
	var files, ptks []string
	for i, sh := range []string{"0/3", "1/3", "2/3"} {
		f := filepath.Join(t.TempDir(), "shard.json")
		ptk := filepath.Join(t.TempDir(), "shard.ptk")
		if _, stderr, err := cli(t, "", append(base, "--shard", sh, "--quiet", "--json", f, "--per-token", ptk)...); err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, stderr)
		}
		files, ptks = append(files, f), append(ptks, ptk)
	}
	mergedPT := filepath.Join(t.TempDir(), "merged.ptk")
	if _, stderr, err := cli(t, "", append([]string{"merge", "--per-token", mergedPT}, ptks[2], ptks[0], ptks[1])...); err != nil {
		t.Fatalf("merge --per-token: %v\n%s", err, stderr)
	}
	a, err := runfile.ReadPerToken(wholePT)
	if err != nil {
		t.Fatal(err)
	}
	b, err := runfile.ReadPerToken(mergedPT)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Tokens) != len(a.Tokens) || b.Header.Shard != nil || b.Header.NLLSum != a.Header.NLLSum {
		t.Fatalf("merged per-token file: %d records, shard %v, nll_sum %v; unsharded %d, %v", len(b.Tokens), b.Header.Shard, b.Header.NLLSum, len(a.Tokens), a.Header.NLLSum)
	}
	for i, x := range a.Tokens {
		if y := b.Tokens[i]; x.Doc != y.Doc || x.Pos != y.Pos || x.Token != y.Token || math.Float32bits(x.NLL) != math.Float32bits(y.NLL) {
			t.Fatalf("record %d: merged %+v, unsharded %+v", i, y, x)
		}
	}
	if _, _, err := cli(t, "", "merge", "--per-token", mergedPT, ptks[0], ptks[2]); err == nil || !strings.Contains(err.Error(), "missing shard 1/3") {
		t.Errorf("merge --per-token of two of three shards: err = %v", err)
	}
	out, stderr, err := cli(t, "", append([]string{"merge", "--json", "-"}, files...)...)
	if err != nil {
		t.Fatalf("merge: %v\n%s", err, stderr)
	}
	var m pipeline.Result
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if m.Tokens != whole.Tokens || m.ScoredBytes != whole.ScoredBytes || m.Samples != whole.Samples ||
		m.NLLSum != whole.NLLSum || m.NLLSumSq != whole.NLLSumSq || m.MeanNLL != whole.MeanNLL || m.BitsPerByte != whole.BitsPerByte {
		t.Errorf("merged %d tokens, mean %.15g, bpb %.15g; whole %d, %.15g, %.15g", m.Tokens, m.MeanNLL, m.BitsPerByte, whole.Tokens, whole.MeanNLL, whole.BitsPerByte)
	}
	if _, _, err := cli(t, "", append([]string{"merge"}, files[:2]...)...); err == nil || !strings.Contains(err.Error(), "missing shard 2/3") {
		t.Errorf("two of three shards: err = %v", err)
	}
	other := filepath.Join(t.TempDir(), "other.json")
	if _, _, err := cli(t, "", "--model", dir, "--data", data, "--ctx", "16", "--device", "cpu", "--mode", "strided", "--stride", "8", "--shard", "2/3", "--quiet", "--json", other); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cli(t, "", "merge", files[0], files[1], other); err == nil || !strings.Contains(err.Error(), "ctx") {
		t.Errorf("a shard of another run: err = %v", err)
	}
	if _, _, err := cli(t, "", append(base, "--shard", "3/3")...); exitCode(err) != 2 {
		t.Errorf("--shard 3/3: err = %v, want a usage error", err)
	}
	mergeRefusesInputs(t, files, ptks)
	mergeRefusesNumbers(t, files)
}

// fileHash is the sha256 of the file at path.
func fileHash(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// mergeRefusesInputs: an output that is one of the inputs, by its path or a
// link to it, is refused, and the input is left as it was.
func mergeRefusesInputs(t *testing.T, files, ptks []string) {
	link := filepath.Join(t.TempDir(), "link.json")
	if err := os.Symlink(files[0], link); err != nil {
		t.Fatal(err)
	}
	before, beforePT := fileHash(t, files[0]), fileHash(t, ptks[0])
	for _, args := range [][]string{
		append([]string{"merge", "--json", files[0]}, files...),
		append([]string{"merge", "--json", link}, files...),
		append([]string{"merge", "--per-token", ptks[0]}, ptks...),
	} {
		if _, _, err := cli(t, "", args...); err == nil || !strings.Contains(err.Error(), "is the input") {
			t.Errorf("%v: err = %v, want a refusal naming the input", args, err)
		}
	}
	if fileHash(t, files[0]) != before || fileHash(t, ptks[0]) != beforePT {
		t.Error("a refused merge changed its input")
	}
}

// mergeRefusesNumbers: shards edited to hold numbers no run writes are
// refused, naming the field.
func mergeRefusesNumbers(t *testing.T, files []string) {
	b, err := os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, field string
		value       any // nil deletes the field
		want        string
	}{
		{"huge token count", "tokens", int64(math.MaxInt64), "tokens"},
		{"negative token count", "tokens", -5, "tokens"},
		{"negative bytes", "scored_bytes", -1, "scored_bytes"},
		{"negative sum of squares", "nll_sumsq", -1.0, "nll_sumsq"},
		{"sum edited", "nll_sum", 1e300, "nll_sum_exact"},
		{"exact sum missing", "nll_sum_exact", nil, "nll_sum_exact"},
		{"exact sum not a number", "nll_sum_exact", "0x1.8p3", "exact sum"},
		{"mean edited", "mean_nll", 0.5, "mean_nll"},
	} {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if c.value == nil {
			delete(m, c.field)
		} else {
			m[c.field] = c.value
		}
		edited, _ := json.Marshal(m)
		path := filepath.Join(t.TempDir(), "edited.json")
		if err := os.WriteFile(path, edited, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := cli(t, "", "merge", files[0], path, files[2]); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one naming %s", c.name, err, c.want)
		}
	}
}

// TestProvenance: the JSON's config and provenance blocks name what the
// numbers came from, checked against independent facts (the files' sha256).
func TestProvenance(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	data := runText(t, 8)
	r := resultJSON(t, "--model", dir, "--data", data, "--ctx", "16", "--device", "cpu", "--threads", "1")
	sum := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		return hex.EncodeToString(h[:])
	}
	c, p := r.Config, r.Provenance
	if c == nil || p == nil {
		t.Fatalf("no config or provenance: %+v", r)
	}
	if c.Ctx != 16 || c.Mode != "stream" || c.Stride != 16 || c.Precision != "f32" || c.Device != "cpu" || c.Threads != 1 || c.Split != "all" {
		t.Errorf("config %+v", *c)
	}
	if p.Model.WeightsSHA256 != sum(filepath.Join(dir, "model.safetensors")) || p.Corpus.SHA256 != sum(data) {
		t.Errorf("weights %s, corpus %s: not the files' sha256", p.Model.WeightsSHA256, p.Corpus.SHA256)
	}
	if p.Tool != "wgpu-eval" || p.Version == "" || p.Tokenizer == "" || p.Device.Kind != "cpu" || p.Device.Kernels == "" ||
		p.Model.StoredDType != "F32" || p.Corpus.Format != "text" || time.Since(p.Start) > time.Hour {
		t.Errorf("provenance %+v", *p)
	}
}

// TestCheckpointSurvivesKill: a run killed with SIGKILL mid-way and run again
// with the same --checkpoint gives totals bit-identical to an uninterrupted
// run, and (with --per-token and --top-logprobs) a per-token file whose
// records are the uninterrupted run's, also when the sidecar log ends in a
// torn record; a checkpoint of another run is refused, naming what differs.
func TestCheckpointSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	// Build first: isolate moves HOME and XDG_CACHE_HOME, and with them Go's build cache.
	bin := filepath.Join(t.TempDir(), "wgpu-eval")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	isolate(t)
	dir, _, _ := tinyModel(t)
	data := runText(t, 240)
	args := []string{"--model", dir, "--data", data, "--ctx", "16", "--batch-tokens", "32", "--device", "cpu", "--threads", "1"}
	tmp := t.TempDir()
	wholePT, resumedPT := filepath.Join(tmp, "whole.ptk"), filepath.Join(tmp, "resumed.ptk")
	whole := resultJSON(t, append(args, "--per-token", wholePT, "--top-logprobs", "3")...)
	args = append(args, "--per-token", resumedPT, "--top-logprobs", "3")
	ck := filepath.Join(t.TempDir(), "run.ckpt")
	cmd := exec.Command(bin, append(args, "--quiet", "--checkpoint", ck)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(2 * time.Minute)
	for {
		if _, err := os.Stat(ck); err == nil {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the run ended (%v) before its checkpoint appeared", err)
		case <-deadline:
			cmd.Process.Kill()
			t.Fatal("no checkpoint after 2 minutes")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := <-exited; !errors.As(err, &ee) {
		t.Fatalf("the run was not killed mid-way (it ended with %v): make the corpus larger", err)
	}
	saved, err := runfile.LoadRunCheckpoint(ck)
	if err != nil {
		t.Fatal(err)
	}
	if saved.State.Sums.Count == 0 || saved.State.Sums.Count >= whole.Tokens || saved.PerTokenRecords != saved.State.Sums.Count {
		t.Fatalf("checkpoint holds %d of %d targets, %d per-token records", saved.State.Sums.Count, whole.Tokens, saved.PerTokenRecords)
	}
	if _, err := os.Stat(resumedPT); !os.IsNotExist(err) {
		t.Errorf("the killed run left a per-token file (%v)", err)
	}
	// What a crash in the middle of a write leaves: a torn record.
	sidecar, err := os.OpenFile(ck+".pertoken", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := sidecar.Stat()
	t.Logf("killed after %d of %d targets; the sidecar holds %d bytes, %d records valid", saved.State.Sums.Count, whole.Tokens, fi.Size(), saved.PerTokenRecords)
	sidecar.Write([]byte{1, 2, 3, 4, 5, 6, 7})
	sidecar.Close()
	other := append(append([]string{}, args...), "--checkpoint", ck, "--stride", "8", "--mode", "strided")
	if _, _, err := cli(t, "", other...); err == nil || !strings.Contains(err.Error(), "mode: stream in the checkpoint, strided now") {
		t.Errorf("another run's checkpoint: err = %v", err)
	}
	// The same build continues the run: this test's own binary is another
	// build (its executable's sha256 differs), which the checkpoint refuses.
	out, err := exec.Command(bin, append(args, "--checkpoint", ck, "--quiet", "--json", "-")...).Output()
	if err != nil {
		t.Fatalf("the resumed run: %v", err)
	}
	var resumed pipeline.Result
	if err := json.Unmarshal(out, &resumed); err != nil {
		t.Fatalf("the resumed run: %v in %q", err, out)
	}
	if resumed.NLLSum != whole.NLLSum || resumed.NLLSumSq != whole.NLLSumSq || resumed.Tokens != whole.Tokens || resumed.ScoredBytes != whole.ScoredBytes {
		t.Errorf("resumed: sum %v, sumsq %v, %d tokens; uninterrupted %v, %v, %d", resumed.NLLSum, resumed.NLLSumSq, resumed.Tokens, whole.NLLSum, whole.NLLSumSq, whole.Tokens)
	}
	for _, left := range []string{ck, ck + ".pertoken"} {
		if _, err := os.Stat(left); !os.IsNotExist(err) {
			t.Errorf("%s of the completed run is still there (%v)", filepath.Base(left), err)
		}
	}
	a, err := runfile.ReadPerToken(wholePT)
	if err != nil {
		t.Fatal(err)
	}
	b, err := runfile.ReadPerToken(resumedPT)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Tokens) != whole.Tokens || len(b.Tokens) != len(a.Tokens) || b.Header.NLLSum != a.Header.NLLSum || b.Header.TopLogprobs != 3 {
		t.Fatalf("resumed per-token file: %d records, nll_sum %v, top %d; uninterrupted %d, %v", len(b.Tokens), b.Header.NLLSum, b.Header.TopLogprobs, len(a.Tokens), a.Header.NLLSum)
	}
	for i, x := range a.Tokens {
		y := b.Tokens[i]
		if x.Doc != y.Doc || x.Pos != y.Pos || x.Token != y.Token || math.Float32bits(x.NLL) != math.Float32bits(y.NLL) || !slices.Equal(x.Top, y.Top) {
			t.Fatalf("record %d: resumed %+v, uninterrupted %+v", i, y, x)
		}
	}
}

// TestOutputFailureKeepsCheckpoint: a complete run whose per-token file
// cannot be written (/dev/full: the disk is full) still prints its summary, fails,
// and keeps its checkpoint and --json untouched; the same command with a
// writable path then writes every output without scoring again (the result
// of an uninterrupted run, bit for bit) and removes the checkpoint. While a
// run holds a checkpoint, another run given it is refused.
func TestOutputFailureKeepsCheckpoint(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	data := runText(t, 40)
	tmp := t.TempDir()
	base := []string{"--model", dir, "--data", data, "--ctx", "24", "--device", "cpu", "--quiet"}
	whole := resultJSON(t, base...)
	ck, out, ptk := filepath.Join(tmp, "run.ckpt"), filepath.Join(tmp, "out.json"), "/dev/full"
	if _, err := os.Stat(ptk); err != nil {
		t.Skipf("no %s here: %v", ptk, err)
	}
	args := append(base, "--checkpoint", ck, "--json", out)
	stdout, _, err := cli(t, "", append(args, "--per-token", ptk)...)
	if err == nil || !strings.Contains(err.Error(), "no space left") || !strings.Contains(err.Error(), "run the same command again") {
		t.Fatalf("per-token file on a full disk: err = %v", err)
	}
	if !strings.Contains(stdout, "NLL") {
		t.Errorf("no summary line on stdout: %q", stdout)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--json was written before the per-token file (%v)", err)
	}
	if _, err := runfile.LoadRunCheckpoint(ck); err != nil {
		t.Fatalf("the checkpoint of the complete run is gone: %v", err)
	}

	// Another process holding the checkpoint's lock: refused.
	holder := exec.Command("flock", "-o", ck+".lock", "sleep", "30") // -o: sleep does not inherit the lock
	if err := holder.Start(); err == nil {
		time.Sleep(300 * time.Millisecond)
		_, _, err := cli(t, "", append(args, "--per-token", filepath.Join(tmp, "a.ptk"))...)
		holder.Process.Kill()
		holder.Wait()
		if err == nil || !strings.Contains(err.Error(), "in use by another run") {
			t.Errorf("a checkpoint locked by another process: err = %v", err)
		}
	} else {
		t.Logf("no flock(1) here (%v): the lock is not tested across processes", err)
	}

	good := filepath.Join(tmp, "run.ptk")
	_, stderr, err := cli(t, "", append(args, "--per-token", good)...)
	if err != nil {
		t.Fatalf("rerun: %v\n%s", err, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r pipeline.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.NLLSum != whole.NLLSum || r.Tokens != whole.Tokens {
		t.Errorf("rerun: %v over %d tokens; uninterrupted %v over %d", r.NLLSum, r.Tokens, whole.NLLSum, whole.Tokens)
	}
	if f, err := runfile.ReadPerToken(good); err != nil || f.Header.NLLSum != whole.NLLSum {
		t.Errorf("the per-token file of the rerun: %v", err)
	}
	for _, left := range []string{ck, ck + ".lock"} {
		if _, err := os.Stat(left); !os.IsNotExist(err) {
			t.Errorf("%s is still there after the outputs were written (%v)", filepath.Base(left), err)
		}
	}
}

// TestMergeShardsOfOtherPaths: shards run on machines that keep the same
// model and corpus at other paths (the weights' and corpus's sha256 equal)
// merge into the unsharded run's result, per-token files too; merge's
// refusals name the files at fault (a doubled shard both of them, a shard of
// another run its file), not only the shard.
func TestMergeShardsOfOtherPaths(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	data := runText(t, 40)
	// The second machine's copies, at other paths.
	dir2, data2 := filepath.Join(t.TempDir(), "model-copy"), filepath.Join(t.TempDir(), "corpus-copy.txt")
	if err := os.CopyFS(dir2, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(data2, text, 0o644); err != nil {
		t.Fatal(err)
	}
	opts := []string{"--ctx", "24", "--device", "cpu", "--quiet"}
	whole := resultJSON(t, append([]string{"--model", dir, "--data", data}, opts...)...)
	tmp := t.TempDir()
	var files, ptks []string
	for i, in := range [][2]string{{dir, data}, {dir2, data2}} {
		f, p := filepath.Join(tmp, fmt.Sprintf("s%d.json", i)), filepath.Join(tmp, fmt.Sprintf("s%d.ptk", i))
		args := append([]string{"--model", in[0], "--data", in[1], "--shard", fmt.Sprintf("%d/2", i), "--json", f, "--per-token", p}, opts...)
		if _, stderr, err := cli(t, "", args...); err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, stderr)
		}
		files, ptks = append(files, f), append(ptks, p)
	}
	out, stderr, err := cli(t, "", append([]string{"merge", "--json", "-"}, files...)...)
	if err != nil {
		t.Fatalf("merge of shards whose model and corpus were at other paths: %v\n%s", err, stderr)
	}
	var m pipeline.Result
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if m.Sums() != whole.Sums() || m.ScoredBytes != whole.ScoredBytes {
		t.Errorf("merged %v, %d bytes; unsharded %v, %d", m.Sums(), m.ScoredBytes, whole.Sums(), whole.ScoredBytes)
	}
	if _, stderr, err := cli(t, "", "merge", "--per-token", filepath.Join(tmp, "all.ptk"), ptks[0], ptks[1]); err != nil {
		t.Errorf("merge --per-token: %v\n%s", err, stderr)
	}
	// Refusals name the files.
	dup := filepath.Join(tmp, "s0-again.json")
	shard0, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dup, shard0, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cli(t, "", "merge", files[0], files[1], dup); err == nil || !strings.Contains(err.Error(), "shard 0/2 given twice") ||
		!strings.Contains(err.Error(), files[0]) || !strings.Contains(err.Error(), dup) {
		t.Errorf("a doubled shard: err = %v, want one naming %s and %s", err, files[0], dup)
	}
	other := filepath.Join(tmp, "other.json")
	if _, _, err := cli(t, "", "--model", dir, "--data", data, "--ctx", "16", "--device", "cpu", "--quiet", "--shard", "1/2", "--json", other); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cli(t, "", "merge", files[0], other); err == nil || !strings.Contains(err.Error(), "ctx") || !strings.Contains(err.Error(), other) {
		t.Errorf("a shard of another run: err = %v, want one naming %s", err, other)
	}
}
