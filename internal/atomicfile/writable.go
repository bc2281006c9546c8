package atomicfile

import (
	"fmt"
	"io/fs"
	"path/filepath"
)

// Writable reports, before anything is written, a path that Write could not
// write for want of permission: the folder where Write would make the new
// file (that of the file a link finally names) is on a read-only file
// system or not writable by this process. A device, a FIFO or one of the
// process's own descriptors, written in place, passes. A program checks its
// outputs with it before hours of work rather than failing to write them
// after; a full disk cannot be foreseen.
func Writable(path string) error {
	target, fi, fd, err := resolve(path)
	if err != nil {
		return err
	}
	if fd >= 0 || fi != nil && fi.Mode()&(fs.ModeNamedPipe|fs.ModeCharDevice) != 0 {
		return nil
	}
	dir := filepath.Dir(target)
	if err := canWriteIn(dir); err != nil {
		return fmt.Errorf("cannot write a file in %s: %w", dir, err)
	}
	return nil
}
