//go:build unix

package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// TestJSONIntoFIFOAndLink: --json into a FIFO writes the result into it (the
// FIFO stays a FIFO), and --json through a symbolic link writes the link's
// target (the link stays a link).
func TestJSONIntoFIFOAndLink(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	data := runText(t, 8)
	tmp := t.TempDir()
	base := []string{"--model", dir, "--data", data, "--ctx", "16", "--device", "cpu", "--quiet"}
	fifo := filepath.Join(tmp, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- b
	}()
	if _, stderr, err := cli(t, "", append(base, "--json", fifo)...); err != nil {
		t.Fatalf("--json FIFO: %v\n%s", err, stderr)
	}
	var r pipeline.Result
	if err := json.Unmarshal(<-got, &r); err != nil || r.Tokens == 0 {
		t.Errorf("the FIFO's reader got no result: %v", err)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced (%v)", err)
	}

	target, link := filepath.Join(tmp, "result.json"), filepath.Join(tmp, "latest.json")
	if err := os.Symlink("result.json", link); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := cli(t, "", append(base, "--json", link)...); err != nil {
		t.Fatalf("--json link: %v\n%s", err, stderr)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced (%v)", err)
	}
	if b, err := os.ReadFile(target); err != nil || json.Unmarshal(b, &r) != nil {
		t.Errorf("the link's target holds no result: %v", err)
	}
}
