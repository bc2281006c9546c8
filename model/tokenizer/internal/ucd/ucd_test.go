package ucd

import (
	"testing"
	"unicode"
)

// goAssigned reports whether Go's unicode tables assign r (its C has
// unassigned code points too).
func goAssigned(r rune) bool {
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs)
}

// assigned reports whether the tables here assign r.
func assigned(r rune) bool { return !unicode.Is(catCn, r) }

// TestAgainstGoTables checks the generated tables against Go's unicode
// package (another reading of another version of the same data): they
// differ only on code points one of the two leaves unassigned, but for the
// changes of the versions between: U+1171E AHOM SIGN RA became Mc in 16.0,
// which also made the combining Latin letters U+0363..U+036F and
// U+1DD3..U+1DE6 Alphabetic, and 15.1 added simple foldings among old
// letters (U+0390/U+1FD3, U+03B0/U+1FE3, U+FB05/U+FB06).
//
// The differences listed are those between Unicode 15.0 and 16.0: with
// another Go release's tables (Go 1.27 has Unicode 17.0) there is nothing
// to compare with.
func TestAgainstGoTables(t *testing.T) {
	if unicode.Version != "15.0.0" {
		t.Skipf("Go's unicode tables are Unicode %s here; this test compares with 15.0's (Go 1.21 to 1.26)", unicode.Version)
	}
	changed := map[rune]bool{0x1171E: true}
	foldAdded := map[rune]bool{0x390: true, 0x1FD3: true, 0x3B0: true, 0x1FE3: true, 0xFB05: true, 0xFB06: true}
	var both []rune // assigned in both
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if goAssigned(r) && assigned(r) {
			both = append(both, r)
		}
	}
	for name, goTable := range unicode.Categories {
		ours := Categories[name]
		if ours == nil {
			t.Errorf("category %s missing", name)
			continue
		}
		for _, r := range both {
			if unicode.Is(goTable, r) != unicode.Is(ours, r) && !changed[r] {
				t.Errorf("U+%04X: in Go's %s %v, in ours %v", r, name, unicode.Is(goTable, r), unicode.Is(ours, r))
			}
		}
	}
	for name, goTable := range unicode.Scripts {
		ours := Scripts[name]
		if ours == nil {
			t.Errorf("script %s missing", name)
			continue
		}
		for _, r := range both {
			if unicode.Is(goTable, r) != unicode.Is(ours, r) {
				t.Errorf("U+%04X: in Go's %s %v, in ours %v", r, name, unicode.Is(goTable, r), unicode.Is(ours, r))
			}
		}
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.Is(unicode.White_Space, r) != unicode.Is(WhiteSpace, r) {
			t.Errorf("U+%04X: White_Space differs", r)
		}
		goAlpha := unicode.In(r, unicode.L, unicode.Nl, unicode.Other_Alphabetic)
		alphaChanged := 0x363 <= r && r <= 0x36F || 0x1DD3 <= r && r <= 0x1DE6
		if goAlpha != unicode.Is(Alphabetic, r) && goAssigned(r) && assigned(r) && !alphaChanged {
			t.Errorf("U+%04X: Alphabetic differs", r)
		}
		if unicode.Is(unicode.Join_Control, r) != unicode.Is(JoinControl, r) {
			t.Errorf("U+%04X: Join_Control differs", r)
		}
		if unicode.Is(catN, r) && !unicode.Is(Numeric17, r) {
			t.Errorf("U+%04X: N in 16.0, not in 17.0", r)
		}
		if f, g := SimpleFold(r), unicode.SimpleFold(r); f != g && !foldAdded[r] {
			// Only orbits that gained a member Go's data lacks may differ.
			newer := false
			for c := SimpleFold(r); ; c = SimpleFold(c) {
				newer = newer || !goAssigned(c)
				if c == r {
					break
				}
			}
			if !newer {
				t.Errorf("SimpleFold(U+%04X) = U+%04X, Go's U+%04X", r, f, g)
			}
		}
	}
}

// TestSimpleFold checks orbits known from CaseFolding.txt, 16.0's new ones
// included, and that every orbit closes.
func TestSimpleFold(t *testing.T) {
	for _, orbit := range [][]rune{
		{'K', 'k', 0x212A}, {'S', 's', 0x17F}, {'A', 'a'}, {0x100, 0x101}, {0x10D50, 0x10D70}, // GARAY CAPITAL/SMALL LETTER A
		{0x1C89, 0x1C8A}, {0x264, 0xA7CB}, {0x19B, 0xA7DC}, {0x390, 0x1FD3}, {0x3A3, 0x3C2, 0x3C3}, {'1'}, {0x10FFFF}, {-1},
	} {
		for i, r := range orbit {
			if got, want := SimpleFold(r), orbit[(i+1)%len(orbit)]; got != want {
				t.Errorf("SimpleFold(U+%04X) = U+%04X, want U+%04X", r, got, want)
			}
		}
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		c, n := SimpleFold(r), 1
		for ; c != r && n < 5; n++ {
			c = SimpleFold(c)
		}
		if c != r {
			t.Fatalf("the orbit of U+%04X does not close", r)
		}
	}
}

// TestNewCharacters spot-checks characters of Unicode 15.1 and 16.0.
func TestNewCharacters(t *testing.T) {
	for _, c := range []struct {
		r   rune
		cat string
	}{
		{0x2EBF0, "Lo"}, {0x2FFC, "So"}, {0x31EF, "So"}, {0x1B4E, "Po"}, {0x10D40, "Nd"}, {0x10D50, "Lu"},
		{0x10D70, "Ll"}, {0x10D69, "Mn"}, {0x16D70, "Nd"}, {0x1E5F1, "Nd"}, {0x11BF0, "Nd"}, {0x1CC00, "So"}, {0x1171E, "Mc"},
	} {
		for name, table := range Categories {
			in := unicode.Is(table, c.r)
			if want := name == c.cat || name == c.cat[:1] || name == "LC" && (c.cat == "Lu" || c.cat == "Ll"); in != want {
				t.Errorf("U+%04X in %s: %v, want %v", c.r, name, in, want)
			}
		}
	}
	if !unicode.Is(Scripts["Han"], 0x2EBF0) || !unicode.Is(Scripts["Garay"], 0x10D50) {
		t.Errorf("scripts of U+2EBF0 (Han) or U+10D50 (Garay) wrong")
	}
	for _, r := range []rune{0x11DE0, 0x16FF4} { // TOLONG SIKI DIGIT ZERO, 17.0
		if !unicode.Is(Numeric17, r) || unicode.Is(catN, r) {
			t.Errorf("U+%04X: Numeric17 %v, N (16.0) %v", r, unicode.Is(Numeric17, r), unicode.Is(catN, r))
		}
	}
	if !IsOnigWord(0xB2) || IsOnigWord(0x200D) || !IsRegexWord(0x200D) || IsRegexWord(0xB2) || !IsOnigWord(0x2160) || !IsRegexWord(0x24B6) {
		t.Errorf("IsOnigWord or IsRegexWord wrong on U+00B2, U+200D, U+2160 or U+24B6")
	}
}
