// Package atomicfile writes output files so that a crash leaves the old content
// or the new, never half of one, and so that writing a result never destroys
// what the path names: a symbolic link keeps pointing where it did, and a
// device or a FIFO (/dev/stdout, /dev/null, a pipe to another program) is
// written to, not replaced by a regular file. It imports nothing of this
// module.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// maxLinks bounds the symbolic links followed from one path (Linux's own limit
// is 40), so that a loop of links is an error, not a hang.
const maxLinks = 40

// Write writes data to path. What is at path decides how:
//
//   - nothing, or a regular file: a temporary file in the same folder, synced,
//     then renamed over path, so that a crash leaves the old file or the new
//     one. Where the system supports it (Linux's O_TMPFILE) the temporary
//     file has no name until it is complete, so a process killed while writing
//     leaves nothing behind. A new file gets mode 0644; an existing one keeps
//     its permissions.
//   - a symbolic link: the same, at the file the link finally names (the link
//     stays a link).
//   - a character device or a FIFO: written directly, in place, since
//     renaming over it would replace /dev/null or a pipe with a regular file.
//   - one of the process's own open files, named through /dev/stdout,
//     /dev/stderr, /dev/fd/N or /proc/self/fd/N (a pipe, a shell's > or >>
//     redirection, a process substitution): written to that descriptor, at
//     its offset and with its flags (appended after a >>), as the program's
//     own writes to it are.
//   - a directory, a socket or anything else: an error naming what is there.
func Write(path string, data []byte) error {
	return WriteFunc(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFunc is Write for content made while it is written (too large to
// hold in memory): write writes the content to w, which is the temporary file
// or the device, under the same rules as Write. When write fails, path is
// left as it was (a device or FIFO may have received part of the content).
// write may be called a second time, on a fresh temporary file, where the
// system refuses to name its unnamed one, so it must write the same content
// each time.
func WriteFunc(path string, write func(w io.Writer) error) error {
	target, fi, fd, err := resolve(path)
	if err != nil {
		return err
	}
	if fd >= 0 {
		return writeFD(path, fd, write)
	}
	if fi == nil {
		return replace(target, write, 0o644, true)
	}
	switch m := fi.Mode(); {
	case m.IsRegular():
		return replace(target, write, m.Perm(), false)
	case m&fs.ModeNamedPipe != 0, m&fs.ModeCharDevice != 0:
		return writeInPlace(target, write)
	case m.IsDir():
		return fmt.Errorf("%s is a directory, not a file", describe(path, target))
	default:
		return fmt.Errorf("%s is a %s, not a file that can be written", describe(path, target), kind(m))
	}
}

// Check reports what would make Write to path fail before any content is
// made: a folder of the file that does not exist or is not a folder, a
// folder this process cannot create the file in (a read-only file system,
// no permission: where Write makes the new file, that of the file a link
// finally names), and what Write refuses at path (a directory, a socket,
// ...). A device, a FIFO or one of the process's own descriptors, written
// in place, passes. A program checks its output paths with it before a
// long run rather than failing to write the result after it; a full disk
// cannot be foreseen. Nothing is created.
func Check(path string) error {
	target, fi, fd, err := resolve(path)
	switch {
	case err != nil:
		return err
	case fd >= 0:
		return nil
	case fi == nil:
		dir := filepath.Dir(target)
		st, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("%s: its folder: %w", describe(path, target), err)
		}
		if !st.IsDir() {
			return fmt.Errorf("%s: %s is not a folder", describe(path, target), dir)
		}
		return writableIn(dir)
	}
	switch m := fi.Mode(); {
	case m.IsRegular():
		return writableIn(filepath.Dir(target))
	case m&fs.ModeNamedPipe != 0, m&fs.ModeCharDevice != 0:
		return nil
	case m.IsDir():
		return fmt.Errorf("%s is a directory, not a file", describe(path, target))
	default:
		return fmt.Errorf("%s is a %s, not a file that can be written", describe(path, target), kind(m))
	}
}

// Replaces reports whether Write to path replaces what is there as a whole
// (nothing yet, or a regular file, through symbolic links), so that a later
// Write leaves only its own content. A device, a FIFO or one of the
// process's own descriptors is written in place: each Write adds its
// content to what a reader got before (or, for a FIFO whose reader has
// gone, blocks until another opens it). A program that rewrites an output
// as it goes (a partial result kept up to date) does so only where this
// holds, and writes anything else once, at the end.
func Replaces(path string) bool {
	_, fi, fd, err := resolve(path)
	return err == nil && fd < 0 && (fi == nil || fi.Mode().IsRegular())
}

// writableIn reports a folder this process cannot create a file in.
func writableIn(dir string) error {
	if err := canWriteIn(dir); err != nil {
		return fmt.Errorf("cannot write a file in %s: %w", dir, err)
	}
	return nil
}

// resolve follows the symbolic links of path to the file they name and
// returns that path and its Lstat (nil when nothing is there yet: a new file,
// or a link to a file not created yet), or, where the links lead to one of
// the process's own descriptors (ownFD), that descriptor (else fd is -1).
func resolve(path string) (target string, fi fs.FileInfo, fd int, err error) {
	p := path
	for range maxLinks {
		if n, ok := ownFD(p); ok {
			return p, nil, n, nil
		}
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil, -1, nil
		}
		if err != nil {
			return "", nil, -1, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, fi, -1, nil
		}
		dest, err := os.Readlink(p)
		if err != nil {
			return "", nil, -1, err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(p), dest)
		}
		p = dest
	}
	return "", nil, -1, fmt.Errorf("%s: more than %d symbolic links (a loop?)", path, maxLinks)
}

// replace writes the content to a temporary file beside path and renames it
// over path: an unnamed one where the system can make and later name it, else
// a named one. Where path is new (fresh), the complete unnamed file is given
// path itself at once, so that no kill leaves it under a temporary name (a
// full copy of the output, under a name no run removes); where a file is
// there, it gets a temporary name for the two calls until the rename.
func replace(path string, write func(io.Writer) error, perm fs.FileMode, fresh bool) error {
	dir, base := filepath.Dir(path), filepath.Base(path)
	if f, err := openUnnamed(path); err == nil {
		err := fill(f, write, perm)
		if err == nil && fresh {
			if linkAs(f, path) == nil {
				f.Close()
				syncDir(dir)
				return nil
			} // made meanwhile, or not linkable: a temporary name and a rename
		}
		name := ""
		if err == nil {
			name, err = link(f, dir, base)
		}
		f.Close()
		if err == nil {
			return rename(name, path)
		}
		if !errors.Is(err, errLink) {
			return err
		}
	}
	f, err := os.CreateTemp(dir, base+".*.tmp")
	if err != nil {
		return err
	}
	err = fill(f, write, perm)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	return rename(f.Name(), path)
}

// fill writes the content to the temporary file f, sets its permissions and
// syncs it.
func fill(f *os.File, write func(io.Writer) error, perm fs.FileMode) error {
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	return f.Sync()
}

// rename moves the complete temporary file tmp over path and syncs the folder.
func rename(tmp, path string) error {
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

// writeInPlace writes the content to the device or FIFO at path as it is.
func writeInPlace(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir makes a rename in dir durable where the system allows; a failure
// only weakens the guarantee after a power loss, so it is not reported.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// describe names path, and the file its links lead to when that differs.
func describe(path, target string) string {
	if path == target {
		return path
	}
	return fmt.Sprintf("%s (a link to %s)", path, target)
}

// kind names the type of a file that Write refuses.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "block device"
	default:
		return "special file (" + m.Type().String() + ")"
	}
}
