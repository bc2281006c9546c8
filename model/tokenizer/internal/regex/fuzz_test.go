package regex

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// goComparable reports whether Go's regexp reads pattern as Oniguruma does,
// given that both compile it: no shorthand classes (ASCII in Go), no {,n}
// and no count with a leading zero such as {00} or {1,02} (literals in Go,
// counts in Oniguruma), no class starting with ']'.
func goComparable(pattern string) bool {
	if leadingZeroCount.MatchString(pattern) {
		return false
	}
	for _, s := range []string{`\s`, `\S`, `\d`, `\D`, `\w`, `\W`, `\h`, `\H`, `{,`, `[]`, `[^]`, `\p{C}`, `\p{Cn}`, `\p{LC}`, `\P{C}`, `\P{Cn}`, `\P{LC}`, `\p{^`} {
		if strings.Contains(pattern, s) {
			return false
		}
	}
	return true
}

// leadingZeroCount finds a repetition count written with a leading zero.
var leadingZeroCount = regexp.MustCompile(`\{0[0-9]|\{[0-9]*,0[0-9]`)

// FuzzRegex compiles any pattern and, when it compiles, searches any text
// with it: no panic, matches in order, inside the text and on rune
// boundaries; and for valid UTF-8 and patterns Go's regexp reads alike, the
// same matches as Go's (in its multi-line mode, as Oniguruma's '$' is).
func FuzzRegex(f *testing.F) {
	for _, p := range []string{llama3Pattern, qwen2Pattern, gpt2Pattern, `a|ab`, `(?:ab){1,3}?`, `[^a-c\p{L}]+`,
		`(?i:straße)`, `x(?=y)|x`, `\x{1F600}`, `(?<n>a)b`, `a{2,}`, `.*`, `[\]-]`} {
		for _, s := range []string{"Hello world's 123456  \n\n x", "aab abab", "ab\xffc", "😀 x"} {
			f.Add(p, s)
		}
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		re, err := Compile(pattern)
		if err != nil {
			return
		}
		var got [][2]int
		prev := 0
		re.Matcher().FindAll(s, func(a, b int) bool {
			if a < prev || b < a || b > len(s) {
				t.Fatalf("%q on %q: match [%d,%d) after %d", pattern, s, a, b, prev)
			}
			if utf8.ValidString(s) && (!utf8.RuneStart(at(s, a)) || !utf8.RuneStart(at(s, b))) {
				t.Fatalf("%q on %q: match [%d,%d) cuts a rune", pattern, s, a, b)
			}
			got = append(got, [2]int{a, b})
			prev = b
			return len(got) < 1000
		})
		if !utf8.ValidString(s) || !goComparable(pattern) || len(got) >= 1000 {
			return
		}
		// (?m): '$' ends a line in Oniguruma's syntax ('^' is refused).
		g, err := regexp.Compile("(?m)" + pattern)
		if err != nil {
			return
		}
		if want := goMatches(g, s); !slices.Equal(got, want) {
			t.Fatalf("%q on %q: %v, Go's regexp %v", pattern, s, got, want)
		}
	})
}

// at is s[i], or a rune start past the end.
func at(s string, i int) byte {
	if i >= len(s) {
		return 0
	}
	return s[i]
}
