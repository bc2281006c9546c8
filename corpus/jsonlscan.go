package corpus

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The fast reading of a .jsonl line: one pass over it that checks it is
// JSON as encoding/json does and decodes the top-level "text" string
// straight into the part's buffer of documents, where the reference
// reading (jsonlText) makes a map of the line's raw values, then a string
// of the one named "text": four copies of the line, two passes.
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
// It rejects every other line without saying why: the caller reads a
// rejected line again with jsonlText, whose error is the one said. So the
// errors, their order (not UTF-8 before not JSON) and their wording stay
// encoding/json's, and a line this reader would wrongly reject still loads
// right, only slower. TestScanJSONLLine and FuzzScanJSONLLine hold it to
// jsonlText, which stays the definition.

// maxJSONDepth is how many arrays and objects encoding/json's scanner
// lets be open at once (its maxNestingDepth); one more is a syntax error.
const maxJSONDepth = 10000

// lineScanner reads one line.
type lineScanner struct {
	s     string // the line
	i     int    // the next byte of s to read
	depth int    // the arrays and objects open
	lone  bool   // a string read so far held half a surrogate pair
}

// scanJSONLLine reads line, which is not blank, and, where it accepts it,
// appends its "text" to out and returns it (a part of out's string, which
// is kept as it grows). On a rejected line, out may have gained text that
// is no document.
func scanJSONLLine(line string, out *strings.Builder) (doc string, ok bool) {
	sc := lineScanner{s: line}
	sc.space()
	if !sc.byte('{') {
		return "", false
	}
	sc.depth = 1
	start, end := -1, -1 // the last "text"'s document in out; -1: none, or not one
	sc.space()
	if !sc.byte('}') {
		for {
			sc.space()
			isText, ok := sc.key()
			if !ok {
				return "", false
			}
			sc.space()
			if !sc.byte(':') {
				return "", false
			}
			sc.space()
			switch {
			case isText && sc.peek() == '"':
				start, sc.lone = out.Len(), false
				if !sc.str(out) {
					return "", false
				}
				end = out.Len()
				if sc.lone { // refused, unless a later "text" replaces it
					start, end = -1, -1
				}
			case isText:
				start, end = -1, -1 // as is a "text" that is not a string
				fallthrough
			default:
				if !sc.value() {
					return "", false
				}
			}
			sc.space()
			if sc.byte('}') {
				break
			}
			if !sc.byte(',') {
				return "", false
			}
		}
	}
	sc.space()
	if sc.i != len(sc.s) || start < 0 {
		return "", false
	}
	return out.String()[start:end], true
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
	if sc.peek() != '"' || !sc.str(nil) {
		return false, false
	}
	raw := sc.s[begin+1 : sc.i-1]
	if !strings.Contains(raw, `\`) {
		return raw == "text", true
	}
	// Read its escapes: a key is short, and an escaped one rare.
	var key strings.Builder
	k := lineScanner{s: sc.s, i: begin}
	k.str(&key)
	return key.String() == "text", true
}

// value reads a JSON value, checking it without keeping it.
func (sc *lineScanner) value() bool {
	switch c := sc.peek(); c {
	case '"':
		return sc.str(nil)
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
				if sc.peek() != '"' || !sc.str(nil) {
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
	if !strings.HasPrefix(sc.s[sc.i:], word) {
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

// str reads the string at sc.i (its opening quote), appending its
// characters to out where out is not nil. Invalid UTF-8, a control
// character (below U+0020) and an unknown escape are errors; half a
// surrogate pair reads U+FFFD, as in encoding/json, and sets sc.lone.
func (sc *lineScanner) str(out *strings.Builder) bool {
	s, i := sc.s, sc.i+1
	run := i // the start of the characters not yet appended
	for {
		i = plain(s, i)
		if i == len(s) {
			return false
		}
		switch c := s[i]; {
		case c == '"':
			if out != nil {
				out.WriteString(s[run:i])
			}
			sc.i = i + 1
			return true
		case c == '\\':
			if out != nil {
				out.WriteString(s[run:i])
			}
			n, ok := sc.escape(i, out)
			if !ok {
				return false
			}
			i += n
			run = i
		case c < 0x20:
			return false
		default: // c >= 0x80: a character of two to four bytes
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				return false
			}
			i += n
		}
	}
}

// escape reads the escape at s[i] (its backslash), appending its character
// to out where out is not nil, and returns its length.
func (sc *lineScanner) escape(i int, out *strings.Builder) (int, bool) {
	s := sc.s
	if i+1 == len(s) {
		return 0, false
	}
	var c byte
	switch s[i+1] {
	case '"', '\\', '/':
		c = s[i+1]
	case 'b':
		c = '\b'
	case 'f':
		c = '\f'
	case 'n':
		c = '\n'
	case 'r':
		c = '\r'
	case 't':
		c = '\t'
	case 'u':
		r, ok := hex4(s, i+2)
		if !ok {
			return 0, false
		}
		n := 6
		if utf16.IsSurrogate(r) {
			// A high half then a low one is a character; anything else is
			// half a pair, and the escape after it is read on its own.
			lo, ok := rune(0), false
			if r < 0xdc00 && strings.HasPrefix(s[i+6:], `\u`) {
				lo, ok = hex4(s, i+8)
			}
			if r = utf16.DecodeRune(r, lo); ok && r != utf8.RuneError {
				n = 12
			} else {
				r, sc.lone = utf8.RuneError, true
			}
		}
		if out != nil {
			out.WriteRune(r)
		}
		return n, true
	default:
		return 0, false
	}
	if out != nil {
		out.WriteByte(c)
	}
	return 2, true
}

// hex4 is the value of the four hexadecimal digits at s[i:].
func hex4(s string, i int) (rune, bool) {
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
func plain(s string, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(s); i += 8 {
		x := le64(s, i)
		quote, backslash := x^(ones*'"'), x^(ones*'\\')
		// A byte of v is zero (or below n) where v-ones (or v-n*ones) sets
		// its high bit and v had it clear; a byte >= 0x80 is taken
		// anyway, so the borrows the tricks can give past it do no harm.
		special := (quote-ones)&^quote | (backslash-ones)&^backslash | (x - ones*0x20) | x
		if special&highs != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return i
		}
	}
	return i
}

// le64 is the little-endian uint64 at s[i:] (one load: the compiler joins
// the eight).
func le64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
