package wgpueval

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// unwritableDir is a folder this process cannot create files in: without
// write permission for a user, a read-only tmpfs mounted there for root
// (whom permissions do not stop).
func unwritableDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		return dir
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_RDONLY, "size=64k"); err != nil {
		t.Skipf("running as root, and a read-only tmpfs cannot be mounted here (%v): no folder root cannot write in", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	return dir
}

// TestEvaluateChecksUnwritableFolder: an output file in a folder the process
// cannot write in (a read-only file system, such as a read-only volume of a
// Kubernetes pod, or no permission) is refused by Evaluate as an
// *OptionError of its field before the weights load, not after a run whose
// results would then be lost.
func TestEvaluateChecksUnwritableFolder(t *testing.T) {
	ev, err := Open(context.Background(), tinyModel(t), Options{Device: DeviceCPU, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	ro := unwritableDir(t)
	for _, c := range []struct {
		opt    EvalOptions
		option string
	}{
		{EvalOptions{PerToken: filepath.Join(ro, "p.ptk")}, "PerToken"},
		{EvalOptions{JSON: filepath.Join(ro, "r.json")}, "JSON"},
		{EvalOptions{Checkpoint: filepath.Join(ro, "c")}, "Checkpoint"},
		{EvalOptions{Mode: ModeDocuments, PerDocument: filepath.Join(ro, "d.jsonl")}, "PerDocument"},
	} {
		c.opt.Ctx = 16
		_, err := ev.Evaluate(context.Background(), Text("speech", dataText), c.opt)
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Option != c.option || !strings.Contains(oe.Reason, "cannot write a file in "+ro) {
			t.Errorf("%+v: %v, want an OptionError of %s saying it cannot write in %s", c.opt, err, c.option, ro)
		}
		if ev.backend != nil {
			t.Fatalf("%s: the weights were loaded before the error", c.option)
		}
	}
	// A device is written in place, whatever its folder: /dev/null passes.
	if _, err := ev.Evaluate(context.Background(), Text("speech", dataText), EvalOptions{Ctx: 16, JSON: os.DevNull}); err != nil {
		t.Errorf("JSON on %s: %v", os.DevNull, err)
	}
}
