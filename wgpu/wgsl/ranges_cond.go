package wgsl

import "math"

// Conditions and loop counters of the range analysis (ranges.go).

// refine is env narrowed by the knowledge that c evaluated to truth: the
// lets, parameters and counters c compares with a u32 bound. It returns env
// itself when nothing narrows, else a copy.
func (r *ranges) refine(env map[*symbol]interval, c expr, truth bool) map[*symbol]interval {
	saved := r.env
	defer func() { r.env = saved }()
	r.env = env
	r.refineInto(c, truth, 0)
	return r.env
}

func (r *ranges) refineInto(c expr, truth bool, depth int) {
	if depth > maxRangeDepth {
		return
	}
	switch c := c.(type) {
	case *parenExpr:
		r.refineInto(c.X, truth, depth+1)
	case *unaryExpr:
		if c.Op == opNot {
			r.refineInto(c.X, !truth, depth+1)
		}
	case *binaryExpr:
		switch c.Op {
		case opLogAnd: // true: both are; false: either may be
			if truth {
				r.refineInto(c.X, true, depth+1)
				r.refineInto(c.Y, true, depth+1)
			}
		case opLogOr: // false: both are
			if !truth {
				r.refineInto(c.X, false, depth+1)
				r.refineInto(c.Y, false, depth+1)
			}
		case opLt, opLe, opGt, opGe, opEq:
			if !r.isU32(c.X) || !r.isU32(c.Y) {
				return
			}
			op := c.Op
			if !truth {
				op = negate(op)
			}
			// The second narrowing bounds y by x's narrowed range: sound,
			// both facts hold where c is true.
			r.narrowCmp(c.X, op, c.Y)
			r.narrowCmp(c.Y, flip(op), c.X)
		case opNe:
			if !truth {
				if r.isU32(c.X) && r.isU32(c.Y) {
					r.narrowCmp(c.X, opEq, c.Y)
					r.narrowCmp(c.Y, opEq, c.X)
				}
			}
		}
	}
}

// isU32 reports whether x is a u32 value or an integer constant.
func (r *ranges) isU32(x expr) bool {
	info := r.m.info[x]
	if info == nil || info.typ == nil {
		return false
	}
	return info.typ.Kind == kU32 || info.typ.Kind == kAbstractInt && info.val != nil
}

// negate is the comparison true exactly when op is false (u32 values: no NaN).
func negate(op operator) operator {
	switch op {
	case opLt:
		return opGe
	case opLe:
		return opGt
	case opGt:
		return opLe
	case opGe:
		return opLt
	case opEq:
		return opNe
	}
	return opNone
}

// flip is the comparison of the swapped operands: a op b == b flip(op) a.
func flip(op operator) operator {
	switch op {
	case opLt:
		return opGt
	case opLe:
		return opGe
	case opGt:
		return opLt
	case opGe:
		return opLe
	}
	return op
}

// narrowCmp narrows x, when it names a let, a parameter or a counter (values
// that cannot change while env holds), by x op y being true.
func (r *ranges) narrowCmp(x expr, op operator, y expr) {
	for {
		p, ok := x.(*parenExpr)
		if !ok {
			break
		}
		x = p.X
	}
	id, ok := x.(*ident)
	if !ok {
		return
	}
	info := r.m.info[id]
	if info == nil || info.sym == nil || info.typ == nil || info.typ.Kind != kU32 {
		return
	}
	s := info.sym
	switch s.kind {
	case symLet, symParam:
	case symLocalVar:
		if _, counter := r.env[s]; !counter {
			return // a variable may change
		}
	default:
		return
	}
	cur, known := r.identRange(s, 0)
	if !known {
		cur = allU32
	}
	b, _ := r.rangeOrAll(y, 0)
	n := cur
	switch op {
	case opLt:
		if b.hi == 0 {
			return // never true: dead code, nothing to gain
		}
		n.hi = min(n.hi, b.hi-1)
	case opLe:
		n.hi = min(n.hi, b.hi)
	case opGt:
		if b.lo == math.MaxUint32 {
			return
		}
		n.lo = max(n.lo, b.lo+1)
	case opGe:
		n.lo = max(n.lo, b.lo)
	case opEq:
		n.lo, n.hi = max(n.lo, b.lo), min(n.hi, b.hi)
	default:
		return
	}
	if n.lo > n.hi || n == cur {
		return
	}
	r.env = r.narrow(r.env)
	r.env[s] = n
}

// loopCounter recognizes the counter of a for loop: `for (var i ...; cond;
// update)` with i a u32 variable declared by the loop that neither the body
// nor cond writes or takes the address of. In the body, cond holds (the
// caller narrows by it); loopCounter gives the range that also follows from
// A and update: at least A when update only increases i without wrapping
// while cond holds, at most A when it only decreases it without wrapping
// (else every u32).
func (r *ranges) loopCounter(s *forStmt) (*symbol, interval, bool) {
	d, ok := s.Init.(*declStmt)
	if !ok || d.Decl.Kind != "var" || s.Cond == nil {
		return nil, interval{}, false
	}
	v := r.m.localSyms[d.Decl]
	if v == nil || v.kind != symLocalVar || v.typ == nil || v.typ.Kind != kU32 {
		return nil, interval{}, false
	}
	if writes(r.m, s.Body, v) || r.writesExpr(s.Cond, v) {
		return nil, interval{}, false
	}
	a := interval{0, 0} // no initializer: zero
	if d.Decl.Init != nil {
		a, _ = r.rangeOrAll(d.Decl.Init, 0)
	}
	// What cond alone says of i.
	probe := r.narrow(r.env)
	probe[v] = allU32
	c := r.refine(probe, s.Cond, true)[v]
	up, down, step, ok := r.update(s.Update, v)
	rg := allU32
	switch {
	case !ok:
	case up == opAdd && c.hi+step.hi <= math.MaxUint32,
		up == opMul && step.lo >= 1 && (c.hi == 0 || step.hi <= math.MaxUint32/c.hi),
		up == opShl && step.hi <= 31 && c.hi<<step.hi <= math.MaxUint32:
		rg.lo = a.lo // i only grows, never past cond's bound: no wrap
	case down == opSub && c.lo >= step.hi,
		down == opDiv, // i / 0 is i
		down == opShr && step.hi <= 31:
		rg.hi = a.hi // i only shrinks, never below 0
	}
	return v, rg, true
}

// update classifies a for loop's update of its counter v: i++ and i += c,
// i *= c, i <<= c (and i = i op c) move up by step c; i--, i -= c, i /= c,
// i >>= c down. ok is false for any other update, or a step that could
// write v itself.
func (r *ranges) update(s stmt, v *symbol) (up, down operator, step interval, ok bool) {
	var op operator
	var c expr
	switch s := s.(type) {
	case *incDecStmt:
		if !r.names(s.X, v) {
			return
		}
		if s.Op == opInc {
			return opAdd, opNone, interval{1, 1}, true
		}
		return opNone, opSub, interval{1, 1}, true
	case *assignStmt:
		if !r.names(s.LHS, v) {
			return
		}
		op, c = s.Op, s.RHS
		if op == opAssign { // i = i op c
			b, isBin := s.RHS.(*binaryExpr)
			if !isBin || !r.names(b.X, v) {
				return
			}
			op, c = b.Op, b.Y
		}
	default:
		return
	}
	if r.writesExpr(c, v) {
		return
	}
	step, _ = r.rangeOrAll(c, 0)
	switch op {
	case opAdd, opMul, opShl:
		return op, opNone, step, true
	case opSub, opDiv, opShr:
		return opNone, op, step, true
	}
	return
}

// names reports whether x is the name v.
func (r *ranges) names(x expr, v *symbol) bool {
	id, ok := x.(*ident)
	if !ok {
		return false
	}
	info := r.m.info[id]
	return info != nil && info.sym == v
}

// writesExpr reports whether evaluating x can write v: its address taken.
func (r *ranges) writesExpr(x expr, v *symbol) bool {
	return writes(r.m, &returnStmt{X: x}, v)
}

// writes reports whether any statement under s assigns, increments or takes
// the address of the variable v (conservatively: any mention of v as an
// assignment's target or under &), by m's symbols.
func writes(m *checked, s stmt, v *symbol) bool {
	found := false
	var visitX func(x expr, target bool)
	visitX = func(x expr, target bool) {
		if found || x == nil {
			return
		}
		switch x := x.(type) {
		case *ident:
			if target {
				if info := m.info[x]; info != nil && info.sym == v {
					found = true
				}
			}
		case *lit:
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
		default:
			found = true // an expression kind this scan does not know: assume the worst
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
