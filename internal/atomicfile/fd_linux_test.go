package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteOwnDescriptors: /proc/self/fd/N, /dev/fd/N and links to them
// (what /dev/stdout is) are written to the descriptor: a pipe gets the
// content, a file opened for appending (a shell's >>) keeps what it had, and
// one opened for writing (>) gets the content at the descriptor's offset, in
// order with the program's own writes to it. Before, the link's text
// ("pipe:[N]", the file's path) was taken for a path: the write failed, or
// replaced the whole file.
func TestWriteOwnDescriptors(t *testing.T) {
	dir := t.TempDir()
	names := func(fd uintptr) map[string]string {
		link := filepath.Join(dir, fmt.Sprintf("stdout-%d", fd))
		if err := os.Symlink(fmt.Sprintf("/proc/self/fd/%d", fd), link); err != nil {
			t.Fatal(err)
		}
		return map[string]string{
			"/proc/self/fd": fmt.Sprintf("/proc/self/fd/%d", fd),
			"/dev/fd":       fmt.Sprintf("/dev/fd/%d", fd),
			"/proc/PID/fd":  fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), fd),
			"a link":        link,
		}
	}

	t.Run("pipe", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var want string
		for how, p := range names(w.Fd()) {
			content := "through " + how + "\n"
			if err := Write(p, []byte(content)); err != nil {
				t.Fatalf("%s: %v", how, err)
			}
			want += content
		}
		w.Close()
		got, err := io.ReadAll(r)
		if err != nil || string(got) != want {
			t.Errorf("the pipe got %q (%v), want %q", got, err, want)
		}
	})

	t.Run("appended file", func(t *testing.T) {
		path := filepath.Join(dir, "log.txt")
		if err := os.WriteFile(path, []byte("earlier results\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := Write(fmt.Sprintf("/dev/fd/%d", f.Fd()), []byte("{\"json\": 1}\n")); err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString("summary\n"); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != "earlier results\n{\"json\": 1}\nsummary\n" {
			t.Errorf("the log holds %q", got)
		}
	})

	t.Run("redirected file", func(t *testing.T) {
		path := filepath.Join(dir, "out.txt")
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		f.WriteString("note\n")
		if err := WriteFunc(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), func(w io.Writer) error {
			_, err := io.WriteString(w, "result\n")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		f.WriteString("summary\n")
		if got, _ := os.ReadFile(path); string(got) != "note\nresult\nsummary\n" {
			t.Errorf("the file holds %q", got)
		}
		if _, err := f.Stat(); err != nil {
			t.Errorf("the descriptor was closed: %v", err)
		}
	})

	t.Run("read-only descriptor", func(t *testing.T) {
		path := filepath.Join(dir, "corpus.txt")
		if err := os.WriteFile(path, []byte("text"), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := Write(fmt.Sprintf("/dev/fd/%d", f.Fd()), []byte("result")); err == nil {
			t.Error("a read-only descriptor was written")
		}
		if got, _ := os.ReadFile(path); string(got) != "text" {
			t.Errorf("the file opened for reading holds %q", got)
		}
	})
}

// TestReplaces: a Write replaces the content of a new path, a regular file
// and a link to one; it adds to what a FIFO, a device or one of the
// process's own descriptors (a pipe, a regular file behind /dev/fd/N) got
// before, so a program that rewrites an output as it goes must not rewrite
// those.
func TestReplaces(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	f, err := os.Create(filepath.Join(dir, "open"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, c := range []struct {
		path string
		want bool
	}{
		{filepath.Join(dir, "new"), true},
		{file, true},
		{link, true},
		{fifo, false},
		{"/dev/null", false},
		{fmt.Sprintf("/dev/fd/%d", w.Fd()), false},
		{fmt.Sprintf("/proc/self/fd/%d", f.Fd()), false},
		{dir, false},
	} {
		if got := Replaces(c.path); got != c.want {
			t.Errorf("Replaces(%s) = %v, want %v", c.path, got, c.want)
		}
	}
}
