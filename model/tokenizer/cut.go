package tokenizer

import (
	"context"
	"strings"
	"unicode/utf8"
)

// This file says where a text may be cut so that its pieces, encoded apart
// (in parallel, by package corpus), give exactly the ids of the whole.
//
// A cut is only ever made before a space (U+0020) that has an ASCII letter
// or digit on each side ("a b"); GPT-2's own path also cuts before such a
// line break. Whether that is safe depends on the tokenizer, step by step,
// and a tokenizer.json whose steps are not all shown safe below is never
// cut (Cut returns len(text)): its texts are encoded whole, as before.
//
//   - GPT-2's path: its pre-tokenizer (nextPiece) looks only forward from
//     where a piece starts, and the piece holding the letter or digit
//     before the cut (a run of letters or digits, or a contraction) ends
//     at the space in the whole text and at the end of the text before the
//     cut alike; the space starts a piece in both. Invalid bytes are
//     separate texts either way (the cut is at an ASCII byte). BPE runs on
//     each piece, so the pieces' ids are the whole's.
//   - A tokenizer.json (pipeline): added tokens are found in the raw text
//     first, so no added token may lie over the cut or touch it (an
//     lstrip, rstrip or single_word token looks at its neighbours): Cut
//     refuses a place where one starts at most one byte after the space
//     and ends at or after it. The part after the cut is encoded as the
//     continuation of a stretch (EncodePiece with first false): without
//     the normalizer's Prepend, and not the start of the text (Metaspace's
//     prepend_scheme "first"). Then each step must keep the pieces of the
//     two sides apart, or keep the cut inside one piece in a way the next
//     step handles; cutsAllowed follows the character at the cut (the
//     space, or what the normalizer made of it) through the steps:
//   - normalizers: a Unicode normal form only while that character is
//     ASCII (a character of combining class 0 that never combines with
//     what precedes it, and which an ASCII letter or digit before it does
//     not combine with either: the text normalizes the same in two parts);
//     Prepend (only at the start of a stretch); Replace of a String
//     pattern that holds no ASCII letter or digit, and either is exactly
//     the character at the cut (which becomes the replacement, one
//     character, not an ASCII letter or digit) or does not hold it (no
//     match then lies over the cut, and the leftmost scan for matches
//     finds the same ones in the two parts). Not a Regex Replace (a match
//     may run across the cut: "\s+"), nor any added token that is
//     matched in normalized text.
//   - pre-tokenizers: Metaspace turns the space into its replacement
//     character, and, with split, cuts before it (the character before
//     is a letter or digit, not the replacement), which the right part
//     starts with, so none is prepended to it under any scheme; without
//     split it keeps the cut inside a piece. A ByteLevel whose GPT-2 split
//     sees the space cuts there (as GPT-2's path above); without the split
//     it keeps the cut inside a piece, and with add_prefix_space it puts a
//     space only before a piece that lacks one (the right part starts with
//     the space). A Split on a character class (Digits, Punctuation) or a
//     String, which the character at the cut is not or does not hold,
//     decides each span of the text by its own characters, so the two
//     parts have the whole's spans (the one over the cut cut in two) and
//     the behaviour joins them alike: the cut falls between pieces or
//     inside one. A Digits after a ByteLevel is the same on bytes. A Split
//     on a Regex is allowed only for the patterns of Llama 3 and Qwen2/3
//     (splitPatterns), Isolated, not inverted, with the space at the cut:
//     no match of theirs holds a letter or digit followed by a space, a
//     match ending at a letter or digit (a run of letters, of digits, a
//     contraction) ends there whatever follows, the patterns look neither
//     behind nor before where a search starts, so the matches after the
//     cut are those of the part after it, and those before are those of
//     the part before.
//   - the model: a cut still inside a piece when the piece reaches the
//     model is safe only for a SentencePiece-style model (not byte-level,
//     not ignore_merges) whose word-start character is the character at
//     the cut, which encodeChars already cuts before (see findWordStart).
//
// Cuts compose: each is safe whatever lies beyond the others, since each
// side's pieces depend on that side only.

// splitPatterns are the Split regular expressions a text may be cut across
// (see the top of this file): Llama 3's (runs of up to three digits) and
// Qwen2's and Qwen3's (single digits).
var splitPatterns = map[string]bool{
	`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`: true,
	`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`:      true,
}

// Cut returns the first place i, n <= i < len(text), where text may be cut
// so that EncodePiece(text[:i], true) followed by EncodePiece(text[i:],
// false) is Encode(text), or len(text) where there is none (or where the
// tokenizer's steps allow no cut at all; see the top of cut.go). Cuts
// compose: the pieces between any places Cut gives, the first encoded with
// first true and the others false, give the ids of the whole text.
func (t *Tokenizer) Cut(text string, n int) int {
	if t.hf != nil && !t.hf.cuts {
		return len(text)
	}
	for i := max(n, 1); i+1 < len(text); i++ {
		c := text[i]
		if c != ' ' && (c != '\n' || t.hf != nil) || !isASCIIAlnum(rune(text[i-1])) || !isASCIIAlnum(rune(text[i+1])) {
			continue
		}
		if t.hf != nil && t.hf.added.touches(text, i) {
			continue
		}
		return i
	}
	return len(text)
}

// EncodePiece returns the ids of a piece of a text cut where Cut allows:
// first says the piece starts the text. Of the ids, limit, ctx and progress
// it is EncodeHead.
func (t *Tokenizer) EncodePiece(ctx context.Context, piece string, first bool, limit int, progress func(done int)) (ids []int32, whole bool, err error) {
	return t.encode(ctx, piece, progress, limit, !first)
}

func isASCIIAlnum(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
}

// touches reports whether an added token that starts at most one byte
// after s[i] ends at or after i: one that lies over a cut before s[i], or
// could take in the space there (lstrip, rstrip) or look at it
// (single_word). Tokens that start where the scan for them would not look
// (inside another) count too, which only refuses more places.
func (m *addedMatcher) touches(s string, i int) bool {
	for p := max(0, i-m.longest); p <= i+1 && p < len(s); p++ {
		if !m.first[s[p]] {
			continue
		}
		if tok, end := m.longestAt(s, p); tok >= 0 && end >= i {
			return true
		}
	}
	return false
}

// cutsAllowed reports whether the pipeline's steps allow a cut before a
// space between ASCII letters or digits (see the top of this file).
func (p *pipeline) cutsAllowed() bool {
	if len(p.addedNorm.tokens) > 0 {
		return false
	}
	c := ' ' // the character at the cut, as the steps so far made it
	for i := range p.norm {
		st := &p.norm[i]
		switch st.kind {
		case "Prepend":
		case "Replace":
			if st.replace.re != nil {
				return false
			}
			lit := st.replace.literal
			switch {
			case lit == "":
			case strings.ContainsFunc(lit, isASCIIAlnum):
				return false
			case lit == string(c):
				r, n := utf8.DecodeRuneInString(st.replace.content)
				if n == 0 || n != len(st.replace.content) || r == utf8.RuneError || isASCIIAlnum(r) {
					return false
				}
				c = r
			case strings.ContainsRune(lit, c):
				return false
			}
		default: // a normal form
			if c >= utf8.RuneSelf {
				return false
			}
		}
	}
	for i := range p.pre {
		st := &p.pre[i]
		switch {
		case st.meta != nil:
			if c != ' ' && c != st.meta.repl || isASCIIAlnum(st.meta.repl) {
				return false
			}
			c = st.meta.repl
			if st.meta.split {
				return true
			}
		case st.byteDigits:
			if numericByte(string(c)[0]) {
				return false
			}
		case st.byteLevel:
			if st.prefixSpace && c != ' ' {
				return false
			}
			if st.gpt2Split {
				return c == ' '
			}
		case st.re != nil:
			return c == ' ' && !st.invert && st.behavior == isolated && splitPatterns[st.source]
		case st.pred != nil:
			if st.pred(c) {
				return false
			}
		case st.literal != "":
			if strings.ContainsRune(st.literal, c) {
				return false
			}
		}
	}
	m := p.model
	return !m.byteLevel && !m.ignoreMerges && m.wordStart >= 0 && m.wordStart == c
}
