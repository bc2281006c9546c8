package wgpueval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
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

// TestDeviceLineAfterHash checks that the device line, after which Ctrl-C
// gives the partial result (cmd/wgpu-eval's TestInterruptSaysHowFar waits
// for it), comes only once the weights' hash is done: an interruption while
// the run still hashes stops it with the hash's error, as one during the
// loading does, and says nothing of a device. Before, the line came as soon
// as the weights were loaded, and a Ctrl-C just after it, during the hash,
// failed the run with "hash ...: context canceled" instead of its partial
// result.
func TestDeviceLineAfterHash(t *testing.T) {
	release := make(chan struct{})
	hashHook = func(context.Context) { <-release } // the hash is still under way after the loading
	t.Cleanup(func() { hashHook = nil })
	logged := make(chan string, 16)
	loaded := make(chan struct{})
	var once sync.Once
	ev, err := Open(context.Background(), tinyModel(t), Options{Device: "cpu", Offline: true, CacheDir: t.TempDir(),
		Log: func(msg string) { logged <- msg },
		Progress: func(p Progress) {
			if p.Stage == "load" && p.Total > 0 && p.Done == p.Total {
				once.Do(func() { close(loaded) })
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := ev.Evaluate(ctx, Text("t", "To be, or not to be, that is the question."), EvalOptions{Ctx: 8})
		done <- err
	}()
	<-loaded
	var logs []string
	for wait := time.After(300 * time.Millisecond); wait != nil; { // the device line, if it comes now, comes at once
		select {
		case l := <-logged:
			logs = append(logs, l)
		case <-wait:
			wait = nil
		}
	}
	cancel() // Ctrl-C
	close(release)
	err = <-done
	close(logged)
	for l := range logged {
		logs = append(logs, l)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted while hashing: %v, want the hash's context.Canceled", err)
	}
	for _, l := range logs {
		if strings.HasPrefix(l, "device: ") {
			t.Errorf("the device line came before the hash was done: %q", l)
		}
	}

	// Not interrupted, the run says which device it is on, once.
	hashHook = nil
	var n int
	ev2, err := Open(context.Background(), tinyModel(t), Options{Device: "cpu", Offline: true, CacheDir: t.TempDir(),
		Log: func(msg string) {
			if strings.HasPrefix(msg, "device: ") {
				n++
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer ev2.Close()
	for range 2 {
		if _, err := ev2.Evaluate(context.Background(), Text("t", "To be, or not to be, that is the question."), EvalOptions{Ctx: 8}); err != nil {
			t.Fatal(err)
		}
	}
	if n != 1 {
		t.Errorf("%d device lines over two runs, want 1", n)
	}
}
