package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// openUnnamed opens an unnamed regular file in the folder of path, to hold
// path's new content (O_TMPFILE): it has no name, so a process killed
// before link leaves nothing behind. Its errors (a full disk) name it as
// path's new content. Filesystems without O_TMPFILE make it fail, and the
// caller falls back to a named file.
func openUnnamed(path string) (*os.File, error) {
	fd, err := unix.Open(filepath.Dir(path), unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path+" (its new content, unnamed until complete)"), nil
}

// errLink is link's failure to name the file (no /proc, say): the caller then
// writes a named temporary file instead.
var errLink = errors.New("cannot name an unnamed temporary file")

// linkAs gives the complete unnamed file f the name path, where nothing is
// there (a link cannot replace a file: then it fails, and the caller links it
// under a temporary name and renames that over path).
func linkAs(f *os.File, path string) error {
	return unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
}

// testHookNamed, when set by a test, is called with every temporary name
// link gives an unnamed file.
var testHookNamed func(name string)

// link gives the complete unnamed file f a temporary name base.PID.N.tmp in
// dir, which the caller renames over the target at once (a link cannot
// replace a file).
func link(f *os.File, dir, base string) (string, error) {
	proc := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	for i := 0; i < 100; i++ {
		name := filepath.Join(dir, fmt.Sprintf("%s.%d.%d.tmp", base, os.Getpid(), i))
		err := unix.Linkat(unix.AT_FDCWD, proc, unix.AT_FDCWD, name, unix.AT_SYMLINK_FOLLOW)
		if err == nil {
			if testHookNamed != nil {
				testHookNamed(name)
			}
			return name, nil
		}
		if err != unix.EEXIST {
			return "", fmt.Errorf("%w: %w", errLink, err)
		}
	}
	return "", fmt.Errorf("%w: every temporary name in %s is taken", errLink, dir)
}
