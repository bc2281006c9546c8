package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNewFileNeverNamedTemporarily: a new file gets its own name at once
// (the complete unnamed file linked as it), so a process killed at any
// moment of writing leaves no temporary name behind (such a name is a full
// copy of the output that no run removes); replacing a file still takes a
// temporary name for the rename, and either way the content is whole.
func TestNewFileNeverNamedTemporarily(t *testing.T) {
	dir := t.TempDir()
	if f, err := openUnnamed(filepath.Join(dir, "f")); err != nil {
		t.Skipf("no unnamed temporary files here: %v", err)
	} else {
		f.Close()
	}
	var named []string
	testHookNamed = func(name string) { named = append(named, filepath.Base(name)) }
	t.Cleanup(func() { testHookNamed = nil })
	p := filepath.Join(dir, "out.ptk")
	if err := Write(p, []byte("first")); err != nil {
		t.Fatal(err)
	}
	if len(named) != 0 {
		t.Errorf("a new file was named %v before its own name", named)
	}
	if err := Write(p, []byte("second")); err != nil {
		t.Fatal(err)
	}
	if len(named) != 1 {
		t.Errorf("replacing the file: temporary names %v, want one", named)
	}
	if got := readString(t, p); got != "second" {
		t.Errorf("the file holds %q", got)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the new file: %v, %v", fi, err)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("the folder holds %v", names)
	}
}
