package tokenizer

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestMetaspacePieces: the pieces of the Metaspace pre-tokenizer, as
// Hugging Face's tokenizers 0.23.2 makes them (seen through the tokens of
// a small vocabulary; the golden files check the ids). first says that the
// text starts the whole text (no added token before it).
func TestMetaspacePieces(t *testing.T) {
	for _, c := range []struct {
		pre   string
		text  string
		first bool
		want  []string
	}{
		{metaspaceJSON("first", true), "a b", true, []string{"▁a", "▁b"}},
		{metaspaceJSON("first", true), "a  b ", true, []string{"▁a", "▁", "▁b", "▁"}},
		{metaspaceJSON("first", true), " ab", true, []string{"▁ab"}}, // already starts with one
		{metaspaceJSON("first", true), "ab c", false, []string{"ab", "▁c"}},
		{metaspaceJSON("first", false), "a  b ", true, []string{"▁a▁▁b▁"}},
		{metaspaceJSON("first", false), "ab c", false, []string{"ab▁c"}},
		{metaspaceJSON("always", true), "ab c", false, []string{"▁ab", "▁c"}},
		{metaspaceJSON("always", false), "▁ab", false, []string{"▁ab"}},
		{metaspaceJSON("never", true), "ab c", true, []string{"ab", "▁c"}},
		{metaspaceJSON("never", false), " ab", true, []string{"▁ab"}},
		// Only U+0020 is a space to it.
		{metaspaceJSON("never", true), "a\tb\u00a0c", true, []string{"a\tb\u00a0c"}},
		// The older form: add_prefix_space true is prepend_scheme always.
		{`{"type":"Metaspace","replacement":"▁","add_prefix_space":true}`, "ab c", false, []string{"▁ab", "▁c"}},
		{`{"type":"Metaspace","replacement":"_","add_prefix_space":true,"prepend_scheme":"first","split":false}`, "ab c", true, []string{"_ab_c"}},
		// After a Split, only the piece at the start of the text is first.
		{`{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"String":"."},"behavior":"Isolated","invert":false},` +
			metaspaceJSON("first", false) + `]}`, ".ab.c d", true, []string{"▁.", "ab", ".", "c▁d"}},
	} {
		steps, err := parsePreTokenizer([]byte(c.pre), "pre_tokenizer")
		if err != nil {
			t.Fatalf("%s: %v", c.pre, err)
		}
		var got []string
		_ = preTokenize(steps, c.text, c.first, func(piece string) error {
			got = append(got, piece)
			return nil
		})
		if !slices.Equal(got, c.want) {
			t.Errorf("%s on %q (first %v): %q, want %q", c.pre, c.text, c.first, got, c.want)
		}
	}
}

// TestMetaspaceFirst: with prepend_scheme "first", only the text at the
// start gets a "▁": not the text after an added token that starts it, nor
// after one inside it, nor a text whose first character the normalizer
// deleted; "always" puts one before each.
func TestMetaspaceFirst(t *testing.T) {
	load := func(name string) *Tokenizer {
		tok, err := Load(filepath.Join("testdata", "hf", name))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	first, always, never := load("ms-first"), load("ms-always"), load("ms-never")
	const bos, eos = 1, 2
	cat := func(parts ...[]int32) []int32 { return slices.Concat(parts...) }
	for _, c := range []struct {
		text string
		want []int32
	}{
		{"hello world", always.Encode("hello world")},
		{"<s>hello world", cat([]int32{bos}, never.Encode("hello world"))},
		{"hello</s>world", cat(always.Encode("hello"), []int32{eos}, never.Encode("world"))},
		{"hello</s> world", cat(always.Encode("hello"), []int32{eos}, always.Encode("world"))},
	} {
		if got := first.Encode(c.text); !slices.Equal(got, c.want) {
			t.Errorf("first: %q: %v, want %v", c.text, got, c.want)
		}
	}
	if got, want := always.Encode("<s>hello"), cat([]int32{bos}, always.Encode("hello")); !slices.Equal(got, want) {
		t.Errorf("always: <s>hello: %v, want %v", got, want)
	}
	deleted := load("ms-first-deleted-start")
	if got, want := deleted.Encode("#hello"), never.Encode("hello"); !slices.Equal(got, want) {
		t.Errorf("first after a deleted start: %v, want %v", got, want)
	}
}

// TestMetaspaceDecode: the decoder makes each "▁" a space, but drops those
// of the first token of a decode unless the scheme is never; a token's text
// in running text has them as spaces.
func TestMetaspaceDecode(t *testing.T) {
	for _, c := range []struct {
		scheme string
		want   string
	}{{"first", "a b"}, {"always", "a b"}, {"never", "  a b"}} {
		steps, err := parseDecoder([]byte(metaspaceJSON(c.scheme, true)), "decoder")
		if err != nil {
			t.Fatal(err)
		}
		if got := decode(steps, []string{"▁▁", "a", "▁b"}, false); got != c.want {
			t.Errorf("%s: %q, want %q", c.scheme, got, c.want)
		}
		if got := decode(steps, []string{"▁▁a"}, true); got != "  a" {
			t.Errorf("%s: running text %q, want %q", c.scheme, got, "  a")
		}
	}
	tok, err := Load(filepath.Join("testdata", "hf", "ms-first-split"))
	if err != nil {
		t.Fatal(err)
	}
	ids := tok.Encode("hello world")
	if got := tok.Decode(ids); got != "hello world" {
		t.Errorf("Decode(Encode(hello world)) = %q", got)
	}
	if got := tok.TokenText(ids[0]); got[0] != ' ' {
		t.Errorf("TokenText(%d) = %q, want a leading space", ids[0], got)
	}
}
