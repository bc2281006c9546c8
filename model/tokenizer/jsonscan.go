package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// A tokenizer.json holds hundreds of thousands of vocabulary entries and
// merges (Llama 3's: 128,000 and 280,000 in 9 MB). Decoded through
// encoding/json's reflection into a map and a slice of RawMessage, they took
// most of the 450 ms a load took. Once encoding/json has checked the whole
// file (json.Unmarshal does so before it decodes) or the value (json.Valid),
// these read the two values themselves: a plain scan of valid JSON, with encoding/json kept for
// whatever is not in the common form, so the results are those of
// encoding/json.

// jsonScan walks a valid JSON text.
type jsonScan struct {
	b []byte
	i int
}

// space skips white space.
func (s *jsonScan) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next is the byte at the scan, after white space; 0 at the end.
func (s *jsonScan) next() byte {
	s.space()
	if s.i == len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// value returns the value at the scan, its bytes as written, and moves past
// it; nil at the end of the text. The text must be valid JSON.
func (s *jsonScan) value() []byte {
	start, end := s.span()
	return s.b[start:end]
}

// span is value's place in the text: [start, end).
func (s *jsonScan) span() (start, end int) {
	if s.next() == 0 {
		return s.i, s.i
	}
	start = s.i
	switch s.b[s.i] {
	case '"':
		s.skipString()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				s.skipString()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			s.i++
			if depth == 0 {
				break
			}
		}
	default: // a number, true, false or null
	scalar:
		for ; s.i < len(s.b); s.i++ {
			switch s.b[s.i] {
			case ',', ':', ']', '}', ' ', '\t', '\n', '\r':
				break scalar
			}
		}
	}
	return start, min(s.i, len(s.b))
}

// elements is the number of values from the scan to the end of the array
// the scan is in; the scan itself stays where it was.
func (s *jsonScan) elements() int {
	c := *s
	n := 0
	for c.next() != ']' && c.next() != 0 {
		c.value()
		n++
		if c.next() == ',' {
			c.i++
		}
	}
	return n
}

// skipString moves past the string whose opening quote is at the scan.
func (s *jsonScan) skipString() {
	s.i++
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			s.i += 2
			continue
		case '"':
			s.i++
			return
		}
		s.i++
	}
}

// jsonString decodes a JSON string literal: its bytes themselves when it
// has no escapes and is valid UTF-8, else as encoding/json decodes it
// (escapes, invalid bytes as U+FFFD).
func jsonString(raw []byte) (string, error) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", fmt.Errorf("not a string: %.20q", raw)
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// plainInt reads an integer literal of at most 18 digits (no fraction or
// exponent); ok is false otherwise.
func plainInt(raw []byte) (n int64, ok bool) {
	neg := len(raw) > 0 && raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	if len(raw) == 0 || len(raw) > 18 {
		return 0, false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// decodeVocab decodes a vocabulary, a JSON object of token text -> id, as
// json.Unmarshal into a map[string]int64 does (a repeated key: the last
// value). Valid objects whose values are all plain integers are read by the
// scan; anything else (invalid JSON, null, fractions, strings, 19 or more
// digits, not an object) goes to encoding/json, which decodes or refuses it.
// checked says raw is valid JSON already (a value of a file encoding/json
// has read), so the scan need not check it again.
func decodeVocab(raw []byte, checked bool) (map[string]int64, error) {
	if checked || json.Valid(raw) {
		if v, ok := scanVocab(raw); ok {
			return v, nil
		}
	}
	var v map[string]int64
	err := json.Unmarshal(raw, &v)
	return v, err
}

// scanVocab is decodeVocab's scan of valid JSON; ok is false where it
// leaves the value to encoding/json.
func scanVocab(raw []byte) (map[string]int64, bool) {
	s := jsonScan{b: raw}
	if s.next() != '{' {
		return nil, false
	}
	s.i++
	// Entries are at least 6 bytes ("a":0,): the map is sized by the text.
	vocab := make(map[string]int64, min(bytes.Count(raw, []byte(`":`)), len(raw)/6+1))
	for s.next() != '}' {
		if s.next() == 0 {
			return nil, false
		}
		key, err := jsonString(s.value())
		if err != nil {
			return nil, false
		}
		s.next() // the colon
		s.i++
		n, ok := plainInt(s.value())
		if !ok {
			return nil, false
		}
		vocab[key] = n
		if s.next() == ',' {
			s.i++
		}
	}
	return vocab, true
}

// parseMerges reads model.merges (absent or null: none), in either form;
// raw must be valid JSON.
func parseMerges(raw json.RawMessage, path string) ([]mergeRule, error) {
	if isNull(raw) {
		return nil, nil
	}
	s := jsonScan{b: raw}
	if s.next() != '[' {
		return nil, fmt.Errorf("parse %s: model.merges is not an array", path)
	}
	s.i++
	merges := make([]mergeRule, 0, s.elements())
	// The merges' tokens are substrings of one copy of the text: no
	// allocation per merge (the merges are dropped once the model is built).
	text := string(raw)
	for s.next() != ']' {
		if s.next() == 0 {
			return nil, fmt.Errorf("parse %s: model.merges is cut short", path)
		}
		start, end := s.span()
		m, err := parseJSONMerge(text[start:end])
		m.file, m.at = path, -1-len(merges)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", m.where(), err)
		}
		merges = append(merges, m)
		if s.next() == ',' {
			s.i++
		}
	}
	return merges, nil
}
