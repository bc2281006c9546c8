package sysmem

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAvailable(t *testing.T) {
	t.Setenv(Env, "")
	if n, ok := Available(); ok && n == 0 {
		t.Log("no memory available at all?") // possible under a full cgroup; not an error
	}
	t.Setenv(Env, "1000000")
	if n, ok := Available(); !ok || n != 1000000 {
		t.Errorf("Available() = %d, %v with $%s set", n, ok, Env)
	}
	err := Check("KV cache", 6_400_000_000)
	if err == nil || !strings.Contains(err.Error(), "KV cache needs 6.4 GB of memory, but only 1.0 MB is available") {
		t.Errorf("err %v", err)
	}
	if err := Check("small", 1000); err != nil {
		t.Error(err)
	}
	// A malformed override is refused by name, not taken for "no override".
	t.Setenv(Env, "8GB")
	if err := Check("small", 1); err == nil || !strings.Contains(err.Error(), `$WGPU_EVAL_MEMORY_AVAILABLE = "8GB" is not a number of bytes`) {
		t.Errorf("with $%s=8GB: err %v", Env, err)
	}
}

func TestMemAvailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meminfo")
	os.WriteFile(path, []byte("MemTotal:       16318164 kB\nMemFree:          281236 kB\nMemAvailable:    9048860 kB\n"), 0o644)
	if n, ok := memAvailable(path); !ok || n != 9048860<<10 {
		t.Errorf("%d, %v", n, ok)
	}
}
