package tokenizer

import (
	"unicode"
	"unicode/utf8"

	"github.com/wgpu-eval/wgpu-eval/model/tokenizer/internal/ucd"
)

// class is the character class the GPT-2 pre-tokenizer pattern distinguishes,
// with Unicode 16.0's data (package ucd), as Hugging Face's Oniguruma has it.
type class uint8

const (
	other  class = iota // [^\s\p{L}\p{N}]
	letter              // \p{L}
	number              // \p{N}
	space               // \s (Unicode White_Space)
)

// asciiClass is the class of each ASCII byte.
var asciiClass = func() (t [utf8.RuneSelf]class) {
	for c := range utf8.RuneSelf {
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			t[c] = letter
		case '0' <= c && c <= '9':
			t[c] = number
		case c == ' ' || '\t' <= c && c <= '\r':
			t[c] = space
		}
	}
	return t
}()

var ucdL, ucdN = ucd.Categories["L"], ucd.Categories["N"]

// classAt returns the class of the rune starting at s[i] and its width in bytes.
// An invalid byte is one rune of class other.
func classAt(s string, i int) (class, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	switch {
	case unicode.Is(ucdL, r):
		return letter, n
	case unicode.Is(ucdN, r):
		return number, n
	case unicode.Is(ucd.WhiteSpace, r):
		return space, n
	}
	return other, n
}

// nextPiece returns the end of the pre-tokenizer piece that starts at s[i]
// (i < len(s)). It is a hand-written matcher for GPT-2's pattern
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// taking, like the regular expression, the first alternative that matches at
// i, each as long as it can be.
func nextPiece(s string, i int) int {
	if s[i] == '\'' && i+1 < len(s) {
		switch s[i+1] {
		case 's', 't', 'm', 'd':
			return i + 2
		case 'r', 'v':
			if i+2 < len(s) && s[i+2] == 'e' {
				return i + 3
			}
		case 'l':
			if i+2 < len(s) && s[i+2] == 'l' {
				return i + 3
			}
		}
	}
	cl, n := classAt(s, i)
	j := i + n
	if s[i] == ' ' && j < len(s) {
		// " ?" before a letter, number or other run.
		if c2, n2 := classAt(s, j); c2 != space {
			cl = c2
			j += n2
		}
	}
	if cl != space {
		for j < len(s) {
			c, n := classAt(s, j)
			if c != cl {
				break
			}
			j += n
		}
		return j
	}
	// A whitespace run: \s+(?!\S) takes it all at the end of the text, and all
	// but its last rune before a non-space (that rune goes with what follows);
	// a single whitespace rune before a non-space falls to \s+.
	last := i
	for j < len(s) {
		c, n := classAt(s, j)
		if c != space {
			break
		}
		last = j
		j += n
	}
	if j == len(s) || last == i {
		return j
	}
	return last
}
