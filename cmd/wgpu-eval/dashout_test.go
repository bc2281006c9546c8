package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDashOutputsRefused: "-" means stdout for --json, export --output and
// tokenize --output; the outputs that cannot go to stdout (--per-token,
// --per-document, --checkpoint, merge --per-token) refuse it as a mistake in
// the command line (exit 2) instead of writing a file named "-" where a
// pipe was meant.
func TestDashOutputsRefused(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	work := t.TempDir()
	t.Chdir(work)
	corpusFile := filepath.Join(work, "c.txt")
	if err := os.WriteFile(corpusFile, []byte(strings.Repeat("To be, or not to be, that is the question.\n", 4)), 0o644); err != nil {
		t.Fatal(err)
	}
	eval := []string{"-q", "--model", dir, "--device", "cpu", "--data", corpusFile, "--ctx", "32", "--no-token-cache"}
	shard := filepath.Join(work, "s.ptk")
	if _, _, err := cli(t, "", append(eval, "--shard", "0/1", "--per-token", shard)...); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		append(eval, "--per-token", "-"),
		append(eval, "--mode", "documents", "--separator", `\n`, "--per-document", "-"),
		append(eval, "--checkpoint", "-"),
		{"merge", "--per-token", "-", shard},
	} {
		_, _, err := cli(t, "", args...)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "standard output") {
			t.Errorf("%q: err = %v (exit %d), want a usage error about standard output", args, err, exitCode(err))
		}
		if _, err := os.Lstat(filepath.Join(work, "-")); err == nil {
			t.Fatalf("%q wrote a file named -", args)
		}
	}
}
