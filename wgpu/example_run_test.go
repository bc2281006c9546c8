package wgpu_test

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// TestExampleRuns runs Example (which has no // Output: line, since without
// Vulkan it prints its fallback instead) and checks its result, 3*10+0.5.
func TestExampleRuns(t *testing.T) {
	if inst, err := wgpu.CreateInstance(nil); wgpu.Unavailable(err) {
		prereq.Missing(t, "vulkan", err)
	} else if err == nil {
		inst.Close()
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); done <- b }()
	Example()
	os.Stdout = stdout
	w.Close()
	if out := strings.TrimSpace(string(<-done)); out != "30.5" {
		t.Errorf("Example printed %q, want 30.5", out)
	}
}
