package regex

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wgpu-eval/wgpu-eval/model/tokenizer/internal/ucd"
)

// setItem is one member of a class: the range lo..hi, a Unicode table, or a
// predicate; neg takes its complement (\S, \P{L}).
type setItem struct {
	lo, hi rune
	table  *unicode.RangeTable
	pred   func(rune) bool
	neg    bool
}

func (it *setItem) has(r rune) bool {
	var in bool
	switch {
	case it.pred != nil:
		in = it.pred(r)
	case it.table != nil:
		in = unicode.Is(it.table, r)
	default:
		in = it.lo <= r && r <= it.hi
	}
	return in != it.neg
}

// charClass is a set of runes: a bracketed class, or an escape such as \s.
type charClass struct {
	items []setItem
	neg   bool
	fold  bool      // case-insensitive: a rune is in when any of its case variants is
	ascii [2]uint64 // membership of the ASCII runes, worked out once
}

func newClass(items []setItem, neg, fold bool) *charClass {
	c := &charClass{items: items, neg: neg, fold: fold}
	for r := range rune(utf8.RuneSelf) {
		if c.slowHas(r) {
			c.ascii[r>>6] |= 1 << (r & 63)
		}
	}
	return c
}

// has reports whether r is in the class.
func (c *charClass) has(r rune) bool {
	if r < utf8.RuneSelf {
		return c.ascii[r>>6]&(1<<(r&63)) != 0
	}
	return c.slowHas(r)
}

func (c *charClass) slowHas(r rune) bool {
	in := c.anyItem(r)
	if !in && c.fold {
		for f := ucd.SimpleFold(r); f != r; f = ucd.SimpleFold(f) {
			if c.anyItem(f) {
				in = true
				break
			}
		}
	}
	return in != c.neg
}

func (c *charClass) anyItem(r rune) bool {
	for i := range c.items {
		if c.items[i].has(r) {
			return true
		}
	}
	return false
}

// hasFold reports whether r has case variants.
func hasFold(r rune) bool { return ucd.SimpleFold(r) != r }

// foldEqual reports whether a and b are case variants of each other.
func foldEqual(a, b rune) bool {
	if a == b {
		return true
	}
	for f := ucd.SimpleFold(a); f != a; f = ucd.SimpleFold(f) {
		if f == b {
			return true
		}
	}
	return false
}

// shorthand is the item of \s, \d, \w, \h and their upper-case complements,
// with Oniguruma's Unicode meaning (Unicode 16.0, package ucd): \s
// White_Space, \d Decimal_Number, \w ucd.IsOnigWord (Alphabetic, marks,
// decimal numbers, connector punctuation, and ² ³ ¹ ¼ ½ ¾), \h ASCII hex
// digits.
func shorthand(r rune) setItem {
	var it setItem
	switch unicode.ToLower(r) {
	case 's':
		it.table = ucd.WhiteSpace
	case 'd':
		it.table = ucd.Categories["Nd"]
	case 'w':
		it.pred = ucd.IsOnigWord
	case 'h':
		it.pred = func(r rune) bool { return r < utf8.RuneSelf && isHex(string(r)) }
	}
	it.neg = unicode.IsUpper(r)
	return it
}

// categories are the Unicode general categories by their short and long
// names, as Oniguruma knows them (its C has the unassigned code points).
var categories = map[string]string{
	"Letter": "L", "Cased_Letter": "LC", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll", "Titlecase_Letter": "Lt",
	"Modifier_Letter": "Lm", "Other_Letter": "Lo",
	"Mark": "M", "Combining_Mark": "M", "Nonspacing_Mark": "Mn", "Spacing_Mark": "Mc", "Enclosing_Mark": "Me",
	"Number": "N", "Decimal_Number": "Nd", "Letter_Number": "Nl", "Other_Number": "No",
	"Punctuation": "P", "Connector_Punctuation": "Pc", "Dash_Punctuation": "Pd", "Open_Punctuation": "Ps",
	"Close_Punctuation": "Pe", "Initial_Punctuation": "Pi", "Final_Punctuation": "Pf", "Other_Punctuation": "Po",
	"Symbol": "S", "Math_Symbol": "Sm", "Currency_Symbol": "Sc", "Modifier_Symbol": "Sk", "Other_Symbol": "So",
	"Separator": "Z", "Space_Separator": "Zs", "Line_Separator": "Zl", "Paragraph_Separator": "Zp",
	"Other": "C", "Control": "Cc", "Format": "Cf", "Unassigned": "Cn", "Private_Use": "Co", "Surrogate": "Cs",
}

// properties maps normalized property names (see normName) to their items:
// the general categories and the scripts, of Unicode 16.0 as Oniguruma 6.9.10
// has them (package ucd; Go's unicode is 15.0 in Go 1.26).
var properties = func() map[string]setItem {
	m := map[string]setItem{}
	for long, short := range categories {
		it := setItem{table: ucd.Categories[short]}
		m[normName(long)] = it
		m[normName(short)] = it
	}
	for name, t := range ucd.Scripts {
		if _, clash := m[normName(name)]; !clash {
			m[normName(name)] = setItem{table: t}
		}
	}
	m["any"] = setItem{lo: 0, hi: unicode.MaxRune}
	return m
}()

// normName is a property name as Oniguruma compares them: case, spaces,
// underscores and hyphens ignored.
func normName(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '_', '-':
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

func lookupProperty(name string) (setItem, bool) {
	it, ok := properties[normName(name)]
	return it, ok
}
