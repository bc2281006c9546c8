package runfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO where a checkpoint, a per-token file or a per-token log is read is
// refused, naming it, instead of blocking in open(2) (which ignored the first
// Ctrl-C and was still blocked after 52 minutes).
func TestInputsRefuseFIFOs(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	for name, read := range map[string]func() error{
		"checkpoint": func() error { _, err := LoadRunCheckpoint(fifo); return err },
		"per-token":  func() error { _, err := ReadPerToken(fifo); return err },
		"log": func() error {
			l, _, err := OpenPerTokenLog(fifo, 0, 0)
			if l != nil {
				l.Close()
			}
			return err
		},
	} {
		done := make(chan error, 1)
		go func() { done <- read() }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "named pipe (FIFO)") || !strings.Contains(err.Error(), fifo) {
				t.Errorf("%s: err %v, want one naming the FIFO", name, err)
			}
			if IsNoRunCheckpoint(err) {
				t.Errorf("%s: a FIFO taken for no checkpoint", name)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: still blocked after 30 s", name)
		}
	}
	if fi, err := os.Stat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced (%v)", err)
	}
}
