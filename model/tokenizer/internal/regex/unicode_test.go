package regex

import (
	"testing"
)

// TestUnicode16 checks classes on characters of Unicode 15.1 and 16.0 and
// the meanings of \w and of case-insensitive classes, as Hugging Face's
// tokenizers 0.23.2 (Oniguruma 6.9.10, Unicode 16.0) matches them (each
// case was run there).
func TestUnicode16(t *testing.T) {
	for _, c := range []struct {
		pattern string
		in, out []rune // runes the pattern matches alone, and runes it does not match
	}{
		// CJK Extension I (15.1), Garay letters, digits and marks, Kirat
		// Rai and outlined digits, Balinese punctuation, the new
		// ideographic description characters and legacy computing symbols.
		{`\p{L}`, []rune{0x2EBF0, 0x2EE5D, 0x10D50, 0x10D70, 0x16D43, 'a'}, []rune{0x2EE5E, 0x2FFC, 0x10D40}},
		{`\p{Lo}`, []rune{0x2EBF0}, []rune{0x10D50}},
		{`\p{Lu}`, []rune{0x10D50, 0xA7CB}, []rune{0x10D70}},
		{`\p{Ll}`, []rune{0x10D70, 0x1C8A}, []rune{0x10D50}},
		{`\p{N}`, []rune{0x10D40, 0x16D70, 0x1CCF0, 0x1E5F1, 0x11BF0, '7'}, []rune{0x11DE0, 0x10D50}},
		{`\p{Nd}`, []rune{0x10D40, 0x16D70}, []rune{0x2160}},
		{`\d`, []rune{0x10D49, '0'}, []rune{0xB2}},
		{`\p{M}`, []rune{0x10D69, 0x1171E, 0x0301}, []rune{0x10D6E}},
		{`\p{Mc}`, []rune{0x1171E}, []rune{0x10D69}},
		{`\p{P}`, []rune{0x1B4E, 0x1B4F, 0x10D6E, '!'}, []rune{0x2FFC}},
		{`\p{S}`, []rune{0x2FFC, 0x2FFF, 0x31EF, 0x1CC00, 0x10D8E, '$'}, []rune{0x1B4E}},
		{`[^\s\p{L}\p{N}]`, []rune{0x2FFC, 0x1B4E, 0x0378}, []rune{0x2EBF0, 0x10D40, ' '}},
		{`\p{Cn}`, []rune{0x0378, 0x2EE5E, 0x11DE0}, []rune{0x2EBF0, 0x10D40, 0x00AD, 0xE000, 'a'}},
		{`\p{C}`, []rune{0x0378, 0x2EE5E, 0x00AD, 0xE000, 0x01}, []rune{0x2EBF0, 0x10D40, 'a'}},
		{`\p{Han}`, []rune{0x2EBF0, 0x4E00}, []rune{0x2FFC}},
		{`\p{Garay}`, []rune{0x10D50, 0x10D40}, []rune{'a'}},
		{`\p{Todhri}`, []rune{0x105C0}, []rune{'a'}},
		// Oniguruma's \w: Alphabetic (Nl, and the Other_Alphabetic
		// symbols such as the circled letters) and, in Latin-1, the
		// superscript digits and the fractions; not the joiners.
		{`\w`, []rune{'a', '_', 0x2167, 0x24B6, 0xB2, 0xBD, 0x10D50, 0x0301}, []rune{0x200D, 0x200C, 0x2070, '!'}},
		{`\W`, []rune{0x200D, '!'}, []rune{0x2167, 0xB2}},
		{`[\w]`, []rune{0x24B6}, []rune{0x200C}},
		{`\s`, []rune{0x85, 0xA0, 0x1680, 0x3000}, []rune{0x200B, 0x180E}},
		// Unicode 16.0's simple case folding (Garay, U+A7CB..U+A7DC,
		// U+1C89) and 15.1's (U+0390 and U+1FD3).
		{`(?i)\x{10D50}`, []rune{0x10D50, 0x10D70}, []rune{0x10D51}},
		{`(?i)\x{264}`, []rune{0xA7CB}, []rune{0x265}},
		{`(?i)\x{390}`, []rune{0x1FD3}, []rune{0x3B0}},
		{`(?i)[\x{1C89}]`, []rune{0x1C8A}, []rune{'a'}},
		// Oniguruma folds bracketed classes, properties in them included,
		// but not a property or \w, \s, \d written outside brackets.
		{`(?i)\p{Lu}`, []rune{'A', 0x10D50}, []rune{'a', 0x10D70}},
		{`(?i)\P{Lu}`, []rune{'a', '1'}, []rune{'A', 0x212A}},
		{`(?i)[\p{Lu}]`, []rune{'A', 'a', 0x17F, 0x10D70}, []rune{'1'}},
		{`(?i)[^\p{Lu}]`, []rune{'1', '!'}, []rune{'a', 'A', 0x17F}},
		{`(?i)\p{Ll}`, []rune{'a'}, []rune{'A'}},
		{`(?i:[a-z])`, []rune{'A', 0x212A, 0x17F}, []rune{'1'}},
	} {
		re, err := Compile(c.pattern)
		if err != nil {
			t.Errorf("Compile(%q): %v", c.pattern, err)
			continue
		}
		m := re.Matcher()
		for _, r := range c.in {
			if s, e, ok := m.Find(string(r), 0); !ok || s != 0 || e != len(string(r)) {
				t.Errorf("%q does not match U+%04X", c.pattern, r)
			}
		}
		for _, r := range c.out {
			if _, _, ok := m.Find(string(r), 0); ok {
				t.Errorf("%q matches U+%04X", c.pattern, r)
			}
		}
	}
}
