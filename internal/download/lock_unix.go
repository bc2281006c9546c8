//go:build unix

package download

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// LockFile takes an exclusive lock on the file at path (created, with its
// folder, if need be), as huggingface_hub's filelock does, waiting until it
// is free or ctx ends: one download into a cache at a time, also across
// processes (File's partial file is not to be shared). The lock is the
// kernel's (flock), so a process killed while holding it leaves no stale
// lock behind. An error after ctx ends wraps context.Cause(ctx); any other
// (a read-only folder, a file system without locks) says what failed.
func LockFile(ctx context.Context, path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	fd := int(f.Fd())
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				syscall.Flock(fd, syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for another download of the same file (lock %s): %w", path, context.Cause(ctx))
		case <-time.After(50 * time.Millisecond):
		}
	}
}
