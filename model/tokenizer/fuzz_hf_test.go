package tokenizer

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// FuzzLoadJSON loads any tokenizer.json (with any tokenizer_config.json):
// an error or a tokenizer, never a panic; a tokenizer encodes text into ids
// inside its vocabulary.
func FuzzLoadJSON(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "hf", "*", TokenizerFile))
	seeds = append(seeds, filepath.Join("..", "..", "testdata", "tokenizers", "sp-tiny", TokenizerFile))
	for _, path := range seeds {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		config, _ := os.ReadFile(filepath.Join(filepath.Dir(path), ConfigFile))
		f.Add(data, config)
		// Damaged copies: cut short, and a component type changed.
		f.Add(data[:len(data)/3], config)
		f.Add([]byte(strings.Replace(string(data), `"Isolated"`, `"Contiguous"`, 1)), []byte(`{"bos_token": {"content": "<s>"}}`))
	}
	f.Add([]byte(`{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]},
		"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "\\s+(?!\\S)"}, "behavior": "MergedWithNext", "invert": true}}`), []byte(nil))
	f.Fuzz(func(t *testing.T, data, config []byte) {
		tok, err := loadJSON(data, "tokenizer.json", func() (*tokenizerConfig, []byte, error) {
			if config == nil {
				return &tokenizerConfig{path: ConfigFile}, nil, nil
			}
			cfg, err := parseConfig(config, ConfigFile)
			return cfg, config, err
		})
		if err != nil {
			if !strings.Contains(err.Error(), "tokenizer") {
				t.Fatalf("error %q names no file", err)
			}
			return
		}
		for _, s := range []string{"", "Hello world, it's 2024!\n", "<s> a</s>  \t x", "日本 😀 e\u0301", "ab ab  ab"} {
			for _, id := range tok.EncodeWithSpecials(s) {
				if id < 0 || int(id) >= tok.VocabSize() {
					t.Fatalf("Encode(%q) gives id %d, outside the %d-token vocabulary", s, id, tok.VocabSize())
				}
			}
		}
	})
}

// fuzzTokenizers are golden tokenizer variants with what their decode gives
// back (Hugging Face's round trip): a text without the added tokens'
// contents, for the byte-level and SentencePiece-style files that keep
// every character (NFC'd for Qwen's kind; SentencePiece's "▁" as a space).
var fuzzTokenizers = []struct {
	name      string
	roundTrip func(string) string
}{
	{"bl-llama3", func(s string) string { return s }},
	{"bl-qwen", norm.NFC.String},
	{"sp", func(s string) string { return strings.ReplaceAll(s, "▁", " ") }}, // "▁" in the text decodes to a space
	{"sp-unk", nil},
	{"bl-split-MergedWithNext-invert", func(s string) string { return s }},
	{"bl-falcon3", func(s string) string { return s }}, // Punctuation, ByteLevel, Digits on its bytes
	// Mistral 7B v0.3's kind: Metaspace "first" and Llama 2's decoder, whose
	// Strip takes the space that starts a text (its own or Metaspace's).
	{"ms-first", func(s string) string { return strings.TrimPrefix(strings.ReplaceAll(s, "▁", " "), " ") }},
	{"ms-always-split", nil},
}

// FuzzEncodeHF encodes any text with the golden variants: no panic, ids in
// the vocabulary, EncodeHead a prefix of Encode, and, where Hugging Face's
// decode gives the text back, Decode(Encode(s)) == s.
func FuzzEncodeHF(f *testing.F) {
	for _, s := range edgeCases {
		f.Add(s, uint8(3))
	}
	for _, s := range []string{"a\xffb", "<s>x", "<mask> y", " x", "▁x y", "a  b ", "  <tool>\t", "[X]   ", "ADDED", "x'ſx 'S", "1234567", "\r\n\r\n  "} {
		f.Add(s, uint8(1))
	}
	toks := make([]*Tokenizer, len(fuzzTokenizers))
	var added []string
	for i, ft := range fuzzTokenizers {
		tok, err := Load(filepath.Join("testdata", "hf", ft.name))
		if err != nil {
			f.Fatal(err)
		}
		toks[i] = tok
		for _, m := range []*addedMatcher{tok.hf.added, tok.hf.addedNorm} {
			for _, a := range m.tokens {
				added = append(added, strings.TrimPrefix(a.Content, "▁"))
			}
		}
	}
	f.Fuzz(func(t *testing.T, s string, limit uint8) {
		for i, tok := range toks {
			ids := tok.Encode(s)
			for _, id := range ids {
				if id < 0 || int(id) >= tok.VocabSize() {
					t.Fatalf("%s: Encode(%q) gives id %d", fuzzTokenizers[i].name, s, id)
				}
			}
			head, whole, err := tok.EncodeHead(context.Background(), s, int(limit), nil)
			if err != nil || len(head) > len(ids) || !slices.Equal(head, ids[:len(head)]) || whole && len(head) != len(ids) || limit == 0 && !whole {
				t.Fatalf("%s: EncodeHead(%q, %d) = %v (whole %v, %v), Encode %v", fuzzTokenizers[i].name, s, limit, head, whole, err, ids)
			}
			if limit > 0 && len(head) < min(int(limit), len(ids)) {
				t.Fatalf("%s: EncodeHead(%q, %d) gave only %d of %d ids", fuzzTokenizers[i].name, s, limit, len(head), len(ids))
			}
			rt := fuzzTokenizers[i].roundTrip
			if rt == nil || !utf8.ValidString(s) || slices.ContainsFunc(added, func(a string) bool { return strings.Contains(s, a) }) {
				continue
			}
			if back := tok.Decode(ids); back != rt(s) {
				t.Fatalf("%s: Decode(Encode(%q)) = %q", fuzzTokenizers[i].name, s, back)
			}
		}
	})
}

// FuzzQuickMerge: the fast reading of a merge agrees with the JSON
// decoder's, on what the decoder hands it (valid JSON values).
func FuzzQuickMerge(f *testing.F) {
	for _, s := range []string{`"a b"`, `["a", "b"]`, `[ "Ġ" ,"Ġ" ]`, `"a  b"`, `"a\u0020b"`, `["a","b","c"]`, `["a",""]`, `[]`, `"ab"`, `["a" "b"]`, "\"\xff b\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, ok := quickMerge(string(raw))
		if !ok || !json.Valid(raw) {
			return
		}
		var s string
		var pair []string
		switch {
		case json.Unmarshal(raw, &s) == nil:
			l, r, _ := strings.Cut(s, " ")
			pair = []string{l, r}
		case json.Unmarshal(raw, &pair) != nil:
			t.Fatalf("quickMerge read %q, which is not JSON", raw)
		}
		if len(pair) != 2 || m.left != pair[0] || m.right != pair[1] {
			t.Fatalf("quickMerge(%q) = %q %q, JSON %q", raw, m.left, m.right, pair)
		}
	})
}
