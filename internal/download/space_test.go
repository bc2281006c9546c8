package download

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// withFreeSpace makes the download see free bytes free where it writes
// (ok false: a file system that says nothing) for the test.
func withFreeSpace(t *testing.T, free int64, ok bool) {
	t.Helper()
	old := freeSpace
	freeSpace = func(string) (int64, bool) { return free, ok }
	t.Cleanup(func() { freeSpace = old })
}

// TestFileRefusesWhatCannotFit: a file larger than the free space is refused
// before a byte is written, by name and sizes; one that fits exactly, or
// whose file system says nothing, downloads; a resumed file needs room for
// its rest only, and keeps its prefix when refused.
func TestFileRefusesWhatCannotFit(t *testing.T) {
	data, sum := content(5000)
	s := newServer(t, data)

	dest := filepath.Join(t.TempDir(), "file.bin")
	withFreeSpace(t, 4999, true)
	err := File(context.Background(), s.URL, dest, Options{SHA256: sum})
	if err == nil || !strings.Contains(err.Error(), "not enough free space") || !strings.Contains(err.Error(), "5.0 kB") ||
		!strings.Contains(err.Error(), filepath.Dir(dest)) {
		t.Fatalf("5000 bytes into 4999 free: %v, want a refusal naming the folder and the size", err)
	}
	assertMissing(t, dest)
	assertMissing(t, dest+IncompleteSuffix)

	withFreeSpace(t, 5000, true)
	if err := File(context.Background(), s.URL, dest, Options{SHA256: sum}); err != nil {
		t.Fatalf("5000 bytes into 5000 free: %v", err)
	}
	if !bytes.Equal(readFile(t, dest), data) {
		t.Fatal("content differs")
	}

	unknown := filepath.Join(t.TempDir(), "file.bin")
	withFreeSpace(t, 0, false)
	if err := File(context.Background(), s.URL, unknown, Options{SHA256: sum}); err != nil {
		t.Fatalf("a file system that reports no space: %v", err)
	}

	resumed := filepath.Join(t.TempDir(), "file.bin")
	if err := os.WriteFile(resumed+IncompleteSuffix, data[:3000], 0o644); err != nil {
		t.Fatal(err)
	}
	withFreeSpace(t, 1999, true)
	err = File(context.Background(), s.URL, resumed, Options{SHA256: sum, Size: 5000, SpaceHint: "HINT"})
	if err == nil || !strings.Contains(err.Error(), "2.0 kB more") || !strings.Contains(err.Error(), "kept and resumed") ||
		!errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), "(HINT)") {
		t.Fatalf("the last 2000 bytes into 1999 free: %v", err)
	}
	if got := readFile(t, resumed+IncompleteSuffix); !bytes.Equal(got, data[:3000]) {
		t.Fatalf("the refused download left %d bytes of its partial file, want the 3000 it had", len(got))
	}
	withFreeSpace(t, 2000, true)
	if err := File(context.Background(), s.URL, resumed, Options{SHA256: sum, Size: 5000}); err != nil {
		t.Fatalf("the last 2000 bytes into 2000 free: %v", err)
	}
	if !bytes.Equal(readFile(t, resumed), data) {
		t.Fatal("resumed content differs")
	}
}

// TestDiskFree: the platform's call reports the temporary folder's file
// system, with some space free.
func TestDiskFree(t *testing.T) {
	free, ok := diskFree(t.TempDir())
	if !ok {
		t.Skip("this file system reports no free space")
	}
	if free <= 0 {
		t.Errorf("free %d bytes in the temporary folder", free)
	}
	if _, ok := diskFree(filepath.Join(t.TempDir(), "missing")); ok {
		t.Error("a missing folder reported space")
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 999: "999 bytes", 1000: "1.0 kB", 1_500_000: "1.5 MB", 7_000_000_000: "7.0 GB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}
