//go:build unix

package model_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
)

// within runs f and fails the test if it has not returned after d. A FIFO
// that f blocks on is opened for writing then, so that f (and the test) ends.
func within(t *testing.T, d time.Duration, fifo string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		for { // f may open the FIFO more than once
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			select {
			case <-done:
				t.Fatalf("blocked on %s for %v", fifo, d)
				return nil
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}

// replaceWithFIFO removes path and makes a FIFO there.
func replaceWithFIFO(t *testing.T, path string) {
	t.Helper()
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// A FIFO where a model file belongs is refused before it is opened: opening
// one blocks until a writer comes, so the run hung forever.
func TestLoadRefusesFIFO(t *testing.T) {
	m := synth.Random(smallConfig(), 1)
	for _, name := range []string{"model.safetensors", "config.json", "model.safetensors.index.json", "vocab.json"} {
		t.Run(name, func(t *testing.T) {
			dir := writeModel(t, m, "F32")
			fifo := filepath.Join(dir, name)
			if name == "vocab.json" {
				os.WriteFile(filepath.Join(dir, "merges.txt"), []byte("#version: 0.2\n"), 0o644)
			}
			if name == "model.safetensors.index.json" { // else model.safetensors is read, the index never
				os.Remove(filepath.Join(dir, "model.safetensors"))
			}
			replaceWithFIFO(t, fifo)
			load := func() error {
				if name == "vocab.json" {
					_, err := tokenizer.Load(dir)
					return err
				}
				_, err := model.Load(dir)
				return err
			}
			wantErr(t, within(t, 5*time.Second, fifo, load), fifo, "named pipe")
		})
	}
	// The Llama family's tokenizer.json is read by LoadJSON itself (and its
	// tokenizer_config.json beside it): a FIFO there hung the CLI.
	t.Run("tokenizer.json", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), tokenizer.TokenizerFile)
		replaceWithFIFO(t, fifo)
		err := within(t, 5*time.Second, fifo, func() error {
			_, err := tokenizer.LoadJSON(fifo)
			return err
		})
		wantErr(t, err, fifo, "named pipe")
	})
	t.Run("file argument", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "x.safetensors")
		replaceWithFIFO(t, fifo)
		err := within(t, 5*time.Second, fifo, func() error {
			_, err := model.OpenCheckpoint(context.Background(), fifo)
			return err
		})
		wantErr(t, err, fifo, "named pipe")
	})
	t.Run("llm.c", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "gpt2.bin")
		replaceWithFIFO(t, fifo)
		err := within(t, 5*time.Second, fifo, func() error {
			_, err := model.Load(fifo)
			return err
		})
		wantErr(t, err, fifo, "named pipe")
	})
}

// A dangling symbolic link or a link loop where a model file belongs is
// named as such, not reported as a folder without the file.
func TestLoadBrokenSymlinks(t *testing.T) {
	m := synth.Random(smallConfig(), 1)
	for _, name := range []string{"model.safetensors", "config.json", "merges.txt"} {
		dir := writeModel(t, m, "F32")
		path := filepath.Join(dir, name)
		if name == "merges.txt" {
			os.WriteFile(filepath.Join(dir, "vocab.json"), []byte(`{}`), 0o644)
		}
		os.Remove(path)
		if err := os.Symlink(filepath.Join(dir, "blobs", "gone"), path); err != nil {
			t.Fatal(err)
		}
		var err error
		if name == "merges.txt" {
			_, err = tokenizer.Load(dir)
		} else {
			_, err = model.Load(dir)
		}
		wantErr(t, err, path, "symbolic link", "does not exist")

		// A loop: the link points at itself.
		os.Remove(path)
		if err := os.Symlink(name, path); err != nil {
			t.Fatal(err)
		}
		if name == "merges.txt" {
			_, err = tokenizer.Load(dir)
		} else {
			_, err = model.Load(dir)
		}
		wantErr(t, err, path, "symbolic link", "loop")
	}
	// The model path itself dangling.
	link := filepath.Join(t.TempDir(), "model.safetensors")
	os.Symlink("/nonexistent/blob", link)
	_, err := model.Load(link)
	wantErr(t, err, link, "symbolic link", "/nonexistent/blob")
}

// A tokenizer file larger than tokenizer.MaxFileBytes is refused by its
// size, before it is read (a sparse file: no disk is used).
func TestTokenizerFileTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), tokenizer.TokenizerFile)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(tokenizer.MaxFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = tokenizer.LoadJSON(path)
	wantErr(t, err, path, "more than the limit")
}
