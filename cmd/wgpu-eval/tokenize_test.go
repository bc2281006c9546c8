package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
)

// readIDs reads a little-endian uint32 file.
func readIDs(t *testing.T, path string) []int32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b)%4 != 0 {
		t.Fatalf("%s: %d bytes, not a multiple of 4", path, len(b))
	}
	ids := make([]int32, len(b)/4)
	for i := range ids {
		ids[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return ids
}

// parseIDLines reads --output -: one decimal id per line.
func parseIDLines(t *testing.T, out string) []int32 {
	t.Helper()
	var ids []int32
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		n, err := strconv.Atoi(l)
		if err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		ids = append(ids, int32(n))
	}
	return ids
}

// A folder without tokenizer files gives GPT-2's tokenizer: the ids of
// stdin, as text and as uint32, cut by --max-tokens; JSONL documents each
// after <|endoftext|>.
func TestTokenizeGPT2(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	gpt2, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	const text = "Hello world, it's <|endoftext|> time.\n"
	want := gpt2.Encode(text)

	out, stderr, err := cli(t, text, "tokenize", "--model", dir, "--data", "-", "--output", "-")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if got := parseIDLines(t, out); !slices.Equal(got, want) {
		t.Errorf("ids %v, want %v", got, want)
	}
	if !strings.Contains(stderr, fmt.Sprintf("%d ids", len(want))) || !strings.Contains(stderr, tokenizer.BuiltinID) {
		t.Errorf("stderr %q does not say how many ids and which tokenizer", stderr)
	}

	bin := filepath.Join(t.TempDir(), "ids.u32")
	if _, stderr, err := cli(t, text, "tokenize", "-q", "--model", dir, "--data", "-", "--output", bin, "--max-tokens", "3"); err != nil || stderr != "" {
		t.Fatalf("%v, stderr %q", err, stderr)
	}
	if got := readIDs(t, bin); !slices.Equal(got, want[:3]) {
		t.Errorf("--max-tokens 3: %v, want %v", got, want[:3])
	}

	// --threads 1 and 2 give the same ids (each run tokenizes anew: the
	// cache is off), of a text long enough to be cut for two goroutines.
	long := strings.Repeat("It is the east, and Juliet is the sun. ", 20000) // 780 kB
	var outs [2]string
	for i, n := range []string{"1", "2"} {
		if outs[i], stderr, err = cli(t, long, "tokenize", "-q", "--model", dir, "--data", "-", "--output", "-", "--no-token-cache", "--threads", n); err != nil {
			t.Fatalf("--threads %s: %v\n%s", n, err, stderr)
		}
	}
	if got := parseIDLines(t, outs[1]); outs[0] != outs[1] || !slices.Equal(got, gpt2.Encode(long)) {
		t.Errorf("--threads 2: %d ids, not the %d of --threads 1 and of Encode", len(got), len(parseIDLines(t, outs[0])))
	}

	jsonl := filepath.Join(t.TempDir(), "docs.jsonl")
	writeTestFile(t, jsonl, `{"text": "a b"}`+"\n"+`{"text": "c"}`+"\n")
	out, stderr, err = cli(t, "", "tokenize", "-q", "--model", dir, "--data", jsonl, "--output", "-")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	wantDocs := append(append(append([]int32{gpt2.EOT()}, gpt2.Encode("a b")...), gpt2.EOT()), gpt2.Encode("c")...)
	if got := parseIDLines(t, out); !slices.Equal(got, wantDocs) {
		t.Errorf("documents: %v, want %v", got, wantDocs)
	}
}

// spTiny is a tiny SentencePiece-style tokenizer (Llama 2's components;
// see its README.md).
const spTiny = "../../testdata/tokenizers/sp-tiny"

// A folder with only a SentencePiece-style tokenizer.json (no weights, no
// config.json): BOS first, "▁" before the text and for spaces, byte
// fallback for characters outside the vocabulary, <s> in the text matched.
func TestTokenizeSentencePieceStyle(t *testing.T) {
	isolate(t)
	out, stderr, err := cli(t, "Hi Hi\n<s>i", "tokenize", "--model", spTiny, "--data", "-", "--output", "-")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	// <s>, ▁H i ▁H i <0x0A>, <s>, ▁ i (the normalizer puts a ▁ before each
	// text between special tokens), as Hugging Face's tokenizers 0.23.2 gives.
	want := []int32{1, 262, 261, 262, 261, 3 + '\n', 1, 259, 261}
	if got := parseIDLines(t, out); !slices.Equal(got, want) {
		t.Errorf("ids %v, want %v", got, want)
	}
	if !strings.Contains(stderr, `BOS "<s>" (1)`) {
		t.Errorf("stderr %q does not name the BOS", stderr)
	}
}

func TestTokenizeErrors(t *testing.T) {
	isolate(t)
	bad := t.TempDir()
	writeTestFile(t, filepath.Join(bad, tokenizer.TokenizerFile), `{"model": {"type": "Unigram", "vocab": []}}`)
	for _, c := range []struct {
		args  []string
		usage bool
		has   string
	}{
		{[]string{"tokenize", "--data", "-"}, true, "--output"},
		{[]string{"tokenize", "--output", "-", "--max-tokens", "-1"}, true, "negative"},
		{[]string{"tokenize", "--output", "-", "--threads", "-1"}, true, "--threads -1"},
		{[]string{"tokenize", "--output", "-", "stray"}, true, "stray"},
		{[]string{"tokenize", "--model", filepath.Join(t.TempDir(), "missing"), "--data", "-", "--output", "-"}, false, "missing"},
		{[]string{"tokenize", "--model", bad, "--data", "-", "--output", "-"}, false, "Unigram"},
	} {
		_, _, err := cli(t, "x", c.args...)
		var ue usageError
		if err == nil || errors.As(err, &ue) != c.usage || !strings.Contains(err.Error(), c.has) {
			t.Errorf("%q: error %v (usage error %v), want one with %q", c.args, err, errors.As(err, &ue), c.has)
		}
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
