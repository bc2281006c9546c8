package infile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within fails the test when f has not returned after a generous timeout: an
// open of a FIFO blocks forever.
func within(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("still blocked after 30 s")
	}
}

func TestOpenRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, kind string }{
		{fifo, "a named pipe (FIFO)"},
		{link, "a named pipe (FIFO)"},
		{"/dev/zero", "a character device"},
		{dir, "a folder"},
	} {
		if _, err := os.Stat(c.path); err != nil {
			continue
		}
		within(t, func() {
			_, err := ReadFile(c.path, 0)
			var nr *NotRegularError
			if !errors.As(err, &nr) || !strings.Contains(err.Error(), c.kind) || !strings.Contains(err.Error(), c.path) {
				t.Errorf("%s: err %v, want one naming it %s", c.path, err, c.kind)
			}
		})
	}
	if _, err := Open(filepath.Join(dir, "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if err := os.Symlink(filepath.Join(dir, "none"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(filepath.Join(dir, "dangling")); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("dangling link: %v", err)
	}
}

func TestReadFileLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(path, 10); err != nil || string(b) != "0123456789" {
		t.Errorf("%q, %v", b, err)
	}
	if s, err := ReadText(path, 0); err != nil || s != "0123456789" {
		t.Errorf("%q, %v", s, err)
	}
	var tl *TooLargeError
	if _, err := ReadText(path, 9); !errors.As(err, &tl) || !strings.Contains(err.Error(), "10 bytes, more than the limit of 9") {
		t.Errorf("err %v", err)
	}
}

// A read of stdin that blocks returns at the first cancel; one longer than
// the limit stops at it.
func TestReadAll(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		pw.Write([]byte("some"))
		cancel()
	}()
	within(t, func() {
		if _, err := ReadAll(ctx, pr, 0, "stdin"); !errors.Is(err, context.Canceled) {
			t.Errorf("err %v, want context.Canceled", err)
		}
	})
	_, err := ReadAll(context.Background(), strings.NewReader(strings.Repeat("x", 101)), 100, "stdin")
	if err == nil || err.Error() != "stdin: more than 100 bytes (the limit)" {
		t.Errorf("err %v", err)
	}
	if s, err := ReadAll(context.Background(), strings.NewReader("abc"), 3, "stdin"); s != "abc" || err != nil {
		t.Errorf("%q, %v", s, err)
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"data/corpus.txt":     "data/corpus.txt",
		"données/ü.txt":       "données/ü.txt",
		"a b.txt":             "a b.txt",
		"evil\u202etxt.exe":   `"evil\u202etxt.exe"`,
		"line\nbreak":         `"line\nbreak"`,
		"esc\x1b[31m":         `"esc\x1b[31m"`,
		"bad\xffutf8":         `"bad\xffutf8"`,
		"zero\u200bwidth.txt": `"zero\u200bwidth.txt"`,
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

// A file of partsFrom bytes or more is read in parts on several goroutines:
// the bytes are the file's, whatever the parts, and the limit holds.
func TestReadFileInParts(t *testing.T) {
	defer func(n int64, procs int) { partsFrom = n; runtime.GOMAXPROCS(procs) }(partsFrom, runtime.GOMAXPROCS(8))
	partsFrom = 16
	dir := t.TempDir()
	for _, size := range []int{0, 1, 15, 16, 17, 31, 100, 1000, 4099} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i*7 + i/256)
		}
		path := filepath.Join(dir, fmt.Sprint(size))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if b, err := ReadFile(path, 0); err != nil || !bytes.Equal(b, data) {
			t.Errorf("%d bytes: read %d bytes, %v; not the file's", size, len(b), err)
		}
		if s, err := ReadText(path, int64(size)); err != nil || s != string(data) {
			t.Errorf("%d bytes as text: %d bytes, %v; not the file's", size, len(s), err)
		}
		var tl *TooLargeError
		if _, err := ReadFile(path, int64(size-1)); size > 1 && !errors.As(err, &tl) {
			t.Errorf("%d bytes, limit %d: err %v", size, size-1, err)
		}
	}
}

// What ReadFile does with a file that changed after its size was taken: one
// that grew is read to its end, and its parts and the rest make it up; one
// that shrank leaves its parts short, an error.
func TestReadFileChanged(t *testing.T) {
	data := []byte(strings.Repeat("0123456789", 100))
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 600) // the size it had
	if err := readParts(f, b); err != nil {
		t.Fatal(err)
	}
	var rest bytes.Buffer
	if err := readRest(f, int64(len(b)), &rest, path, 0); err != nil || !bytes.Equal(append(b, rest.Bytes()...), data) {
		t.Errorf("grown: %v, or not the file", err)
	}
	if err := readRest(f, int64(len(b)), &rest, path, 999); !errors.As(err, new(*TooLargeError)) {
		t.Errorf("grown past the limit: err %v", err)
	}
	if err := readParts(f, make([]byte, 1200)); err == nil || !strings.Contains(err.Error(), "the file changed while it was read") {
		t.Errorf("shrunk: err %v", err)
	}
}

// MakeLarge gives zeroed memory of the size asked for, whatever the system.
func TestMakeLarge(t *testing.T) {
	for _, n := range []int{0, 1, 4096, 5 << 20, 9<<20 + 3} {
		b, touched := MakeLarge(n)
		if len(b) != n || bytes.Count(b, []byte{0}) != n {
			t.Errorf("MakeLarge(%d): %d bytes, not all zero", n, len(b))
		}
		for i := range b {
			b[i] = 1
		}
		touched()
	}
}
