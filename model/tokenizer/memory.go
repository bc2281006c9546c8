package tokenizer

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"unicode/utf8"
)

// What encoding costs in memory beyond the text and its ids, for callers
// that check it before they encode (package corpus): BPE holds the whole of
// each piece the pre-tokenizer makes while it merges it, as Hugging Face's
// tokenizers does, so a piece of many megabytes (a run of one character, a
// long line without spaces for a tokenizer that cuts only at spaces) costs
// MergeBytesPerSymbol bytes a symbol at once, however few ids it gives.

// MergeBytesPerSymbol is the most memory BPE holds per symbol of the piece it
// merges: the symbols (4 bytes), mergeHeap's candidates and their index (12),
// and the piece's ids, up to one per symbol (4). A symbol is a byte for
// byte-level BPE and at most a byte (a character, or a byte of one without a
// token of its own) for SentencePiece-style BPE.
const MergeBytesPerSymbol = 4 + mergeHeapBytes + 4

// MaxPieceSymbols is the most symbols a piece BPE merges may have: its
// positions are int32. Encoding a text with a longer piece (a run of 2 GiB
// without spaces or line breaks) fails with ErrPieceTooLong; MergeMemory
// says Unmergeable for such a text, so that callers can refuse it before
// they encode it.
const MaxPieceSymbols = math.MaxInt32

// maxPieceSymbols is the limit the encoders hold pieces to: MaxPieceSymbols,
// lowered by tests (a piece of 2^31 bytes is too large for one).
var maxPieceSymbols = MaxPieceSymbols

// ErrPieceTooLong is the error, wrapped, of encoding a text with a piece
// longer than BPE can merge: more than MaxPieceSymbols symbols, which it
// merges whole (a run of one character, a line without spaces for a
// tokenizer that cuts only at spaces).
var ErrPieceTooLong = errors.New("a piece too long to merge")

// errPieceTooLong refuses a piece, or a word of one, of n symbols, which
// stands for bytes [start, end) of the text, or about those where the
// bytes BPE merges are not the text's (a tokenizer.json's normalizers and
// pre-tokenizer may change them).
func errPieceTooLong(start, end, n int, about bool) error {
	where := "bytes"
	if about {
		where = "about bytes"
	}
	return fmt.Errorf("encode: %w: %s %d to %d of the text hold a piece of %d symbols, which BPE merges whole, "+
		"more than the %d it can (MaxPieceSymbols): break the run of text without spaces or line breaks there, or leave it out",
		ErrPieceTooLong, where, start, end, n, maxPieceSymbols)
}

// Unmergeable is MergeMemory of a text with a piece of more than
// MaxPieceSymbols symbols, which BPE cannot merge at all.
const Unmergeable = math.MaxUint64

// MergeMemory returns the most memory, in bytes, that BPE holds at once
// while EncodePiece(ctx, piece, first, ...) runs (Encode(piece): first
// true): MergeBytesPerSymbol times the symbols of the longest piece that
// the normalizers and the pre-tokenizer make of it, or Unmergeable where
// that piece may have more than MaxPieceSymbols (wherever encoding piece
// fails with ErrPieceTooLong, and for some pipelines a few bytes short of
// that, where it bounds a piece by runs of characters). It runs them over
// piece (not BPE), which takes a fraction of the time encoding takes: call
// it where PieceMemory's bound, which reads nothing, is too large.
func (t *Tokenizer) MergeMemory(piece string, first bool) uint64 {
	if t.hf == nil {
		return symbolsMemory(longestGPT2(piece))
	}
	p := t.hf
	longest := 0
	pre := p.preTokenize
	if extra, ok := p.runBounded(); ok {
		// Bound each stretch's pieces by its runs of characters instead:
		// several times faster than the Split's regular expression.
		pre = func(s string, _ bool, _ func(string) error) error {
			longest = max(longest, min(len(s)+extra, pairRuns(s)+runSlack))
			return nil
		}
	}
	p.walk(piece, !first, func(int32) error { return nil }, pre, func(piece string, _ pieceAt) error {
		longest = max(longest, p.model.longestWord(piece))
		return nil
	})
	return symbolsMemory(longest)
}

// symbolsMemory is the memory BPE holds for a piece of n symbols, or
// Unmergeable past MaxPieceSymbols (where encoding fails).
func symbolsMemory(n int) uint64 {
	if n > maxPieceSymbols {
		return Unmergeable
	}
	return MergeBytesPerSymbol * uint64(n)
}

// runSlack bounds what a piece of runBounded's pre-tokenizers holds besides
// two adjacent runs of characters of one class: a contraction ('ll, or
// 'ſ, which (?i) folds to 's: at most 13 bytes), a leading character (4), a
// prefix space (1).
const runSlack = 16

// runBounded reports whether every piece that the pipeline's pre-tokenizer
// makes of a text is within two adjacent runs of characters of one class
// (see pairRuns) and runSlack bytes, and the model byte-level (a symbol a
// byte): one of its steps is a ByteLevel that splits as GPT-2 (nextPiece:
// " ?" and a run of letters, numbers or others, or a run of spaces, less
// its last) or a Split on Llama 3's or Qwen's pattern (splitPatterns: a
// contraction, a leading character and a run of letters, at most three
// numbers, " ?" and a run of others and line breaks, a run of spaces), and
// the others only cut pieces (a Split keeps parts of its piece) or put a
// space before them (ByteLevel's prefix space; not Metaspace, whose
// replacement of a space is three bytes). extra is the bytes a piece can
// gain beyond the text's (the prefix space).
func (p *pipeline) runBounded() (extra int, ok bool) {
	if !p.model.byteLevel {
		return 0, false
	}
	for i := range p.pre {
		st := &p.pre[i]
		switch {
		case st.meta != nil:
			return 0, false
		case st.byteLevel:
			ok = ok || st.gpt2Split
			if st.prefixSpace {
				extra++
			}
		case st.re != nil && !st.invert && st.behavior == isolated && splitPatterns[st.source]:
			ok = true
		}
	}
	return extra, ok
}

// pairRuns returns the most bytes that two adjacent runs of s hold
// together, a run being a longest stretch of characters of one class
// (letters, numbers, spaces, others: see classAt).
func pairRuns(s string) int {
	best, prev, cur := 0, 0, 0
	cl := class(255)
	for i := 0; i < len(s); {
		c, n := classAt(s, i)
		if c != cl {
			best = max(best, prev+cur)
			prev, cur, cl = cur, 0, c
		}
		cur += n
		i += n
	}
	return max(best, prev+cur)
}

// PieceMemory bounds MergeMemory of any valid UTF-8 text of n bytes
// without reading it: as if the whole text were one piece, grown as much as
// the tokenizer's normalizers and pre-tokenizer can grow text (Qwen's NFC up
// to three times, in bytes; Llama 2's spaces, one byte, become "▁", three).
// It is never below MergeMemory of such a text. (A tokenizer.json's
// pipeline makes each byte that is not UTF-8 a U+FFFD of three bytes, which
// this bound leaves out.)
func (t *Tokenizer) PieceMemory(n int) uint64 {
	mul, add := uint64(1), uint64(0)
	if t.hf != nil {
		mul, add = t.hf.growth()
	}
	return satMul(MergeBytesPerSymbol, satAdd(satMul(uint64(max(n, 0)), mul), add))
}

// growth bounds the bytes of the pieces the normalizers and pre-tokenizer
// make of n bytes of text: at most n*mul + add in all. A normal form grows
// UTF-8 text at most threefold (NFC, NFD) or elevenfold (NFKC, NFKD), by
// Unicode's stability policy (UAX #15, "Stability"); a Replace of a String
// by at most its content's length over the pattern's (rounded up); a Replace
// of a Regex, whose matches may be empty, by its content at every position
// and every byte; Prepend and a prefix space by their length; Metaspace
// turns a space into its replacement character.
func (p *pipeline) growth() (mul, add uint64) {
	mul = 1
	grow := func(m, a uint64) { // n*mul + add becomes (n*mul + add)*m + a
		mul, add = satMul(mul, m), satAdd(satMul(add, m), a)
	}
	for i := range p.norm {
		st := &p.norm[i]
		switch st.kind {
		case "NFC", "NFD":
			grow(3, 0)
		case "NFKC", "NFKD":
			grow(11, 0)
		case "Prepend":
			grow(1, uint64(len(st.prepend)))
		case "Replace":
			c := uint64(len(st.replace.content))
			switch {
			case st.replace.re != nil:
				grow(1+c, c)
			case st.replace.literal != "":
				l := uint64(len(st.replace.literal))
				grow(max(1, (c+l-1)/l), 0)
			}
		}
	}
	for i := range p.pre {
		st := &p.pre[i]
		switch {
		case st.meta != nil:
			r := uint64(utf8.RuneLen(st.meta.repl))
			grow(max(1, r), r)
		case st.byteLevel && st.prefixSpace:
			grow(1, 1)
		}
	}
	return mul, add
}

// longestWord returns the most symbols BPE merges at once in a piece: the
// piece's bytes for byte-level BPE; for SentencePiece-style BPE those of
// its longest word, as encodeChars cuts it, each character one symbol when
// it has a token, else one per byte (byte_fallback) or at most one (the
// unknown token).
func (m *hfModel) longestWord(piece string) int {
	if m.byteLevel {
		return len(piece)
	}
	longest, n := 0, 0
	prev := rune(-1)
	for _, r := range piece {
		if r == m.wordStart && prev != m.wordStart && n > 0 {
			longest, n = max(longest, n), 0
		}
		prev = r
		n += m.symbolsOf(r)
	}
	return max(longest, n)
}

// symbolsOf returns the most symbols character r of a SentencePiece-style
// piece starts as: one when it has a token of its own (m.chars, looked up
// through the bit set where it can) or is ASCII, else one per byte
// (byte_fallback; the unknown token is one at most).
func (m *hfModel) symbolsOf(r rune) int {
	switch {
	case r < utf8.RuneSelf:
		return 1
	case r < 1<<16:
		if m.charsBMP[r/64]&(1<<(r%64)) != 0 {
			return 1
		}
	default:
		if _, ok := m.chars[r]; ok {
			return 1
		}
	}
	return utf8.RuneLen(r)
}

// longestGPT2 returns the length of the longest piece GPT-2's path gives BPE
// (see encodeGPT2): each invalid byte alone, the valid stretches between
// them cut by nextPiece.
func longestGPT2(text string) int {
	if utf8.ValidString(text) {
		return longestValid(text)
	}
	longest, start := 0, 0
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if r != utf8.RuneError || n != 1 {
			i += n
			continue
		}
		longest = max(longest, longestValid(text[start:i]), 1)
		i++
		start = i
	}
	return max(longest, longestValid(text[start:]))
}

// longestValid is longestGPT2 of valid UTF-8.
func longestValid(s string) int {
	longest := 0
	for i := 0; i < len(s); {
		j := nextPiece(s, i)
		longest = max(longest, j-i)
		i = j
	}
	return longest
}

func satMul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return math.MaxUint64
	}
	return lo
}

func satAdd(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return s
}
