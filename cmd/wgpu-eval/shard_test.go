package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/pipeline"
)

// TestShardFlag: --shard 0/0 (what a script's unset count gives) is refused,
// not read as no sharding; inside a Slurm array, eval says that it scores
// only its shard, and --shard 0/1 scores everything without the note, its
// result merging alone into the unsharded run's.
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
	one := filepath.Join(t.TempDir(), "one.json")
	stdout, stderr, err = cli(t, "", append(args, "--shard", "0/1", "--json", one)...)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr, "SLURM") || strings.Contains(stdout, "shard") {
		t.Errorf("--shard 0/1 in a Slurm array: stdout %q, stderr %q: want the whole corpus, no note", stdout, stderr)
	}
	// A script run with N = 1 merges its one shard as it would N: the
	// result is the unsharded run's.
	t.Setenv("SLURM_ARRAY_TASK_ID", "")
	t.Setenv("SLURM_ARRAY_TASK_COUNT", "")
	whole := filepath.Join(t.TempDir(), "whole.json")
	if _, stderr, err := cli(t, "", append(args, "--quiet", "--json", whole)...); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	merged, stderr, err := cli(t, "", "merge", "--json", "-", one)
	if err != nil {
		t.Fatalf("merge of the one shard of --shard 0/1: %v\n%s", err, stderr)
	}
	var m, w pipeline.Result
	if err := json.Unmarshal([]byte(merged), &m); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &w); err != nil {
		t.Fatal(err)
	}
	if m.Tokens != w.Tokens || m.NLLSum != w.NLLSum || m.NLLSumSq != w.NLLSumSq || m.BitsPerByte != w.BitsPerByte || m.Shard != nil {
		t.Errorf("merged 0/1: %d tokens, NLL sum %v, bpb %v, shard %v; the unsharded run: %d, %v, %v", m.Tokens, m.NLLSum, m.BitsPerByte, m.Shard, w.Tokens, w.NLLSum, w.BitsPerByte)
	}
}
