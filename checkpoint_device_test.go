package wgpueval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// TestCheckpointNamesKernelSet: a checkpoint records the device's kernel set
// (the CPU's generic, avx2 or avx512 kernels add up to other last bits), and
// a checkpoint written with another kernel set (another node's CPU, or
// WGPU_EVAL_CPU_KERNELS changed) is refused, naming it, instead of adding the
// sums of two kernel sets into a total neither run gives.
func TestCheckpointNamesKernelSet(t *testing.T) {
	ev, text, interrupted := checkpointFixture(t)
	opt := EvalOptions{Ctx: 16, BatchTokens: 16, NoTokenCache: true, Checkpoint: filepath.Join(t.TempDir(), "run.ckpt")}
	part, err := interrupted(opt)
	if !errors.Is(err, context.Canceled) || part == nil || part.Provenance == nil {
		t.Fatalf("the interrupted run: %v, %+v", err, part)
	}
	kernels := part.Provenance.Device.Kernels
	ck, err := runfile.LoadRunCheckpoint(opt.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if kernels == "" || !strings.Contains(ck.Run.Device, "kernels "+kernels) {
		t.Fatalf("the checkpoint's device %q does not name the kernel set %q", ck.Run.Device, kernels)
	}
	ck.Run.Device = strings.Replace(ck.Run.Device, "kernels "+kernels, "kernels another-set", 1)
	if err := ck.Save(opt.Checkpoint); err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Evaluate(context.Background(), Named(text), opt); err == nil || !strings.Contains(err.Error(), "kernels another-set") {
		t.Errorf("a checkpoint of another kernel set: err = %v, want a refusal naming it", err)
	}
}

// TestCheckpointNamesBuild: a checkpoint records the build that wrote it
// (version and commit), and one written by another build (a cluster job
// requeued onto an updated image, whose kernels may round otherwise) is
// refused, naming both, instead of adding two builds' sums.
func TestCheckpointNamesBuild(t *testing.T) {
	ev, text, interrupted := checkpointFixture(t)
	opt := EvalOptions{Ctx: 16, BatchTokens: 16, NoTokenCache: true, Checkpoint: filepath.Join(t.TempDir(), "run.ckpt")}
	if _, err := interrupted(opt); !errors.Is(err, context.Canceled) {
		t.Fatalf("the interrupted run: %v", err)
	}
	ck, err := runfile.LoadRunCheckpoint(opt.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if want := buildIdentity(); ck.Run.Tool != want {
		t.Fatalf("the checkpoint's build is %q, want %q", ck.Run.Tool, want)
	}
	ck.Run.Tool = "v0.0.1 0123abcd"
	if err := ck.Save(opt.Checkpoint); err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Evaluate(context.Background(), Named(text), opt); err == nil || !strings.Contains(err.Error(), "build of wgpu-eval: v0.0.1 0123abcd in the checkpoint") {
		t.Errorf("a checkpoint of another build: err = %v, want a refusal naming it", err)
	}
}

// TestCheckpointNamesUnstampedBuild: a build that records no commit (go
// run, -buildvcs=false, a git worktree; a test binary too) is named in a
// checkpoint by its executable's sha256 as well, so that another such build
// (other code, the same "devel") does not continue the run; it was "devel"
// alone, which every such build shares.
func TestCheckpointNamesUnstampedBuild(t *testing.T) {
	version, commit := Version()
	if commit != "" && !strings.HasSuffix(commit, "+modified") && !strings.HasSuffix(version, "+dirty") {
		t.Skipf("this test binary records its commit (%s %s)", version, commit)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Skip(err)
	}
	sum := sha256.Sum256(b)
	ev, text, interrupted := checkpointFixture(t)
	opt := EvalOptions{Ctx: 16, BatchTokens: 16, NoTokenCache: true, Checkpoint: filepath.Join(t.TempDir(), "run.ckpt")}
	if _, err := interrupted(opt); !errors.Is(err, context.Canceled) {
		t.Fatalf("the interrupted run: %v", err)
	}
	ck, err := runfile.LoadRunCheckpoint(opt.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(version+" "+commit) + " executable " + hex.EncodeToString(sum[:])[:16]; ck.Run.Tool != want {
		t.Fatalf("the checkpoint's build is %q, want %q", ck.Run.Tool, want)
	}
	ck.Run.Tool = strings.TrimSpace(version+" "+commit) + " executable 0123456789abcdef"
	if err := ck.Save(opt.Checkpoint); err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Evaluate(context.Background(), Named(text), opt); err == nil || !strings.Contains(err.Error(), "executable 0123456789abcdef in the checkpoint") {
		t.Errorf("a checkpoint of another unstamped build: err = %v, want a refusal naming it", err)
	}
}

// TestCheckpointKeptAfterError: a checkpointed run stopped by an error (a
// lost device, a full disk; here its OnScored callback) says that its state
// is kept in the checkpoint and that the same command continues it, and it
// does, to the uninterrupted run's totals.
func TestCheckpointKeptAfterError(t *testing.T) {
	dir := tinyModel(t)
	text := filepath.Join(t.TempDir(), "t.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("Now is the winter of our discontent\nMade glorious summer by this sun of York;\n", 8)), 0o644); err != nil {
		t.Fatal(err)
	}
	ev, err := Open(context.Background(), dir, Options{Device: "cpu", Threads: 1, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	opt := EvalOptions{Ctx: 16, BatchTokens: 16, NoTokenCache: true}
	whole, err := ev.Evaluate(context.Background(), Named(text), opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Checkpoint = filepath.Join(t.TempDir(), "run.ckpt")
	boom := errors.New("device lost")
	calls := 0
	opt.OnScored = func([]TokenNLL) error {
		if calls++; calls == 3 {
			return boom
		}
		return nil
	}
	_, err = ev.Evaluate(context.Background(), Named(text), opt)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), opt.Checkpoint+": run the same command again") {
		t.Fatalf("the run stopped by an error: %v, want %v and where its state is kept", err, boom)
	}
	opt.OnScored = func([]TokenNLL) error { return nil } // the same run: one with its records
	resumed, err := ev.Evaluate(context.Background(), Named(text), opt)
	if err != nil {
		t.Fatal(err)
	}
	if resumed.Sums() != whole.Sums() {
		t.Errorf("resumed %v, uninterrupted %v", resumed.Sums(), whole.Sums())
	}
}

// checkpointFixture opens the tiny model on the CPU (closed when the test
// ends) and writes a text of several batches of ctx 16; interrupted runs
// Evaluate with opt, cancelled once its first batch is scored, so that a
// checkpoint opt names holds part of the run.
func checkpointFixture(t *testing.T) (ev *Evaluator, text string, interrupted func(opt EvalOptions) (*Result, error)) {
	t.Helper()
	dir := tinyModel(t)
	text = filepath.Join(t.TempDir(), "t.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("Now is the winter of our discontent\nMade glorious summer by this sun of York;\n", 8)), 0o644); err != nil {
		t.Fatal(err)
	}
	var cancel context.CancelFunc
	ev, err := Open(context.Background(), dir, Options{Device: "cpu", Threads: 1, Offline: true, Progress: func(p Progress) {
		if p.Stage == "eval" && p.Scored > 0 && cancel != nil {
			cancel() // after the first batch
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ev.Close() })
	return ev, text, func(opt EvalOptions) (*Result, error) {
		ctx, c := context.WithCancel(context.Background())
		cancel = c
		defer func() { cancel = nil; c() }()
		return ev.Evaluate(ctx, Named(text), opt)
	}
}

// TestCheckpointSaveErrorOnce: a run stopped because its checkpoint cannot
// be saved (here its folder went away; a full disk alike) says why once:
// the last try to save it, when the run ends, failed the same way and
// printed the same line again.
func TestCheckpointSaveErrorOnce(t *testing.T) {
	ev, text, _ := checkpointFixture(t)
	dir := filepath.Join(t.TempDir(), "ck")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	opt := EvalOptions{Ctx: 16, BatchTokens: 16, NoTokenCache: true, Checkpoint: filepath.Join(dir, "run.ckpt"),
		OnScored: func([]TokenNLL) error { return os.RemoveAll(dir) }}
	_, err := ev.Evaluate(context.Background(), Named(text), opt)
	if err == nil || strings.Count(err.Error(), "save checkpoint") != 1 {
		t.Errorf("err = %v, want the failed save said once", err)
	}
}
