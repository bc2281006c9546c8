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
func lockCheckpoint(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
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
	default:
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
}
