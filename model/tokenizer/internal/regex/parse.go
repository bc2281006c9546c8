package regex

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is a pattern this package cannot compile: bad syntax, or syntax
// Oniguruma has that it does not support. Pos is the byte offset in Expr.
type Error struct {
	Expr string
	Pos  int
	Msg  string
}

// Error formats the error with the pattern and where in it.
func (e *Error) Error() string {
	return fmt.Sprintf("regex %q: at byte %d: %s", e.Expr, e.Pos, e.Msg)
}

// nodeKind is what a node of the syntax tree matches.
type nodeKind uint8

const (
	nEmpty  nodeKind = iota // the empty string
	nLit                    // the rune r (any of its case variants when fold)
	nClass                  // one rune of class
	nAny                    // any rune but '\n' (Oniguruma's '.')
	nConcat                 // subs one after another
	nAlt                    // the first of subs that leads to a match
	nRepeat                 // subs[0], min to max times (max -1: no bound)
	nLook                   // lookahead: subs[0] matches here (does not, when neg); consumes nothing
)

// node is a node of the syntax tree.
type node struct {
	kind     nodeKind
	r        rune
	fold     bool
	class    *charClass
	subs     []*node
	min, max int
	lazy     bool
	neg      bool
}

// maxRepeat bounds the counts of {m,n}; the compiled program has to fit in
// maxInsts anyway.
const maxRepeat = 1000

// parser reads a pattern, rune by rune.
type parser struct {
	expr  string
	pos   int
	depth int
}

// maxDepth bounds the nesting of groups, so that a hostile pattern cannot
// exhaust the stack.
const maxDepth = 200

func (p *parser) errorf(pos int, format string, a ...any) error {
	return &Error{Expr: p.expr, Pos: pos, Msg: fmt.Sprintf(format, a...)}
}

func (p *parser) more() bool { return p.pos < len(p.expr) }

// peek returns the next rune without consuming it (utf8.RuneError at the end).
func (p *parser) peek() rune {
	if !p.more() {
		return utf8.RuneError
	}
	r, _ := utf8.DecodeRuneInString(p.expr[p.pos:])
	return r
}

func (p *parser) next() rune {
	r, n := utf8.DecodeRuneInString(p.expr[p.pos:])
	p.pos += n
	return r
}

// lookingAt reports whether the rest of the pattern starts with s.
func (p *parser) lookingAt(s string) bool { return strings.HasPrefix(p.expr[p.pos:], s) }

// parse parses the whole pattern.
func parse(expr string) (*node, error) {
	if !utf8.ValidString(expr) {
		return nil, &Error{Expr: expr, Pos: 0, Msg: "pattern is not valid UTF-8"}
	}
	p := &parser{expr: expr}
	n, err := p.alternation(false)
	if err != nil {
		return nil, err
	}
	if p.more() {
		return nil, p.errorf(p.pos, "unmatched ')'")
	}
	return n, nil
}

// alternation parses a|b|... up to a ')' or the end; fold is the
// case-insensitivity in force. An inline (?i) at its start switches it on.
func (p *parser) alternation(fold bool) (*node, error) {
	var alts []*node
	for {
		var seq []*node
		for p.more() && p.peek() != '|' && p.peek() != ')' {
			if p.lookingAt("(?i)") || p.lookingAt("(?-i)") {
				// Only first in a group, where Oniguruma's reading (the flag
				// takes in the rest of the group, alternatives included)
				// and Perl's agree.
				if len(alts) > 0 || len(seq) > 0 {
					return nil, p.errorf(p.pos, "an inline flag group is supported only at the start of a group")
				}
				fold = p.lookingAt("(?i)")
				p.pos += len("(?i)")
				if !fold {
					p.pos++
				}
				continue
			}
			n, err := p.repeat(fold)
			if err != nil {
				return nil, err
			}
			seq = append(seq, n)
		}
		alts = append(alts, concat(seq))
		if !p.more() || p.peek() == ')' {
			break
		}
		p.next() // '|'
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return &node{kind: nAlt, subs: alts}, nil
}

func concat(seq []*node) *node {
	switch len(seq) {
	case 0:
		return &node{kind: nEmpty}
	case 1:
		return seq[0]
	}
	return &node{kind: nConcat, subs: seq}
}

// repeat parses an atom and its quantifier, if any.
func (p *parser) repeat(fold bool) (*node, error) {
	start := p.pos
	atom, err := p.atom(fold)
	if err != nil {
		return nil, err
	}
	quantified := false
	for p.more() {
		qpos := p.pos
		min, max, ok, err := p.quantifier()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if quantified {
			return nil, p.errorf(qpos, "a quantifier after a quantifier is not supported")
		}
		if atom.kind == nLook {
			return nil, p.errorf(qpos, "a quantified lookahead is not supported")
		}
		quantified = true
		lazy := false
		switch p.peek() {
		case '?':
			p.next()
			lazy = true
		case '+':
			return nil, p.errorf(p.pos, "possessive quantifiers are not supported")
		}
		if max < 0 && nullable(atom) {
			return nil, p.errorf(start, "an unbounded repetition of something that can match the empty string is not supported")
		}
		atom = &node{kind: nRepeat, subs: []*node{atom}, min: min, max: max, lazy: lazy}
	}
	return atom, nil
}

// quantifier parses ?, *, + or {m,n} ({m}, {m,}, {,n}); ok is false when
// the next character starts none (a '{' that does not form a count is a
// literal, as in Oniguruma).
func (p *parser) quantifier() (min, max int, ok bool, err error) {
	switch p.peek() {
	case '?':
		p.next()
		return 0, 1, true, nil
	case '*':
		p.next()
		return 0, -1, true, nil
	case '+':
		p.next()
		return 1, -1, true, nil
	case '{':
	default:
		return 0, 0, false, nil
	}
	rest := p.expr[p.pos+1:]
	end := strings.IndexByte(rest, '}')
	if end < 0 {
		return 0, 0, false, nil
	}
	body := rest[:end]
	lo, hi, comma := strings.Cut(body, ",")
	if !digits(lo) || !digits(hi) || lo == "" && hi == "" {
		return 0, 0, false, nil
	}
	at := p.pos
	if lo == "" {
		min = 0
	} else if min, err = count(lo); err != nil {
		return 0, 0, false, p.errorf(at, "%v", err)
	}
	switch {
	case !comma:
		max = min
	case hi == "":
		max = -1
	default:
		if max, err = count(hi); err != nil {
			return 0, 0, false, p.errorf(at, "%v", err)
		}
	}
	if max >= 0 && max < min {
		return 0, 0, false, p.errorf(at, "repetition {%s}: the maximum is below the minimum", body)
	}
	p.pos += 1 + end + 1
	return min, max, true, nil
}

func digits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func count(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n > maxRepeat {
		return 0, fmt.Errorf("repetition count %s is over %d", s, maxRepeat)
	}
	return n, nil
}

// nullable reports whether n can match the empty string.
func nullable(n *node) bool {
	switch n.kind {
	case nEmpty, nLook:
		return true
	case nConcat:
		for _, s := range n.subs {
			if !nullable(s) {
				return false
			}
		}
		return true
	case nAlt:
		for _, s := range n.subs {
			if nullable(s) {
				return true
			}
		}
		return false
	case nRepeat:
		return n.min == 0 || nullable(n.subs[0])
	}
	return false
}

// atom parses one literal, class, escape or group.
func (p *parser) atom(fold bool) (*node, error) {
	at := p.pos
	switch r := p.next(); r {
	case '(':
		return p.group(at, fold)
	case '[':
		c, err := p.class(at, fold)
		if err != nil {
			return nil, err
		}
		return &node{kind: nClass, class: c}, nil
	case '.':
		return &node{kind: nAny}, nil
	case '$':
		// The end of a line, as Oniguruma's syntax has it (multi-line):
		// before a '\n' or at the end of the text, so no rune but '\n'
		// follows. DeepSeek LLM's pre-tokenizer has \s+$.
		return &node{kind: nLook, neg: true, subs: []*node{{kind: nAny}}}, nil
	case '^':
		return nil, p.errorf(at, "anchor %q is not supported", r)
	case '*', '+', '?':
		return nil, p.errorf(at, "quantifier %q follows nothing", r)
	case '\\':
		item, lit, err := p.escape(at, false)
		if err != nil {
			return nil, err
		}
		if item != nil {
			// Oniguruma folds case in bracketed classes only: (?i)\p{Lu}
			// matches no 'a', (?i)[\p{Lu}] does.
			return &node{kind: nClass, class: newClass([]setItem{*item}, false, false)}, nil
		}
		return litNode(lit, fold), nil
	default:
		return litNode(r, fold), nil
	}
}

func litNode(r rune, fold bool) *node {
	return &node{kind: nLit, r: r, fold: fold && hasFold(r)}
}

// group parses what follows a '(' at offset at, through its ')'.
func (p *parser) group(at int, fold bool) (*node, error) {
	if p.depth++; p.depth > maxDepth {
		return nil, p.errorf(at, "groups nested more than %d deep", maxDepth)
	}
	defer func() { p.depth-- }()
	look, neg := false, false
	switch {
	case p.lookingAt("?:"):
		p.pos += 2
	case p.lookingAt("?i:"), p.lookingAt("?-i:"):
		fold = p.lookingAt("?i:")
		p.pos += len("?i:")
		if !fold {
			p.pos++
		}
	case p.lookingAt("?="), p.lookingAt("?!"):
		look, neg = true, p.lookingAt("?!")
		p.pos += 2
	case p.lookingAt("?<="), p.lookingAt("?<!"):
		return nil, p.errorf(at, "lookbehind is not supported")
	case p.lookingAt("?>"):
		return nil, p.errorf(at, "atomic groups are not supported")
	case p.lookingAt("?<"), p.lookingAt("?P<"), p.lookingAt("?'"):
		// A named group: captures do not matter here.
		close := byte('>')
		if p.lookingAt("?'") {
			close = '\''
		}
		end := strings.IndexByte(p.expr[p.pos+2:], close)
		if end < 0 {
			return nil, p.errorf(at, "unterminated group name")
		}
		p.pos += 2 + end + 1
	case p.lookingAt("?"):
		return nil, p.errorf(at, "group syntax %q is not supported", p.expr[at:min(len(p.expr), at+4)])
	}
	body, err := p.alternation(fold)
	if err != nil {
		return nil, err
	}
	if !p.more() {
		return nil, p.errorf(at, "missing ')'")
	}
	p.next() // ')'
	if look {
		return &node{kind: nLook, subs: []*node{body}, neg: neg}, nil
	}
	return body, nil
}

// escape parses what follows a '\' at offset at: a class escape (item not
// nil) or a literal rune. inClass allows the escapes only classes have.
func (p *parser) escape(at int, inClass bool) (item *setItem, lit rune, err error) {
	if !p.more() {
		return nil, 0, p.errorf(at, "trailing backslash")
	}
	r := p.next()
	switch r {
	case 'n':
		return nil, '\n', nil
	case 'r':
		return nil, '\r', nil
	case 't':
		return nil, '\t', nil
	case 'f':
		return nil, '\f', nil
	case 'v':
		return nil, '\v', nil
	case 'a':
		return nil, '\a', nil
	case 'e':
		return nil, 0x1b, nil
	case 's', 'S', 'd', 'D', 'w', 'W', 'h', 'H':
		it := shorthand(r)
		return &it, 0, nil
	case 'p', 'P':
		it, err := p.property(at, r == 'P')
		if err != nil {
			return nil, 0, err
		}
		return &it, 0, nil
	case 'x':
		return p.hexEscape(at)
	case 'u':
		if p.pos+4 > len(p.expr) || !isHex(p.expr[p.pos:p.pos+4]) {
			return nil, 0, p.errorf(at, `\u needs four hex digits`)
		}
		v, _ := strconv.ParseUint(p.expr[p.pos:p.pos+4], 16, 32)
		p.pos += 4
		return nil, rune(v), nil
	case 'b', 'B', 'A', 'z', 'Z', 'G', 'K', 'R', 'X', 'N', 'O', 'k', 'g', 'y', 'Y':
		if inClass && r == 'b' {
			return nil, '\b', nil
		}
		return nil, 0, p.errorf(at, `escape \%c is not supported`, r)
	case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return nil, 0, p.errorf(at, `escape \%c (a back-reference or octal code) is not supported`, r)
	}
	if r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
		return nil, 0, p.errorf(at, `escape \%c is not supported`, r)
	}
	return nil, r, nil // an escaped symbol stands for itself
}

func isHex(s string) bool {
	for i := range len(s) {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// hexEscape parses \xHH or \x{H...} after the 'x'.
func (p *parser) hexEscape(at int) (*setItem, rune, error) {
	if p.lookingAt("{") {
		end := strings.IndexByte(p.expr[p.pos:], '}')
		if end < 2 || end > 9 || !isHex(p.expr[p.pos+1:p.pos+end]) {
			return nil, 0, p.errorf(at, `\x{...} needs one to eight hex digits`)
		}
		v, _ := strconv.ParseUint(p.expr[p.pos+1:p.pos+end], 16, 32)
		p.pos += end + 1
		if v > utf8.MaxRune || v >= 0xd800 && v < 0xe000 {
			return nil, 0, p.errorf(at, `\x{%x} is not a Unicode scalar value`, v)
		}
		return nil, rune(v), nil
	}
	n := 0
	for n < 2 && p.pos+n < len(p.expr) && isHex(p.expr[p.pos+n:p.pos+n+1]) {
		n++
	}
	if n == 0 {
		return nil, 0, p.errorf(at, `\x needs hex digits`)
	}
	v, _ := strconv.ParseUint(p.expr[p.pos:p.pos+n], 16, 32)
	p.pos += n
	if v >= 0x80 {
		// In a UTF-8 pattern Oniguruma reads \x80-\xff as raw bytes.
		return nil, 0, p.errorf(at, `\x%02x is a raw byte in Oniguruma; write \x{%x} for the character`, v, v)
	}
	return nil, rune(v), nil
}

// property parses {Name} or {^Name} after \p or \P.
func (p *parser) property(at int, neg bool) (setItem, error) {
	if !p.lookingAt("{") {
		return setItem{}, p.errorf(at, `\p needs a property name in braces`)
	}
	end := strings.IndexByte(p.expr[p.pos:], '}')
	if end < 0 {
		return setItem{}, p.errorf(at, `missing '}' after \p{`)
	}
	name := p.expr[p.pos+1 : p.pos+end]
	p.pos += end + 1
	if strings.HasPrefix(name, "^") {
		name, neg = name[1:], !neg
	}
	it, ok := lookupProperty(name)
	if !ok {
		return setItem{}, p.errorf(at, "unknown or unsupported Unicode property %q", name)
	}
	it.neg = it.neg != neg
	return it, nil
}

// class parses a bracketed class after its '[' at offset at.
func (p *parser) class(at int, fold bool) (*charClass, error) {
	neg := false
	if p.lookingAt("^") {
		p.next()
		neg = true
	}
	var items []setItem
	first := true
	for {
		if !p.more() {
			return nil, p.errorf(at, "missing ']'")
		}
		itemAt := p.pos
		r := p.next()
		switch {
		case r == ']' && !first:
			return newClass(items, neg, fold), nil
		case r == '[':
			if p.lookingAt(":") {
				return nil, p.errorf(itemAt, "POSIX bracket expressions are not supported")
			}
			return nil, p.errorf(itemAt, "nested classes are not supported")
		case r == '&' && p.lookingAt("&"):
			return nil, p.errorf(itemAt, "class intersections (&&) are not supported")
		}
		first = false
		lo := r
		if r == '\\' {
			item, lit, err := p.escape(itemAt, true)
			if err != nil {
				return nil, err
			}
			if item != nil {
				items = append(items, *item)
				continue
			}
			lo = lit
		}
		// A range lo-hi, unless the '-' is last.
		if p.lookingAt("-") && !p.lookingAt("-]") && len(p.expr) > p.pos+1 {
			p.next()
			hiAt := p.pos
			hi := p.next()
			if hi == '\\' {
				item, lit, err := p.escape(hiAt, true)
				if err != nil {
					return nil, err
				}
				if item != nil {
					return nil, p.errorf(hiAt, "a range cannot end in a class escape")
				}
				hi = lit
			} else if hi == '[' {
				return nil, p.errorf(hiAt, "nested classes are not supported")
			}
			if hi < lo {
				return nil, p.errorf(itemAt, "range %q-%q is out of order", lo, hi)
			}
			items = append(items, setItem{lo: lo, hi: hi})
			continue
		}
		items = append(items, setItem{lo: lo, hi: lo})
	}
}
