package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/wgpu-eval/wgpu-eval/model/tokenizer/internal/regex"
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

	literal  string        // Split with a String pattern
	re       *regex.Regexp // Split with a Regex pattern
	matchers *sync.Pool    // of *regex.Matcher for re
	behavior splitBehavior
	invert   bool
}

// parsePreTokenizer reads a pre-tokenizer (null, ByteLevel, Split, Digits
// (a Split on \p{N}), Metaspace or a Sequence of those) into steps.
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
		switch s.Behavior {
		case isolated, removed, mergedWithPrevious, mergedWithNext, contiguous:
		default:
			return nil, fmt.Errorf("%s: Split behavior %q is not one of Isolated, Removed, MergedWithPrevious, MergedWithNext, Contiguous", where, s.Behavior)
		}
		lit, re, err := s.Pattern.compile()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		st := preStep{literal: lit, re: re, behavior: s.Behavior, invert: s.Invert}
		if re != nil {
			st.matchers = &sync.Pool{New: func() any { return re.Matcher() }}
		}
		return []preStep{st}, nil
	case "Digits":
		// Hugging Face cuts at each character of general category N
		// (Rust's char::is_numeric): each its own piece, or runs of them
		// one piece. SmolLM2 (Llama's architecture) puts one before its
		// ByteLevel.
		var d struct {
			IndividualDigits bool `json:"individual_digits"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		re, err := regex.Compile(`\p{N}`)
		if err != nil {
			return nil, fmt.Errorf("%s: Digits: %w", where, err)
		}
		st := preStep{re: re, behavior: contiguous, matchers: &sync.Pool{New: func() any { return re.Matcher() }}}
		if d.IndividualDigits {
			st.behavior = isolated
		}
		return []preStep{st}, nil
	case "Metaspace":
		m, err := parseMetaspace(raw, where)
		if err != nil {
			return nil, err
		}
		return []preStep{{meta: m}}, nil
	case "Sequence":
		return parseSequence(raw, "pretokenizers", where, parsePreTokenizer)
	}
	return nil, fmt.Errorf("%s: pre_tokenizer %q is not supported (supported: ByteLevel, Split, Digits, Metaspace, Sequence)", where, c.Type)
}

// checkPreSteps refuses a step after a ByteLevel one: ByteLevel maps text to
// its byte-level alphabet, which this package keeps as bytes, so a Split
// after it would see other characters than Hugging Face's does.
func checkPreSteps(steps []preStep) error {
	for i, s := range steps[:max(len(steps)-1, 0)] {
		if s.byteLevel {
			return fmt.Errorf("pre_tokenizer: a pre-tokenizer after ByteLevel (step %d of %d) is not supported", i+2, len(steps))
		}
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
	if st.re != nil {
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
