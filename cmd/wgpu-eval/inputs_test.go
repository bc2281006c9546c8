package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within fails the test when f has not returned after a generous timeout.
func within(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("still blocked after 60 s")
	}
}

// A FIFO (or a device) where the command reads a file is refused, naming
// it, instead of blocking in open(2): --data, --checkpoint, and the inputs of
// merge and compare.
func TestInputsThatAreNotFiles(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	tmp := t.TempDir()
	fifo := filepath.Join(tmp, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	text := filepath.Join(tmp, "text.txt")
	if err := os.WriteFile(text, []byte("To be, or not to be, that is the question.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"data fifo", []string{"--model", dir, "--data", fifo}, "named pipe (FIFO)"},
		{"data device", []string{"--model", dir, "--data", "/dev/zero"}, "device"},
		{"checkpoint", []string{"--model", dir, "--data", text, "--checkpoint", fifo}, "named pipe (FIFO)"},
		{"merge", []string{"merge", fifo}, "named pipe (FIFO)"},
		{"merge per-token", []string{"merge", "--per-token", filepath.Join(tmp, "out.ptk"), fifo}, "named pipe (FIFO)"},
		{"compare", []string{"compare", fifo, fifo}, "named pipe (FIFO)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			within(t, func() {
				_, _, err := cli(t, "", c.args...)
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("err %v, want one saying %q", err, c.want)
				}
			})
		})
	}
}

// --threads beyond the cores is lowered to them, with a warning.
func TestThreadsBoundedByCores(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	text := filepath.Join(t.TempDir(), "text.txt")
	if err := os.WriteFile(text, []byte("To be, or not to be, that is the question.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := cli(t, "", "--model", dir, "--data", text, "--device", "cpu", "--threads", "100000")
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr)
	}
	n := runtime.NumCPU()
	if want := fmt.Sprintf("--threads 100000 is more than this machine's %d cores: using %d", n, n); !strings.Contains(stderr, want) {
		t.Errorf("stderr %q lacks %q", stderr, want)
	}
	if want := fmt.Sprintf("cpu x%d", n); !strings.Contains(stdout, want) {
		t.Errorf("summary %q lacks %q", stdout, want)
	}
}

// A path with a control or bidirectional-text character (U+202E turns the
// rest of a terminal line around) is printed quoted, in errors and in the
// summary line.
func TestPathsQuoted(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	tmp := t.TempDir()
	evil := filepath.Join(tmp, "evil\u202etxt.exe")
	if err := os.WriteFile(evil, []byte("To be, or not to be, that is the question.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := cli(t, "", "--model", dir, "--data", evil, "--device", "cpu")
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr)
	}
	for name, out := range map[string]string{"stdout": stdout, "stderr": stderr} {
		if strings.ContainsRune(out, '\u202e') {
			t.Errorf("%s holds a raw U+202E: %q", name, out)
		}
	}
	if !strings.Contains(stdout, `evil\u202etxt.exe"`) {
		t.Errorf("summary %q does not name the file quoted", stdout)
	}
	missing := filepath.Join(tmp, "gone\u202e.txt")
	_, _, err = cli(t, "", "--model", dir, "--data", missing)
	if err == nil || strings.ContainsRune(err.Error(), '\u202e') || !strings.Contains(err.Error(), `gone\u202e.txt`) {
		t.Errorf("err %q", err)
	}
}
