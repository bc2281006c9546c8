package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/wgpu-eval/wgpu-eval/model/tokenizer/internal/regex"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer/internal/ucd"
)

// splitBehavior is what a Split pre-tokenizer does with the matches of its
// pattern (Hugging Face's SplitDelimiterBehavior).
type splitBehavior string

const (
	isolated           splitBehavior = "Isolated"           // matches and the text between them are pieces
	removed            splitBehavior = "Removed"            // matches are dropped
	mergedWithPrevious splitBehavior = "MergedWithPrevious" // a match joins the piece before it
	mergedWithNext     splitBehavior = "MergedWithNext"     // a match joins the piece after it
	contiguous         splitBehavior = "Contiguous"         // adjacent matches form one piece
)

// preStep is one pre-tokenizer of a tokenizer.json: a Split, a Metaspace,
// or a ByteLevel (which maps text to bytes, after perhaps a space and
// GPT-2's split). A Sequence is flattened into its steps.
type preStep struct {
	meta *metaspace // a Metaspace

	byteLevel   bool
	prefixSpace bool // ByteLevel: a space before each piece that lacks one
	gpt2Split   bool // ByteLevel with use_regex

	digits     bool // a Digits (a Split at each numeric character, below)
	byteDigits bool // a Digits after a ByteLevel: on the bytes whose byte-level character is numeric

	pred     func(rune) bool // a Split at each character for which it is true (Punctuation)
	literal  string          // Split with a String pattern
	re       *regex.Regexp   // Split with a Regex pattern
	source   string          // ... and that pattern's text
	matchers *sync.Pool      // of *regex.Matcher for re
	behavior splitBehavior
	invert   bool
}

// parsePreTokenizer reads a pre-tokenizer (null, ByteLevel, Split, Digits
// and Punctuation (Splits on a character class), Metaspace or a Sequence of
// those) into steps.
func parsePreTokenizer(raw json.RawMessage, where string) ([]preStep, error) {
	if isNull(raw) {
		return nil, nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	switch c.Type {
	case "ByteLevel":
		var b struct {
			AddPrefixSpace bool  `json:"add_prefix_space"`
			UseRegex       *bool `json:"use_regex"`
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		return []preStep{{byteLevel: true, prefixSpace: b.AddPrefixSpace, gpt2Split: b.UseRegex == nil || *b.UseRegex}}, nil
	case "Split":
		var s struct {
			Pattern  *pattern      `json:"pattern"`
			Behavior splitBehavior `json:"behavior"`
			Invert   bool          `json:"invert"`
		}
		if err := json.Unmarshal(raw, &s); err != nil || s.Pattern == nil {
			return nil, fmt.Errorf(`%s: Split needs a "pattern" and a "behavior"`, where)
		}
		if err := checkBehavior(s.Behavior, where); err != nil {
			return nil, err
		}
		lit, re, err := s.Pattern.compile()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		st := preStep{literal: lit, re: re, behavior: s.Behavior, invert: s.Invert}
		if s.Pattern.Regex != nil {
			st.source = *s.Pattern.Regex
		}
		if re != nil {
			st.matchers = &sync.Pool{New: func() any { return re.Matcher() }}
		}
		return []preStep{st}, nil
	case "Digits":
		// Hugging Face cuts at each character of general category N
		// (Rust's char::is_numeric, whose Unicode data is 17.0 in the
		// Rust that built tokenizers 0.23.2: ucd.Numeric17): each its own
		// piece, or runs of them one piece. SmolLM2 (Llama's
		// architecture) puts one before its ByteLevel.
		var d struct {
			IndividualDigits bool `json:"individual_digits"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		st := preStep{digits: true, pred: isNumeric, behavior: contiguous}
		if d.IndividualDigits {
			st.behavior = isolated
		}
		return []preStep{st}, nil
	case "Punctuation":
		// Hugging Face cuts at each character of hfPunct. Falcon3 (Llama's
		// architecture) puts one first.
		var pt struct {
			Behavior *splitBehavior `json:"behavior"`
		}
		if err := json.Unmarshal(raw, &pt); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		behavior := isolated
		if pt.Behavior != nil {
			behavior = *pt.Behavior
		}
		if err := checkBehavior(behavior, where); err != nil {
			return nil, err
		}
		return []preStep{{pred: hfPunct, behavior: behavior}}, nil
	case "Metaspace":
		m, err := parseMetaspace(raw, where)
		if err != nil {
			return nil, err
		}
		return []preStep{{meta: m}}, nil
	case "Sequence":
		return parseSequence(raw, "pretokenizers", where, parsePreTokenizer)
	}
	return nil, fmt.Errorf("%s: pre_tokenizer %q is not supported (supported: ByteLevel, Split, Digits, Punctuation, Metaspace, Sequence)", where, c.Type)
}

// isNumeric is Rust's char::is_numeric in the Rust that built tokenizers
// 0.23.2 (general category N of Unicode 17.0).
func isNumeric(r rune) bool { return unicode.Is(ucd.Numeric17, r) }

// hfPunct is the Punctuation pre-tokenizer's test, as Hugging Face's
// tokenizers has it: ASCII punctuation (Rust's is_ascii_punctuation, which
// counts $+<=>^`|~) or general category P of its Unicode data, which is
// older than Unicode 16.0 (package ucd, whatever Go's is): it lacks the
// punctuation of Unicode 10 and later (newerPunct) and has U+166D and
// U+111C9, which were P before.
func hfPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return '!' <= r && r <= '/' || ':' <= r && r <= '@' || '[' <= r && r <= '`' || '{' <= r && r <= '~'
	}
	return unicode.Is(ucdP, r) && !inRanges(newerPunct, r) || r == 0x166D || r == 0x111C9
}

var ucdP = ucd.Categories["P"]

// newerPunct are the ranges of characters of general category P in Unicode
// 16.0 that Hugging Face's Punctuation does not count, found by running its
// Punctuation (tokenizers 0.23.2) on every code point; the goldens of the
// bl-punctuation variant hold a few.
var newerPunct = [][2]rune{
	{0x61D, 0x61D}, {0x9FD, 0x9FD}, {0xA76, 0xA76}, {0xC77, 0xC77}, {0xC84, 0xC84}, {0x1B4E, 0x1B4F}, {0x1B7D, 0x1B7F},
	{0x2E43, 0x2E4F}, {0x2E52, 0x2E5D}, {0x10D6E, 0x10D6E}, {0x10EAD, 0x10EAD}, {0x10F55, 0x10F59}, {0x10F86, 0x10F89},
	{0x113D4, 0x113D5}, {0x113D7, 0x113D8}, {0x1144B, 0x1144F}, {0x1145A, 0x1145B}, {0x1145D, 0x1145D},
	{0x11660, 0x1166C}, {0x116B9, 0x116B9}, {0x1183B, 0x1183B}, {0x11944, 0x11946}, {0x119E2, 0x119E2},
	{0x11A3F, 0x11A46}, {0x11A9A, 0x11A9C}, {0x11A9E, 0x11AA2}, {0x11B00, 0x11B09}, {0x11BE1, 0x11BE1},
	{0x11C41, 0x11C45}, {0x11C70, 0x11C71}, {0x11EF7, 0x11EF8}, {0x11F43, 0x11F4F}, {0x11FFF, 0x11FFF},
	{0x12FF1, 0x12FF2}, {0x16D6D, 0x16D6F}, {0x16E97, 0x16E9A}, {0x16FE2, 0x16FE2}, {0x1E5FF, 0x1E5FF},
	{0x1E95E, 0x1E95F},
}

// checkBehavior refuses a Split behavior Hugging Face does not have.
func checkBehavior(b splitBehavior, where string) error {
	switch b {
	case isolated, removed, mergedWithPrevious, mergedWithNext, contiguous:
		return nil
	}
	return fmt.Errorf("%s: Split behavior %q is not one of Isolated, Removed, MergedWithPrevious, MergedWithNext, Contiguous", where, b)
}

// checkPreSteps refuses a step after a ByteLevel one but Digits (Falcon3's):
// ByteLevel maps text to its byte-level alphabet, which this package keeps
// as bytes, so a Split after it would see other characters than Hugging
// Face's does. A Digits after it is made to cut the bytes whose byte-level
// character is numeric.
func checkPreSteps(steps []preStep) error {
	seen := false
	for i := range steps {
		switch s := &steps[i]; {
		case seen && s.digits:
			s.byteDigits = true
		case seen:
			return fmt.Errorf("pre_tokenizer: a pre-tokenizer other than Digits after ByteLevel (step %d of %d) is not supported", i+1, len(steps))
		case s.byteLevel:
			seen = true
		}
	}
	return nil
}

// numericByte reports whether byte b's character in GPT-2's byte-level
// alphabet is of general category N: the digits and ² ³ ¹ ¼ ½ ¾, which
// stand for themselves there.
func numericByte(b byte) bool {
	return '0' <= b && b <= '9' || b == 0xB2 || b == 0xB3 || b == 0xB9 || 0xBC <= b && b <= 0xBE
}

// splitBytes is a Digits after a ByteLevel: s (bytes) cut before and after
// each numeric byte (Isolated), or around each run of them (Contiguous).
func (st *preStep) splitBytes(s string, first bool, emit func(piece string, first bool) error) error {
	start := 0
	for i := 0; i < len(s); i++ {
		if !numericByte(s[i]) {
			continue
		}
		j := i + 1
		if st.behavior == contiguous {
			for j < len(s) && numericByte(s[j]) {
				j++
			}
		}
		for _, p := range [][2]int{{start, i}, {i, j}} {
			if p[0] < p[1] {
				if err := emit(s[p[0]:p[1]], first && p[0] == 0); err != nil {
					return err
				}
			}
		}
		start, i = j, j-1
	}
	if start < len(s) {
		return emit(s[start:], first && start == 0)
	}
	return nil
}

// errStop ends a walk over pieces early (the caller has enough ids).
var errStop = errors.New("stop")

// preTokenize splits s with steps[0], each piece with steps[1], and so on,
// calling emit with the final pieces in order. Empty pieces are dropped, as
// Hugging Face drops them. first says that s starts the text (Hugging Face:
// its offset in the original text is 0), and so does a piece at the start
// of such an s, for Metaspace's prepend_scheme "first". It stops at emit's
// first error.
func preTokenize(steps []preStep, s string, first bool, emit func(piece string) error) error {
	if s == "" {
		return nil
	}
	if len(steps) == 0 {
		return emit(s)
	}
	return steps[0].split(s, first, func(piece string, first bool) error {
		return preTokenize(steps[1:], piece, first, emit)
	})
}

// split calls emit with the pieces the step makes of s, each with whether
// it starts the text (see preTokenize).
func (st *preStep) split(s string, first bool, emit func(piece string, first bool) error) error {
	switch {
	case st.meta != nil:
		return st.meta.preTokenize(s, first, emit)
	case st.byteDigits:
		return st.splitBytes(s, first, emit)
	case st.byteLevel:
		if st.prefixSpace && !strings.HasPrefix(s, " ") {
			s = " " + s
		}
		if !st.gpt2Split {
			return emit(s, first)
		}
		for i := 0; i < len(s); {
			j := nextPiece(s, i)
			if err := emit(s[i:j], first && i == 0); err != nil {
				return err
			}
			i = j
		}
		return nil
	}
	return st.splitMatches(s, emit, first)
}

// span is a part of a text, and whether the pattern matched it.
type span struct {
	start, end int
	match      bool
}

// splitMatches is a Split: the text is cut into the pattern's matches
// (inverted: what lies between them) and the rest, which the behavior then
// keeps, drops or joins. A piece goes out as soon as no later match can
// change it, so a long text is never held as a list of spans. The piece at
// byte 0 of s starts the text when s does (first).
func (st *preStep) splitMatches(s string, emit func(piece string, first bool) error, first bool) error {
	var out []span // pieces decided but held back: the last may still grow
	flush := func(keep int) error {
		for _, p := range out[:len(out)-keep] {
			if p.start < p.end {
				if err := emit(s[p.start:p.end], first && p.start == 0); err != nil {
					return err
				}
			}
		}
		out = append(out[:0], out[len(out)-keep:]...)
		return nil
	}
	prevMatch := false
	// add takes the spans in order, as Hugging Face's split folds them.
	add := func(sp span) error {
		if st.invert {
			sp.match = !sp.match
		}
		switch st.behavior {
		case isolated:
			out = append(out, span{sp.start, sp.end, false})
		case removed:
			if !sp.match {
				out = append(out, sp)
			}
		case contiguous:
			if len(out) > 0 && sp.match == prevMatch {
				out[len(out)-1].end = sp.end
			} else {
				out = append(out, span{sp.start, sp.end, false})
			}
		case mergedWithPrevious:
			if len(out) > 0 && sp.match && !prevMatch {
				out[len(out)-1].end = sp.end
			} else {
				out = append(out, span{sp.start, sp.end, false})
			}
		case mergedWithNext:
			// A match joins what follows it: held until the next span.
			if len(out) > 0 && out[len(out)-1].match && !sp.match {
				out[len(out)-1].end = sp.end
				out[len(out)-1].match = false
			} else {
				out = append(out, sp)
			}
		}
		prevMatch = sp.match
		if len(out) > 1 {
			return flush(1)
		}
		return nil
	}
	var err error
	last := 0
	walk := func(start, end int) bool {
		if start > last {
			if err = add(span{last, start, false}); err != nil {
				return false
			}
		}
		err = add(span{start, end, true})
		last = end
		return err == nil
	}
	if st.pred != nil {
		for i, r := range s {
			if st.pred(r) && !walk(i, i+utf8.RuneLen(r)) {
				break
			}
		}
	} else if st.re != nil {
		m := st.matchers.Get().(*regex.Matcher)
		m.FindAll(s, walk)
		st.matchers.Put(m)
	} else if st.literal != "" {
		for i := 0; i < len(s); {
			j := strings.Index(s[i:], st.literal)
			if j < 0 {
				break
			}
			if !walk(i+j, i+j+len(st.literal)) {
				break
			}
			i += j + len(st.literal)
		}
	}
	if err != nil {
		return err
	}
	if last < len(s) {
		if err := add(span{last, len(s), false}); err != nil {
			return err
		}
	}
	return flush(0)
}
