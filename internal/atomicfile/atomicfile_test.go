package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// entries lists dir's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	return names
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteNewAndExisting(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	if err := Write(p, []byte("one")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := readString(t, p); got != "one" || fi.Mode() != 0o644 {
		t.Fatalf("new file: %q mode %v, want \"one\" mode 0644", got, fi.Mode())
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if fi, err = os.Stat(p); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, p); got != "two" || fi.Mode() != 0o600 {
		t.Fatalf("rewritten file: %q mode %v, want \"two\" with the old mode 0600", got, fi.Mode())
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Fatalf("the folder holds %v: a temporary file was left behind", names)
	}
}

func TestWriteFollowsSymlinks(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "real", "result.json")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	// latest -> real/result.json; alias -> latest (relative links, a chain).
	if err := os.Symlink(filepath.Join("real", "result.json"), filepath.Join(dir, "latest")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("latest", filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(dir, "alias"), []byte("new")); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"alias", "latest"} {
		fi, err := os.Lstat(filepath.Join(dir, l))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("%s was replaced by a %v; it must stay a link", l, fi.Mode().Type())
		}
	}
	if got := readString(t, target); got != "new" {
		t.Fatalf("the link's target holds %q, want \"new\"", got)
	}

	// A link to a file not created yet creates it.
	if err := os.Symlink(filepath.Join(dir, "real", "later.json"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(dir, "dangling"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(dir, "real", "later.json")); got != "x" {
		t.Fatalf("the dangling link's target holds %q", got)
	}
	if fi, _ := os.Lstat(filepath.Join(dir, "dangling")); fi == nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatal("the dangling link was replaced")
	}

	if err := os.Symlink("loop2", filepath.Join(dir, "loop1")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop1", filepath.Join(dir, "loop2")); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(dir, "loop1"), nil); err == nil || !strings.Contains(err.Error(), "symbolic links") {
		t.Fatalf("a loop of links: %v, want an error about links", err)
	}
}

func TestWriteRefusesDirectoriesAndSockets(t *testing.T) {
	dir := t.TempDir()
	err := Write(dir, []byte("x"))
	if err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("a directory: %v, want an error saying it is a directory", err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("the directory is gone: %v", err)
	}
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("no unix sockets here: %v", err)
	}
	defer l.Close()
	if err := Write(sock, []byte("x")); err == nil || !strings.Contains(err.Error(), "socket") {
		t.Fatalf("a socket: %v, want an error naming a socket", err)
	}
}

func TestWriteFIFOInPlace(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs")
	}
	p := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(p)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	if err := Write(p, []byte("through the pipe")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the pipe" {
		t.Fatalf("the FIFO's reader got %q", s)
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v %v", fi.Mode(), err)
	}
}

func TestWriteDeviceInPlace(t *testing.T) {
	dir := t.TempDir()
	// A link to /dev/null is safe to test with even where Write would
	// replace what it writes to (the link, then, not the device).
	link := filepath.Join(dir, "null")
	if err := os.Symlink("/dev/null", link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, []byte("discarded")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatal("the link to /dev/null was replaced")
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is no longer a character device: %v", err)
	}
	// A device node of our own (root only: CI runs as root).
	node := filepath.Join(dir, "mynull")
	if err := syscall.Mknod(node, syscall.S_IFCHR|0o666, int(1<<8|3)); err != nil {
		t.Logf("no device node of our own (%v): tested through the link only", err)
		return
	}
	if err := Write(node, []byte("discarded")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(node); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("the device node was replaced by a %v", fi.Mode().Type())
	}
}

// TestUnnamedLeavesNothing checks the mechanism that makes a kill while
// writing leave no file: the temporary file has no name until it is linked.
func TestUnnamedLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	f, err := openUnnamed(filepath.Join(dir, "f"))
	if err != nil {
		t.Skipf("no unnamed temporary files here: %v", err)
	}
	if _, err := f.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if names := entries(t, dir); len(names) != 0 {
		t.Fatalf("an unnamed file shows as %v", names)
	}
	// Its errors name it as the new content of the file it is for.
	if want := filepath.Join(dir, "f"); !strings.HasPrefix(f.Name(), want+" (its new content") {
		t.Errorf("the unnamed file is called %q in errors, want %s's new content", f.Name(), want)
	}
	f.Close()
	if names := entries(t, dir); len(names) != 0 {
		t.Fatalf("an unnamed file closed unlinked left %v", names)
	}
}

// TestWriteFuncStreamsAndFails: WriteFunc writes what its function writes, in
// many pieces; a function that fails part way leaves the old file as it was
// and no temporary file, and its error is returned.
func TestWriteFuncStreamsAndFails(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.jsonl")
	line := strings.Repeat("x", 99) + "\n"
	err := WriteFunc(p, func(w io.Writer) error {
		for range 1000 {
			if _, err := io.WriteString(w, line); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := readString(t, p); got != strings.Repeat(line, 1000) {
		t.Fatalf("streamed file has %d bytes, want %d", len(got), 100*1000)
	}
	boom := errors.New("disk on fire")
	err = WriteFunc(p, func(w io.Writer) error {
		io.WriteString(w, "half of a new file")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("a failing write returned %v, want its error", err)
	}
	if got := readString(t, p); got != strings.Repeat(line, 1000) {
		t.Fatalf("a failed write changed the file to %d bytes", len(got))
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Fatalf("the folder holds %v: a temporary file was left behind", names)
	}
}

// TestCheck: Check refuses exactly the paths whose Write fails for what is
// there (a missing folder, a file as the folder, a directory at the path, a
// link to a missing folder), creates nothing, and accepts what Write writes.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "missing", "t"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		ok   bool
	}{
		{file, true},
		{filepath.Join(dir, "new"), true},
		{"/dev/null", true},
		{filepath.Join(dir, "missing", "out"), false},
		{filepath.Join(file, "out"), false},
		{dir, false},
		{filepath.Join(dir, "dangling"), false},
	} {
		err := Check(c.path)
		if (err == nil) != c.ok {
			t.Errorf("Check(%s): %v, want ok %v", c.path, err, c.ok)
		}
		if werr := Write(c.path, []byte("y")); (werr == nil) != c.ok {
			t.Errorf("Write(%s): %v, but Check said %v", c.path, werr, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing folder was created")
	}
}
