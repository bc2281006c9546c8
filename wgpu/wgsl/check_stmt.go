package wgsl

import "slices"

func (c *checker) fnBody(f *function) {
	c.fn = f
	c.scopes = nil
	c.push() // parameters and the body's top-level declarations share one scope
	for _, p := range f.params {
		if p.typ != nil {
			c.declare(p)
		}
	}
	c.stmts(f.decl.Body.Stmts)
	c.pop()
	if f.result != nil && !returns(f.decl.Body.Stmts) {
		end := f.decl.Body.Pos
		c.errorf(end, "function '%s' must return a value on every path", f.decl.Name)
	}
	c.fn = nil
}

// returns reports whether a statement list always ends in a return (or never
// ends: a loop, or a for without a condition, without break).
func returns(stmts []stmt) bool {
	if len(stmts) == 0 {
		return false
	}
	for _, s := range stmts {
		if stmtReturns(s) {
			return true
		}
	}
	return false
}

func stmtReturns(s stmt) bool {
	switch s := s.(type) {
	case *returnStmt:
		return true
	case *blockStmt:
		return returns(s.Stmts)
	case *ifStmt:
		return s.Else != nil && returns(s.Then.Stmts) && stmtReturns(s.Else)
	case *loopStmt:
		return s.BreakIf == nil && !hasBreak(s.Body.Stmts)
	case *forStmt:
		return s.Cond == nil && !hasBreak(s.Body.Stmts) // for (;;) is a loop
	case *switchStmt:
		for _, cl := range s.Clauses {
			if !returns(cl.Body.Stmts) {
				return false
			}
		}
		return true
	}
	return false
}

// hasBreak reports a break that targets the enclosing loop.
func hasBreak(stmts []stmt) bool {
	for _, s := range stmts {
		switch s := s.(type) {
		case *breakStmt:
			return true
		case *blockStmt:
			if hasBreak(s.Stmts) {
				return true
			}
		case *ifStmt:
			if hasBreak(s.Then.Stmts) || s.Else != nil && hasBreak([]stmt{s.Else}) {
				return true
			}
		}
	}
	return false
}

func (c *checker) stmts(ss []stmt) {
	for _, s := range ss {
		c.stmt(s)
	}
}

func (c *checker) block(b *blockStmt) {
	c.push()
	c.stmts(b.Stmts)
	c.pop()
}

func (c *checker) stmt(s stmt) {
	switch s := s.(type) {
	case *blockStmt:
		c.block(s)
	case *declStmt:
		c.localDecl(s.Decl)
	case *assignStmt:
		c.assign(s)
	case *incDecStmt:
		x := c.expr(s.X)
		if x == nil {
			return
		}
		if !c.writable(s.X, x) {
			return
		}
		if x.typ.Kind != kI32 && x.typ.Kind != kU32 {
			c.errorf(s.Pos, "'%s' needs an i32 or u32 variable, not '%s'", s.Op, x.typ)
		}
	case *ifStmt:
		c.cond(s.Cond, "if")
		c.block(s.Then)
		if s.Else != nil {
			c.stmt(s.Else)
		}
	case *forStmt:
		c.push()
		if s.Init != nil {
			c.stmt(s.Init)
		}
		if s.Cond != nil {
			c.cond(s.Cond, "for")
		}
		if s.Update != nil {
			c.inCont++
			c.stmt(s.Update)
			c.inCont--
		}
		c.loops++
		c.block(s.Body)
		c.loops--
		c.pop()
	case *whileStmt:
		c.cond(s.Cond, "while")
		c.loops++
		c.block(s.Body)
		c.loops--
	case *loopStmt:
		if s.BreakIf == nil && !hasBreak(s.Body.Stmts) && !hasReturn(s.Body.Stmts) {
			c.errorf(s.Pos, "loop does not exit: it needs a break, a break if or a return")
		}
		c.push()
		c.loops++
		c.stmts(s.Body.Stmts)
		c.loops--
		if s.Continuing != nil {
			c.continuePastDecl(s)
			c.inCont++
			c.push() // break if sees the continuing block's names
			c.stmts(s.Continuing.Stmts)
			if s.BreakIf != nil {
				c.cond(s.BreakIf, "break if")
			}
			c.pop()
			c.inCont--
		}
		c.pop()
	case *switchStmt:
		c.switchStmt(s)
	case *breakStmt:
		if (c.loops == 0 || c.inCont > 0) && c.switches == 0 {
			c.errorf(s.Pos, "'break' must be inside a loop body or a switch")
		}
	case *continueStmt:
		if c.loops == 0 || c.inCont > 0 {
			c.errorf(s.Pos, "'continue' must be inside a loop body")
		}
	case *returnStmt:
		f := c.fn
		if s.X == nil {
			if f.result != nil {
				c.errorf(s.Pos, "missing return value of type '%s'", f.result)
			}
			return
		}
		x := c.rvalue(s.X)
		if x == nil {
			return
		}
		if f.result == nil {
			c.errorSpan(s.X, "function '%s' does not return a value", f.decl.Name)
			return
		}
		c.convertTo(s.X, f.result)
	case *callStmt:
		c.record(s.Call, c.call(s.Call, true))
	case *constAssert:
		c.constAssert(s)
	}
}

func (c *checker) cond(e expr, what string) {
	x := c.rvalue(e)
	if x == nil {
		return
	}
	if x.typ.Kind != kBool {
		c.errorSpan(e, "%s condition must be bool, not '%s'", what, x.typ)
	}
}

func (c *checker) localDecl(d *varDecl) {
	s := &symbol{name: d.Name, pos: d.NamePos, decl: d, init: d.Init}
	switch d.Kind {
	case "const":
		s.kind = symConst
	case "let":
		s.kind = symLet
	default:
		s.kind = symLocalVar
	}
	// Declare even on error (with a nil type) so later uses do not cascade.
	defer c.declare(s)
	c.out.localSyms[d] = s
	var t *wgslType
	if d.Type != nil {
		if t = c.typeOf(d.Type); t == nil {
			return
		}
	}
	switch d.Kind {
	case "const":
		s.kind = symConst
		x := c.constExpr(d.Init)
		if x == nil {
			return
		}
		if t != nil && !c.convertTo(d.Init, t) {
			return
		}
		if !x.typ.constructible() {
			c.errorSpan(d.Init, "a const must have a constructible type, not '%s'", x.typ)
			return
		}
		if !c.valueArrays(x.typ, d.NamePos, "const '"+d.Name+"'") {
			return
		}
		s.typ, s.val = x.typ, x.val
	case "let":
		s.kind = symLet
		x := c.rvalue(d.Init)
		if x == nil {
			return
		}
		if t != nil {
			if !c.convertTo(d.Init, t) {
				return
			}
		} else {
			c.materialize(d.Init)
		}
		if !x.typ.constructible() && x.typ.Kind != kPtr {
			c.errorSpan(d.Init, "a let must have a constructible or pointer type, not '%s'", x.typ)
			return
		}
		if !c.valueArrays(x.typ, d.NamePos, "let '"+d.Name+"'") {
			return
		}
		s.typ = x.typ
	case "var":
		s.kind = symLocalVar
		if d.Space != "" && d.Space != spaceFunction.String() {
			c.errorf(d.SpacePos+1, "variables inside functions must be in the function address space")
			return
		}
		if d.Access != "" {
			c.errorf(d.SpacePos+1, "function variables take no access mode")
			return
		}
		if d.Init != nil {
			x := c.rvalue(d.Init)
			if x == nil {
				return
			}
			if t != nil {
				if !c.convertTo(d.Init, t) {
					return
				}
			} else {
				c.materialize(d.Init)
				t = x.typ
			}
		}
		if t == nil {
			c.errorf(d.NamePos, "variable '%s' needs a type or an initializer", d.Name)
			return
		}
		if !t.constructible() {
			c.errorf(d.NamePos, "function variables need a constructible type, not '%s'", t)
			return
		}
		if !c.valueArrays(t, d.NamePos, "variable '"+d.Name+"'") {
			return
		}
		s.typ, s.space, s.access = t, spaceFunction, accessReadWrite
	}
}

// writable checks that x is a reference that may be written.
func (c *checker) writable(e expr, x *exprInfo) bool {
	if x.swizzleOf {
		for i, k := range x.swizzle {
			if slices.Contains(x.swizzle[:i], k) {
				c.errorSpan(e, "cannot assign to a swizzle that names a component twice")
				return false
			}
		}
	} else if !x.ref {
		c.errorSpan(e, "cannot assign to this expression (not a variable or memory location)")
		return false
	}
	if x.access == accessRead {
		c.errorSpan(e, "cannot write to a read-only %s variable", x.space)
		return false
	}
	if !x.typ.constructible() {
		c.errorSpan(e, "cannot assign a value of type '%s'", x.typ)
		return false
	}
	return true
}

func (c *checker) assign(s *assignStmt) {
	if s.LHS == nil {
		x := c.rvalue(s.RHS)
		if x != nil {
			c.materialize(s.RHS)
			c.valueArrays(x.typ, s.RHS.exprPos(), "the value assigned to '_'")
		}
		return
	}
	l := c.expr(s.LHS)
	r := c.rvalue(s.RHS)
	if l == nil || r == nil || !c.writable(s.LHS, l) {
		return
	}
	if s.Op == opAssign {
		c.convertTo(s.RHS, l.typ)
		return
	}
	op := s.Op
	lv := &exprInfo{typ: l.typ}
	t := c.binaryType(s.Pos, op, lv, r, s.RHS, nil)
	if t != nil && !c.constRHS(op, t, r, s.RHS) {
		return
	}
	if t != nil && t != l.typ {
		c.errorf(s.Pos, "'%s=' of '%s' and '%s' gives '%s', which cannot be stored in '%s'", s.Op, l.typ, r.typ, t, l.typ)
	}
}

// continuePastDecl enforces WGSL's rule that a continue may not skip a
// declaration of the loop body that the continuing block uses (its value would
// not exist on that path).
func (c *checker) continuePastDecl(l *loopStmt) {
	used := map[string]bool{}
	var names func(x any)
	names = func(x any) {
		switch x := x.(type) {
		case *ident:
			used[x.Name] = true
			for _, a := range x.Args {
				names(a)
			}
		case *unaryExpr:
			names(x.X)
		case *binaryExpr:
			names(x.X)
			names(x.Y)
		case *callExpr:
			for _, a := range x.Args {
				names(a)
			}
		case *indexExpr:
			names(x.X)
			names(x.Index)
		case *memberExpr:
			names(x.X)
		case *parenExpr:
			names(x.X)
		case []stmt:
			for _, s := range x {
				names(s)
			}
		case *blockStmt:
			names(x.Stmts)
		case *declStmt:
			if x.Decl.Init != nil {
				names(x.Decl.Init)
			}
		case *assignStmt:
			if x.LHS != nil {
				names(x.LHS)
			}
			names(x.RHS)
		case *incDecStmt:
			names(x.X)
		case *ifStmt:
			names(x.Cond)
			names(x.Then)
			if x.Else != nil {
				names(x.Else)
			}
		case *forStmt:
			if x.Init != nil {
				names(x.Init)
			}
			if x.Cond != nil {
				names(x.Cond)
			}
			if x.Update != nil {
				names(x.Update)
			}
			names(x.Body)
		case *whileStmt:
			names(x.Cond)
			names(x.Body)
		case *loopStmt:
			names(x.Body)
			if x.Continuing != nil {
				names(x.Continuing)
			}
			if x.BreakIf != nil {
				names(x.BreakIf)
			}
		case *switchStmt:
			names(x.Sel)
			for _, cl := range x.Clauses {
				names(cl.Body)
			}
		case *returnStmt:
			if x.X != nil {
				names(x.X)
			}
		case *callStmt:
			names(x.Call)
		}
	}
	names(l.Continuing.Stmts)
	if l.BreakIf != nil {
		names(l.BreakIf)
	}
	// The earliest continue targeting this loop.
	first := -1
	var find func(ss []stmt)
	find = func(ss []stmt) {
		for _, s := range ss {
			switch s := s.(type) {
			case *continueStmt:
				if first < 0 || s.Pos < first {
					first = s.Pos
				}
			case *blockStmt:
				find(s.Stmts)
			case *ifStmt:
				find(s.Then.Stmts)
				if s.Else != nil {
					find([]stmt{s.Else})
				}
			case *switchStmt:
				for _, cl := range s.Clauses {
					find(cl.Body.Stmts)
				}
			}
		}
	}
	find(l.Body.Stmts)
	if first < 0 {
		return
	}
	for _, s := range l.Body.Stmts {
		if d, ok := s.(*declStmt); ok && d.Decl.Pos > first && used[d.Decl.Name] {
			c.errorf(first, "this continue skips the declaration of '%s', which the continuing block uses", d.Decl.Name)
			return
		}
	}
}

func (c *checker) switchStmt(s *switchStmt) {
	x := c.rvalue(s.Sel)
	if x == nil {
		return
	}
	if !x.typ.isInt() || x.typ.Kind == kVec {
		c.errorSpan(s.Sel, "switch selector must be i32 or u32, not '%s'", x.typ)
		return
	}
	// The selector and all case values share one type.
	t := x.typ
	if t.isAbstract() {
		for _, cl := range s.Clauses {
			for _, e := range cl.Selectors {
				if e == nil {
					continue
				}
				if v := c.constExpr(e); v != nil && !v.typ.isAbstract() {
					t = v.typ
				}
			}
		}
		if t.isAbstract() {
			t = c.ts.scalar(kI32)
		}
		if !c.convertTo(s.Sel, t) {
			return
		}
	}
	seen := map[int64]bool{}
	defaults := 0
	for _, cl := range s.Clauses {
		for _, e := range cl.Selectors {
			if e == nil {
				defaults++
				if defaults == 2 {
					c.errorf(cl.Pos, "a switch may have only one default clause")
				}
				continue
			}
			v := c.out.info[e]
			if v == nil {
				if v = c.constExpr(e); v == nil {
					continue
				}
			}
			if v.val == nil {
				c.errorSpan(e, "case selectors must be const-expressions")
				continue
			}
			if !c.convertTo(e, t) {
				continue
			}
			if seen[v.val.i] {
				c.errorSpan(e, "duplicate case value %d", v.val.i)
			}
			seen[v.val.i] = true
		}
		c.switches++
		c.block(cl.Body)
		c.switches--
	}
	if defaults == 0 {
		c.errorf(s.Pos, "a switch needs a default clause")
	}
}

// hasReturn reports a return anywhere in the statements.
func hasReturn(stmts []stmt) bool {
	for _, s := range stmts {
		switch s := s.(type) {
		case *returnStmt:
			return true
		case *blockStmt:
			if hasReturn(s.Stmts) {
				return true
			}
		case *ifStmt:
			if hasReturn(s.Then.Stmts) || s.Else != nil && hasReturn([]stmt{s.Else}) {
				return true
			}
		case *forStmt:
			if hasReturn(s.Body.Stmts) {
				return true
			}
		case *whileStmt:
			if hasReturn(s.Body.Stmts) {
				return true
			}
		case *loopStmt:
			if hasReturn(s.Body.Stmts) {
				return true
			}
		case *switchStmt:
			for _, cl := range s.Clauses {
				if hasReturn(cl.Body.Stmts) {
					return true
				}
			}
		}
	}
	return false
}
