package regex

import (
	"errors"
	"strings"
	"testing"
)

// TestLongRuns runs the real patterns over 1 MB runs of spaces, digits,
// letters, line breaks and punctuation: each search must cost work linear in
// the run (no backtracking entry or memo per rune) and give the pieces the
// pattern defines.
func TestLongRuns(t *testing.T) {
	const n = 1 << 20
	for _, c := range []struct {
		name, text string
		pattern    string
		pieces     int // how many matches
	}{
		{"spaces then x", strings.Repeat(" ", n) + "x", llama3Pattern, 2},
		{"spaces at the end", "x" + strings.Repeat(" ", n), llama3Pattern, 2},
		{"tabs then x", strings.Repeat("\t", n) + "x", qwen2Pattern, 2},
		{"space-newline runs", strings.Repeat(" \n", n/2) + "x", llama3Pattern, 2},
		{"newlines", strings.Repeat("\n", n), llama3Pattern, 1},
		{"digits", strings.Repeat("7", 3*n/3), llama3Pattern, (n + 2) / 3},
		{"digits, one each", strings.Repeat("7", n), qwen2Pattern, n},
		{"letters", strings.Repeat("é", n/2), llama3Pattern, 1},
		{"punctuation", strings.Repeat("!?", n/2), llama3Pattern, 1},
		{"spaces, GPT-2", strings.Repeat(" ", n) + "x", gpt2Pattern, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			re, err := Compile(c.pattern)
			if err != nil {
				t.Fatal(err)
			}
			mt := re.Matcher()
			got, steps := 0, 0
			mt.FindAll(c.text, func(a, b int) bool {
				got++
				steps += mt.m.steps
				if mt.m.memo {
					t.Fatalf("the search at %d fell back to remembering states", a)
				}
				return true
			})
			if got != c.pieces {
				t.Errorf("%d matches, want %d", got, c.pieces)
			}
			if steps > 8*len(c.text)+1<<12*got {
				t.Errorf("%d steps for %d bytes", steps, len(c.text))
			}
			if len(mt.m.stack) > 64 && cap(mt.m.stack) > 1024 {
				t.Errorf("backtracking stack grew to %d entries", cap(mt.m.stack))
			}
		})
	}
}

// TestExponentialPatterns checks that patterns that make a plain
// backtracker take exponential time finish, with the right answer.
func TestExponentialPatterns(t *testing.T) {
	for _, c := range []struct {
		pattern, text string
		match         bool
	}{
		{`(?:a|a)*b`, strings.Repeat("a", 5000), false},
		{`(?:a+)+b`, strings.Repeat("a", 5000), false},
		{`(?:a|aa)+c`, strings.Repeat("a", 3000) + "c", true},
		{`(?:\p{L}|\w)+!`, strings.Repeat("x", 5000), false},
		{`(?:a(?!b)|a)*c`, strings.Repeat("a", 3000), false},
	} {
		re, err := Compile(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, ok := re.Matcher().Find(c.text, 0); ok != c.match {
			t.Errorf("%q: match %v, want %v", c.pattern, ok, c.match)
		}
	}
}

// TestCompileErrors checks that what is not supported is refused, saying
// what and where, rather than matched some other way.
func TestCompileErrors(t *testing.T) {
	for _, c := range []struct {
		pattern string
		pos     int
		msg     string
	}{
		{`a(?<=b)`, 1, "lookbehind"},
		{`a(?<!b)`, 1, "lookbehind"},
		{`(?>ab)`, 0, "atomic"},
		{`a++`, 2, "possessive"},
		{`a*+`, 2, "possessive"},
		{`^a`, 0, "anchor"},
		{`a$+`, 2, "quantified"},
		{`\bx`, 0, `\b`},
		{`\Ax`, 0, `\A`},
		{`(a)\1`, 3, "back-reference"},
		{`[[:alpha:]]`, 1, "POSIX"},
		{`[a[b]]`, 2, "nested"},
		{`[a-z&&[^m]]`, 4, "intersection"},
		{`\p{Alphabetic}`, 0, "property"},
		{`\p{L`, 0, "missing '}'"},
		{`\pL`, 0, "braces"},
		{`(?:a*)*`, 0, "empty string"},
		{`(?:a?)+`, 0, "empty string"},
		{`a(?i)b`, 1, "inline flag"},
		{`(?m)a`, 0, "not supported"},
		{`(?x)a`, 0, "not supported"},
		{`a{1001}`, 1, "1000"},
		{`a{3,2}`, 1, "below the minimum"},
		{`a**`, 2, "quantifier after a quantifier"},
		{`*a`, 0, "follows nothing"},
		{`(ab`, 0, "missing ')'"},
		{`ab)`, 2, "unmatched ')'"},
		{`[ab`, 0, "missing ']'"},
		{`[z-a]`, 1, "out of order"},
		{`a\`, 1, "trailing backslash"},
		{`\x80`, 0, "raw byte"},
		{`\q`, 0, `\q`},
		{"\xff", 0, "UTF-8"},
		{`(?=a)*`, 5, "quantified lookahead"},
		{strings.Repeat("(", 300) + strings.Repeat(")", 300), 200, "nested more than"},
		{`(?:(?:(?:a{1000}){1000}){1000})`, 0, "instructions"},
	} {
		_, err := Compile(c.pattern)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Compile(%q) = %v, want an *Error", c.pattern, err)
			continue
		}
		if e.Pos != c.pos || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("Compile(%q): at %d %q, want at %d something with %q", c.pattern, e.Pos, e.Msg, c.pos, c.msg)
		}
		if !strings.Contains(err.Error(), "regex ") {
			t.Errorf("Compile(%q): error %q does not name the pattern", c.pattern, err)
		}
	}
}

// TestFindAllEmptyMatches checks Oniguruma's find_iter rule for empty
// matches: skipped right after a match, reported elsewhere.
func TestFindAllEmptyMatches(t *testing.T) {
	re, err := Compile(`a*`)
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]int
	re.Matcher().FindAll("baab", func(a, b int) bool { got = append(got, [2]int{a, b}); return true })
	want := [][2]int{{0, 0}, {1, 3}, {4, 4}}
	if len(got) != len(want) {
		t.Fatalf("matches %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("matches %v, want %v", got, want)
		}
	}
}
