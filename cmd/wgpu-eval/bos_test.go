package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalBOSEachWindow: --bos-each-window reaches the run: every token of
// the text is a target (the first one too), the stream's windows advance by
// ctx-1, the summary line, the JSON result and its config say so, and the
// note names the token; without the flag the config says false and the
// first token is no target.
func TestEvalBOSEachWindow(t *testing.T) {
	isolate(t)
	dir, _, _ := tinyModel(t)
	text := filepath.Join(t.TempDir(), "t.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("To be, or not to be, that is the question:\n", 4)), 0o644); err != nil {
		t.Fatal(err)
	}
	type result struct {
		Tokens        int  `json:"tokens"`
		InputTokens   int  `json:"input_tokens"`
		Stride        int  `json:"stride"`
		BOSEachWindow bool `json:"bos_each_window"`
		Samples       int  `json:"samples"`
		Config        struct {
			Stride        int   `json:"stride"`
			BOSEachWindow *bool `json:"bos_each_window"`
		} `json:"config"`
	}
	run := func(args ...string) (result, string, string) {
		t.Helper()
		jsonPath := filepath.Join(t.TempDir(), "r.json")
		stdout, stderr, err := cli(t, "", append([]string{"eval", "--model", dir, "--device", "cpu", "--data", text, "--ctx", "16", "--json", jsonPath}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		b, err := os.ReadFile(jsonPath)
		if err != nil {
			t.Fatal(err)
		}
		var r result
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return r, stdout, stderr
	}
	on, stdout, stderr := run("--bos-each-window")
	n := on.InputTokens
	if on.Tokens != n || !on.BOSEachWindow || on.Stride != 15 || on.Config.Stride != 15 || on.Config.BOSEachWindow == nil || !*on.Config.BOSEachWindow ||
		on.Samples != (n+14)/15 {
		t.Errorf("with --bos-each-window: %+v; want all %d tokens scored in %d windows, stride 15", on, n, (n+14)/15)
	}
	if !strings.Contains(stdout, "(stream, ctx 16, BOS each window)") {
		t.Errorf("summary %q does not say BOS each window", stdout)
	}
	if !strings.Contains(stderr, "every window starts with <|endoftext|>") {
		t.Errorf("stderr %q does not name the token each window starts with", stderr)
	}
	off, stdout, _ := run()
	if off.Tokens != n-(n+15)/16 || off.BOSEachWindow || off.Stride != 16 || off.Config.BOSEachWindow == nil || *off.Config.BOSEachWindow {
		t.Errorf("without it: %+v", off)
	}
	if strings.Contains(stdout, "BOS each window") {
		t.Errorf("summary %q", stdout)
	}
}
