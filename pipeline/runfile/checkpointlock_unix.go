//go:build unix

package runfile

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockCheckpoint takes an exclusive lock on path (created if need be) without
// waiting: two runs sharing one checkpoint would each overwrite the other's
// state. The lock is the kernel's (flock): a process that dies releases it.
// On a file system that does not lock files the error is errNoLocks.
func lockCheckpoint(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	for {
		err = flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	switch {
	case err == nil:
		return func() { f.Close() }, nil // closing releases the lock
	case errors.Is(err, syscall.EWOULDBLOCK):
		f.Close()
		return nil, errCheckpointBusy
	case errors.Is(err, syscall.ENOLCK), errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.ENOSYS):
		// A file system that does not lock (NFS without its lock daemon,
		// Lustre mounted without flock): as on systems without flock.
		f.Close()
		return nil, fmt.Errorf("%w (flock: %w)", errNoLocks, err)
	default:
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
}

// flock is syscall.Flock, a variable so that tests can fail it.
var flock = syscall.Flock
