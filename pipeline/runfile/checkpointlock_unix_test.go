//go:build unix

package runfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// TestCheckpointWithoutLocks: on a file system that does not lock files
// (flock fails with ENOLCK, as NFS without its lock daemon does, or
// EOPNOTSUPP), a checkpoint still works, without the lock, and NoLock says
// why; no lock file is left. Any other failure to lock refuses the run and
// leaves no lock file either.
func TestCheckpointWithoutLocks(t *testing.T) {
	old := flock
	t.Cleanup(func() { flock = old })
	for _, errno := range []syscall.Errno{syscall.ENOLCK, syscall.EOPNOTSUPP} {
		flock = func(int, int) error { return errno }
		dir := t.TempDir()
		path := filepath.Join(dir, "run.ckpt")
		c, err := OpenCheckpointer(path, RunIdentity{})
		if err != nil {
			t.Fatalf("%v: %v", errno, err)
		}
		if why := c.NoLock(); !strings.Contains(why, "does not lock files") || !strings.Contains(why, errno.Error()) {
			t.Errorf("%v: NoLock = %q", errno, why)
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
		if _, err := LoadRunCheckpoint(path); err != nil {
			t.Errorf("%v: the checkpoint: %v", errno, err)
		}
		if _, err := os.Stat(path + lockSuffix); !os.IsNotExist(err) {
			t.Errorf("%v: a lock file is left (%v)", errno, err)
		}
	}
	flock = func(int, int) error { return syscall.EIO }
	dir := t.TempDir()
	if _, err := OpenCheckpointer(filepath.Join(dir, "run.ckpt"), RunIdentity{}); err == nil || !strings.Contains(err.Error(), "input/output error") {
		t.Errorf("EIO: err = %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("a run refused for EIO left %v", left)
	}
}
