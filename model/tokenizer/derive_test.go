package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	tiktoken "github.com/tiktoken-go/tokenizer"
)

// gpt2ByteRunes is GPT-2's bytes_to_unicode, written as in OpenAI's encoder.py,
// independently of byteToRune: the printable bytes keep their code point, the
// others get 256, 257, ... in byte order.
func gpt2ByteRunes() [256]rune {
	var bs []int
	for b := int('!'); b <= '~'; b++ {
		bs = append(bs, b)
	}
	for b := 0xA1; b <= 0xAC; b++ {
		bs = append(bs, b)
	}
	for b := 0xAE; b <= 0xFF; b++ {
		bs = append(bs, b)
	}
	cs := append([]int(nil), bs...)
	n := 0
	for b := range 256 {
		found := false
		for _, x := range bs[:188] {
			found = found || x == b
		}
		if !found {
			bs = append(bs, b)
			cs = append(cs, 256+n)
			n++
		}
	}
	var t [256]rune
	for i, b := range bs {
		t[b] = rune(cs[i])
	}
	return t
}

// toText writes raw token bytes in GPT-2's byte-level text form.
func toText(tbl *[256]rune, b string) string {
	var sb strings.Builder
	for i := range len(b) {
		sb.WriteRune(tbl[b[i]])
	}
	return sb.String()
}

// derived is GPT-2's vocab.json and merges.txt content recovered from
// tiktoken-go's r50k_base rank table.
type derived struct {
	vocab  map[string]int // byte-level text -> id
	merges [][2]string    // byte-level text pairs, by rank
}

var deriveOnce = sync.OnceValues(deriveGPT2)

// deriveGPT2 recovers GPT-2's merges from r50k_base's ranks: a token of two or
// more bytes is the merge of the two parts that BPE over its bytes, with only
// the ranks below its own, leaves.
func deriveGPT2() (*derived, error) {
	codec, err := tiktoken.Get(tiktoken.R50kBase)
	if err != nil {
		return nil, err
	}
	const n = 50256
	raw := make([]string, n)
	ranks := make(map[string]int, n)
	for id := range n {
		s, err := codec.Decode([]uint{uint(id)})
		if err != nil {
			return nil, err
		}
		raw[id] = s
		ranks[s] = id
	}
	tbl := gpt2ByteRunes()
	d := &derived{vocab: map[string]int{"<|endoftext|>": n}}
	for id, s := range raw {
		d.vocab[toText(&tbl, s)] = id
		if len(s) < 2 {
			continue
		}
		parts := rankBPE(s, ranks, id)
		if len(parts) != 2 {
			return nil, &deriveError{s, parts}
		}
		d.merges = append(d.merges, [2]string{toText(&tbl, parts[0]), toText(&tbl, parts[1])})
	}
	return d, nil
}

type deriveError struct {
	token string
	parts []string
}

func (e *deriveError) Error() string {
	b, _ := json.Marshal(e.parts)
	return "token " + e.token + " does not split into two parts: " + string(b)
}

// rankBPE is tiktoken's BPE: merge the adjacent parts whose concatenation has
// the lowest rank (below limit), leftmost first, until none is left.
func rankBPE(s string, ranks map[string]int, limit int) []string {
	parts := make([]string, len(s))
	for i := range len(s) {
		parts[i] = s[i : i+1]
	}
	for {
		best, bestRank := -1, limit
		for i := 0; i+1 < len(parts); i++ {
			if r, ok := ranks[parts[i]+parts[i+1]]; ok && r < bestRank {
				best, bestRank = i, r
			}
		}
		if best < 0 {
			return parts
		}
		parts[best] += parts[best+1]
		parts = append(parts[:best+1], parts[best+2:]...)
	}
}

// gpt2Files returns the derived GPT-2 tokenizer files, failing the test if they
// cannot be made.
func gpt2Files(t testing.TB) *derived {
	t.Helper()
	d, err := deriveOnce()
	if err != nil {
		t.Fatalf("derive GPT-2 merges from r50k_base: %v", err)
	}
	return d
}

// writeVocabMerges writes d as vocab.json + merges.txt into dir.
func writeVocabMerges(t testing.TB, dir string, d *derived) {
	t.Helper()
	vocab, err := json.Marshal(d.vocab)
	if err != nil {
		t.Fatal(err)
	}
	var m strings.Builder
	m.WriteString("#version: 0.2\n")
	for _, p := range d.merges {
		m.WriteString(p[0] + " " + p[1] + "\n")
	}
	writeFile(t, filepath.Join(dir, VocabFile), vocab)
	writeFile(t, filepath.Join(dir, MergesFile), []byte(m.String()))
}

// writeTokenizerJSON writes d as a Hugging Face tokenizer.json into dir, with
// merges as pairs or as "left right" strings.
func writeTokenizerJSON(t testing.TB, dir string, d *derived, pairs bool) {
	t.Helper()
	var merges []any
	for _, p := range d.merges {
		if pairs {
			merges = append(merges, []string{p[0], p[1]})
		} else {
			merges = append(merges, p[0]+" "+p[1])
		}
	}
	byteLevel := map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}
	doc := map[string]any{
		"version":    "1.0",
		"truncation": nil,
		"padding":    nil,
		"added_tokens": []any{map[string]any{"id": 50256, "content": "<|endoftext|>", "special": true, // every field: Hugging Face reads it too
			"single_word": false, "lstrip": false, "rstrip": false, "normalized": false}},
		"normalizer":     nil,
		"pre_tokenizer":  map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
		"post_processor": byteLevel,
		"decoder":        byteLevel,
		"model": map[string]any{
			"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": "", "end_of_word_suffix": "",
			"fuse_unk": false, "byte_fallback": false,
			"vocab": d.vocab, "merges": merges,
		},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, TokenizerFile), b)
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestByteTable(t *testing.T) {
	want := gpt2ByteRunes()
	if byteToRune != want {
		t.Fatalf("byteToRune differs from GPT-2's bytes_to_unicode")
	}
	// Anchors known from GPT-2's vocab.json: "Ġ" is a space, "Ċ" a newline.
	for b, r := range map[byte]rune{' ': 'Ġ', '\n': 'Ċ', 0: 'Ā', 0xAD: 'Ń', 'a': 'a', 0xFF: 'ÿ', 0x7F: 'ġ'} {
		if byteToRune[b] != r {
			t.Errorf("byte 0x%02x -> %q, want %q", b, byteToRune[b], r)
		}
	}
	for b := range 256 {
		s := string([]byte{byte(b)})
		if got := textToBytes(bytesToText(s)); got != s || utf8.RuneCountInString(bytesToText(s)) != 1 {
			t.Errorf("byte 0x%02x does not round-trip: %q", b, got)
		}
	}
}
