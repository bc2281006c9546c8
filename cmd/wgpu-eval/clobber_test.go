package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputsNeverClobberInputs: in every command, an output path that names
// one of its inputs (the corpus, a model file, a per-token file compared) or
// another of its outputs is a usage error (exit 2) naming both, and no file is
// changed; before, each of these ran and exited 0, the input destroyed (a
// checkpoint on the JSON's path deleted the result at the end).
func TestOutputsNeverClobberInputs(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	work := t.TempDir()
	corpusFile := filepath.Join(work, "c.txt")
	if err := os.WriteFile(corpusFile, []byte(strings.Repeat("To be, or not to be, that is the question.\n", 20)), 0o644); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(work, "a.ptk"), filepath.Join(work, "b.ptk")
	for _, p := range []string{a, b} {
		if _, _, err := cli(t, "", "-q", "--model", dir, "--device", "cpu", "--data", corpusFile, "--ctx", "32", "--no-token-cache", "--per-token", p); err != nil {
			t.Fatal(err)
		}
	}
	config := filepath.Join(dir, "config.json")
	link := filepath.Join(work, "link.txt")
	if err := os.Symlink(corpusFile, link); err != nil {
		t.Fatal(err)
	}
	watched := []string{corpusFile, config, filepath.Join(dir, "model.safetensors"), a, b}
	before := map[string]string{}
	for _, p := range watched {
		before[p] = fileHash(t, p)
	}
	eval := []string{"-q", "--model", dir, "--device", "cpu", "--data", corpusFile, "--ctx", "32", "--no-token-cache"}
	out := func(name string) string { return filepath.Join(work, name) }
	for _, c := range []struct {
		args []string
		says string
	}{
		{append(eval, "--json", corpusFile), "the corpus"},
		{append(eval, "--per-token", link), "the corpus"},
		{append(eval, "--json", config), "config.json"},
		{append(eval, "--checkpoint", filepath.Join(dir, "model.safetensors")), "model.safetensors"},
		{append(eval, "--json", out("r"), "--checkpoint", out("r")), "--checkpoint"},
		{append(eval, "--json", out("o.x"), "--per-token", out("o.x")), "--per-token"},
		{[]string{"tokenize", "-q", "--model", dir, "--data", corpusFile, "--output", corpusFile}, "the corpus"},
		{[]string{"tokenize", "-q", "--model", dir, "--data", corpusFile, "--output", config}, "config.json"},
		{[]string{"generate", "-q", "--model", dir, "--device", "cpu", "-p", "To be", "-n", "2", "--json", config}, "config.json"},
		{[]string{"bench", "-q", "--model", dir, "--device", "cpu", "--batch", "1", "--runs", "1", "--ctx", "16", "--json", config}, "config.json"},
		{[]string{"compare", "--json", a, a, b}, "per-token file A"},
		{[]string{"export", "--format", "csv", "--output", a, a}, "the input"},
	} {
		_, _, err := cli(t, "", c.args...)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "the same file") && !strings.Contains(err.Error(), "overwritten") {
			t.Errorf("%v: err = %v (exit %d), want a usage error naming %s", c.args, err, exitCode(err), c.says)
		}
	}
	for _, p := range watched {
		if fileHash(t, p) != before[p] {
			t.Errorf("%s was changed by a refused command", p)
		}
	}
	for _, name := range []string{"r", "o.x"} {
		if _, err := os.Lstat(out(name)); err == nil {
			t.Errorf("a refused run wrote %s", name)
		}
	}
}
