package tokenizer

import (
	"slices"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// gpt2Pattern is GPT-2's pre-tokenizer pattern, wrapped in a group so regexp2
// runs its interpreter rather than the code-generated matcher tiktoken-go
// registers for the bare pattern (which drops U+007F).
const gpt2Pattern = `(?:'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)`

var gpt2Regexp = sync.OnceValue(func() *regexp2.Regexp {
	return regexp2.MustCompile(gpt2Pattern, regexp2.None)
})

// regexpPieces splits valid UTF-8 s with the regular expression, the
// reference for the hand-written scanner.
func regexpPieces(t testing.TB, s string) []string {
	t.Helper()
	var out []string
	m, err := gpt2Regexp().FindStringMatch(s)
	for ; m != nil && err == nil; m, err = gpt2Regexp().FindNextMatch(m) {
		out = append(out, m.String())
	}
	if err != nil {
		t.Fatalf("regexp2 on %q: %v", s, err)
	}
	return out
}

// scan splits s with the hand-written scanner.
func scan(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := nextPiece(s, i)
		out = append(out, s[i:j])
		i = j
	}
	return out
}

func TestPiecesMatchRegexp(t *testing.T) {
	texts := append([]string{"a  \x7f", "\x7f\x7f ", " \x7f!"}, edgeCases...)
	for _, s := range texts {
		if got, want := scan(s), regexpPieces(t, s); !slices.Equal(got, want) {
			t.Errorf("pieces(%q) = %q, regexp %q", s, got, want)
		}
	}
}

func TestPiecesShakespeare(t *testing.T) {
	text := shakespeare(t)
	if got, want := scan(text), regexpPieces(t, text); !slices.Equal(got, want) {
		t.Errorf("TinyShakespeare: %d pieces, regexp %d", len(got), len(want))
	}
}

func TestPiecesExamples(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"Hello world", []string{"Hello", " world"}},
		{"I'm here", []string{"I", "'m", " here"}},
		{"x'sup", []string{"x", "'s", "up"}},
		{"?'s", []string{"?'", "s"}},
		{"  x", []string{" ", " x"}},
		{"x  ", []string{"x", "  "}},
		{"a\n\nb", []string{"a", "\n", "\n", "b"}},
		{"a \n b", []string{"a", " \n", " b"}},
		{"\t\tx", []string{"\t", "\t", "x"}},
		{"line\r\n", []string{"line", "\r\n"}},
		{"a  \x7f", []string{"a", " ", " \x7f"}},
		{"3.14", []string{"3", ".", "14"}},
		{"é1", []string{"é", "1"}},
		{"e\u0301", []string{"e", "\u0301"}},
		{"\u00a0\u00a0x", []string{"\u00a0", "\u00a0", "x"}},
		{"😀😀 😀", []string{"😀😀", " 😀"}},
		{"a\xffb", []string{"a", "\xff", "b"}},
		{"", nil},
	} {
		if got := scan(c.text); !slices.Equal(got, c.want) {
			t.Errorf("pieces(%q) = %q, want %q", c.text, got, c.want)
		}
		if utf8.ValidString(c.text) {
			if re := regexpPieces(t, c.text); !slices.Equal(re, c.want) {
				t.Errorf("regexp pieces(%q) = %q, want %q (the example is wrong)", c.text, re, c.want)
			}
		}
	}
}
