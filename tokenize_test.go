package wgpueval

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
)

// tinyWithSP is the tiny GPT-2 with testdata/tokenizers/sp-tiny (a
// SentencePiece-style tokenizer: <s> 1 before a text) in its folder.
func tinyWithSP(t *testing.T) (string, *tokenizer.Tokenizer) {
	t.Helper()
	dir := tinyModel(t)
	for _, name := range []string{tokenizer.TokenizerFile, tokenizer.ConfigFile} {
		data, err := os.ReadFile(filepath.Join("testdata", "tokenizers", "sp-tiny", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tok, err := tokenizer.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, tok
}

// The evaluation scores what tokenizer(text) gives, BOS first, and puts the
// BOS before each document in documents mode; Tokenize returns the same
// stream.
func TestEvaluateWithBOS(t *testing.T) {
	dir, tok := tinyWithSP(t)
	ev, err := Open(context.Background(), dir, Options{Device: "cpu", Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	const text = "Hi Hi iH"
	stream := tok.EncodeWithSpecials(text)
	if stream[0] != 1 {
		t.Fatalf("stream %v does not start with <s>", stream)
	}
	ids, err := Tokenize(context.Background(), tok, "-", TokenizeOptions{Stdin: strings.NewReader(text)})
	if err != nil || !slices.Equal(ids, stream) {
		t.Fatalf("Tokenize = %v, %v; want %v", ids, err, stream)
	}
	ptk := filepath.Join(t.TempDir(), "run.ptk")
	res, err := ev.Evaluate(context.Background(), Named("-"), EvalOptions{Stdin: strings.NewReader(text), NoTokenCache: true, PerToken: ptk})
	if err != nil {
		t.Fatal(err)
	}
	if res.InputTokens != len(stream) || len(res.PerToken) != len(stream)-1 {
		t.Fatalf("stream mode: %d input tokens, %d targets; want %d and %d", res.InputTokens, len(res.PerToken), len(stream), len(stream)-1)
	}
	for i, r := range res.PerToken {
		if r.Token != stream[i+1] {
			t.Fatalf("target %d is %d, want %d (the stream after <s>)", i, r.Token, stream[i+1])
		}
	}

	jsonl := filepath.Join(t.TempDir(), "docs.jsonl")
	if err := os.WriteFile(jsonl, []byte(`{"text": "Hi"}`+"\n"+`{"text": "iH Hi"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = ev.Evaluate(context.Background(), Named(jsonl), EvalOptions{Mode: "documents", NoTokenCache: true, PerToken: ptk})
	if err != nil {
		t.Fatal(err)
	}
	want := append(tok.Encode("Hi"), tok.Encode("iH Hi")...) // every id of each document scored after its <s>
	var got []int32
	for _, r := range res.PerToken {
		got = append(got, r.Token)
	}
	if !slices.Equal(got, want) || res.InputTokens != len(want) {
		t.Errorf("documents mode: targets %v (%d input tokens), want %v", got, res.InputTokens, want)
	}
	ids, err = Tokenize(context.Background(), tok, jsonl, TokenizeOptions{NoTokenCache: true})
	wantStream := append(append([]int32{1}, tok.Encode("Hi")...), append([]int32{1}, tok.Encode("iH Hi")...)...)
	if err != nil || !slices.Equal(ids, wantStream) {
		t.Errorf("Tokenize(documents) = %v, %v; want %v", ids, err, wantStream)
	}
}

// LoadTokenizer needs no weights: a folder with only tokenizer files.
func TestLoadTokenizerWithoutWeights(t *testing.T) {
	tok, path, err := LoadTokenizer(context.Background(), filepath.Join("testdata", "tokenizers", "sp-tiny"), Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if bos, ok := tok.BOS(); !ok || bos != 1 || !strings.HasSuffix(path, "sp-tiny") {
		t.Errorf("BOS %d %v, path %q", bos, ok, path)
	}
}

// A separator that never occurs (Windows text cut at "\n\n") is said, with
// the form that does occur, by Tokenize and by Evaluate; the text is scored
// as one document.
func TestSeparatorNeverOccursWarns(t *testing.T) {
	dir := tinyModel(t)
	ev, err := Open(context.Background(), dir, Options{Device: "cpu", Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	path := filepath.Join(t.TempDir(), "crlf.txt")
	if err := os.WriteFile(path, []byte("First Citizen:\r\nSpeak.\r\n\r\nAll:\r\nSpeak, speak.\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{"warning: corpus", path, `separator "\n\n" never occurs`, `"\r\n\r\n" occurs`}
	var logged []string
	logf := func(msg string) { logged = append(logged, msg) }
	if _, err := Tokenize(context.Background(), ev.Tokenizer(), path, TokenizeOptions{Separator: "\n\n", NoTokenCache: true, Log: logf}); err != nil {
		t.Fatal(err)
	}
	wantLogged(t, "Tokenize", logged, want)
	logged = nil
	ev2, err := Open(context.Background(), dir, Options{Device: "cpu", Offline: true, Log: logf})
	if err != nil {
		t.Fatal(err)
	}
	defer ev2.Close()
	if _, err := ev2.Evaluate(context.Background(), Named(path), EvalOptions{Ctx: 16, Separator: "\n\n", NoTokenCache: true}); err != nil {
		t.Fatal(err)
	}
	wantLogged(t, "Evaluate", logged, want)
}

// wantLogged fails t unless one of the messages holds every string of want.
func wantLogged(t *testing.T, who string, logged, want []string) {
	t.Helper()
	for _, msg := range logged {
		if !slices.ContainsFunc(want, func(w string) bool { return !strings.Contains(msg, w) }) {
			return
		}
	}
	t.Errorf("%s logged %q, no message with all of %q", who, logged, want)
}
