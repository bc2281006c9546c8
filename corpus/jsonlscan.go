package corpus

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
)

// The fast reading of a .jsonl line: one pass over it that checks it is
// JSON as encoding/json does and finds the top-level "text" string; then,
// where that string holds escapes, a second pass over it alone that decodes
// them over it, in place (a character is never longer than its escape).
// The document is a part of the file's buffer: no copy. The line is written
// only once accepted, since a rejected one is read again (below); the second
// pass reads a string that is in cache for lines of a few kB. The reference
// reading (jsonlText) makes a map of the line's raw values, then a string
// of the one named "text": four copies of the line. A long string (a
// document of many megabytes on one line) is read, and decoded, in parts
// on every core (jsonlstring.go).
//
// It accepts exactly the lines jsonlText accepts, with the same document:
//   - the line is valid UTF-8 and valid JSON (RFC 8259, as encoding/json's
//     scanner reads it: at most maxJSONDepth arrays and objects open at once);
//   - it is an object, and of its top-level members those whose key, its
//     escapes read, is exactly "text" (not "Text"; "te\u0078t" is one)
//     have a string as the last's value, the document (a map's rule: the
//     last of duplicate keys wins); a "text" inside a nested value is data;
//   - that string holds no escape of half a UTF-16 surrogate pair without
//     its other half (encoding/json reads U+FFFD there; loneSurrogate).
//
// It rejects every other line without saying why, and leaves it as it was:
// the caller reads a rejected line again with jsonlText, whose error is the
// one said. So the errors, their order (not UTF-8 before not JSON) and their
// wording stay encoding/json's, and a line this reader would wrongly reject
// would still load right, only slower. TestScanJSONLLine and
// FuzzScanJSONLLine hold it to jsonlText, which stays the definition.

// maxJSONDepth is how many arrays and objects encoding/json's scanner
// lets be open at once (its maxNestingDepth); one more is a syntax error.
const maxJSONDepth = 10000

// lineScanner reads one line.
type lineScanner struct {
	s       []byte // the line
	i       int    // the next byte of s to read
	depth   int    // the arrays and objects open
	escaped bool   // a string read so far held an escape,
	lone    bool   // and one half of a surrogate pair
	cuts    []int  // places in the last string read where a character starts (see str)
}

// scanJSONLLine reads line, which is not blank, and, where it accepts it,
// returns its "text", decoded in place: a part of line, whose bytes after
// it are then garbage. A rejected line is left as it was.
func scanJSONLLine(line []byte) (doc []byte, ok bool) {
	sc := lineScanner{s: line}
	sc.space()
	if !sc.byte('{') {
		return nil, false
	}
	sc.depth = 1
	quote, end := -1, -1 // the last "text"'s string: its quotes; -1: none, or not one
	escaped := false     // whether it holds an escape
	var cuts []int       // and where its characters may be decoded apart
	sc.space()
	if !sc.byte('}') {
		for {
			sc.space()
			isText, ok := sc.key()
			if !ok {
				return nil, false
			}
			sc.space()
			if !sc.byte(':') {
				return nil, false
			}
			sc.space()
			switch {
			case isText && sc.peek() == '"':
				quote, sc.escaped, sc.lone = sc.i, false, false
				if !sc.str() {
					return nil, false
				}
				end, escaped, cuts = sc.i-1, sc.escaped, slices.Clone(sc.cuts)
				if sc.lone { // refused, unless a later "text" replaces it
					quote, end = -1, -1
				}
			case isText:
				quote, end = -1, -1 // as is a "text" that is not a string
				fallthrough
			default:
				if !sc.value() {
					return nil, false
				}
			}
			sc.space()
			if sc.byte('}') {
				break
			}
			if !sc.byte(',') {
				return nil, false
			}
		}
	}
	sc.space()
	if sc.i != len(sc.s) || quote < 0 {
		return nil, false
	}
	if !escaped {
		return line[quote+1 : end], true
	}
	return line[quote+1 : decodeString(line, quote+1, end, cuts)], true
}

// peek is the next byte, or 0 at the end of the line.
func (sc *lineScanner) peek() byte {
	if sc.i < len(sc.s) {
		return sc.s[sc.i]
	}
	return 0
}

// byte reads c where it is next.
func (sc *lineScanner) byte(c byte) bool {
	if sc.peek() == c {
		sc.i++
		return true
	}
	return false
}

// space reads JSON's white space: space, tab, CR, LF.
func (sc *lineScanner) space() {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\r', '\n':
			sc.i++
		default:
			return
		}
	}
}

// key reads an object's key and says whether it is "text".
func (sc *lineScanner) key() (isText, ok bool) {
	begin := sc.i
	sc.escaped = false
	if sc.peek() != '"' {
		return false, false
	}
	if !sc.str() {
		return false, false
	}
	if !sc.escaped {
		return string(sc.s[begin+1:sc.i-1]) == "text", true
	}
	// Decode its escapes in a copy (a key is short, and an escaped one
	// rare): the line is not written before it is accepted.
	k := slices.Clone(sc.s[begin+1 : sc.i-1])
	return string(k[:decodeRun(k, 0, len(k), 0)]) == "text", true
}

// value reads a JSON value, checking it without keeping it.
func (sc *lineScanner) value() bool {
	switch c := sc.peek(); c {
	case '"':
		return sc.str()
	case '{', '[':
		return sc.container(c)
	case 't':
		return sc.literal("true")
	case 'f':
		return sc.literal("false")
	case 'n':
		return sc.literal("null")
	}
	return sc.number()
}

// container reads an object (open is '{') or an array ('[').
func (sc *lineScanner) container(open byte) bool {
	if sc.depth++; sc.depth > maxJSONDepth {
		return false
	}
	sc.i++
	close := byte(']')
	if open == '{' {
		close = '}'
	}
	sc.space()
	if !sc.byte(close) {
		for {
			sc.space()
			if open == '{' {
				if sc.peek() != '"' {
					return false
				}
				if !sc.str() {
					return false
				}
				sc.space()
				if !sc.byte(':') {
					return false
				}
				sc.space()
			}
			if !sc.value() {
				return false
			}
			sc.space()
			if sc.byte(close) {
				break
			}
			if !sc.byte(',') {
				return false
			}
		}
	}
	sc.depth--
	return true
}

// literal reads true, false or null.
func (sc *lineScanner) literal(word string) bool {
	if !bytes.HasPrefix(sc.s[sc.i:], []byte(word)) {
		return false
	}
	sc.i += len(word)
	return true
}

// number reads a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
// What follows it is the caller's to check ("01" is 0, then a 1 that
// cannot follow).
func (sc *lineScanner) number() bool {
	s, i := sc.s, sc.i
	digits := func() bool { // one or more
		n := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i > n
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	sc.i = i
	return true
}

// hex4 is the value of the four hexadecimal digits at s[i:].
func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for k := i; k < i+4; k++ {
		switch c := s[k]; {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// plain returns the offset of the first byte at or after i that ends a run
// of plain string characters: a quote, a backslash, a control character
// or the first byte of a character past ASCII; len(s) where there is none.
// Eight bytes at a time while none is one (the bit tricks of "Bit
// Twiddling Hacks", "determine if a word has a byte less than n").
func plain(s []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64(s[i:])
		quote, backslash := x^(ones*'"'), x^(ones*'\\')
		// A byte of v is zero (or below n) where v-ones (or v-n*ones) sets
		// its high bit and v had it clear; a byte >= 0x80 is taken anyway.
		// The borrow of a byte that is zero (or below n) can mark bytes
		// above it, never one below: the lowest byte marked is the first
		// special one.
		special := ((quote-ones)&^quote | (backslash-ones)&^backslash | (x - ones*0x20) | x) & highs
		if special != 0 {
			return i + bits.TrailingZeros64(special)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return i
		}
	}
	return i
}
