package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlagsWithoutEffectRefused: a flag that the run would ignore is refused
// or warned about, naming it; a negative number names its own flag.
func TestFlagsWithoutEffectRefused(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	work := t.TempDir()
	text := filepath.Join(work, "c.txt")
	jsonl := filepath.Join(work, "d.jsonl")
	if err := os.WriteFile(text, []byte(strings.Repeat("Now is the winter of our discontent.\n", 10)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jsonl, []byte("{\"text\":\"one document\"}\n{\"text\":\"and another\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eval := []string{"-q", "--model", dir, "--device", "cpu", "--no-token-cache"}
	for _, c := range []struct {
		args  []string
		usage bool // exit 2
		says  string
	}{
		{append(eval, "--data", jsonl, "--separator", "x"), false, "separator"},
		{append(eval, "--data", text, "--tinyshakespeare-file", text), true, "--tinyshakespeare-file"},
		{[]string{"tokenize", "-q", "--model", dir, "--data", text, "--tinyshakespeare-file", text, "-o", "-"}, true, "--tinyshakespeare-file"},
		{[]string{"generate", "-q", "--model", dir, "-p", "x", "--top-k", "-3"}, true, "--top-k -3"},
		{[]string{"bench", "-q", "--model", dir, "--ctx", "-3"}, true, "--ctx -3"},
	} {
		_, _, err := cli(t, "", c.args...)
		if err == nil || (exitCode(err) == 2) != c.usage || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%v: err = %v (exit %d), want one naming %s", c.args, err, exitCode(err), c.says)
		}
	}
	_, stderr, err := cli(t, "", "bench", "--model", dir, "--device", "cpu", "--batch", "1", "--runs", "1", "--warmup", "0", "--ctx", "16", "--tune", "--chunk", "4")
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--tune", "--chunk"} {
		if !strings.Contains(stderr, "warning: "+flag+" applies to GPUs only") {
			t.Errorf("bench %s on the CPU: no warning in %q", flag, stderr)
		}
	}
}

// TestVersionFlagAndBenchOffline: --version prints what the version command
// prints; bench takes --offline as eval does (a hub id not in the cache is
// then refused without a download).
func TestVersionFlagAndBenchOffline(t *testing.T) {
	isolate(t)
	want, _, err := cli(t, "", "version")
	if err != nil || !strings.HasPrefix(want, "wgpu-eval ") {
		t.Fatalf("version: %q, %v", want, err)
	}
	if got, _, err := cli(t, "", "--version"); err != nil || got != want {
		t.Errorf("--version: %q, %v; want %q", got, err, want)
	}
	t.Setenv("HF_HUB_OFFLINE", "")
	t.Setenv("HF_ENDPOINT", "http://127.0.0.1:1") // never reached
	_, _, err = cli(t, "", "bench", "--offline", "--model", "org/not-cached", "--device", "cpu")
	if err == nil || !strings.Contains(err.Error(), "offline mode is on (--offline") {
		t.Errorf("bench --offline: err = %v", err)
	}
}

// TestJSONToOwnStdout: --json naming the process's own standard output
// (/dev/stdout, /dev/fd/1, or the file stdout goes to) is --json -: stdout
// holds the JSON alone, ready for jq, and the summary goes to stderr.
func TestJSONToOwnStdout(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	work := t.TempDir()
	text := filepath.Join(work, "c.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("Now is the winter of our discontent.\n", 10)), 0o644); err != nil {
		t.Fatal(err)
	}
	outPath := filepath.Join(work, "stdout.txt")
	for _, name := range []func(*os.File) string{
		func(f *os.File) string { return fmt.Sprintf("/dev/fd/%d", f.Fd()) },
		func(*os.File) string { return outPath },
	} {
		out, err := os.Create(outPath)
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		jsonPath := name(out)
		err = run(context.Background(), []string{"--model", dir, "--device", "cpu", "--data", text, "--ctx", "16", "--no-token-cache", "--json", jsonPath},
			strings.NewReader(""), out, &stderr)
		out.Close()
		if err != nil {
			t.Fatalf("--json %s: %v", jsonPath, err)
		}
		b, _ := os.ReadFile(outPath)
		var res map[string]any
		if err := json.Unmarshal(b, &res); err != nil || res["tokens"] == nil {
			t.Errorf("--json %s: stdout is not the JSON alone (%v):\n%s", jsonPath, err, b)
		}
		if !strings.Contains(stderr.String(), "NLL ") {
			t.Errorf("--json %s: no summary on stderr: %q", jsonPath, stderr.String())
		}
	}
	if got := asStdout(outPath, &bytes.Buffer{}); got != outPath {
		t.Errorf("asStdout with a stdout that is no file: %q", got)
	}
}
