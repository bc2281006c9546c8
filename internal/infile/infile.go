// Package infile opens the files wgpu-eval reads as input (corpora, token
// caches, checkpoints, per-token files, results) so that a path that is not a
// regular file is refused before open(2): a FIFO's open blocks until a writer
// comes, /dev/zero never ends, and a folder is no file at all. It also reads
// streams (stdin) so that the first Ctrl-C is honoured and the bytes read are
// bounded, and quotes paths for messages. A large file is read on every
// core, into memory that asks for huge pages (MakeLarge), whose first touch
// costs far less. It imports nothing of this module (of outside code,
// golang.org/x/sys, for madvise on Linux).
package infile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// NotRegularError is a path that names something other than a regular file.
type NotRegularError struct {
	Path string
	Mode fs.FileMode // its type, symbolic links followed
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", Quote(e.Path), Kind(e.Mode))
}

// Kind names the type of a file, with an article: "a named pipe (FIFO)",
// "a device", "a folder".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a plain file (" + m.Type().String() + ")"
}

// Check returns path's FileInfo (symbolic links followed) when it is a
// regular file; otherwise an error: the *PathError of a missing file (so
// errors.Is(err, fs.ErrNotExist) holds), a broken or looping link named as
// such, or a *NotRegularError. It never opens path.
func Check(path string) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if lfi, lerr := os.Lstat(path); lerr == nil && lfi.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(path)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%s is a symbolic link to %s, which does not exist: %w", Quote(path), Quote(target), fs.ErrNotExist)
			}
			return nil, fmt.Errorf("%s is a symbolic link that cannot be followed (a loop?): %w", Quote(path), err)
		}
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return fi, nil
}

// Open opens path for reading when it is a regular file (see Check). The open
// itself cannot block: where the system has O_NONBLOCK it is used, and the
// opened file is checked again, so a FIFO put at path after the check is
// refused too.
func Open(path string) (*os.File, error) {
	if _, err := Check(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return f, nil
}

// TooLargeError is input longer than the limit its reader was given.
type TooLargeError struct {
	Name  string // the file, or "stdin"
	Limit int64
	Size  int64 // the file's size when known before reading; 0 otherwise
}

func (e *TooLargeError) Error() string {
	if e.Size > 0 {
		return fmt.Sprintf("%s is %d bytes, more than the limit of %d", Quote(e.Name), e.Size, e.Limit)
	}
	return fmt.Sprintf("%s: more than %d bytes (the limit)", Quote(e.Name), e.Limit)
}

// ReadFile reads the regular file at path (see Open), refusing one larger
// than limit bytes (limit <= 0: no limit) before reading it. The result is
// allocated once, at the file's size, with make: bytes.Buffer.Grow clears
// its new memory in one call that the runtime cannot preempt, which stalled
// a collection for a second on 200 MB (the read touches it anyway). A file
// of partsFrom bytes or more is read in parts on every core, into memory
// from MakeLarge: the read is the first touch of that memory, whose page
// faults, not the copy, are most of its cost (see MakeLarge). A file that
// grows while it is read is read to its end (within limit), as before; one
// that shrinks is an error.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, size, err := openSized(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b []byte
	if size >= partsFrom {
		var touched func()
		b, touched = MakeLarge(int(size))
		err = readParts(f, b)
		touched()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", Quote(path), err)
		}
	}
	// The rest: the whole of a small file, what a large one grew by.
	rest := bytes.NewBuffer(make([]byte, 0, int(size)-len(b)+bytes.MinRead))
	if err := readRest(f, int64(len(b)), rest, path, limit); err != nil {
		return nil, err
	}
	switch {
	case b == nil:
		return rest.Bytes(), nil
	case rest.Len() > 0:
		return append(b, rest.Bytes()...), nil
	}
	return b, nil
}

// ReadText is ReadFile returning a string, without a second copy of the
// bytes: they are ReadFile's, which nothing else holds or writes.
func ReadText(path string, limit int64) (string, error) {
	b, err := ReadFile(path, limit)
	if err != nil || len(b) == 0 {
		return "", err
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), nil
}

// partsFrom is the size from which ReadFile reads a file in parts, each of
// at least partsFrom/2 bytes (a variable for tests).
var partsFrom int64 = 16 << 20

// openSized opens path (see Open) and returns its size, refusing it when
// that is more than limit (when limit > 0).
func openSized(path string, limit int64) (*os.File, int64, error) {
	f, err := Open(path)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if limit > 0 && fi.Size() > limit {
		f.Close()
		return nil, 0, &TooLargeError{Name: path, Limit: limit, Size: fi.Size()}
	}
	return f, fi.Size(), nil
}

// readParts fills b with the bytes of f from its start, in parts of about
// the same size, each read on a goroutine of its own (one per core, each
// part at least partsFrom/2 bytes).
func readParts(f *os.File, b []byte) error {
	n := max(1, min(runtime.GOMAXPROCS(0), len(b)/int(max(partsFrom/2, 1))))
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := range n {
		lo, hi := int(int64(len(b))*int64(k)/int64(n)), int(int64(len(b))*int64(k+1)/int64(n))
		wg.Go(func() {
			if _, err := f.ReadAt(b[lo:hi], int64(lo)); err == io.EOF {
				errs[k] = fmt.Errorf("the file changed while it was read: it ended before byte %d of its %d", hi, len(b))
			} else if err != nil {
				errs[k] = err
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// readRest reads f from offset off (where f is at offset 0) to its end
// into b, refusing more than limit bytes in all (when limit > 0).
func readRest(f *os.File, off int64, b *bytes.Buffer, path string, limit int64) error {
	if off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return fmt.Errorf("read %s: %w", Quote(path), err)
		}
	}
	max := int64(math.MaxInt64)
	if limit > 0 {
		max = limit - off + 1 // one more, to notice a file that grew past the limit
	}
	n, err := b.ReadFrom(io.LimitReader(f, max))
	if err != nil {
		return fmt.Errorf("read %s: %w", Quote(path), err)
	}
	if limit > 0 && off+n > limit {
		return &TooLargeError{Name: path, Limit: limit}
	}
	return nil
}

// ReadAll reads r (stdin, a pipe) to its end as a string, at most limit bytes
// (limit <= 0: no limit; more is a *TooLargeError naming name). It returns
// ctx's error as soon as ctx is done, even while a read blocks: the read goes
// on in a goroutine that ends when r does, and what it read is dropped.
func ReadAll(ctx context.Context, r io.Reader, limit int64, name string) (string, error) {
	type result struct {
		s   string
		err error
	}
	done := make(chan result, 1)
	go func() {
		var b strings.Builder
		src := r
		if limit > 0 {
			src = io.LimitReader(r, limit+1)
		}
		n, err := io.Copy(&b, src)
		switch {
		case err != nil:
			err = fmt.Errorf("read %s: %w", name, err)
		case limit > 0 && n > limit:
			err = &TooLargeError{Name: name, Limit: limit}
		}
		done <- result{b.String(), err}
	}()
	select {
	case res := <-done:
		return res.s, res.err
	case <-ctx.Done():
		return "", fmt.Errorf("read %s: %w", name, ctx.Err())
	}
}

// Quote returns path as it is when it is plain printable text, and quoted
// as a Go string (strconv.Quote) when it holds a control character, a
// bidirectional-text control such as U+202E (which would make a message
// read backwards on a terminal), an invisible formatting character, or
// invalid UTF-8.
func Quote(path string) string {
	for _, r := range path {
		if r == utf8.RuneError || !unicode.IsPrint(r) && r != ' ' || unicode.Is(unicode.Bidi_Control, r) || unicode.Is(unicode.Cf, r) {
			return strconv.Quote(path)
		}
	}
	return path
}
