package tokenizer

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// decStep is one decoder of a tokenizer.json. A Sequence is flattened.
type decStep struct {
	kind        string // "ByteLevel", "Replace", "ByteFallback", "Fuse", "Strip", "Metaspace"
	replace     replacer
	meta        *metaspace
	strip       rune
	start, stop int
}

// parseDecoder reads a decoder (null, ByteLevel, Replace, ByteFallback,
// Fuse, Strip, Metaspace or a Sequence of those).
func parseDecoder(raw json.RawMessage, where string) ([]decStep, error) {
	if isNull(raw) {
		return nil, nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	switch c.Type {
	case "ByteLevel", "ByteFallback", "Fuse":
		return []decStep{{kind: c.Type}}, nil
	case "Replace":
		r, err := parseReplace(raw, where)
		if err != nil {
			return nil, err
		}
		return []decStep{{kind: "Replace", replace: r}}, nil
	case "Strip":
		var s struct {
			Content string `json:"content"`
			Start   int    `json:"start"`
			Stop    int    `json:"stop"`
		}
		if err := json.Unmarshal(raw, &s); err != nil || utf8.RuneCountInString(s.Content) != 1 || s.Start < 0 || s.Stop < 0 {
			return nil, fmt.Errorf(`%s: Strip needs one character as "content" and counts "start" and "stop"`, where)
		}
		r, _ := utf8.DecodeRuneInString(s.Content)
		return []decStep{{kind: "Strip", strip: r, start: s.Start, stop: s.Stop}}, nil
	case "Metaspace":
		m, err := parseMetaspace(raw, where)
		if err != nil {
			return nil, err
		}
		return []decStep{{kind: "Metaspace", meta: m}}, nil
	case "Sequence":
		return parseSequence(raw, "decoders", where, parseDecoder)
	}
	return nil, fmt.Errorf("%s: decoder %q is not supported (supported: ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace, Sequence)", where, c.Type)
}

// decode runs the decoder chain on tokens (their texts as the vocabulary
// writes them) and joins the result, as Hugging Face's decode does, but for
// bytes: where Hugging Face writes U+FFFD for bytes that are not UTF-8 (a
// byte token or byte-level token cut out of a character), they are kept.
// Without a decoder, Hugging Face joins the tokens with spaces. noStrip
// decodes tokens as they stand in running text: no Strip steps, and
// Metaspace treats no token as the first (a token's own text).
func decode(steps []decStep, tokens []string, noStrip bool) string {
	if steps == nil {
		return strings.Join(tokens, " ")
	}
	for _, st := range steps {
		switch st.kind {
		case "ByteLevel":
			var b strings.Builder
			for _, t := range tokens {
				if raw, ok := byteLevelBytes(t); ok {
					b.WriteString(raw)
				} else {
					b.WriteString(t)
				}
			}
			tokens = []string{b.String()}
		case "Replace":
			for i, t := range tokens {
				tokens[i] = st.replace.apply(t)
			}
		case "ByteFallback":
			for i, t := range tokens {
				if b, ok := byteToken(t); ok {
					tokens[i] = string([]byte{b})
				}
			}
		case "Fuse":
			tokens = []string{strings.Join(tokens, "")}
		case "Metaspace":
			for i, t := range tokens {
				tokens[i] = st.meta.decode(t, i == 0 && !noStrip)
			}
		case "Strip":
			if noStrip {
				continue
			}
			for i, t := range tokens {
				tokens[i] = stripRunes(t, st.strip, st.start, st.stop)
			}
		}
	}
	return strings.Join(tokens, "")
}

// byteToken reads a byte-fallback token, "<0x0A>".
func byteToken(t string) (byte, bool) {
	if len(t) != 6 || !strings.HasPrefix(t, "<0x") || t[5] != '>' {
		return 0, false
	}
	v, err := strconv.ParseUint(t[3:5], 16, 8)
	return byte(v), err == nil
}

// stripRunes removes up to start copies of c from the front of t and up to
// stop from its back.
func stripRunes(t string, c rune, start, stop int) string {
	for ; start > 0; start-- {
		r, n := utf8.DecodeRuneInString(t)
		if n == 0 || r != c {
			break
		}
		t = t[n:]
	}
	for ; stop > 0; stop-- {
		r, n := utf8.DecodeLastRuneInString(t)
		if n == 0 || r != c {
			break
		}
		t = t[:len(t)-n]
	}
	return t
}
