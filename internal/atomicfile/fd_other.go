//go:build !linux

package atomicfile

import (
	"errors"
	"io"
)

// ownFD is Linux's /proc/PID/fd; elsewhere a path is followed as a link.
func ownFD(string) (int, bool) { return 0, false }

// writeFD is never called where ownFD finds nothing.
func writeFD(string, int, func(io.Writer) error) error { return errors.ErrUnsupported }
