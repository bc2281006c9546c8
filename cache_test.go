package wgpueval

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// filesUnder lists the regular files under dir, relative to it.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, path)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestCacheDir: with Options.CacheDir (TokenizeOptions.CacheDir), the token
// cache of a Named file is written there and nothing goes to the user's
// cache folder ($XDG_CACHE_HOME and $HOME are empty temporary folders here);
// a TinyShakespeare that is not there is looked for in CacheDir/data.
// Without it, the token cache is the user's, as before.
func TestCacheDir(t *testing.T) {
	userCache, home := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CACHE_HOME", userCache)
	t.Setenv("HOME", home)
	t.Setenv(corpus.TinyShakespeareEnv, "")
	text := filepath.Join(t.TempDir(), "speech.txt")
	if err := os.WriteFile(text, []byte(dataText), 0o644); err != nil {
		t.Fatal(err)
	}
	model := tinyModel(t)

	cache := t.TempDir()
	ev, err := Open(context.Background(), model, Options{Device: DeviceCPU, Offline: true, CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	if _, err := ev.Evaluate(context.Background(), Named(text), EvalOptions{Ctx: 16}); err != nil {
		t.Fatal(err)
	}
	got := filesUnder(t, cache)
	if len(got) != 1 || !strings.HasPrefix(got[0], "tokens"+string(filepath.Separator)) {
		t.Errorf("CacheDir holds %q, want one token cache file under tokens/", got)
	}
	_, err = ev.Evaluate(context.Background(), Named(corpus.TinyShakespeare), EvalOptions{Ctx: 16})
	if want := filepath.Join(cache, "data", "tinyshakespeare.txt"); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("TinyShakespeare offline, not cached: %v; want it looked for at %s", err, want)
	}

	tok, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	tokCache := t.TempDir()
	if _, err := Tokenize(context.Background(), tok, text, TokenizeOptions{CacheDir: tokCache}); err != nil {
		t.Fatal(err)
	}
	if got := filesUnder(t, tokCache); len(got) != 1 {
		t.Errorf("Tokenize's CacheDir holds %q, want one token cache file", got)
	}
	for _, dir := range []string{userCache, home} {
		if got := filesUnder(t, dir); len(got) != 0 {
			t.Errorf("written to the user's folder %s: %q", dir, got)
		}
	}

	// The control: without CacheDir the same run writes the user's cache
	// (here the temporary $XDG_CACHE_HOME), so the check above can fail.
	ev2, err := Open(context.Background(), model, Options{Device: DeviceCPU, Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ev2.Close()
	if _, err := ev2.Evaluate(context.Background(), Named(text), EvalOptions{Ctx: 16}); err != nil {
		t.Fatal(err)
	}
	if got := filesUnder(t, filepath.Join(userCache, "wgpu-eval", "tokens")); len(got) != 1 {
		t.Errorf("without CacheDir: the user's token cache holds %q, want one file", got)
	}
}

// TestCacheDirGPU: on a GPU, the Vulkan pipeline cache (and the tuning and
// self-check files beside it) goes to CacheDir/pipelines, nothing to the
// user's cache folder. The run is under the Khronos validation layer where
// it is installed (required in CI), through $WGPU_EVAL_VALIDATION as a
// program that embeds the library turns it on, and fails on any of its
// messages, which reach Options.Log.
func TestCacheDirGPU(t *testing.T) {
	if _, err := backend.Devices(); err != nil {
		if wgpu.Unavailable(err) {
			prereq.Missing(t, "vulkan", err)
		}
		t.Fatal(err)
	}
	inst, err := wgpu.CreateInstance(&wgpu.InstanceDescriptor{Validation: true})
	if err != nil {
		t.Fatal(err)
	}
	validated := inst.ValidationEnabled()
	inst.Close()
	prereq.Validation(t, validated)
	if validated {
		t.Setenv(backend.ValidationEnv, "1")
	}
	var mu sync.Mutex
	var notices []string
	userCache, home := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CACHE_HOME", userCache)
	t.Setenv("HOME", home)
	cache := t.TempDir()
	ev, err := Open(context.Background(), tinyModel(t), Options{Device: GPU(0), Offline: true, CacheDir: cache, Log: func(msg string) {
		mu.Lock()
		notices = append(notices, msg)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Evaluate(context.Background(), Text("speech", dataText), EvalOptions{Ctx: 16}); err != nil {
		t.Fatal(err)
	}
	if err := ev.Close(); err != nil { // the pipeline cache is written when the device closes
		t.Fatal(err)
	}
	checked := false
	for _, msg := range notices {
		if strings.HasPrefix(msg, backend.ValidationPrefix) {
			t.Errorf("the validation layer: %s", msg)
		}
		checked = checked || strings.Contains(msg, backend.ValidationEnv)
	}
	if validated && !checked {
		t.Errorf("no notice that the validation layer checks the run: %q", notices)
	}
	got := filesUnder(t, cache)
	if len(got) == 0 || !strings.HasPrefix(got[0], "pipelines"+string(filepath.Separator)) {
		t.Errorf("CacheDir holds %q, want the pipeline cache under pipelines/", got)
	}
	for _, dir := range []string{userCache, home} {
		for _, f := range filesUnder(t, dir) {
			if strings.Contains(f, "wgpu-eval") { // the driver's own cache (Mesa's) may be there
				t.Errorf("%s holds %s, want none of wgpu-eval's files", dir, f)
			}
		}
	}
}
