package main

import (
	"bytes"
	"fmt"
	"go/format"
	"slices"
)

// writer collects the generated source.
type writer struct {
	bytes.Buffer
}

func (w *writer) printf(format string, args ...any) { fmt.Fprintf(&w.Buffer, format, args...) }

// source returns the source, gofmt'ed.
func (w *writer) source() ([]byte, error) {
	src, err := format.Source(w.Bytes())
	if err != nil {
		return nil, fmt.Errorf("gen wrote invalid Go (a bug of gen): %w", err)
	}
	return src, nil
}

// strided is a unicode.Range: lo, lo+stride, ..., hi.
type strided struct{ lo, hi, stride rune }

// strides packs sorted, disjoint ranges of code points into unicode.Range
// entries: a run of equally spaced single code points becomes one entry.
func strides(rs [][2]rune) []strided {
	var out []strided
	for i := 0; i < len(rs); {
		r := rs[i]
		if r[0] != r[1] {
			out = append(out, strided{r[0], r[1], 1})
			i++
			continue
		}
		// Single code points at a fixed spacing.
		j := i + 1
		if j < len(rs) && rs[j][0] == rs[j][1] {
			step := rs[j][0] - r[0]
			for j+1 < len(rs) && rs[j+1][0] == rs[j+1][1] && rs[j+1][0]-rs[j][0] == step {
				j++
			}
			out = append(out, strided{r[0], rs[j][0], step})
			i = j + 1
			continue
		}
		out = append(out, strided{r[0], r[0], 1})
		i++
	}
	return out
}

// split16 divides strided ranges into those of unicode.Range16 (up to
// U+FFFF) and of unicode.Range32, cutting the ones that cross U+FFFF, and
// counts the Range16 ones within Latin-1 (RangeTable.LatinOffset).
func split16(ss []strided) (r16, r32 []strided, latin int) {
	for _, s := range ss {
		switch {
		case s.hi <= 0xFFFF:
			r16 = append(r16, s)
			if s.hi <= 0xFF {
				latin++
			}
		case s.lo > 0xFFFF:
			r32 = append(r32, s)
		default: // cut after the last point up to U+FFFF
			last := s.lo + (0xFFFF-s.lo)/s.stride*s.stride
			r16 = append(r16, strided{s.lo, last, s.stride})
			r32 = append(r32, strided{last + s.stride, s.hi, s.stride})
		}
	}
	return r16, r32, latin
}

// table writes rs as a *unicode.RangeTable named name (doc, if any, its
// comment).
func (w *writer) table(name, doc string, rs [][2]rune) {
	r16, r32, latin := split16(strides(rs))
	if doc != "" {
		w.printf("// %s\n", doc)
	}
	w.printf("var %s = &unicode.RangeTable{\n", name)
	if len(r16) > 0 {
		w.printf("\tR16: []unicode.Range16{\n")
		for _, s := range r16 {
			w.printf("\t\t{%#04x, %#04x, %d},\n", s.lo, s.hi, s.stride)
		}
		w.printf("\t},\n")
	}
	if len(r32) > 0 {
		w.printf("\tR32: []unicode.Range32{\n")
		for _, s := range r32 {
			w.printf("\t\t{%#x, %#x, %d},\n", s.lo, s.hi, s.stride)
		}
		w.printf("\t},\n")
	}
	if latin > 0 {
		w.printf("\tLatinOffset: %d,\n", latin)
	}
	w.printf("}\n\n")
}

// foldTable writes foldRanges: the simple case folding orbits (the status
// C and S mappings of CaseFolding.txt, folds) as, for each code point with
// case variants, the next larger one in its orbit, or the smallest after
// the largest (what unicode.SimpleFold gives). Runs of code points whose
// next is at one distance, and runs of alternating pairs (U+0100 U+0101
// U+0102 U+0103 ...: each even one's next is +1, each odd one's -1), are
// one entry each.
func (w *writer) foldTable(folds [][2]rune) error {
	orbit := map[rune][]rune{} // folded form -> its orbit
	for _, f := range folds {
		if len(orbit[f[1]]) == 0 {
			orbit[f[1]] = []rune{f[1]}
		}
		orbit[f[1]] = append(orbit[f[1]], f[0])
	}
	next := map[rune]rune{}
	for _, o := range orbit {
		slices.Sort(o)
		o = slices.Compact(o)
		for i, r := range o {
			if _, dup := next[r]; dup {
				return fmt.Errorf("case folding: U+%04X is in two orbits", r)
			}
			next[r] = o[(i+1)%len(o)]
		}
	}
	runes := make([]rune, 0, len(next))
	for r := range next {
		runes = append(runes, r)
	}
	slices.Sort(runes)
	type entry struct {
		lo, hi rune
		delta  rune
		pairs  bool
	}
	var out []entry
	for i := 0; i < len(runes); {
		r := runes[i]
		// Alternating pairs from r: r+2k -> r+2k+1 -> r+2k.
		j := i
		for j+1 < len(runes) && runes[j+1] == runes[j]+1 && runes[j]-r == rune(j-i) &&
			(j-i)%2 == 0 && next[runes[j]] == runes[j]+1 && next[runes[j+1]] == runes[j] {
			j += 2
		}
		if j > i+2 {
			out = append(out, entry{r, runes[j-1], 0, true})
			i = j
			continue
		}
		d := next[r] - r
		j = i
		for j+1 < len(runes) && runes[j+1] == runes[j]+1 && next[runes[j+1]]-runes[j+1] == d {
			j++
		}
		out = append(out, entry{r, runes[j], d, false})
		i = j + 1
	}
	w.printf("// foldRanges are the simple case folding orbits of Unicode %s (see SimpleFold),\n", "16.0.0")
	w.printf("// sorted: lo..hi map each code point r to r+delta, or, for pairs, the\n// alternating pairs lo, lo+1 (lo's next is lo+1, lo+1's is lo), lo+2, lo+3, ...\n")
	w.printf("var foldRanges = []foldRange{\n")
	for _, e := range out {
		w.printf("\t{%#04x, %#04x, %d, %v},\n", e.lo, e.hi, e.delta, e.pairs)
	}
	w.printf("}\n")
	return nil
}
