package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShardFlag: --shard 0/0 (what a script's unset count gives) is refused,
// not read as no sharding; inside a Slurm array, eval says that it scores
// only its shard, and --shard 0/1 scores everything without the note.
func TestShardFlag(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	text := filepath.Join(t.TempDir(), "c.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("Now is the winter of our discontent.\n", 30)), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--model", dir, "--device", "cpu", "--data", text, "--ctx", "16", "--no-token-cache"}
	if _, _, err := cli(t, "", append(args, "--shard", "0/0")...); exitCode(err) != 2 || !strings.Contains(err.Error(), "0/0") {
		t.Errorf("--shard 0/0: err = %v (exit %d), want a usage error", err, exitCode(err))
	}
	t.Setenv("SLURM_ARRAY_TASK_ID", "1")
	t.Setenv("SLURM_ARRAY_TASK_COUNT", "4")
	stdout, stderr, err := cli(t, "", args...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "scoring shard 1/4 only, from SLURM_ARRAY_TASK_ID") || !strings.Contains(stdout, "shard 1/4") {
		t.Errorf("in a Slurm array: stdout %q, stderr %q: want the shard named in both", stdout, stderr)
	}
	stdout, stderr, err = cli(t, "", append(args, "--shard", "0/1")...)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr, "SLURM") || strings.Contains(stdout, "shard") {
		t.Errorf("--shard 0/1 in a Slurm array: stdout %q, stderr %q: want the whole corpus, no note", stdout, stderr)
	}
}
