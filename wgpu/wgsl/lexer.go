package wgsl

import (
	"unicode"
	"unicode/utf8"
)

// lex splits src into tokens. Comments and blank space are dropped; errors
// (bad characters, unterminated comments, malformed numbers) are reported
// through errs and lexing continues.
func lex(src string, errs *errorList) []token {
	var toks []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			i++
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			start := i
			depth := 0
			for i < len(src) {
				if i+1 < len(src) && src[i] == '/' && src[i+1] == '*' {
					depth++
					i += 2
				} else if i+1 < len(src) && src[i] == '*' && src[i+1] == '/' {
					depth--
					i += 2
					if depth == 0 {
						break
					}
				} else {
					i++
				}
			}
			if depth != 0 {
				errs.add(start, "unterminated block comment")
			}
			continue
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			n, kind := lexNumber(src[i:])
			toks = append(toks, token{kind, src[i : i+n], i})
			i += n
			continue
		case c == '_' || c >= 0x80 || unicode.IsLetter(rune(c)):
			j := i
			for j < len(src) {
				r, size := utf8.DecodeRuneInString(src[j:])
				if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || j > i && unicode.In(r, unicode.Mn, unicode.Mc) {
					j += size
					continue
				}
				break
			}
			if j == i {
				r, size := utf8.DecodeRuneInString(src[i:])
				errs.add(i, "invalid character %q", r)
				i += size
				continue
			}
			text := src[i:j]
			switch {
			case text == "_":
				toks = append(toks, token{tPunct, "_", i})
			case keywords[text]:
				toks = append(toks, token{tKeyword, text, i})
			default:
				toks = append(toks, token{tIdent, text, i})
			}
			i = j
			continue
		}
		matched := false
		for _, p := range puncts {
			if len(src)-i >= len(p) && src[i:i+len(p)] == p {
				toks = append(toks, token{tPunct, p, i})
				i += len(p)
				matched = true
				break
			}
		}
		if !matched {
			r, size := utf8.DecodeRuneInString(src[i:])
			errs.add(i, "invalid character %q", r)
			i += size
		}
	}
	toks = append(toks, token{tEOF, "", len(src)})
	return toks
}

// lexNumber returns the length of the numeric literal at the start of s and
// whether it is an integer or a float. Validation happens in the parser.
func lexNumber(s string) (int, tok) {
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	isHex := func(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
	i := 0
	kind := tInt
	if len(s) > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		i = 2
		for i < len(s) && isHex(s[i]) {
			i++
		}
		if i < len(s) && s[i] == '.' {
			kind = tFloat
			i++
			for i < len(s) && isHex(s[i]) {
				i++
			}
		}
		if i < len(s) && (s[i] == 'p' || s[i] == 'P') {
			kind = tFloat
			i++
			if i < len(s) && (s[i] == '+' || s[i] == '-') {
				i++
			}
			for i < len(s) && isDigit(s[i]) {
				i++
			}
		}
	} else {
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i < len(s) && s[i] == '.' {
			kind = tFloat
			i++
			for i < len(s) && isDigit(s[i]) {
				i++
			}
		}
		if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
			j := i + 1
			if j < len(s) && (s[j] == '+' || s[j] == '-') {
				j++
			}
			if j < len(s) && isDigit(s[j]) {
				kind = tFloat
				i = j
				for i < len(s) && isDigit(s[i]) {
					i++
				}
			}
		}
	}
	if i < len(s) {
		switch s[i] {
		case 'i', 'u':
			if kind == tInt {
				i++
			}
		case 'f', 'h':
			kind = tFloat
			i++
		}
	}
	// Swallow trailing identifier characters so "12abc" is one bad literal, not two tokens.
	for i < len(s) && (s[i] == '_' || isHex(s[i]) || s[i] >= 'g' && s[i] <= 'z' || s[i] >= 'G' && s[i] <= 'Z') {
		i++
	}
	return i, kind
}
