package wgpueval

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/wgpu-eval/wgpu-eval/internal/hashcache"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// Version returns the module version of this build and the VCS commit it
// was built from ("" when unknown): the ones the Go toolchain recorded, else
// "devel" and buildCommit. go install MODULE@VERSION records that version;
// go build and go install in a git clone record a pseudo-version naming the
// commit (v0.0.0-DATE-COMMIT, "+dirty" with uncommitted changes) and the
// commit; go run, -buildvcs=false and a git worktree record neither.
func Version() (version, commit string) {
	version = "devel"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				if s.Value == "true" && commit != "" {
					commit += "+modified"
				}
			}
		}
	}
	if commit == "" {
		commit = buildCommit
	}
	return version, commit
}

// buildCommit is the commit of a build whose toolchain recorded none: go
// build stamps no commit with -buildvcs=false, nor in a git worktree (a .git
// file, not a folder). It is set with
//
//	-ldflags '-X github.com/wgpu-eval/wgpu-eval.buildCommit=REV'
//
// as scripts/device-check.sh --build does (REV with "+modified" for a tree
// with uncommitted changes), so that the figures a build writes name it.
var buildCommit string

// buildIdentity names this build in a checkpoint (RunIdentity.Tool), so that
// only the build that started a run continues it: the version and commit,
// and, where those cannot tell two builds apart (no commit: go run,
// -buildvcs=false, a git worktree; or uncommitted changes beside it), the
// first 16 hex digits of the running executable's sha256 (Go builds the same
// source into the same bytes, so go run of an unchanged tree resumes).
var buildIdentity = sync.OnceValue(func() string {
	version, commit := Version()
	id := strings.TrimSpace(version + " " + commit)
	if commit != "" && !strings.HasSuffix(commit, "+modified") && !strings.HasSuffix(version, "+dirty") {
		return id
	}
	exe, err := os.Executable()
	if err != nil {
		return id
	}
	f, err := os.Open(exe)
	if err != nil {
		return id
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return id
	}
	return id + " executable " + hex.EncodeToString(h.Sum(nil))[:16]
})

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// weightsSHA256 identifies the weight files: one file's sha256, or for
// several the sha256 of their "name sha256" lines. A file in the Hugging Face
// cache is a link to blobs/<sha256>, whose name the download verified; others
// are hashed (about a second per GB), a megabyte at a time between checks of
// ctx, or their sum is taken from the record in cacheDir (hashcache) that an
// earlier run left for the same file unchanged ("": none).
func weightsSHA256(ctx context.Context, cacheDir string, files []string) (string, error) {
	var lines []string
	for _, f := range files {
		h, err := fileSHA256(ctx, cacheDir, f)
		if err != nil {
			return "", fmt.Errorf("hash %s: %w", f, err)
		}
		if len(files) == 1 {
			return h, nil
		}
		lines = append(lines, filepath.Base(f)+" "+h+"\n")
	}
	sum := sha256.Sum256([]byte(strings.Join(lines, "")))
	return hex.EncodeToString(sum[:]), nil
}

func fileSHA256(ctx context.Context, cacheDir, path string) (string, error) {
	if target, err := filepath.EvalSymlinks(path); err == nil && filepath.Base(filepath.Dir(target)) == "blobs" && hex64.MatchString(filepath.Base(target)) {
		return filepath.Base(target), nil
	}
	sum, _, err := hashcache.Sum(ctx, cacheDir, path)
	return sum, err
}

// hashing is weightsSHA256 run on its own goroutine, beside the weights'
// loading (which, on the GPU path, takes about as long as hashing a local
// checkpoint: the two together took the time of both).
type hashing struct {
	cancel context.CancelFunc
	done   chan struct{}
	sum    string
	err    error
}

// startHashing starts hashing files (records in cacheDir, as weightsSHA256).
func startHashing(ctx context.Context, cacheDir string, files []string) *hashing {
	ctx, cancel := context.WithCancel(ctx)
	h := &hashing{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		if hashHook != nil {
			hashHook(ctx)
		}
		h.sum, h.err = weightsSHA256(ctx, cacheDir, files)
	}()
	return h
}

// hashHook, when set (tests only), runs on the hashing goroutine before it
// hashes, with its context.
var hashHook func(ctx context.Context)

// wait returns the hash once it is done.
func (h *hashing) wait() (string, error) {
	<-h.done
	h.cancel()
	return h.sum, h.err
}

// stop cancels the hashing and waits for its goroutine to return (so that no
// file is read after the caller's return).
func (h *hashing) stop() {
	h.cancel()
	<-h.done
}

// snapshotRevision is the hub commit of a Hugging Face cache snapshot folder
// (…/snapshots/<commit>), else "".
func snapshotRevision(path string) string {
	dir := path
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
		dir = filepath.Dir(path)
	}
	if filepath.Base(filepath.Dir(dir)) == "snapshots" {
		return filepath.Base(dir)
	}
	return ""
}

// deviceIdentity is the device of a run as its checkpoint records it: the
// backend's name and, since sums differ between them in their last bits, the
// kernel set of each part (CPU: generic, avx2, avx512 and the bf16
// products'; GPU: software or hardware, and the matrix units where they
// ran). A run resumed on another node of a cluster, whose CPU has another
// kernel set, or with WGPU_EVAL_CPU_KERNELS changed, would otherwise add
// sums of two kernel sets: a total neither run gives.
// With --device all, each part's, joined with " + " in the parts' order (the
// checkpoint accepts a run on any number of devices where every one is the
// same: runfile.RunIdentity.Diff).
func deviceIdentity(name string, d pipeline.DeviceInfo) string {
	parts := d.Parts
	if len(parts) == 0 {
		d.Name = name
		parts = []pipeline.DeviceInfo{d}
	}
	ids := make([]string, len(parts))
	for i, p := range parts {
		k := cmp.Or(p.Kernels, "?")
		if mu := p.MatrixUnits; mu != nil && mu.Used {
			k += " with matrix units " + mu.Config
			if strings.HasPrefix(mu.Attention, "attention_coop") {
				k += " and their attention"
			}
		}
		ids[i] = p.Name + " (kernels " + k + ")"
	}
	return strings.Join(ids, " + ")
}
