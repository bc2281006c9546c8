package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// prependScheme is where a Metaspace pre-tokenizer puts its replacement
// character before a piece that does not start with one (Hugging Face's
// PrependScheme).
type prependScheme string

const (
	prependAlways prependScheme = "always" // before every piece
	prependFirst  prependScheme = "first"  // before the piece that starts the text only
	prependNever  prependScheme = "never"  // nowhere
)

// metaspace is a Metaspace pre-tokenizer or decoder, SentencePiece's way
// with spaces written as a file's component (newer conversions of Llama 2
// style files, Mistral 7B v0.3): spaces become the replacement character
// ("▁"), one is put before a piece per the prepend scheme, and the text is
// cut before each replacement character when split is set. The decoder
// turns the replacement back into spaces, dropping it from the first token
// unless the scheme is never.
type metaspace struct {
	repl    rune
	prepend prependScheme
	split   bool
	cut     preStep // split: the replacement, MergedWithNext
}

// parseMetaspace reads a Metaspace pre-tokenizer or decoder (one JSON form
// for both) as Hugging Face's tokenizers reads it: "replacement" is one
// character; "prepend_scheme" is always, first or never (always when
// absent); "split" defaults to true; the older "add_prefix_space": false
// stands for prepend_scheme never and contradicts any other.
func parseMetaspace(raw json.RawMessage, where string) (*metaspace, error) {
	var m struct {
		Replacement    *string        `json:"replacement"`
		PrependScheme  *prependScheme `json:"prepend_scheme"`
		Split          *bool          `json:"split"`
		AddPrefixSpace *bool          `json:"add_prefix_space"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: Metaspace: %w", where, err)
	}
	if m.Replacement == nil || utf8.RuneCountInString(*m.Replacement) != 1 {
		return nil, fmt.Errorf(`%s: Metaspace needs one character as "replacement"`, where)
	}
	r, _ := utf8.DecodeRuneInString(*m.Replacement)
	ms := &metaspace{repl: r, prepend: prependAlways, split: m.Split == nil || *m.Split}
	if p := m.PrependScheme; p != nil {
		switch *p {
		case prependAlways, prependFirst, prependNever:
			ms.prepend = *p
		default:
			return nil, fmt.Errorf("%s: Metaspace prepend_scheme %q is not one of always, first, never", where, *p)
		}
	}
	if m.AddPrefixSpace != nil && !*m.AddPrefixSpace {
		if ms.prepend != prependNever {
			return nil, fmt.Errorf("%s: Metaspace add_prefix_space false contradicts prepend_scheme %q (Hugging Face refuses the file)", where, ms.prepend)
		}
	}
	ms.cut = preStep{literal: string(r), behavior: mergedWithNext}
	return ms, nil
}

// preTokenize is the Metaspace pre-tokenizer on piece s: spaces (U+0020
// only) replaced, the replacement put first where the scheme says (first:
// only when s starts the text, that is, at its byte 0 before any added
// token), then cut before each replacement character when split is set, so
// each word keeps its leading one.
func (m *metaspace) preTokenize(s string, first bool, emit func(piece string, first bool) error) error {
	repl := string(m.repl)
	s = strings.ReplaceAll(s, " ", repl)
	if (m.prepend == prependAlways || m.prepend == prependFirst && first) && !strings.HasPrefix(s, repl) {
		s = repl + s
	}
	if !m.split {
		return emit(s, first)
	}
	return m.cut.splitMatches(s, emit, first)
}

// decode is the Metaspace decoder on one token: each replacement character
// a space, or nothing in the first token of a decode unless the scheme is
// never.
func (m *metaspace) decode(t string, first bool) string {
	with := " "
	if first && m.prepend != prependNever {
		with = ""
	}
	return strings.ReplaceAll(t, string(m.repl), with)
}
