package wgpueval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestWeightsSHA256 checks the weights' identity against crypto/sha256 over
// whole files (one file: its sha256; several: the sha256 of their "name
// sha256" lines), computed beside other work by startHashing, and that a
// cancelled hashing stops with the context's error.
func TestWeightsSHA256(t *testing.T) {
	dir := t.TempDir()
	var files []string
	var lines string
	for i, size := range []int{0, 1, 3<<20 + 17} { // empty, one byte, past several reads
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(j*7 + i)
		}
		f := filepath.Join(dir, "model-"+string(rune('a'+i))+".safetensors")
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		files = append(files, f)
		lines += filepath.Base(f) + " " + hex.EncodeToString(sum[:]) + "\n"
		got, err := startHashing(context.Background(), "", []string{f}).wait()
		if err != nil || got != hex.EncodeToString(sum[:]) {
			t.Errorf("%d bytes: %s, %v, want %x", size, got, err, sum)
		}
	}
	all := sha256.Sum256([]byte(lines))
	if got, err := startHashing(context.Background(), "", files).wait(); err != nil || got != hex.EncodeToString(all[:]) {
		t.Errorf("three files: %s, %v, want %x", got, err, all)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := weightsSHA256(ctx, "", files[2:]); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
	h := startHashing(context.Background(), "", files[2:])
	h.stop()
	if _, err := h.wait(); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("stopped: %v, want nil or context.Canceled", err)
	}
	if _, err := weightsSHA256(context.Background(), "", []string{filepath.Join(dir, "missing")}); err == nil {
		t.Error("a missing file hashed")
	}
}
