package wgsl

// A value-range analysis of u32 index expressions, so that the emitter can
// leave out the clamp of an index it proves below the length of a fixed-size
// array or vector (clampIndex). It is deliberately small and sound: an
// interval [lo, hi] is known only for
//
//   - constants (overrides are constants once a pipeline specializes them);
//   - lets, through their initializers (a let never changes);
//   - the entry point's @builtin(local_invocation_index) parameter, below the
//     product of a constant workgroup size, and local_invocation_id's
//     components, below theirs;
//   - the counter of a for loop `for (var i = ...; i < B; ...)` (or `<=`)
//     inside the loop's body, when B has a known range and neither the body
//     nor anything it calls can change i (no assignment, increment or address
//     of i in the body): the condition holds whenever the body runs;
//   - + - * / % & >> << min max select over known ranges, when no u32
//     operation can wrap (else unknown).
//
// Anything else is unknown, and an unknown index keeps its clamp. Out of
// bounds accesses of workgroup or private memory are undefined behaviour in
// Vulkan: a wrong proof would be a real bug, so each rule errs towards
// "unknown" (tests in ranges_test.go try to fool it).

import "math"

// interval is a set of u32 values [lo, hi].
type interval struct{ lo, hi uint64 }

// maxRangeDepth bounds the lets followed through, against pathological chains.
const maxRangeDepth = 24

// rangeOf is the range of a u32 (or non-negative abstract integer) expression,
// and whether it is known.
func (e *emitter) rangeOf(x expr) (interval, bool) { return e.rangeAt(x, 0) }

func (e *emitter) rangeAt(x expr, depth int) (interval, bool) {
	if depth > maxRangeDepth || x == nil {
		return interval{}, false
	}
	info := e.m.info[x]
	if info == nil || info.typ == nil {
		return interval{}, false
	}
	if v := info.val; v != nil {
		switch info.typ.Kind {
		case kU32, kAbstractInt, kI32:
			if v.i >= 0 && v.i <= math.MaxUint32 {
				return interval{uint64(v.i), uint64(v.i)}, true
			}
		}
		return interval{}, false
	}
	if info.typ.Kind != kU32 || info.ref && !isIdent(x) {
		return interval{}, false
	}
	switch x := x.(type) {
	case *parenExpr:
		return e.rangeAt(x.X, depth+1)
	case *ident:
		return e.identRange(info.sym, depth)
	case *memberExpr:
		// local_invocation_id.x, .y, .z
		id, ok := x.X.(*ident)
		if !ok || len(x.Name) != 1 {
			return interval{}, false
		}
		xi := e.m.info[id]
		if xi == nil || xi.sym == nil || e.builtinOf(xi.sym) != "local_invocation_id" {
			return interval{}, false
		}
		d := int(x.Name[0]) - 'x'
		if d < 0 || d > 2 {
			return interval{}, false
		}
		wg := e.f.fn.wgSize[d]
		if wg.override != nil || wg.val < 1 {
			return interval{}, false
		}
		return interval{0, uint64(wg.val - 1)}, true
	case *binaryExpr:
		// An operand of unknown range is any u32 (x % 2u is still below 2).
		a, _ := e.rangeOrAll(x.X, depth+1)
		b, _ := e.rangeOrAll(x.Y, depth+1)
		return binaryRange(x.Op, a, b)
	case *callExpr:
		if info.call != callBuiltin {
			return interval{}, false
		}
		var rs []interval
		for _, a := range x.Args {
			r, _ := e.rangeOrAll(a, depth+1)
			rs = append(rs, r)
		}
		switch {
		case info.builtin == "min" && len(rs) == 2:
			return interval{min(rs[0].lo, rs[1].lo), min(rs[0].hi, rs[1].hi)}, true
		case info.builtin == "max" && len(rs) == 2:
			return interval{max(rs[0].lo, rs[1].lo), max(rs[0].hi, rs[1].hi)}, true
		case info.builtin == "select" && len(rs) == 3:
			// select(f, t, cond): either value.
			return interval{min(rs[0].lo, rs[1].lo), max(rs[0].hi, rs[1].hi)}, true
		}
	}
	return interval{}, false
}

func isIdent(x expr) bool { _, ok := x.(*ident); return ok }

// rangeOrAll is rangeOf, or every u32 when the range is unknown; ok tells
// which.
func (e *emitter) rangeOrAll(x expr, depth int) (interval, bool) {
	if r, ok := e.rangeAt(x, depth); ok {
		return r, true
	}
	return interval{0, math.MaxUint32}, false
}

// identRange is the range of a name: a let's initializer, a loop counter in
// its body, an invocation-index builtin parameter.
func (e *emitter) identRange(s *symbol, depth int) (interval, bool) {
	if s == nil {
		return interval{}, false
	}
	switch s.kind {
	case symLet:
		return e.rangeAt(s.init, depth+1)
	case symLocalVar:
		r, ok := e.f.counters[s]
		return r, ok
	case symParam:
		if e.builtinOf(s) == "local_invocation_index" {
			n := uint64(1)
			for _, d := range e.f.fn.wgSize {
				if d.override != nil || d.val < 1 {
					return interval{}, false
				}
				n *= uint64(d.val)
			}
			return interval{0, n - 1}, true
		}
	}
	return interval{}, false
}

// builtinOf is the @builtin of an entry point's parameter s, "" for any other
// symbol.
func (e *emitter) builtinOf(s *symbol) string {
	fn := e.f.fn
	if !fn.compute {
		return ""
	}
	for i, p := range fn.params {
		if p == s && i < len(fn.builtins) {
			return fn.builtins[i]
		}
	}
	return ""
}

// binaryRange is the range of a op b on u32 values in a and b, when no value
// of the operation can wrap around (else unknown).
func binaryRange(op operator, a, b interval) (interval, bool) {
	const top = math.MaxUint32
	switch op {
	case opAdd:
		if a.hi+b.hi > top {
			return interval{}, false
		}
		return interval{a.lo + b.lo, a.hi + b.hi}, true
	case opSub:
		if a.lo < b.hi {
			return interval{}, false // may wrap
		}
		return interval{a.lo - b.hi, a.hi - b.lo}, true
	case opMul:
		if a.hi != 0 && b.hi > top/a.hi {
			return interval{}, false
		}
		return interval{a.lo * b.lo, a.hi * b.hi}, true
	case opDiv:
		if b.lo == 0 {
			return interval{}, false // division by zero gives x in WGSL
		}
		return interval{a.lo / b.hi, a.hi / b.lo}, true
	case opRem:
		if b.lo == 0 {
			return interval{}, false
		}
		if a.hi < b.lo {
			return a, true
		}
		return interval{0, min(a.hi, b.hi-1)}, true
	case opAnd:
		return interval{0, min(a.hi, b.hi)}, true
	case opShr:
		if b.lo != b.hi || b.lo > 31 {
			return interval{}, false
		}
		return interval{a.lo >> b.lo, a.hi >> b.lo}, true
	case opShl:
		if b.lo != b.hi || b.lo > 31 || a.hi<<b.lo > top {
			return interval{}, false
		}
		return interval{a.lo << b.lo, a.hi << b.lo}, true
	}
	return interval{}, false
}

// loopCounter recognizes a for loop whose body may rely on its condition:
// `for (var i ...; i < B; ...)` or `i <= B` with i a u32 function variable
// declared by the loop, B of known range, and a body that never writes i or
// takes its address. It returns i and its range in the body.
func (e *emitter) loopCounter(s *forStmt) (*symbol, interval, bool) {
	d, ok := s.Init.(*declStmt)
	if !ok || d.Decl.Kind != "var" {
		return nil, interval{}, false
	}
	c, ok := s.Cond.(*binaryExpr)
	if !ok || (c.Op != opLt && c.Op != opLe) {
		return nil, interval{}, false
	}
	id, ok := c.X.(*ident)
	if !ok {
		return nil, interval{}, false
	}
	info := e.m.info[id]
	if info == nil || info.sym == nil || info.sym.kind != symLocalVar || info.sym.decl != d.Decl || info.typ.Kind != kU32 {
		return nil, interval{}, false
	}
	b, ok := e.rangeOf(c.Y)
	if !ok {
		return nil, interval{}, false
	}
	hi := b.hi
	if c.Op == opLt {
		if hi == 0 {
			return nil, interval{}, false // the body never runs
		}
		hi--
	}
	if e.writes(s.Body, info.sym) {
		return nil, interval{}, false
	}
	return info.sym, interval{0, hi}, true
}

// writes reports whether any statement under s assigns, increments or takes
// the address of the variable v (conservatively: any mention of v as an
// assignment's target or under &).
func (e *emitter) writes(s stmt, v *symbol) bool {
	found := false
	var visitX func(x expr, target bool)
	visitX = func(x expr, target bool) {
		if found || x == nil {
			return
		}
		switch x := x.(type) {
		case *ident:
			if target {
				if info := e.m.info[x]; info != nil && info.sym == v {
					found = true
				}
			}
		case *unaryExpr:
			visitX(x.X, target || x.Op == opAddrOf)
		case *binaryExpr:
			visitX(x.X, false)
			visitX(x.Y, false)
		case *callExpr:
			for _, a := range x.Args {
				visitX(a, false)
			}
		case *indexExpr:
			visitX(x.X, target)
			visitX(x.Index, false)
		case *memberExpr:
			visitX(x.X, target)
		case *parenExpr:
			visitX(x.X, target)
		}
	}
	var visit func(s stmt)
	visit = func(s stmt) {
		if found || s == nil {
			return
		}
		switch s := s.(type) {
		case *blockStmt:
			for _, t := range s.Stmts {
				visit(t)
			}
		case *declStmt:
			visitX(s.Decl.Init, false)
		case *assignStmt:
			visitX(s.LHS, true)
			visitX(s.RHS, false)
		case *incDecStmt:
			visitX(s.X, true)
		case *ifStmt:
			visitX(s.Cond, false)
			visit(s.Then)
			visit(s.Else)
		case *forStmt:
			visit(s.Init)
			visitX(s.Cond, false)
			visit(s.Update)
			visit(s.Body)
		case *whileStmt:
			visitX(s.Cond, false)
			visit(s.Body)
		case *loopStmt:
			visit(s.Body)
			visit(s.Continuing)
			visitX(s.BreakIf, false)
		case *switchStmt:
			visitX(s.Sel, false)
			for _, cl := range s.Clauses {
				visit(cl.Body)
			}
		case *returnStmt:
			visitX(s.X, false)
		case *callStmt:
			visitX(s.Call, false)
		case *breakStmt, *continueStmt, *constAssert:
		default:
			found = true // a statement kind this scan does not know: assume the worst
		}
	}
	visit(s)
	return found
}

// constLength is the element count of a vector, matrix or fixed-size array
// type, when it is a constant here (an override-sized array's, once the
// pipeline specialized the override).
func (e *emitter) constLength(t *wgslType) (uint64, bool) {
	switch {
	case t.Kind == kVec || t.Kind == kMat:
		return uint64(t.N), t.N > 0
	case t.Kind == kArray && t.CountOverride != nil:
		if info := e.m.info[t.CountOverride.expr]; info != nil && info.val != nil && info.val.i > 0 {
			return uint64(info.val.i), true
		}
		return 0, false
	case t.Kind == kArray && t.N > 0:
		return uint64(t.N), true
	}
	return 0, false
}
