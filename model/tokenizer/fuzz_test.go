package tokenizer

import (
	"slices"
	"testing"
	"unicode/utf8"
)

// FuzzEncode checks, for any text: the round trip Decode(Encode(s)) == s, that
// TokenLen sums to len(s), that ids are in the vocabulary, that our BPE loaded
// from GPT-2 files agrees with the built-in tokenizer, and, for valid UTF-8,
// that the scanner agrees with the regular expression and the ids with
// tiktoken-go's encoder.
func FuzzEncode(f *testing.F) {
	for _, s := range edgeCases {
		f.Add(s)
	}
	for _, s := range []string{"a\xffb", "\xe2\x82", "\xc0 x", "x \x80\x80 y", "\xf0\x9f\x98", "\x7f \x7f", "'\xff's"} {
		f.Add(s)
	}
	builtin, err := GPT2()
	if err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	writeVocabMerges(f, dir, gpt2Files(f))
	loaded, err := Load(dir)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids := builtin.Encode(s)
		if back := builtin.Decode(ids); back != s {
			t.Fatalf("Decode(Encode(%q)) = %q", s, back)
		}
		n := 0
		for _, id := range ids {
			if id < 0 || int(id) >= builtin.VocabSize() || id == builtin.EOT() {
				t.Fatalf("Encode(%q) gives id %d", s, id)
			}
			n += builtin.TokenLen(id)
		}
		if n != len(s) {
			t.Fatalf("Encode(%q): TokenLen sums to %d, want %d", s, n, len(s))
		}
		if got := loaded.Encode(s); !slices.Equal(got, ids) {
			t.Fatalf("Encode(%q): loaded files give %v, built-in %v", s, got, ids)
		}
		if !utf8.ValidString(s) {
			return
		}
		if got, want := scan(s), regexpPieces(t, s); !slices.Equal(got, want) {
			t.Fatalf("pieces(%q) = %q, regexp %q", s, got, want)
		}
		if want, ok := tiktokenIDs(t, s); ok && !slices.Equal(ids, want) {
			t.Fatalf("Encode(%q) = %v, tiktoken-go %v", s, ids, want)
		}
	})
}
