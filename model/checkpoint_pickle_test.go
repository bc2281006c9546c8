package model

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPickleOnlyFolderSaysHowToConvert: a folder with only pytorch_model.bin
// says it is never unpickled and how to make safetensors of it.
func TestPickleOnlyFolderSaysHowToConvert(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"config.json", "pytorch_model.bin"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := OpenCheckpoint(context.Background(), dir)
	if err == nil || !strings.Contains(err.Error(), "pytorch_model.bin") || !strings.Contains(err.Error(), "safe_serialization=True") {
		t.Errorf("err = %v, want the conversion hint", err)
	}
}
