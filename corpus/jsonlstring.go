package corpus

import (
	"bytes"
	"runtime"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// The strings of a .jsonl line, read (str) and decoded in place
// (decodeString) by the fast reading (jsonlscan.go). A string is a run of
// characters and escapes: ASCII, UTF-8 of two to four bytes, \X and \uXXXX
// (twelve bytes for a surrogate pair). Its reading carries nothing from one
// to the next but whether an escape, or half a surrogate pair, was seen: so
// from any place where one starts, the rest reads as it does from the
// string's start. A long string (a document of hundreds of megabytes on one
// line) is read in parts on every core, each from a place where a
// character seems to start: a part is taken only where the one before it
// stopped exactly there, so the parts taken are the reading from the start;
// where the guess was wrong, the reading goes on from where the part before
// stopped, and a wrong guess costs time only. The places found so let the
// decoding be shared too.

// longString is how much of a string is read on one core before the rest is
// read in parts (a variable for tests). Each stretch read after it is as
// long as what was read before, so a string that ends early in a stretch
// costs at most twice its reading.
var longString = 1 << 20

// stringRun is what reading a run of a string's characters found.
type stringRun struct {
	end     int  // where it stopped: at the closing quote, or where the first character at or past its bound starts
	closed  bool // end is the closing quote
	escaped bool // it held an escape,
	lone    bool // and half of a surrogate pair
	ok      bool // false: a byte the string may not hold, or its end without the closing quote
}

// str reads the string at sc.i (its opening quote) and moves sc.i past it,
// setting sc.escaped where it holds an escape and sc.lone where it holds
// half of a surrogate pair (which encoding/json reads as U+FFFD). Invalid
// UTF-8, a control character (below U+0020) and an unknown escape are
// errors. sc.cuts gets the places in it found to start a character, for
// decodeString (none where it was read on one core).
func (sc *lineScanner) str() bool {
	s, start := sc.s, sc.i+1
	sc.cuts = sc.cuts[:0]
	r := readRun(s, start, min(len(s), start+longString))
	for r.ok && !r.closed && r.end < len(s) {
		r = sc.readStretch(start, r)
	}
	if !r.ok || !r.closed {
		return false
	}
	sc.escaped = sc.escaped || r.escaped
	sc.lone = sc.lone || r.lone
	sc.i = r.end + 1
	return true
}

// readStretch reads on, in parts, from r, the reading of the string whose
// characters start at start, which stopped short of its end: a stretch as
// long as what was read so far. It returns the reading joined to r, and
// adds to sc.cuts where the stretch starts and each place where a part
// began that the part before reached exactly.
func (sc *lineScanner) readStretch(start int, r stringRun) stringRun {
	s, from := sc.s, r.end
	to := from + min(len(s)-from, max(from-start, longString))
	n := min(runtime.GOMAXPROCS(0), max(1, (to-from)/max(longString/2, 1)))
	bounds := []int{from}
	for k := 1; k < n; k++ {
		if c := guessStart(s, from+share(to-from, k, n), to); c > bounds[len(bounds)-1] && c < to {
			bounds = append(bounds, c)
		}
	}
	bounds = append(bounds, to)
	runs := make([]stringRun, len(bounds)-1)
	var wg sync.WaitGroup
	for k := range runs {
		wg.Go(func() { runs[k] = readRun(s, bounds[k], bounds[k+1]) })
	}
	wg.Wait()
	sc.cuts = append(sc.cuts, from)
	for k, p := range runs {
		if k > 0 {
			sc.cuts = append(sc.cuts, bounds[k]) // reached exactly by part k-1
		}
		r = stringRun{end: p.end, closed: p.closed, escaped: r.escaped || p.escaped, lone: r.lone || p.lone, ok: p.ok}
		if !p.ok || p.closed || p.end != bounds[k+1] {
			break
		}
	}
	return r
}

// guessStart is where readStretch starts a part near i: charStart (a
// variable for tests, which guess anywhere, to read on from wrong guesses).
var guessStart = charStart

// charStart is the first place from i, and before to and i+64, where the
// byte before is one that ends a character or an escape and is in none
// (ASCII, and neither a backslash, nor u, nor a hexadecimal digit): where a
// character starts, unless the string ended before it; to where there is
// none.
func charStart(s []byte, i, to int) int {
	for p := max(i, 1); p < min(to, i+64); p++ {
		switch c := s[p-1]; {
		case c >= utf8.RuneSelf, c == '\\', c == 'u', '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return p
		}
	}
	return to
}

// readRun reads the characters and escapes of a string from s[i], where
// one starts (or its closing quote), while they start before to.
func readRun(s []byte, i, to int) stringRun {
	r := stringRun{}
	for {
		if i >= to {
			r.end, r.ok = i, true
			return r
		}
		if i = plain(s, i); i >= to { // plain characters up to to
			r.end, r.ok = to, true
			return r
		}
		switch c := s[i]; {
		case c == '"':
			r.end, r.closed, r.ok = i, true, true
			return r
		case c == '\\':
			_, n, lone, ok := escape(s, i)
			if !ok {
				return r
			}
			r.escaped = true
			r.lone = r.lone || lone
			i += n
		case c < 0x20:
			return r
		default: // c >= 0x80: a character of two to four bytes
			c, n := utf8.DecodeRune(s[i:])
			if c == utf8.RuneError && n == 1 {
				return r
			}
			i += n
		}
	}
}

// decodeString writes the characters of the string whose characters and
// escapes are s[begin:end] (read by str, which found the places cuts in it)
// over it from begin on, and returns where they end: between cuts, in parts
// of about the same size, each on a core, then closed up.
func decodeString(s []byte, begin, end int, cuts []int) int {
	n := runtime.GOMAXPROCS(0)
	if len(cuts) == 0 || n == 1 {
		return decodeRun(s, begin, end, begin)
	}
	bounds := []int{begin}
	for _, c := range cuts {
		if c > bounds[len(bounds)-1] && c < end && c >= begin+share(end-begin, len(bounds), n) {
			bounds = append(bounds, c)
		}
	}
	bounds = append(bounds, end)
	ends := make([]int, len(bounds)-1)
	var wg sync.WaitGroup
	for k := range ends {
		wg.Go(func() { ends[k] = decodeRun(s, bounds[k], bounds[k+1], bounds[k]) })
	}
	wg.Wait()
	w := ends[0]
	for k := 1; k < len(ends); k++ {
		w += copy(s[w:], s[bounds[k]:ends[k]])
	}
	return w
}

// decodeRun writes the characters of s[i:to], characters and escapes of a
// string read already (from where one starts to where one starts), over s
// from w (at most i) on, and returns where they end. A character is never
// longer than its escape. It reads and writes nothing at or past to, where
// decodeString may have another part decoded at the same time.
func decodeRun(s []byte, i, to, w int) int {
	s = s[:to]
	run := i // the characters of s[run:i] are to go to s[w:] as they are
	keep := func() {
		if w != run {
			copy(s[w:], s[run:i])
		}
		w += i - run
	}
	for i < to {
		i = plain(s, i)
		if i == to {
			break
		}
		if s[i] != '\\' { // a character past ASCII
			_, n := utf8.DecodeRune(s[i:])
			i += n
			continue
		}
		keep()
		r, n, _, _ := escape(s, i)
		w += utf8.EncodeRune(s[w:], r)
		i += n
		run = i
	}
	keep()
	return w
}

// escape reads the escape at s[i] (its backslash): its character and
// length, and whether it is half of a surrogate pair (read as U+FFFD).
func escape(s []byte, i int) (r rune, n int, lone, ok bool) {
	if i+1 == len(s) {
		return 0, 0, false, false
	}
	switch s[i+1] {
	case '"', '\\', '/':
		return rune(s[i+1]), 2, false, true
	case 'b':
		return '\b', 2, false, true
	case 'f':
		return '\f', 2, false, true
	case 'n':
		return '\n', 2, false, true
	case 'r':
		return '\r', 2, false, true
	case 't':
		return '\t', 2, false, true
	case 'u':
		r, ok := hex4(s, i+2)
		if !ok {
			return 0, 0, false, false
		}
		if !utf16.IsSurrogate(r) {
			return r, 6, false, true
		}
		// A high half then a low one is a character; anything else is
		// half a pair, and the escape after it is read on its own.
		lo, ok := rune(0), false
		if r < 0xdc00 && bytes.HasPrefix(s[i+6:], []byte(`\u`)) {
			lo, ok = hex4(s, i+8)
		}
		if r = utf16.DecodeRune(r, lo); ok && r != utf8.RuneError {
			return r, 12, false, true
		}
		return utf8.RuneError, 6, true, true
	}
	return 0, 0, false, false
}
