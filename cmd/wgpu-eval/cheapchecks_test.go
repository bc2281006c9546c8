package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheapChecksBeforeWeights: each check issue 10 names under "The first
// run" (--ctx beyond the model's positions, a bad --split, a missing --data
// file, --json or --checkpoint into a missing folder), and the other flag
// checks that need no weights, fail before the weights go to the device: the
// error names the problem, nothing is printed on stdout, and the "device: ..."
// line the command logs once the weights are loaded never appears.
func TestCheapChecksBeforeWeights(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	tmp := t.TempDir()
	text := filepath.Join(tmp, "t.txt")
	if err := os.WriteFile(text, []byte("To be, or not to be, that is the question.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonl := filepath.Join(tmp, "d.jsonl")
	if err := os.WriteFile(jsonl, []byte(`{"text": "To be."}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missingDir := filepath.Join(tmp, "no-such-folder")
	for _, c := range []struct {
		name  string
		args  []string
		usage bool   // exit status 2
		want  string // in the error
	}{
		{"ctx beyond positions", []string{"--data", text, "--ctx", "65"}, true, "longer than the model's 64 positions"},
		{"stride beyond ctx", []string{"--data", text, "--mode", "strided", "--ctx", "16", "--stride", "17"}, true, "stride"},
		{"stride of ctx with a BOS each window", []string{"--data", text, "--mode", "strided", "--ctx", "16", "--stride", "16", "--bos-each-window"}, true, "between 1 and 15"},
		{"bad split", []string{"--data", text, "--split", "validation"}, true, `--split validation: want all, train or val`},
		{"split of a JSONL corpus", []string{"--data", jsonl, "--split", "val"}, false, "split"},
		{"missing data file", []string{"--data", filepath.Join(tmp, "nope.txt")}, false, "nope.txt"},
		{"json into a missing folder", []string{"--data", text, "--json", filepath.Join(missingDir, "r.json")}, true, "no-such-folder"},
		{"checkpoint into a missing folder", []string{"--data", text, "--checkpoint", filepath.Join(missingDir, "c")}, true, "no-such-folder"},
		{"per-token into a missing folder", []string{"--data", text, "--per-token", filepath.Join(missingDir, "p")}, true, "no-such-folder"},
		{"bad mode", []string{"--data", text, "--mode", "sideways"}, true, "sideways"},
		{"bad device", []string{"--data", text, "--device", "tpu"}, true, "tpu"},
		{"bad precision", []string{"--data", text, "--precision", "f8"}, true, "f8"},
		{"bad matrix units", []string{"--data", text, "--matrix-units", "maybe"}, true, "--matrix-units maybe: want auto, off or on"},
		{"matrix units on the cpu", []string{"--data", text, "--matrix-units", "on"}, true, "--matrix-units on: needs a GPU with f16 weights"},
		{"bad shard", []string{"--data", text, "--shard", "3/2"}, true, "shard"},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, err := cli(t, "", append([]string{"eval", "--model", dir, "--device", "cpu"}, c.args...)...)
			if err == nil {
				t.Fatalf("no error; stdout %q", stdout)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
			if got := exitCode(err) == 2; got != c.usage {
				t.Errorf("exit code %d for %v, want a usage error: %v", exitCode(err), err, c.usage)
			}
			if strings.Contains(stderr, "device: ") || stdout != "" {
				t.Errorf("the weights were loaded before the error (stderr %q, stdout %q)", stderr, stdout)
			}
		})
	}

	// The oracle works: a good run logs the device once the weights are loaded.
	_, stderr, err := cli(t, "", "eval", "--model", dir, "--device", "cpu", "--data", text, "--ctx", "16")
	if err != nil || !strings.Contains(stderr, "device: cpu") {
		t.Fatalf("a good run: err %v, stderr %q, want a \"device: cpu\" line", err, stderr)
	}
}
