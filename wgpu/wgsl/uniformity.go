package wgsl

// Uniformity analysis, a conservative version of the WGSL specification's:
// barriers (workgroupBarrier, storageBarrier, workgroupUniformLoad) must be
// reached by all invocations of a workgroup together, so they may not sit
// under control flow that depends on a value that can differ between
// invocations (and workgroupUniformLoad's pointer must name the same
// location in all of them). With the subgroup_uniformity language feature the analysis
// runs twice, once per uniformity scope: the workgroup for barriers, the
// subgroup for subgroup and quad operations (which need subgroup-uniform
// control flow, and subgroupShuffleUp, Down and Xor a subgroup-uniform
// amount), where subgroup_id is uniform too and the subgroup reductions
// (subgroupAdd, subgroupBallot, ...) are as uniform as their arguments.
// Non-uniform sources are the invocation-specific builtins,
// reads of read_write storage, workgroup and private variables, atomics,
// subgroup operations and reads through pointers other than pointer
// parameters into function memory, which are tracked like parameters. Local variables are
// tracked flow-insensitively (a variable is non-uniform if any assignment to
// it is), iterated to a fixed point. Function summaries record which
// parameters must be uniform and whether a call needs uniform control flow.

// taint is a set of reasons a value or control flow may be non-uniform:
// bit 63 is "non-uniform", bits 0..62 "depends on parameter i".
type taint uint64

const nonUniform taint = 1 << 63

type fnSummary struct {
	needsUniformCF bool  // the function (transitively) calls a barrier
	uniformParams  taint // parameters that must be uniform at call sites
	result         taint
	// ptrStores holds, per pointer parameter into function memory, the taint
	// of what the function stores through it.
	ptrStores map[int]taint
	// uniformPtrParams holds the pointer parameters that must be uniform
	// as pointers (see ptrTaint): those a subgroup matrix builtin or
	// workgroupUniformLoad takes.
	uniformPtrParams taint
	// matrixCF marks a function that needs uniform control flow for a
	// subgroup matrix builtin it (transitively) calls.
	matrixCF bool
}

// uniformityScope is the set of invocations a pass of the analysis asks to
// agree.
type uniformityScope int

const (
	scopeWorkgroup uniformityScope = iota // barriers
	scopeSubgroup                         // subgroup and quad operations
)

// subgroupReductions are the subgroup operations whose result is uniform in
// the subgroup scope when their arguments are (the others' results differ
// between the invocations of a subgroup: scans, shuffles, elect, quad).
var subgroupReductions = map[string]bool{
	"subgroupAdd": true, "subgroupMul": true, "subgroupMin": true, "subgroupMax": true,
	"subgroupAnd": true, "subgroupOr": true, "subgroupXor": true,
	"subgroupAll": true, "subgroupAny": true, "subgroupBallot": true,
	"subgroupBroadcast": true, "subgroupBroadcastFirst": true,
}

// subgroupUniformArg gives, for the subgroup operations that need one, the
// argument that must be subgroup-uniform.
var subgroupUniformArg = map[string]int{"subgroupShuffleUp": 1, "subgroupShuffleDown": 1, "subgroupShuffleXor": 1}

type uniformity struct {
	scope  uniformityScope
	c      *checker
	sums   map[*function]*fnSummary
	fn     *function
	sum    *fnSummary
	vars   map[*symbol]taint
	loops  map[stmt]taint // taint added to a loop body by non-uniform break/continue
	grew   bool
	report bool
	diag   diagFilters // in force at the statement being analysed
}

// checkUniformity runs the analysis in the workgroup scope and, for a
// module that enables subgroups, in the subgroup scope.
func (c *checker) checkUniformity() {
	c.uniformityPass(scopeWorkgroup)
	if c.out.enables["subgroups"] || c.out.enables[matrixExtension] {
		c.uniformityPass(scopeSubgroup)
	}
}

func (c *checker) uniformityPass(scope uniformityScope) {
	u := &uniformity{scope: scope, c: c, sums: map[*function]*fnSummary{}}
	done := map[*function]bool{}
	var visit func(f *function)
	visit = func(f *function) {
		if done[f] {
			return
		}
		done[f] = true
		for _, g := range f.calls {
			visit(g)
		}
		u.function(f)
	}
	for _, f := range c.out.funcs {
		visit(f)
	}
}

func (u *uniformity) function(f *function) {
	u.fn, u.sum = f, &fnSummary{}
	u.diag = u.c.diag.with(f.diag)
	u.sums[f] = u.sum
	u.vars = map[*symbol]taint{}
	u.loops = map[stmt]taint{}
	for i, p := range f.params {
		switch {
		case f.compute:
			bis := []string{f.builtins[i]}
			if p.typ != nil && p.typ.Kind == kStruct {
				bis = p.typ.Struct.Builtins
			}
			for _, bi := range bis {
				v := builtinValues[bi]
				if !v.uniform && !(v.subgroupUniform && u.scope == scopeSubgroup) {
					u.vars[p] = nonUniform
				}
			}
		case i < 63:
			u.vars[p] = taint(1) << i
		default:
			u.vars[p] = nonUniform
		}
	}
	for range 32 {
		u.grew = false
		u.body(f.decl.Body, 0)
		if !u.grew {
			break
		}
	}
	u.report = true
	*u.sum = fnSummary{}
	u.body(f.decl.Body, 0)
	u.report = false
}

func (u *uniformity) set(s *symbol, t taint) {
	if s == nil {
		return
	}
	if old := u.vars[s]; old|t != old {
		u.vars[s] = old | t
		u.grew = true
	}
}

// stmts visits a statement list under control-flow taint cf and returns the
// taints that flow out of it: after a return (ret) to the end of the
// function, after a break (brk) to the end of the enclosing loop or switch,
// after a continue (cont) to the end of the enclosing loop body.
func (u *uniformity) stmts(ss []stmt, cf taint) (ret, brk, cont taint) {
	for _, s := range ss {
		r, b, c := u.stmt(s, cf)
		ret, brk, cont = ret|r, brk|b, cont|c
		cf |= r | b | c
	}
	return ret, brk, cont
}

// body visits a statement's body block, under the block's @diagnostic filters.
func (u *uniformity) body(b *blockStmt, cf taint) (ret, brk, cont taint) {
	if d := u.c.stmtDiag[b]; d != nil {
		saved := u.diag
		u.diag = saved.with(d)
		defer func() { u.diag = saved }()
	}
	return u.stmts(b.Stmts, cf)
}

func (u *uniformity) stmt(s stmt, cf taint) (ret, brk, cont taint) {
	if d := u.c.stmtDiag[s]; d != nil {
		saved := u.diag
		u.diag = saved.with(d)
		defer func() { u.diag = saved }()
	}
	switch s := s.(type) {
	case *blockStmt:
		return u.stmts(s.Stmts, cf)
	case *declStmt:
		if s.Decl.Init != nil && s.Decl.Kind != "const" {
			t := u.expr(s.Decl.Init, cf)
			if info := u.c.out.info[s.Decl.Init]; info != nil && info.typ != nil && info.typ.Kind == kPtr {
				t = u.ptrTaint(s.Decl.Init, cf) // a pointer let: which memory it names
			}
			u.set(u.c.out.localSyms[s.Decl], t|cf)
		}
	case *assignStmt:
		t := u.expr(s.RHS, cf) | cf
		if s.LHS != nil {
			u.store(s.LHS, t, cf)
		}
	case *incDecStmt:
		u.store(s.X, cf, cf)
	case *ifStmt:
		inner := cf | u.expr(s.Cond, cf)
		r, b, c := u.body(s.Then, inner)
		if s.Else != nil {
			r2, b2, c2 := u.stmt(s.Else, inner)
			r, b, c = r|r2, b|b2, c|c2
		}
		return r, b, c
	case *forStmt:
		if s.Init != nil {
			ret, _, _ = u.stmt(s.Init, cf)
		}
		body := cf | u.loops[s]
		if s.Cond != nil {
			body |= u.expr(s.Cond, body)
		}
		r, b, c := u.body(s.Body, body)
		u.growLoop(s, r|b|c)
		if s.Update != nil {
			u.stmt(s.Update, body|b|c)
		}
		return ret | r, 0, 0
	case *whileStmt:
		body := cf | u.loops[s]
		body |= u.expr(s.Cond, body)
		r, b, c := u.body(s.Body, body)
		u.growLoop(s, r|b|c)
		return r, 0, 0
	case *loopStmt:
		body := cf | u.loops[s]
		r, b, c := u.body(s.Body, body)
		u.growLoop(s, r|b|c)
		if s.Continuing != nil {
			r2, _, _ := u.body(s.Continuing, body|b|c)
			r |= r2
		}
		if s.BreakIf != nil {
			u.growLoop(s, u.expr(s.BreakIf, body|b|c))
		}
		return r, 0, 0
	case *switchStmt:
		inner := cf | u.expr(s.Sel, cf)
		for _, cl := range s.Clauses {
			r, _, c := u.body(cl.Body, inner) // a break ends the switch: control reconverges after it
			ret, cont = ret|r, cont|c
		}
		return ret, 0, cont
	case *breakStmt:
		return 0, cf, 0
	case *continueStmt:
		return 0, 0, cf
	case *returnStmt:
		if s.X != nil {
			u.sum.result |= u.expr(s.X, cf) | cf
		}
		return cf, 0, 0
	case *callStmt:
		u.expr(s.Call, cf)
	}
	return 0, 0, 0
}

// ptrParam returns the pointer parameter into function memory that x names,
// with its index, or nil: the uniformity of the memory behind it is tracked
// as the parameter's own (its bit stands for the argument's variable).
func (u *uniformity) ptrParam(x expr) (*symbol, int) {
	id, ok := unparen(x).(*ident)
	if !ok || u.fn.compute {
		return nil, 0
	}
	info := u.c.out.info[id]
	if info == nil || info.sym == nil || info.sym.kind != symParam {
		return nil, 0
	}
	if t := info.sym.typ; t == nil || t.Kind != kPtr || t.Space != spaceFunction {
		return nil, 0
	}
	for i, p := range u.fn.params {
		if p == info.sym && i < 63 {
			return p, i
		}
	}
	return nil, 0
}

// deref is the taint of a value read through pointer x. Memory behind a
// pointer parameter into function memory is tracked as the parameter's own;
// uniform, push-constant and read-only storage memory is the same for all
// invocations, so what a pointer into it reads is as uniform as the pointer
// (its root and indices); other memory (workgroup, read_write storage,
// private) may differ between invocations, as the specification says.
func (u *uniformity) deref(x expr, cf taint) taint {
	if p, _ := u.ptrParam(x); p != nil {
		return u.vars[p]
	}
	if info := u.c.out.info[x]; info != nil && info.typ != nil && info.typ.Kind == kPtr {
		switch pt := info.typ; {
		case pt.Space == spaceUniform || pt.Space == spacePushConstant,
			pt.Space == spaceStorage && pt.Access == accessRead:
			return u.expr(x, cf)
		}
	}
	return nonUniform
}

func (u *uniformity) growLoop(s stmt, t taint) {
	if old := u.loops[s]; old|t != old {
		u.loops[s] = old | t
		u.grew = true
	}
}

// store records a write of a value with taint t into the memory named by lhs.
func (u *uniformity) store(lhs expr, t, cf taint) {
	for {
		switch x := lhs.(type) {
		case *parenExpr:
			lhs = x.X
			continue
		case *indexExpr:
			t |= u.expr(x.Index, cf)
			lhs = x.X
			continue
		case *memberExpr:
			lhs = x.X
			continue
		case *unaryExpr:
			if x.Op == opDeref {
				lhs = x.X
				continue
			}
		case *ident:
			if info := u.c.out.info[x]; info != nil && info.sym != nil && info.sym.kind == symLocalVar {
				u.set(info.sym, t)
			} else if p, i := u.ptrParam(x); p != nil {
				u.set(p, t)
				if u.sum.ptrStores == nil {
					u.sum.ptrStores = map[int]taint{}
				}
				u.sum.ptrStores[i] |= t
			}
		}
		return
	}
}

func (u *uniformity) expr(e expr, cf taint) taint {
	info := u.c.out.info[e]
	if info == nil || info.val != nil {
		return 0
	}
	switch x := e.(type) {
	case *parenExpr:
		return u.expr(x.X, cf)
	case *ident:
		s := info.sym
		if s == nil {
			return 0
		}
		switch s.kind {
		case symConst, symOverride:
			return 0
		case symGlobalVar:
			switch {
			case s.space == spaceUniform || s.space == spacePushConstant:
				return 0
			case s.space == spaceStorage && s.access == accessRead:
				return 0
			}
			return nonUniform
		}
		return u.vars[s]
	case *unaryExpr:
		t := u.expr(x.X, cf)
		if x.Op == opDeref {
			return u.deref(x.X, cf)
		}
		return t
	case *binaryExpr:
		return u.expr(x.X, cf) | u.expr(x.Y, cf)
	case *indexExpr:
		if info.autoDeref {
			return u.deref(x.X, cf) | u.expr(x.Index, cf)
		}
		return u.expr(x.X, cf) | u.expr(x.Index, cf)
	case *memberExpr:
		if info.autoDeref {
			return u.deref(x.X, cf)
		}
		return u.expr(x.X, cf)
	case *callExpr:
		return u.call(x, info, cf)
	}
	return nonUniform
}

func (u *uniformity) call(c *callExpr, info *exprInfo, cf taint) taint {
	args := make([]taint, len(c.Args))
	var all taint
	for i, a := range c.Args {
		args[i] = u.expr(a, cf)
		all |= args[i]
	}
	switch info.call {
	case callFn:
		sum := u.sums[info.fn]
		if sum == nil {
			return nonUniform
		}
		if sum.needsUniformCF {
			u.sum.matrixCF = u.sum.matrixCF || sum.matrixCF
			what := "a barrier"
			switch {
			case sum.matrixCF:
				what = "a subgroup matrix builtin"
			case u.scope == scopeSubgroup:
				what = "a subgroup operation"
			}
			u.requireUniformCF(c, cf, "'"+c.Fn.Name+"' calls "+what+", so it")
		}
		for i, t := range args {
			if i < 63 && sum.uniformParams&(1<<i) != 0 {
				if pt := info.fn.params[i].typ; sum.uniformPtrParams&(1<<i) != 0 && pt != nil && pt.Kind == kPtr && pt.Space != spaceFunction {
					t = u.ptrTaint(c.Args[i], cf) // a pointer the callee needs uniform, not the memory
					u.sum.uniformPtrParams |= t &^ nonUniform
				}
				u.requireUniform(c.Args[i], t, "")
			}
			// What the callee stores through a pointer argument lands in the variable.
			if pt := info.fn.params[i].typ; pt != nil && pt.Kind == kPtr {
				st, stored := sum.ptrStores[i]
				if pt.Space != spaceFunction {
					st, stored = nonUniform, true
				}
				if stored {
					r := st & nonUniform
					for j := range args {
						if j < 63 && st&(1<<j) != 0 {
							r |= args[j]
						}
					}
					if un, ok := unparen(c.Args[i]).(*unaryExpr); ok && un.Op == opAddrOf {
						u.store(un.X, r|cf, cf)
					} else {
						u.store(c.Args[i], r|cf, cf)
					}
				}
			}
		}
		r := sum.result & nonUniform
		for i := range args {
			if i < 63 && sum.result&(1<<i) != 0 {
				r |= args[i]
			}
		}
		return r
	case callConstruct, callZero:
		if info.typ.Kind == kSubgroupMatrix {
			return u.matrixCall(c, []int{0}, cf)
		}
	case callBuiltin:
		b := builtinTable[c.Fn.Name]
		switch {
		case b == nil:
		case b.matrix:
			return u.matrixCall(c, matrixUniformArgs(c), cf)
		case b.subgroup:
			if u.scope != scopeSubgroup {
				return nonUniform
			}
			if u.diag.on("subgroup_uniformity") {
				u.requireUniformCF(c, cf, "'"+c.Fn.Name+"'")
				if i, ok := subgroupUniformArg[c.Fn.Name]; ok && i < len(args) {
					u.requireUniform(c.Args[i], args[i], c.Fn.Name)
				}
			}
			if subgroupReductions[c.Fn.Name] {
				return all
			}
			return nonUniform
		case b.flow == flowBarrier:
			if u.scope == scopeWorkgroup {
				u.requireUniformCF(c, cf, "'"+c.Fn.Name+"'")
				if len(c.Args) == 1 { // workgroupUniformLoad: the pointer must be uniform
					t := u.ptrTaint(c.Args[0], cf)
					u.sum.uniformPtrParams |= t &^ nonUniform
					u.requireUniform(c.Args[0], t, c.Fn.Name)
				}
			}
			return 0
		case b.flow == flowUniform:
			return 0
		case b.flow == flowNonUniform:
			return nonUniform
		}
	}
	return all
}

func (u *uniformity) requireUniformCF(c *callExpr, cf taint, what string) {
	u.sum.needsUniformCF = true
	if cf&nonUniform != 0 {
		if !u.report {
			return
		}
		if u.scope == scopeSubgroup {
			u.c.errorf(c.Pos, "%s must only be called from subgroup uniform control flow: an enclosing condition, or an earlier return, break or continue, depends on a value that can differ within a subgroup (such as subgroup_invocation_id or a read_write storage read)", what)
		} else {
			u.c.errorf(c.Pos, "%s must only be called from uniform control flow: an enclosing condition, or an earlier return, break or continue, depends on a non-uniform value (such as local_invocation_index or a read_write storage read)", what)
		}
		return
	}
	u.sum.uniformParams |= cf
}

// requireUniform records that argument arg, of taint t, must be uniform:
// for the builtin named, or ("") for a function that needs it uniform.
func (u *uniformity) requireUniform(arg expr, t taint, builtin string) {
	if t&nonUniform != 0 {
		switch {
		case !u.report:
		case builtin != "" && u.scope == scopeWorkgroup:
			u.c.errorf(arg.exprPos(), "this argument of '%s' must be uniform (the same for every invocation of the workgroup)", builtin)
		case builtin != "":
			u.c.errorf(arg.exprPos(), "this argument of '%s' must be subgroup uniform (the same for every invocation of the subgroup)", builtin)
		case u.scope == scopeSubgroup:
			u.c.errorf(arg.exprPos(), "this argument must be subgroup uniform, since the function needs it so for a subgroup operation")
		default:
			u.c.errorf(arg.exprPos(), "this argument must be uniform, since the function uses it to decide whether to reach a barrier")
		}
		return
	}
	u.sum.uniformParams |= t
}
