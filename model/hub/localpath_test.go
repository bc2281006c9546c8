package hub

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingLocalPathIsNotAHubError: a path that does not exist is reported
// as a missing file or folder, without asking the hub; hub ids still go there.
func TestMissingLocalPathIsNotAHubError(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir("models", 0o755); err != nil {
		t.Fatal(err)
	}
	c := &Client{Endpoint: "http://127.0.0.1:1", CacheDir: filepath.Join(dir, "cache")} // no hub there
	for _, src := range []string{"./my-gpt2", "models/gpt2", "gpt2.safetensors", filepath.Join(dir, "nope"), "../x/model.bin"} {
		_, err := c.Locate(context.Background(), src)
		if err == nil || !strings.Contains(err.Error(), "no such file or folder") || strings.Contains(err.Error(), "hub") {
			t.Errorf("%s: %v, want a missing local path", src, err)
		}
	}
	for _, id := range []string{"gpt2", "openai-community/gpt2"} {
		if looksLikePath(id) {
			t.Errorf("%s taken for a local path", id)
		}
	}
}
