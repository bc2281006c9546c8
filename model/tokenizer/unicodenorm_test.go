package tokenizer

import (
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// TestNormalFormLongRuns: runs of more than 30 non-starters are normalized
// whole, as UAX #15 defines the normal forms and Hugging Face computes
// them, with no U+034F put in (norm's Stream-Safe Text Format). The
// expectations follow from the algorithm: U+0316 (class 220) sorts before
// U+0301 (class 230); "a" composes with the first U+0301 only (the next is
// blocked by it); U+FFAB decomposes to U+11B1, a starter.
func TestNormalFormLongRuns(t *testing.T) {
	acute, grave := strings.Repeat("\u0301", 40), strings.Repeat("\u0316", 20)
	for _, c := range []struct {
		form     norm.Form
		name     string
		in, want string
	}{
		{norm.NFC, "NFC", "a" + acute, "\u00e1" + acute[2:]},
		{norm.NFD, "NFD", "a" + acute, "a" + acute},
		{norm.NFD, "NFD", "x" + strings.Repeat("\u0301\u0316", 20) + "y", "x" + grave + acute[:40] + "y"},
		{norm.NFC, "NFC", "a" + strings.Repeat("\u0301\u0316", 20), "\u00e1" + grave + acute[2:40]},
		{norm.NFKC, "NFKC", strings.Repeat("\uffab", 31), strings.Repeat("\u11b1", 31)},
		{norm.NFC, "NFC", strings.Repeat("\uffab", 31), strings.Repeat("\uffab", 31)},
		{norm.NFC, "NFC", "x" + strings.Repeat("e\u0301", 40), "x" + strings.Repeat("\u00e9", 40)},
		// Hugging Face's data gives U+1ABF class 0 (it orders nothing)
		// and U+1FBF1 no decomposition.
		{norm.NFD, "NFD", "a\u0301\u1abf", "a\u0301\u1abf"},
		{norm.NFKC, "NFKC", "\U0001fbf1", "\U0001fbf1"},
		{norm.NFC, "NFC", "\U00011935\U00011930", "\U00011935\U00011930"},
		// Characters that Unicode 15.0 had not assigned stay as they are in
		// Hugging Face's normal forms; Go 1.27's norm (Unicode 17.0)
		// decomposes U+105C9 (Todhri, 16.0), composes U+105D2 with U+0307,
		// decomposes U+11383 (Tulu-Tigalari, 16.0) and, in NFKC, U+A7F1
		// (17.0).
		{norm.NFD, "NFD", "\U000105c9", "\U000105c9"},
		{norm.NFC, "NFC", "\U000105d2\u0307", "\U000105d2\u0307"},
		{norm.NFKD, "NFKD", "\U00011383", "\U00011383"},
		{norm.NFKC, "NFKC", "a\ua7f1b", "a\ua7f1b"},
	} {
		if got := normalForm(c.form, c.in); got != c.want {
			t.Errorf("%s(%+q) = %+q, want %+q", c.name, c.in, got, c.want)
		}
	}
}
