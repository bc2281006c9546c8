package regex

import (
	"fmt"
	"unicode/utf8"
)

// Regexp is a compiled pattern. It is immutable and safe for concurrent use;
// searching needs a Matcher.
type Regexp struct {
	expr string
	prog *prog
}

// Compile compiles an Oniguruma pattern of the supported subset (see the
// package comment), or says what it does not support and where.
func Compile(expr string) (*Regexp, error) {
	n, err := parse(expr)
	if err != nil {
		return nil, err
	}
	p, ok := compile(n)
	if !ok {
		return nil, &Error{Expr: expr, Pos: 0, Msg: fmt.Sprintf("compiles to more than %d instructions", maxInsts)}
	}
	return &Regexp{expr: expr, prog: p}, nil
}

// String returns the pattern.
func (re *Regexp) String() string { return re.expr }

// Matcher returns a new Matcher of re.
func (re *Regexp) Matcher() *Matcher {
	return &Matcher{m: newMachine(re.prog)}
}

// Matcher searches text for matches of a Regexp. It keeps scratch space
// between calls and is not safe for concurrent use: give each goroutine its
// own.
type Matcher struct {
	m *machine
}

// Find returns the leftmost match in s that starts at or after from, the
// first alternative that leads to a match winning at that place (Perl's and
// Oniguruma's rule); ok is false when there is none.
func (mt *Matcher) Find(s string, from int) (start, end int, ok bool) {
	return mt.m.find(s, from)
}

// FindAll calls yield with the bounds of each successive match in s, as the
// find_iter of Rust's onig crate (which Hugging Face's tokenizers use)
// reports them: the next search starts where a match ended, and an empty
// match found right where the previous match ended is skipped (the search
// moves on one rune). It stops when yield returns false.
func (mt *Matcher) FindAll(s string, yield func(start, end int) bool) {
	lastEnd, lastMatchEnd := 0, -1
	for lastEnd <= len(s) {
		st, e, ok := mt.m.find(s, lastEnd)
		if !ok {
			return
		}
		if st == e && st == lastMatchEnd {
			if lastEnd == len(s) {
				return
			}
			_, n := utf8.DecodeRuneInString(s[lastEnd:])
			lastEnd += n
			continue
		}
		lastEnd, lastMatchEnd = e, e
		if !yield(st, e) {
			return
		}
	}
}

// thread is a place to resume the search: instruction pc at position pos;
// for an opRun, the run's shorter lengths down to the position lo remain.
type thread struct {
	pc      int32
	pos, lo int
}

// machine runs one program: a backtracking search that tries alternatives
// in priority order. When a search backtracks much more than the text is
// long, it starts again remembering the (instruction, position) states that
// failed, which bounds its work by the program's size times the text's
// length (RE2's bit-state backtracker); real patterns never need that.
type machine struct {
	p     *prog
	root  *prog // the whole pattern's program, which lists every lookahead's
	stack []thread
	looks []*machine // one per lookahead program of root, made when first needed

	memo    bool
	visited []uint64 // bit (pos-base)*len(p.inst)+pc: the state failed already
	used    int      // words of visited in use
	base    int
	steps   int
	budget  int
}

func newMachine(p *prog) *machine {
	return &machine{p: p, root: p, looks: make([]*machine, len(p.looks))}
}

// find is Matcher.Find.
func (m *machine) find(s string, from int) (start, end int, ok bool) {
	if from < 0 || from > len(s) {
		return 0, 0, false
	}
	m.memo = false
	m.steps = 0
	m.budget = 64*(len(s)-from) + 1<<12
	for st := from; ; {
		e := m.match(s, st)
		if e == -2 { // over budget: again, remembering failures
			m.startMemo(from)
			e = m.match(s, st)
		}
		if e >= 0 {
			m.clearMemo()
			return st, e, true
		}
		if st >= len(s) {
			break
		}
		_, n := utf8.DecodeRuneInString(s[st:])
		st += n
	}
	m.clearMemo()
	return 0, 0, false
}

func (m *machine) startMemo(base int) {
	m.memo = true
	m.base = base
	m.clearMemo()
}

func (m *machine) clearMemo() {
	clear(m.visited[:m.used])
	m.used = 0
}

// visit marks the state (pc, pos) and reports whether it was new.
func (m *machine) visit(pc int32, pos int) bool {
	i := uint(pos-m.base)*uint(len(m.p.inst)) + uint(pc)
	w := int(i >> 6)
	if w >= len(m.visited) {
		m.visited = append(m.visited, make([]uint64, max(w+1, 2*len(m.visited))-len(m.visited))...)
	}
	bit := uint64(1) << (i & 63)
	if m.visited[w]&bit != 0 {
		return false
	}
	m.visited[w] |= bit
	m.used = max(m.used, w+1)
	return true
}

// decode returns the rune at s[pos] and its width (utf8.RuneError, 1 for a
// byte that starts no valid UTF-8).
func decode(s string, pos int) (rune, int) {
	if c := s[pos]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[pos:])
}

// one reports whether r matches the single-rune test of in (op one).
func one(op opcode, in *inst, r rune) bool {
	switch op {
	case opRune:
		return r == in.r
	case opRuneFold:
		return foldEqual(r, in.r)
	case opClass:
		return in.class.has(r)
	case opAny:
		return r != '\n'
	}
	return false
}

// match runs the program anchored at pos: the end of the match, -1 when
// there is none, or -2 when the step budget ran out without memo.
func (m *machine) match(s string, pos int) int {
	m.stack = append(m.stack[:0], thread{pc: m.p.start, pos: pos, lo: -1})
	for len(m.stack) > 0 {
		t := m.stack[len(m.stack)-1]
		m.stack = m.stack[:len(m.stack)-1]
		pc, p := t.pc, t.pos
		if t.lo >= 0 {
			// A run to resume: it ends at p now; shorter ends remain.
			if p > t.lo {
				_, n := utf8.DecodeLastRuneInString(s[:p])
				m.stack = append(m.stack, thread{pc: pc, pos: p - n, lo: t.lo})
			}
			pc = m.p.inst[pc].out
		}
	thread:
		for {
			if m.steps++; m.steps > m.budget && !m.memo {
				return -2
			}
			if m.memo && !m.visit(pc, p) {
				break
			}
			in := &m.p.inst[pc]
			switch in.op {
			case opMatch:
				return p
			case opRune, opRuneFold, opClass, opAny:
				if p >= len(s) {
					break thread
				}
				r, n := decode(s, p)
				if !one(in.op, in, r) {
					break thread
				}
				p += n
				pc = in.out
			case opRun:
				q, count, lo := p, 0, -1
				for q < len(s) && (in.max < 0 || count < in.max) {
					r, n := decode(s, q)
					if !one(in.one, in, r) {
						break
					}
					if count == in.min {
						lo = q
					}
					q += n
					count++
				}
				m.steps += count
				if count < in.min {
					break thread
				}
				if count == in.min {
					lo = q
				}
				if q > lo {
					_, n := utf8.DecodeLastRuneInString(s[:q])
					m.stack = append(m.stack, thread{pc: pc, pos: q - n, lo: lo})
				}
				p = q
				pc = in.out
			case opSplit:
				m.stack = append(m.stack, thread{pc: in.arg, pos: p, lo: -1})
				pc = in.out
			case opJmp:
				pc = in.out
			case opLook:
				if m.look(int(in.arg), s, p) == in.neg {
					break thread
				}
				pc = in.out
			}
		}
	}
	return -1
}

// look reports whether lookahead program i matches at pos.
func (m *machine) look(i int, s string, pos int) bool {
	sub := m.looks[i]
	if sub == nil {
		// A nested lookahead is listed in root too, by the same index.
		sub = &machine{p: m.root.looks[i], root: m.root, looks: m.looks}
		m.looks[i] = sub
	}
	sub.memo = false
	sub.steps = 0
	sub.budget = 64*(len(s)-pos) + 1<<12
	e := sub.match(s, pos)
	if e == -2 {
		sub.startMemo(pos)
		e = sub.match(s, pos)
		sub.clearMemo()
	}
	return e >= 0
}
