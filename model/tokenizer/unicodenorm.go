package tokenizer

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/wgpu-eval/wgpu-eval/model/tokenizer/internal/ucd"
)

// This file is the Unicode normal forms of the NFC, NFD, NFKC and NFKD
// normalizers, as Hugging Face's tokenizers (0.23.2) computes them. Go's
// norm package differs from it in two ways, both handled here:
//
//   - norm follows UAX #15's Stream-Safe Text Format: after 30 non-starters
//     (combining marks, and by its count also characters such as U+FFAB
//     HALFWIDTH HANGUL LETTER RIEUL-PHIEUPH) in a row it inserts U+034F
//     COMBINING GRAPHEME JOINER, and it reorders marks only within each
//     stretch of 30. Hugging Face puts nothing in and orders the whole run.
//     Where norm puts one in, as in "Zalgo" text, the text around it is
//     normalized by exactForm, the algorithm of UAX #15 written out.
//   - Hugging Face's Unicode data is older than norm's (Unicode 15.0 with
//     Go 1.26, 17.0 with Go 1.27): it has combining class 0 for the marks
//     of Unicode 11 and later, and no decompositions for characters of
//     Unicode 12.1 and later. Those characters (hfInertCanon,
//     hfInertCompat, and every character that Unicode 15.0 had not yet
//     assigned, ucd.Unassigned15) are left alone here too, as characters
//     that never interact with their neighbours (hfInert), so that the
//     result does not depend on the Go release that built the program.
//
// TestNormalizeMatchesHF checks every code point, every decomposition and
// every combining mark's class against Hugging Face's normalizers (with Go
// 1.26 and with Go 1.27).

// hfInertCanon are the ranges of characters that Hugging Face's normal
// forms all leave as they are, as characters of combining class 0 that
// neither decompose nor compose, where norm does not: combining marks of
// Unicode 11 to 15.0 (U+07FD NKO DANTAYALAN, U+0898..U+089F Arabic
// Quranic marks, U+1ABF..U+1ACE, ...), which have class 0 there; U+11930,
// which Hugging Face does not compose after U+11935; and U+11938, which it
// does not decompose.
var hfInertCanon = [][2]rune{
	{0x7FD, 0x7FD}, {0x898, 0x89F}, {0x8CA, 0x8D3}, {0x9FE, 0x9FE}, {0xC3C, 0xC3C}, {0xD3B, 0xD3C},
	{0xEBA, 0xEBA}, {0x1715, 0x1715}, {0x1ABF, 0x1ACE}, {0x1DF6, 0x1DFA}, {0xA82C, 0xA82C},
	{0x10D24, 0x10D27}, {0x10EAB, 0x10EAC}, {0x10EFD, 0x10EFF}, {0x10F46, 0x10F50}, {0x10F82, 0x10F85},
	{0x11070, 0x11070}, {0x1133B, 0x1133B}, {0x1145E, 0x1145E}, {0x11839, 0x1183A}, {0x11930, 0x11930},
	{0x11938, 0x11938}, {0x1193D, 0x1193E}, {0x11943, 0x11943}, {0x119E0, 0x119E0}, {0x11A34, 0x11A34},
	{0x11A47, 0x11A47}, {0x11A99, 0x11A99}, {0x11D42, 0x11D42}, {0x11D44, 0x11D45}, {0x11D97, 0x11D97},
	{0x11F41, 0x11F42}, {0x16FF0, 0x16FF1}, {0x1E08F, 0x1E08F}, {0x1E130, 0x1E136}, {0x1E2AE, 0x1E2AE},
	{0x1E2EC, 0x1E2EF}, {0x1E4EC, 0x1E4EF},
}

// hfInertCompat are the ranges of characters that Hugging Face's NFKC and
// NFKD also leave as they are, where norm decomposes them (characters of
// Unicode 12.1 to 15.0: U+32FF SQUARE ERA NAME REIWA, modifier letters,
// U+1FBF0..U+1FBF9 SEGMENTED DIGIT ZERO..NINE, ...).
var hfInertCompat = [][2]rune{
	{0x32FF, 0x32FF}, {0xA7F2, 0xA7F4}, {0xAB69, 0xAB69}, {0x10781, 0x10785}, {0x10787, 0x107B0},
	{0x107B2, 0x107BA}, {0x1E030, 0x1E06D}, {0x1F16C, 0x1F16C}, {0x1FBF0, 0x1FBF9},
}

// hfInert reports whether Hugging Face's tokenizers treat r, in the normal
// form (compat: NFKC or NFKD), as a character of combining class 0 that
// neither decomposes nor composes, where norm may not.
func hfInert(r rune, compat bool) bool {
	return r >= 0x7FD && (inRanges(hfInertCanon, r) || compat && inRanges(hfInertCompat, r) || unicode.Is(ucd.Unassigned15, r))
}

// inRanges reports whether r is in one of the sorted ranges.
func inRanges(ranges [][2]rune, r rune) bool {
	_, found := slices.BinarySearchFunc(ranges, r, func(rg [2]rune, r rune) int {
		switch {
		case rg[1] < r:
			return -1
		case rg[0] > r:
			return 1
		}
		return 0
	})
	return found
}

// normalForm returns s in normal form f as Hugging Face's tokenizers
// computes it: norm's result, but for the characters hfInert leaves alone
// and where norm puts in U+034F (see the top of this file).
func normalForm(f norm.Form, s string) string {
	compat := f == norm.NFKC || f == norm.NFKD
	var b strings.Builder
	done := 0 // s[:done] is written to b
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if hfInert(r, compat) {
			b.WriteString(streamFree(f, s[done:i]))
			b.WriteString(s[i : i+n])
			done = i + n
		}
		i += n
	}
	if done == 0 {
		return streamFree(f, s)
	}
	b.WriteString(streamFree(f, s[done:]))
	return b.String()
}

// graphemeJoiner is U+034F, which norm puts in after 30 non-starters.
const graphemeJoiner = "\u034f"

// streamFree is f.String(s) without the U+034F that norm puts in: where it
// puts one in, the text is cut before each ASCII character (a character of
// combining class 0 that never composes with what precedes it, so the
// pieces normalize on their own) and the pieces that get one are normalized
// by exactForm.
func streamFree(f norm.Form, s string) string {
	out := f.String(s)
	if !strings.Contains(out, graphemeJoiner) || strings.Count(out, graphemeJoiner) == strings.Count(s, graphemeJoiner) {
		return out
	}
	var b strings.Builder
	start := 0
	for i := 1; i <= len(s); i++ {
		if i < len(s) && s[i] >= utf8.RuneSelf {
			continue
		}
		piece := s[start:i]
		out := f.String(piece)
		if strings.Count(out, graphemeJoiner) != strings.Count(piece, graphemeJoiner) {
			out = exactForm(f, piece)
		}
		b.WriteString(out)
		start = i
	}
	return b.String()
}

// exactForm is normal form f of s by the algorithm of UAX #15, without
// norm's limit on the number of non-starters in a row: each rune
// decomposed, each run of non-starters put in canonical order, and, for
// NFC and NFKC, canonical composition. It is slow: for the rare text where
// norm's result differs.
func exactForm(f norm.Form, s string) string {
	dec, compose := norm.NFD, f == norm.NFC || f == norm.NFKC
	if f == norm.NFKC || f == norm.NFKD {
		dec = norm.NFKD
	}
	type char struct {
		r   rune
		ccc uint8
	}
	var cs []char
	for _, r := range s {
		for _, d := range dec.String(string(r)) {
			cs = append(cs, char{d, norm.NFD.PropertiesString(string(d)).CCC()})
		}
	}
	for i := 0; i < len(cs); {
		j := i
		for j < len(cs) && cs[j].ccc != 0 {
			j++
		}
		slices.SortStableFunc(cs[i:j], func(a, b char) int { return cmp.Compare(a.ccc, b.ccc) })
		i = j + 1
	}
	out := cs[:0] // composition only shortens: it writes behind what it reads
	starter := -1 // index in out of the last starter
	for _, c := range cs {
		if compose && starter >= 0 {
			// c is blocked from the starter by a rune between them of
			// class 0 or of a class not below c's: the last one, as the
			// runs are in order.
			last := len(out) - 1
			blocked := last > starter && (out[last].ccc == 0 || out[last].ccc >= c.ccc)
			if !blocked {
				if p, ok := composePair(out[starter].r, c.r); ok {
					out[starter].r = p
					continue
				}
			}
		}
		if c.ccc == 0 {
			starter = len(out)
		}
		out = append(out, c)
	}
	var b strings.Builder
	for _, c := range out {
		b.WriteRune(c.r)
	}
	return b.String()
}

// composePair returns the primary composite of a starter and a following
// rune, if there is one: norm's NFC of the two is then that one rune.
func composePair(a, b rune) (rune, bool) {
	s := norm.NFC.String(string([]rune{a, b}))
	r, n := utf8.DecodeRuneInString(s)
	return r, n == len(s)
}
