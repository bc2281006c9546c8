package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tinyVocab is a byte-level vocabulary of the 256 bytes (ids in
// bytes_to_unicode order, as GPT-2's) plus the given tokens.
func tinyVocab(extra ...string) map[string]int {
	tbl := gpt2ByteRunes()
	v := map[string]int{}
	order := []int{}
	for b := '!'; b <= '~'; b++ {
		order = append(order, int(b))
	}
	for b := 0xA1; b <= 0xAC; b++ {
		order = append(order, b)
	}
	for b := 0xAE; b <= 0xFF; b++ {
		order = append(order, b)
	}
	for b := range 256 {
		if !slices.Contains(order, b) {
			order = append(order, b)
		}
	}
	for i, b := range order {
		v[string(tbl[b])] = i
	}
	for i, e := range extra {
		v[e] = 256 + i
	}
	return v
}

// writeTiny writes vocab.json and merges.txt into a new folder.
func writeTiny(t *testing.T, vocab map[string]int, merges string) string {
	t.Helper()
	dir := t.TempDir()
	b, err := json.Marshal(vocab)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, VocabFile), b)
	writeFile(t, filepath.Join(dir, MergesFile), []byte(merges))
	return dir
}

// TestTinyBPE checks merge order on a hand-made vocabulary: the lowest rank
// applies first, wherever it is in the word, and equal pairs merge leftmost.
func TestTinyBPE(t *testing.T) {
	vocab := tinyVocab("el", "he", "hel", "ll", "hell", "ello", "aa", "Ġa")
	// ids: el 256, he 257, hel 258, ll 259, hell 260, ello 261, aa 262, Ġa 263
	for _, c := range []struct {
		merges string
		text   string
		want   []int32
	}{
		{"e l\nh e\n", "hel", []int32{71, 256}}, // "el" first: h + el
		{"h e\ne l\n", "hel", []int32{257, 75}}, // "he" first: he + l
		{"h e\nhe l\n", "hel", []int32{258}},    // he, then hel
		{"#version: 0.2\nl l\nh e\nhe ll\n", "hell", []int32{260}},
		{"a a\n", "aaa", []int32{262, 64}},            // leftmost pair first
		{"a a\n", "aaaa", []int32{262, 262}},          // ...then the next
		{"a a\nĠ a\n", " aaa", []int32{220, 262, 64}}, // "aa" outranks "Ġa"
		{"Ġ a\na a\n", " aaa", []int32{263, 262}},
		{"a a\r\n\r\n", "aa a", []int32{262, 220, 64}}, // CRLF file; no merge across pieces
	} {
		tok, err := Load(writeTiny(t, vocab, c.merges))
		if err != nil {
			t.Fatalf("merges %q: %v", c.merges, err)
		}
		if got := tok.Encode(c.text); !slices.Equal(got, c.want) {
			t.Errorf("merges %q: Encode(%q) = %v, want %v", c.merges, c.text, got, c.want)
		}
		if tok.EOT() != -1 || tok.VocabSize() != 264 {
			t.Errorf("EOT %d VocabSize %d, want -1 264", tok.EOT(), tok.VocabSize())
		}
	}
}

func TestLoadChoice(t *testing.T) {
	empty := t.TempDir()
	tok, err := Load(empty)
	if err != nil || tok.ID() != BuiltinID {
		t.Fatalf("empty folder: %v, %v; want the built-in tokenizer", tok, err)
	}
	file := filepath.Join(empty, "model.safetensors")
	writeFile(t, file, nil)
	if tok, err := Load(file); err != nil || tok.ID() != BuiltinID {
		t.Errorf("file in an empty folder: %v; want the built-in tokenizer", err)
	}

	dir := writeTiny(t, tinyVocab(), "")
	a, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := Load(filepath.Join(dir, VocabFile)); err != nil || b.ID() != a.ID() {
		t.Errorf("Load(file) should use the file's folder: %v", err)
	}
	// Other files give another identity.
	c, err := Load(writeTiny(t, tinyVocab("aa"), "a a\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.ID() == a.ID() || c.ID() == BuiltinID {
		t.Errorf("different files share ID %q", c.ID())
	}
	// vocab.json + merges.txt win over tokenizer.json (here a broken one).
	writeFile(t, filepath.Join(dir, TokenizerFile), []byte("{"))
	if _, err := Load(dir); err != nil {
		t.Errorf("vocab.json + merges.txt beside a bad tokenizer.json: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	good, _ := json.Marshal(tinyVocab("aa"))
	tj := func(model, extra string) string {
		return `{"version": "1.0", ` + extra + `"model": ` + model + `}`
	}
	vocabJSON := string(good)
	for _, c := range []struct {
		name   string
		files  map[string]string
		errHas []string
	}{
		{"vocab without merges", map[string]string{VocabFile: vocabJSON}, []string{"no merges.txt"}},
		{"merges without vocab", map[string]string{MergesFile: "a a\n"}, []string{"no vocab.json"}},
		{"vocab syntax", map[string]string{VocabFile: `{"a": 1,`, MergesFile: ""}, []string{VocabFile}},
		{"vocab not an object", map[string]string{VocabFile: `[1, 2]`, MergesFile: ""}, []string{VocabFile}},
		{"vocab id not a number", map[string]string{VocabFile: `{"a": "x"}`, MergesFile: ""}, []string{VocabFile}},
		{"vocab id negative", map[string]string{VocabFile: `{"a": -1}`, MergesFile: ""}, []string{VocabFile, `"a"`, "-1"}},
		{"vocab id huge", map[string]string{VocabFile: `{"a": 99999999999}`, MergesFile: ""}, []string{VocabFile, "99999999999"}},
		{"vocab shared id", map[string]string{VocabFile: `{"a": 1, "b": 1}`, MergesFile: ""}, []string{VocabFile, `"a" and "b" share id 1`}},
		{"vocab without byte tokens", map[string]string{VocabFile: `{"a": 0}`, MergesFile: ""}, []string{VocabFile, "no token for byte 0x00"}},
		{"merge line one token", map[string]string{VocabFile: vocabJSON, MergesFile: "#version: 0.2\na a\naa\n"}, []string{MergesFile + " line 3", `"aa"`}},
		{"merge line three tokens", map[string]string{VocabFile: vocabJSON, MergesFile: "a a a\n"}, []string{MergesFile + " line 1"}},
		{"merge left unknown", map[string]string{VocabFile: vocabJSON, MergesFile: "a a\nxy a\n"}, []string{MergesFile + " line 2", `"xy" is not in the vocabulary`}},
		{"merge right unknown", map[string]string{VocabFile: vocabJSON, MergesFile: "a zz\n"}, []string{MergesFile + " line 1", `"zz" is not in the vocabulary`}},
		{"merge result unknown", map[string]string{VocabFile: vocabJSON, MergesFile: "a b\n"}, []string{MergesFile + " line 1", `result "ab"`}},
		{"tokenizer.json syntax", map[string]string{TokenizerFile: `{"model": `}, []string{TokenizerFile}},
		{"tokenizer.json no model", map[string]string{TokenizerFile: `{}`}, []string{TokenizerFile, `no "model"`}},
		{"tokenizer.json wordpiece", map[string]string{TokenizerFile: tj(`{"type": "WordPiece", "vocab": {}}`, "")}, []string{TokenizerFile, "WordPiece"}},
		{"tokenizer.json no vocab", map[string]string{TokenizerFile: tj(`{"type": "BPE", "merges": []}`, "")}, []string{TokenizerFile, "model.vocab"}},
		{"tokenizer.json dropout", map[string]string{TokenizerFile: tj(`{"type": "BPE", "dropout": 0.1, "vocab": `+vocabJSON+`, "merges": []}`, "")}, []string{TokenizerFile, "dropout"}},
		{"tokenizer.json ignore_merges", map[string]string{TokenizerFile: tj(`{"type": "BPE", "ignore_merges": true, "vocab": `+vocabJSON+`, "merges": []}`, "")}, []string{TokenizerFile, "ignore_merges"}},
		{"tokenizer.json subword prefix", map[string]string{TokenizerFile: tj(`{"type": "BPE", "continuing_subword_prefix": "##", "vocab": `+vocabJSON+`, "merges": []}`, "")}, []string{TokenizerFile, "continuing_subword_prefix"}},
		{"tokenizer.json normalizer", map[string]string{TokenizerFile: tj(`{"type": "BPE", "vocab": `+vocabJSON+`, "merges": []}`, `"normalizer": {"type": "NFC"}, `)}, []string{TokenizerFile, "normalizer"}},
		{"tokenizer.json metaspace without replacement", map[string]string{TokenizerFile: tj(`{"type": "BPE", "vocab": `+vocabJSON+`, "merges": []}`, `"pre_tokenizer": {"type": "Metaspace"}, `)}, []string{TokenizerFile, "Metaspace"}},
		{"tokenizer.json prefix space", map[string]string{TokenizerFile: tj(`{"type": "BPE", "vocab": `+vocabJSON+`, "merges": []}`, `"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": true}, `)}, []string{TokenizerFile, "add_prefix_space"}},
		{"tokenizer.json merge number", map[string]string{TokenizerFile: tj(`{"type": "BPE", "vocab": `+vocabJSON+`, "merges": ["a a", 7]}`, "")}, []string{TokenizerFile + " model.merges[1]"}},
		{"tokenizer.json merge triple", map[string]string{TokenizerFile: tj(`{"type": "BPE", "vocab": `+vocabJSON+`, "merges": [["a", "a", "a"]]}`, "")}, []string{TokenizerFile + " model.merges[0]"}},
		{"tokenizer.json merge unknown", map[string]string{TokenizerFile: tj(`{"type": "BPE", "vocab": `+vocabJSON+`, "merges": [["a", "a"], ["q", "r"]]}`, "")}, []string{TokenizerFile + " model.merges[1]", `result "qr"`}},
		{"tokenizer.json added id", map[string]string{TokenizerFile: tj(`{"type": "BPE", "vocab": `+vocabJSON+`, "merges": []}`, `"added_tokens": [{"id": -5, "content": "<x>"}], `)}, []string{TokenizerFile, `"<x>"`, "-5"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range c.files {
				writeFile(t, filepath.Join(dir, name), []byte(content))
			}
			tok, err := Load(dir)
			if err == nil {
				t.Fatalf("Load succeeded (%d tokens), want an error with %q", tok.VocabSize(), c.errHas)
			}
			for _, s := range c.errHas {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing folder: %v", err)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, VocabFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), VocabFile) {
		t.Errorf("vocab.json a folder: %v", err)
	}
}

// TestTokenizerJSONAdded checks added tokens: decoded, never matched in text.
func TestTokenizerJSONAdded(t *testing.T) {
	vocab, _ := json.Marshal(tinyVocab("aa"))
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, TokenizerFile), []byte(`{"added_tokens": [{"id": 300, "content": "<|endoftext|>"}],
		"normalizer": null, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
		"model": {"type": "BPE", "dropout": null, "vocab": `+string(vocab)+`, "merges": ["a a"]}}`))
	tok, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tok.EOT() != 300 || tok.VocabSize() != 301 || tok.Decode([]int32{256, 300, 299}) != "aa<|endoftext|>" {
		t.Errorf("EOT %d VocabSize %d Decode %q", tok.EOT(), tok.VocabSize(), tok.Decode([]int32{256, 300, 299}))
	}
	if got := tok.Encode("<|endoftext|>aaa"); slices.Contains(got, 300) || !slices.Equal(got[len(got)-2:], []int32{256, 64}) {
		t.Errorf("Encode = %v: want plain text, then aa a", got)
	}
}
