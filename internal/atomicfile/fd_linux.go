package atomicfile

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
)

// procFD matches a folder of a process's open files, its symbolic links
// resolved (/dev/fd and /proc/self/fd are /proc/PID/fd; /proc/thread-self/fd
// is /proc/PID/task/TID/fd).
var procFD = regexp.MustCompile(`^/proc/([0-9]+)(/task/[0-9]+)?/fd$`)

// ownFD returns N when path is the entry /proc/PID/fd/N of this process
// (reached as /dev/stdout, /dev/fd/N, /proc/self/fd/N, ...): one of its own
// open files, named through a link that is not a path (a pipe's reads
// "pipe:[N]") and whose reopening would lose what the descriptor is (the
// offset and append mode of a shell's > and >>).
func ownFD(path string) (int, bool) {
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return 0, false
	}
	m := procFD.FindStringSubmatch(dir)
	if m == nil || m[1] != strconv.Itoa(os.Getpid()) {
		return 0, false
	}
	n, err := strconv.Atoi(filepath.Base(path))
	return n, err == nil && n >= 0
}

// writeFD writes the content to a duplicate of this process's descriptor fd,
// so that it goes where the descriptor points, at its offset and with its
// flags, as the program's own writes to it do.
func writeFD(path string, fd int, write func(io.Writer) error) error {
	dup, err := syscall.Dup(fd)
	if err != nil {
		return &os.PathError{Op: "dup", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(dup), path)
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
