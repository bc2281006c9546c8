//go:build unix

package shaders

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestVerdictFileFIFO: a FIFO where the matrix units' verdict file should be
// is refused, naming it, without blocking on it.
func TestVerdictFileFIFO(t *testing.T) {
	d := newTestDev(t)
	fifo := filepath.Join(t.TempDir(), "fifo-matrix-units.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := loadVerdicts(d.dev, fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a verdict file") || !strings.Contains(err.Error(), fifo) {
			t.Errorf("a FIFO: err = %v, want it refused, named", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("reading a FIFO as the verdict file blocked")
	}
}
