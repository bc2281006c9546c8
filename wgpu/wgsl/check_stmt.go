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
// ends: a loop without break).
func returns(stmts []Stmt) bool {
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

func stmtReturns(s Stmt) bool {
	switch s := s.(type) {
	case *Return:
		return true
	case *Block:
		return returns(s.Stmts)
	case *If:
		return s.Else != nil && returns(s.Then.Stmts) && stmtReturns(s.Else)
	case *Loop:
		return s.BreakIf == nil && !hasBreak(s.Body.Stmts)
	case *Switch:
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
func hasBreak(stmts []Stmt) bool {
	for _, s := range stmts {
		switch s := s.(type) {
		case *Break:
			return true
		case *Block:
			if hasBreak(s.Stmts) {
				return true
			}
		case *If:
			if hasBreak(s.Then.Stmts) || s.Else != nil && hasBreak([]Stmt{s.Else}) {
				return true
			}
		}
	}
	return false
}

func (c *checker) stmts(ss []Stmt) {
	for _, s := range ss {
		c.stmt(s)
	}
}

func (c *checker) block(b *Block) {
	c.push()
	c.stmts(b.Stmts)
	c.pop()
}

func (c *checker) stmt(s Stmt) {
	switch s := s.(type) {
	case *Block:
		c.block(s)
	case *DeclStmt:
		c.localDecl(s.Decl)
	case *Assign:
		c.assign(s)
	case *IncDec:
		x := c.expr(s.X)
		if x == nil {
			return
		}
		if !c.writable(s.X, x) {
			return
		}
		if x.typ.Kind != KI32 && x.typ.Kind != KU32 {
			c.errorf(s.Pos, "'%s' needs an i32 or u32 variable, not '%s'", s.Op, x.typ)
		}
	case *If:
		c.cond(s.Cond, "if")
		c.block(s.Then)
		if s.Else != nil {
			c.stmt(s.Else)
		}
	case *For:
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
	case *While:
		c.cond(s.Cond, "while")
		c.loops++
		c.block(s.Body)
		c.loops--
	case *Loop:
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
	case *Switch:
		c.switchStmt(s)
	case *Break:
		if (c.loops == 0 || c.inCont > 0) && c.switches == 0 {
			c.errorf(s.Pos, "'break' must be inside a loop body or a switch")
		}
	case *Continue:
		if c.loops == 0 || c.inCont > 0 {
			c.errorf(s.Pos, "'continue' must be inside a loop body")
		}
	case *Return:
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
	case *CallStmt:
		c.record(s.Call, c.call(s.Call, true))
	case *ConstAssert:
		c.constAssert(s)
	}
}

func (c *checker) cond(e Expr, what string) {
	x := c.rvalue(e)
	if x == nil {
		return
	}
	if x.typ.Kind != KBool {
		c.errorSpan(e, "%s condition must be bool, not '%s'", what, x.typ)
	}
}

func (c *checker) localDecl(d *VarDecl) {
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
	var t *Type
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
		if !x.typ.constructible() && x.typ.Kind != KPtr {
			c.errorSpan(d.Init, "a let must have a constructible or pointer type, not '%s'", x.typ)
			return
		}
		s.typ = x.typ
	case "var":
		s.kind = symLocalVar
		if d.Space != "" && d.Space != SpaceFunction.String() {
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
		s.typ, s.space, s.access = t, SpaceFunction, AccessReadWrite
	}
}

// writable checks that x is a reference that may be written.
func (c *checker) writable(e Expr, x *exprInfo) bool {
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
	if x.access == AccessRead {
		c.errorSpan(e, "cannot write to a read-only %s variable", x.space)
		return false
	}
	if !x.typ.constructible() {
		c.errorSpan(e, "cannot assign a value of type '%s'", x.typ)
		return false
	}
	return true
}

func (c *checker) assign(s *Assign) {
	if s.LHS == nil {
		x := c.rvalue(s.RHS)
		if x != nil {
			c.materialize(s.RHS)
		}
		return
	}
	l := c.expr(s.LHS)
	r := c.rvalue(s.RHS)
	if l == nil || r == nil || !c.writable(s.LHS, l) {
		return
	}
	if s.Op == OpAssign {
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
func (c *checker) continuePastDecl(l *Loop) {
	used := map[string]bool{}
	var names func(x any)
	names = func(x any) {
		switch x := x.(type) {
		case *Ident:
			used[x.Name] = true
			for _, a := range x.Args {
				names(a)
			}
		case *Unary:
			names(x.X)
		case *Binary:
			names(x.X)
			names(x.Y)
		case *Call:
			for _, a := range x.Args {
				names(a)
			}
		case *Index:
			names(x.X)
			names(x.Index)
		case *Member:
			names(x.X)
		case *Paren:
			names(x.X)
		case []Stmt:
			for _, s := range x {
				names(s)
			}
		case *Block:
			names(x.Stmts)
		case *DeclStmt:
			if x.Decl.Init != nil {
				names(x.Decl.Init)
			}
		case *Assign:
			if x.LHS != nil {
				names(x.LHS)
			}
			names(x.RHS)
		case *IncDec:
			names(x.X)
		case *If:
			names(x.Cond)
			names(x.Then)
			if x.Else != nil {
				names(x.Else)
			}
		case *For:
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
		case *While:
			names(x.Cond)
			names(x.Body)
		case *Loop:
			names(x.Body)
			if x.Continuing != nil {
				names(x.Continuing)
			}
			if x.BreakIf != nil {
				names(x.BreakIf)
			}
		case *Switch:
			names(x.Sel)
			for _, cl := range x.Clauses {
				names(cl.Body)
			}
		case *Return:
			if x.X != nil {
				names(x.X)
			}
		case *CallStmt:
			names(x.Call)
		}
	}
	names(l.Continuing.Stmts)
	if l.BreakIf != nil {
		names(l.BreakIf)
	}
	// The earliest continue targeting this loop.
	first := -1
	var find func(ss []Stmt)
	find = func(ss []Stmt) {
		for _, s := range ss {
			switch s := s.(type) {
			case *Continue:
				if first < 0 || s.Pos < first {
					first = s.Pos
				}
			case *Block:
				find(s.Stmts)
			case *If:
				find(s.Then.Stmts)
				if s.Else != nil {
					find([]Stmt{s.Else})
				}
			case *Switch:
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
		if d, ok := s.(*DeclStmt); ok && d.Decl.Pos > first && used[d.Decl.Name] {
			c.errorf(first, "this continue skips the declaration of '%s', which the continuing block uses", d.Decl.Name)
			return
		}
	}
}

func (c *checker) switchStmt(s *Switch) {
	x := c.rvalue(s.Sel)
	if x == nil {
		return
	}
	if !x.typ.isInt() || x.typ.Kind == KVec {
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
			t = c.ts.scalar(KI32)
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
func hasReturn(stmts []Stmt) bool {
	for _, s := range stmts {
		switch s := s.(type) {
		case *Return:
			return true
		case *Block:
			if hasReturn(s.Stmts) {
				return true
			}
		case *If:
			if hasReturn(s.Then.Stmts) || s.Else != nil && hasReturn([]Stmt{s.Else}) {
				return true
			}
		case *For:
			if hasReturn(s.Body.Stmts) {
				return true
			}
		case *While:
			if hasReturn(s.Body.Stmts) {
				return true
			}
		case *Loop:
			if hasReturn(s.Body.Stmts) {
				return true
			}
		case *Switch:
			for _, cl := range s.Clauses {
				if hasReturn(cl.Body.Stmts) {
					return true
				}
			}
		}
	}
	return false
}
