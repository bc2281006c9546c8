package wgsl

// Alias analysis, as the WGSL specification defines it for pointer
// parameters (and Tint implements it): at a call, two pointer arguments with
// the same root variable may not both be accessed by the callee when it
// writes through either of them, and a pointer argument rooted in a
// module-scope variable may not be written while the callee reads or writes
// that variable directly, nor read while the callee writes it. Reads and writes are tracked per function,
// transitively through calls, as root variables (module-scope variables and
// pointer parameters); indices do not matter, as in the specification.

// accessSets are the memory a function reads and writes: through its
// pointer parameters (by index) and in module-scope variables.
type accessSets struct {
	readParam, writeParam   map[int]bool
	readGlobal, writeGlobal map[*symbol]bool
}

type aliasCheck struct {
	c    *checker
	sets map[*function]*accessSets
	fn   *function
	cur  *accessSets
}

func (c *checker) checkAliasing() {
	a := &aliasCheck{c: c, sets: map[*function]*accessSets{}}
	var visit func(f *function)
	visit = func(f *function) {
		if a.sets[f] != nil {
			return
		}
		a.sets[f] = &accessSets{readParam: map[int]bool{}, writeParam: map[int]bool{}, readGlobal: map[*symbol]bool{}, writeGlobal: map[*symbol]bool{}}
		for _, g := range f.calls {
			visit(g)
		}
		a.fn, a.cur = f, a.sets[f]
		a.stmts(f.decl.Body.Stmts)
	}
	for _, f := range c.out.funcs {
		visit(f)
	}
}

// root is the variable or pointer parameter a memory view or pointer
// expression starts from (through pointer lets), or nil.
func (a *aliasCheck) root(e expr) *symbol {
	for {
		switch x := e.(type) {
		case *parenExpr:
			e = x.X
		case *indexExpr:
			e = x.X
		case *memberExpr:
			e = x.X
		case *unaryExpr:
			if x.Op != opDeref && x.Op != opAddrOf {
				return nil
			}
			e = x.X
		case *ident:
			s := a.info(x).sym
			if s != nil && s.kind == symLet && s.typ != nil && s.typ.Kind == kPtr && s.init != nil {
				e = s.init
				continue
			}
			return s
		default:
			return nil
		}
	}
}

func (a *aliasCheck) info(e expr) *exprInfo {
	if x := a.c.out.info[e]; x != nil {
		return x
	}
	return &exprInfo{}
}

// paramIndex is the index of pointer parameter s of the current function, or -1.
func (a *aliasCheck) paramIndex(s *symbol) int {
	for i, p := range a.fn.params {
		if p == s {
			return i
		}
	}
	return -1
}

// access records a read and/or a write of the memory rooted at s.
func (a *aliasCheck) access(s *symbol, read, write bool) {
	if s == nil {
		return
	}
	switch {
	case s.kind == symGlobalVar:
		a.cur.readGlobal[s] = a.cur.readGlobal[s] || read
		a.cur.writeGlobal[s] = a.cur.writeGlobal[s] || write
	case s.kind == symParam:
		if i := a.paramIndex(s); i >= 0 {
			a.cur.readParam[i] = a.cur.readParam[i] || read
			a.cur.writeParam[i] = a.cur.writeParam[i] || write
		}
	}
}

func (a *aliasCheck) stmts(ss []stmt) {
	for _, s := range ss {
		a.stmt(s)
	}
}

func (a *aliasCheck) stmt(s stmt) {
	switch s := s.(type) {
	case *blockStmt:
		a.stmts(s.Stmts)
	case *declStmt:
		if s.Decl.Init != nil {
			a.expr(s.Decl.Init)
		}
	case *assignStmt:
		if s.LHS == nil {
			a.expr(s.RHS)
			return
		}
		a.expr(s.RHS)
		a.access(a.root(s.LHS), s.Op != opAssign, true)
		a.indices(s.LHS)
	case *incDecStmt:
		a.access(a.root(s.X), true, true)
		a.indices(s.X)
	case *ifStmt:
		a.expr(s.Cond)
		a.stmts(s.Then.Stmts)
		if s.Else != nil {
			a.stmt(s.Else)
		}
	case *forStmt:
		if s.Init != nil {
			a.stmt(s.Init)
		}
		if s.Cond != nil {
			a.expr(s.Cond)
		}
		if s.Update != nil {
			a.stmt(s.Update)
		}
		a.stmts(s.Body.Stmts)
	case *whileStmt:
		a.expr(s.Cond)
		a.stmts(s.Body.Stmts)
	case *loopStmt:
		a.stmts(s.Body.Stmts)
		if s.Continuing != nil {
			a.stmts(s.Continuing.Stmts)
		}
		if s.BreakIf != nil {
			a.expr(s.BreakIf)
		}
	case *switchStmt:
		a.expr(s.Sel)
		for _, cl := range s.Clauses {
			a.stmts(cl.Body.Stmts)
		}
	case *returnStmt:
		if s.X != nil {
			a.expr(s.X)
		}
	case *callStmt:
		a.expr(s.Call)
	}
}

// indices walks the run-time indices of a memory view or pointer
// expression, which are read, without counting an access of the view.
func (a *aliasCheck) indices(e expr) {
	for {
		switch x := e.(type) {
		case *parenExpr:
			e = x.X
		case *indexExpr:
			a.expr(x.Index)
			e = x.X
		case *memberExpr:
			e = x.X
		case *unaryExpr:
			if x.Op != opDeref && x.Op != opAddrOf {
				a.expr(x)
				return
			}
			e = x.X
		default:
			return
		}
	}
}

// expr walks an expression whose value is used: a memory view in it is read.
func (a *aliasCheck) expr(e expr) {
	x := a.info(e)
	if x.val != nil {
		return
	}
	if x.ref {
		a.access(a.root(e), true, false)
		a.indices(e)
		return
	}
	switch e := e.(type) {
	case *parenExpr:
		a.expr(e.X)
	case *unaryExpr:
		if e.Op == opAddrOf {
			a.indices(e.X)
			return
		}
		a.expr(e.X)
	case *binaryExpr:
		a.expr(e.X)
		a.expr(e.Y)
	case *indexExpr:
		a.expr(e.X)
		a.expr(e.Index)
	case *memberExpr:
		a.expr(e.X)
	case *callExpr:
		a.call(e, x)
	}
}

func (a *aliasCheck) call(e *callExpr, x *exprInfo) {
	switch {
	case x.call == callFn && x.fn != nil:
		a.userCall(e, x.fn)
		return
	case x.call == callBuiltin:
		for _, arg := range e.Args {
			if t := a.info(arg).typ; t == nil || t.Kind != kPtr {
				a.expr(arg)
				continue
			}
			read, write := true, true
			if b := builtinTable[x.builtin]; b != nil {
				use := b.ptrUse
				read, write = use == ptrReadWrite || use == ptrRead, use == ptrReadWrite || use == ptrWrite
			}
			a.access(a.root(arg), read, write)
			a.indices(arg)
		}
		return
	}
	for _, arg := range e.Args {
		a.expr(arg)
	}
}

func (a *aliasCheck) userCall(e *callExpr, f *function) {
	cs := a.sets[f]
	roots := make([]*symbol, len(e.Args))
	for i, arg := range e.Args {
		if i >= len(f.params) || f.params[i].typ == nil || f.params[i].typ.Kind != kPtr {
			a.expr(arg)
			continue
		}
		roots[i] = a.root(arg)
		a.access(roots[i], cs.readParam[i], cs.writeParam[i])
		a.indices(arg)
	}
	for g := range cs.readGlobal {
		a.access(g, true, false)
	}
	for g := range cs.writeGlobal {
		a.access(g, false, true)
	}
	for j, rj := range roots {
		if rj == nil {
			continue
		}
		for i, ri := range roots[:j] {
			used := func(k int) bool { return cs.readParam[k] || cs.writeParam[k] }
			if ri == rj && (cs.writeParam[i] && used(j) || cs.writeParam[j] && used(i)) {
				a.c.errorSpanNote(e.Args[j], e.Args[i], "the other pointer argument to the same variable",
					"invalid aliased pointer argument: '%s' is also passed as argument %d, and '%s' accesses both and writes through one", rj.name, i+1, f.decl.Name)
			}
		}
		if rj.kind != symGlobalVar {
			continue
		}
		switch {
		case cs.writeParam[j] && (cs.readGlobal[rj] || cs.writeGlobal[rj]):
			a.c.errorSpan(e.Args[j], "invalid aliased pointer argument: '%s' writes through it and also accesses '%s' directly", f.decl.Name, rj.name)
		case cs.readParam[j] && cs.writeGlobal[rj]:
			a.c.errorSpan(e.Args[j], "invalid aliased pointer argument: '%s' reads through it and also writes '%s' directly", f.decl.Name, rj.name)
		}
	}
}
