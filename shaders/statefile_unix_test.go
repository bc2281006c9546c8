//go:build unix

package shaders

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStateFilesNotRegular: where the tuning file or the verdict file
// should be, a FIFO (whose open waits for the other end forever) or a
// device that never ends (/dev/zero) is neither read nor written: loading
// gives no choices (the verdicts an error naming the file), saving an
// error naming it, and nothing blocks. A bench --tune with a FIFO there
// hung, deaf to SIGTERM, holding the model's lock.
func TestStateFilesNotRegular(t *testing.T) {
	d := newTestDev(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	choice := TuneChoice{Shape: "f16 N64 K16 M64", Tiles: defaultMatmulTiles.constants(), Nanos: 1}
	for _, path := range []string{fifo, zero} {
		for name, op := range map[string]func() error{
			"loadTuning": func() error {
				if got := loadTuning(d.dev, path); len(got) != 0 {
					t.Errorf("%s: loadTuning read %v", path, got)
				}
				return nil
			},
			"saveTuning":   func() error { return saveTuning(d.dev, path, map[string]TuneChoice{choice.Shape: choice}) },
			"loadVerdicts": func() error { _, err := loadVerdicts(d.dev, path); return err },
			"saveVerdicts": func() error { return saveVerdicts(d.dev, path, coopVerdictFile{}) },
		} {
			done := make(chan error, 1)
			go func() { done <- op() }()
			select {
			case err := <-done:
				if name != "loadTuning" && (err == nil || !strings.Contains(err.Error(), path)) {
					t.Errorf("%s(%s): err = %v, want one naming the file", name, path, err)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("%s(%s) blocked", name, path)
			}
		}
	}
	if fi, err := os.Lstat(zero); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link to /dev/zero was replaced: %v, %v", fi, err)
	}
	// A regular file, and a link to one, still round-trip.
	real := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := saveTuning(d.dev, link, map[string]TuneChoice{choice.Shape: choice}); err != nil {
		t.Fatal(err)
	}
	if got := loadTuning(d.dev, real); len(got) != 1 || !maps.Equal(got[choice.Shape].Tiles, choice.Tiles) {
		t.Errorf("through a link: read back %+v", got)
	}
}
