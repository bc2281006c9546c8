//go:build !linux

package atomicfile

import (
	"errors"
	"os"
)

// openUnnamed is Linux's O_TMPFILE; elsewhere the caller uses a named file.
func openUnnamed(string) (*os.File, error) {
	return nil, errors.ErrUnsupported
}

// errLink is link's failure; link is never called where openUnnamed fails.
var errLink = errors.ErrUnsupported

// linkAs is never called where openUnnamed fails.
func linkAs(*os.File, string) error { return errors.ErrUnsupported }

// link is never called where openUnnamed fails.
func link(*os.File, string, string) (string, error) {
	return "", errors.ErrUnsupported
}
