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
// and subgroup operations; a read through a pointer into function memory
// (a let, a parameter) is as uniform as what it points to. Local
// variables (and the memory behind pointer parameters into function memory)
// are tracked flow-sensitively, as the specification's analysis does: a
// variable's uniformity at each point is that of the value last stored to
// it on the paths that reach the point, the paths joined where control flow
// joins, loops iterated to a fixed point. A store replaces the variable's
// uniformity when it writes the whole variable with '=', and adds to it
// otherwise (a component, an element, a compound assignment, a call that may
// store through a pointer); a store through a pointer let or parameter
// lands in the variable the pointer names. Function summaries record which
// parameters must be uniform and whether a call needs uniform control flow.

// taint is a set of reasons a value or control flow may be non-uniform:
// bit 63 is "non-uniform", bits 0..62 "depends on parameter i".
type taint uint64

const nonUniform taint = 1 << 63

// varState is the uniformity of the function's variables at a point: local
// variables, lets, parameters, and the memory behind pointer parameters
// into function memory (as the parameter's own), by their number in
// uniformity.index; a variable past its end is uniform. A state is never nil
// (nil stands for "no path reaches here").
type varState []taint

// clone is a copy of v, never nil.
func (v varState) clone() varState {
	c := make(varState, len(v))
	copy(c, v)
	return c
}

// or adds src's taints to v, which it returns (longer where src is).
func (v varState) or(src varState) varState {
	for len(v) < len(src) {
		v = append(v, 0)
	}
	for i, t := range src {
		v[i] |= t
	}
	return v
}

// get is the taint of variable s in state v.
func (v varState) get(u *uniformity, s *symbol) taint {
	if i, ok := u.index[s]; ok && i < len(v) {
		return v[i]
	}
	return 0
}

// join adds the state src, which reached the same point by another path, to
// *dst (nil: no path has reached it yet).
func join(dst *varState, src varState) {
	if *dst == nil {
		*dst = src.clone()
		return
	}
	*dst = (*dst).or(src)
}

type fnSummary struct {
	needsUniformCF bool  // the function (transitively) calls a barrier
	uniformParams  taint // parameters that must be uniform at call sites
	result         taint
	// ptrStores holds, per pointer parameter into function memory that the
	// function stores through, the taint of what that memory holds where
	// the function returns (bit i: the value it held on entry, for a path
	// that keeps it).
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
	index  map[*symbol]int   // the function's variables, numbered as they are met
	vars   varState          // at the statement being analysed
	live   bool              // whether control reaches that statement (else vars is that of the code before it)
	brk    varState          // joined at the breaks out of the innermost loop or switch so far
	cont   varState          // joined at the continues of the innermost loop so far
	exit   varState          // joined where the function returns
	stored taint             // the pointer parameters stored through (bit i: parameter i)
	loops  map[stmt]taint    // taint added to a loop body by non-uniform break/continue
	loopIn map[stmt]varState // the state at a loop's start, joined over its entry and its iterations
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
	u.index = map[*symbol]int{}
	u.vars = varState{}
	u.loops = map[stmt]taint{}
	u.loopIn = map[stmt]varState{}
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
					u.assign(p, nonUniform)
				}
			}
		case i < 63:
			u.assign(p, taint(1)<<i)
		default:
			u.assign(p, nonUniform)
		}
	}
	entry := u.vars
	// Each pass adds to the loops' states and taints (a finite lattice), so
	// the passes reach a fixed point; the last pass reports.
	run := func() {
		u.vars, u.live, u.brk, u.cont, u.exit, u.stored = entry.clone(), true, nil, nil, nil, 0
		u.body(f.decl.Body, 0)
		if u.live {
			join(&u.exit, u.vars)
		}
	}
	for pass := 0; ; pass++ {
		u.grew = false
		run()
		if !u.grew {
			break
		}
		if pass == maxUniformityPasses {
			u.saturate()
			break
		}
	}
	u.report = true
	*u.sum = fnSummary{}
	run()
	u.report = false
	for i, p := range f.params {
		if i < 63 && u.stored&(1<<i) != 0 {
			if u.sum.ptrStores == nil {
				u.sum.ptrStores = map[int]taint{}
			}
			u.sum.ptrStores[i] = u.exit.get(u, p) // what the memory holds when the function returns
		}
	}
}

// maxUniformityPasses bounds the passes over a function; a function that
// has not reached its fixed point by then (far beyond any real one) has
// every loop's state made non-uniform, which is a fixed point.
var maxUniformityPasses = 1000 // a variable for the tests

// saturate makes every loop's starting state, for every variable met, and
// body depend on everything, which later passes cannot add to.
func (u *uniformity) saturate() {
	for s := range u.loopIn {
		all := make(varState, len(u.index))
		for i := range all {
			all[i] = ^taint(0)
		}
		u.loopIn[s] = all
		u.loops[s] = ^taint(0)
	}
}

// put records a store of a value of taint t into variable s: over its whole
// (kill) or a part of it.
func (u *uniformity) put(s *symbol, t taint, kill bool) {
	if s == nil {
		return
	}
	i, ok := u.index[s]
	if !ok {
		i = len(u.index)
		u.index[s] = i
	}
	for len(u.vars) <= i {
		u.vars = append(u.vars, 0)
	}
	if kill {
		u.vars[i] = t
	} else {
		u.vars[i] |= t
	}
}

// assign records a store of a value of taint t over the whole of s.
func (u *uniformity) assign(s *symbol, t taint) { u.put(s, t, true) }

// loopStart is the state at the start of loop s: the state it is entered
// with joined with what its earlier iterations (in this pass and the earlier
// ones) bring back to its start.
func (u *uniformity) loopStart(s stmt) varState {
	if u.loopIn[s] == nil {
		u.loopIn[s] = varState{}
	}
	// Not a reason for another pass: this pass goes on from the joined state.
	u.joinLoop(s, u.vars)
	return u.loopIn[s].clone()
}

// loopBack joins state back into the start of loop s; where that adds to
// it, the loop's body must be analysed again: another pass.
func (u *uniformity) loopBack(s stmt, back varState) {
	if u.joinLoop(s, back) {
		u.grew = true
	}
}

// joinLoop joins st into the start of loop s and reports whether that added
// to it (a variable missing from a state is uniform).
func (u *uniformity) joinLoop(s stmt, st varState) bool {
	in, grew := u.loopIn[s], false
	for i, t := range st {
		if i >= len(in) {
			in = append(in, 0)
		}
		if in[i]|t != in[i] {
			in[i] |= t
			grew = true
		}
	}
	u.loopIn[s] = in
	return grew
}

// loop analyses the part of a loop statement after its start: body runs
// the iteration (body, continuing or update, break-if) from the state at
// the start and returns the state it brings back to the start (nil: none)
// and the state it leaves the loop with (besides breaks; nil: none). The
// state after the loop joins those exits and the breaks.
func (u *uniformity) loop(s stmt, body func() (back, exit varState)) {
	brk, cont := u.brk, u.cont
	u.brk, u.cont = nil, nil
	live := u.live
	u.vars = u.loopStart(s)
	back, exit := body()
	if back != nil {
		u.loopBack(s, back)
	}
	if u.brk != nil {
		join(&exit, u.brk)
	}
	u.brk, u.cont = brk, cont
	u.live = live && exit != nil
	if exit == nil { // nothing leaves the loop: the code after it is unreachable
		exit = u.vars
	}
	u.vars = exit
}

// endBody is the state at the end of a loop body that flows to its update
// or continuing block: the body's end when reachable, joined with its
// continues.
func (u *uniformity) endBody() varState {
	var st varState
	if u.live {
		st = u.vars.clone()
	}
	if u.cont != nil {
		join(&st, u.cont)
	}
	return st
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
		if s.Decl.Kind == "const" {
			break
		}
		t := cf // a var without an initializer: the zero value
		if s.Decl.Init != nil {
			t |= u.expr(s.Decl.Init, cf)
			if info := u.c.out.info[s.Decl.Init]; info != nil && info.typ != nil && info.typ.Kind == kPtr {
				t = u.ptrTaint(s.Decl.Init, cf) | cf // a pointer let: which memory it names
			}
		}
		u.assign(u.c.out.localSyms[s.Decl], t)
	case *assignStmt:
		t := u.expr(s.RHS, cf) | cf
		if s.LHS != nil {
			u.store(s.LHS, t, cf, s.Op == opAssign)
		}
	case *incDecStmt:
		u.store(s.X, cf, cf, false)
	case *ifStmt:
		inner := cf | u.expr(s.Cond, cf)
		entry, live := u.vars.clone(), u.live
		r, b, c := u.body(s.Then, inner)
		thenVars, thenLive := u.vars, u.live
		u.vars, u.live = entry, live
		if s.Else != nil {
			r2, b2, c2 := u.stmt(s.Else, inner)
			r, b, c = r|r2, b|b2, c|c2
		}
		u.joinBranch(thenVars, thenLive)
		return r, b, c
	case *forStmt:
		if s.Init != nil {
			ret, _, _ = u.stmt(s.Init, cf)
		}
		u.loop(s, func() (back, exit varState) {
			body := cf | u.loops[s]
			if s.Cond != nil {
				body |= u.expr(s.Cond, body)
				exit = u.vars.clone() // the condition is false
			}
			r, b, c := u.body(s.Body, body)
			u.growLoop(s, r|b|c)
			back = u.endBody()
			if back != nil && s.Update != nil {
				u.vars, u.live = back, true
				u.stmt(s.Update, body|b|c)
				back = u.vars
			}
			ret |= r
			return back, exit
		})
		return ret, 0, 0
	case *whileStmt:
		u.loop(s, func() (back, exit varState) {
			body := cf | u.loops[s]
			body |= u.expr(s.Cond, body)
			exit = u.vars.clone()
			r, b, c := u.body(s.Body, body)
			u.growLoop(s, r|b|c)
			ret = r
			return u.endBody(), exit
		})
		return ret, 0, 0
	case *loopStmt:
		u.loop(s, func() (back, exit varState) {
			body := cf | u.loops[s]
			r, b, c := u.body(s.Body, body)
			u.growLoop(s, r|b|c)
			back = u.endBody()
			if back != nil && s.Continuing != nil {
				u.vars, u.live = back, true
				r2, _, _ := u.body(s.Continuing, body|b|c)
				r |= r2
				back = u.vars
				if s.BreakIf != nil {
					u.growLoop(s, u.expr(s.BreakIf, body|b|c))
					exit = back.clone() // the break-if condition is true
				}
			}
			ret = r
			return back, exit
		})
		return ret, 0, 0
	case *switchStmt:
		inner := cf | u.expr(s.Sel, cf)
		entry, live := u.vars, u.live
		brk := u.brk
		u.brk = nil
		var out varState // joined at the ends of the clauses and their breaks
		for _, cl := range s.Clauses {
			u.vars, u.live = entry.clone(), live
			r, _, c := u.body(cl.Body, inner) // a break ends the switch: control reconverges after it
			ret, cont = ret|r, cont|c
			if u.live {
				join(&out, u.vars)
			}
		}
		if u.brk != nil {
			join(&out, u.brk)
		}
		u.brk = brk
		u.live = live && out != nil
		if out == nil {
			out = entry
		}
		u.vars = out
		return ret, 0, cont
	case *breakStmt:
		if u.live {
			join(&u.brk, u.vars)
		}
		u.live = false
		return 0, cf, 0
	case *continueStmt:
		if u.live {
			join(&u.cont, u.vars)
		}
		u.live = false
		return 0, 0, cf
	case *returnStmt:
		if s.X != nil {
			u.sum.result |= u.expr(s.X, cf) | cf
		}
		if u.live {
			join(&u.exit, u.vars)
		}
		u.live = false
		return cf, 0, 0
	case *callStmt:
		u.expr(s.Call, cf)
	}
	return 0, 0, 0
}

// joinBranch joins the state at the end of another branch of an if (which
// reached its end when live) into the current one.
func (u *uniformity) joinBranch(vars varState, live bool) {
	switch {
	case live && !u.live:
		u.vars, u.live = vars, true
	case live == u.live:
		u.vars = u.vars.or(vars)
	}
}

// functionPtr reports whether t is a pointer into function memory: the
// parameters of that type have their memory tracked.
func functionPtr(t *wgslType) bool {
	return t != nil && t.Kind == kPtr && t.Space == spaceFunction
}

// paramBit is the taint bit of parameter s of the function analysed (0 for
// another symbol, or past the 63rd parameter).
func (u *uniformity) paramBit(s *symbol) taint {
	for i, p := range u.fn.params {
		if p == s && i < 63 {
			return 1 << i
		}
	}
	return 0
}

// ptrParam returns the pointer parameter into function memory that x names,
// or nil: the uniformity of the memory behind it is tracked as the
// parameter's own (its bit stands for the argument's variable).
func (u *uniformity) ptrParam(x expr) *symbol {
	id, ok := unparen(x).(*ident)
	if !ok || u.fn.compute {
		return nil
	}
	info := u.c.out.info[id]
	if info == nil || info.sym == nil || info.sym.kind != symParam || !functionPtr(info.sym.typ) || u.paramBit(info.sym) == 0 {
		return nil
	}
	return info.sym
}

// deref is the taint of a value read through pointer x. A pointer into a
// local variable (through lets) reads the variable's uniformity; memory
// behind a pointer parameter into function memory is tracked as the
// parameter's own; uniform, push-constant and read-only storage memory is
// the same for all invocations, so what a pointer into it reads is as
// uniform as the pointer (its root and indices); other memory (workgroup,
// read_write storage, private) may differ between invocations, as the
// specification says.
func (u *uniformity) deref(x expr, cf taint) taint {
	if root, _, t := u.ptrRoot(x, cf); root != nil {
		return u.vars.get(u, root) | t
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

// refRoot is the variable whose uniformity the analysis tracks that
// reference x (a variable, a component or element of one, or what a pointer
// points to) is part of: a local variable, or a pointer parameter into
// function memory; nil for other memory. whole reports whether x is all of
// it, and t is the taint of the indices and pointers on the way (a
// non-uniform index names different elements in different invocations).
func (u *uniformity) refRoot(x expr, cf taint) (root *symbol, whole bool, t taint) {
	whole = true
	for {
		info := u.c.out.info[x]
		switch y := x.(type) {
		case *parenExpr:
			x = y.X
			continue
		case *indexExpr:
			t |= u.expr(y.Index, cf)
			if info != nil && info.autoDeref {
				r, _, pt := u.ptrRoot(y.X, cf)
				return r, false, t | pt
			}
			x, whole = y.X, false
			continue
		case *memberExpr:
			if info != nil && info.autoDeref {
				r, _, pt := u.ptrRoot(y.X, cf)
				return r, false, t | pt
			}
			x, whole = y.X, false
			continue
		case *unaryExpr:
			if y.Op == opDeref {
				r, w, pt := u.ptrRoot(y.X, cf)
				return r, whole && w, t | pt
			}
		case *ident:
			if info != nil && info.sym != nil && info.sym.kind == symLocalVar {
				return info.sym, whole, t
			}
		}
		return nil, false, t
	}
}

// ptrRoot is refRoot of the memory pointer x points to: through &, pointer
// lets (whose own taint, which memory they were given, adds to t) and
// pointer parameters into function memory.
func (u *uniformity) ptrRoot(x expr, cf taint) (root *symbol, whole bool, t taint) {
	for {
		switch y := x.(type) {
		case *parenExpr:
			x = y.X
			continue
		case *unaryExpr:
			if y.Op == opAddrOf {
				r, w, rt := u.refRoot(y.X, cf)
				return r, w, t | rt
			}
		case *ident:
			if p := u.ptrParam(y); p != nil {
				return p, true, t
			}
			if info := u.c.out.info[y]; info != nil && info.sym != nil && info.sym.kind == symLet &&
				info.sym.typ != nil && info.sym.typ.Kind == kPtr && info.sym.init != nil {
				s := info.sym
				t |= u.vars.get(u, s)
				x = s.init
				continue
			}
		}
		return nil, false, t
	}
}

func (u *uniformity) growLoop(s stmt, t taint) {
	if old := u.loops[s]; old|t != old {
		u.loops[s] = old | t
		u.grew = true
	}
}

// store records a write of a value with taint t into the memory that
// reference lhs names: with kill (a plain assignment) over the whole
// variable it replaces the variable's uniformity, else it adds to it.
func (u *uniformity) store(lhs expr, t, cf taint, kill bool) {
	root, whole, rt := u.refRoot(lhs, cf)
	u.storeRoot(root, whole && kill, t|rt)
}

// storePtr records a write of a value with taint t into the memory pointer
// x points to, as store does.
func (u *uniformity) storePtr(x expr, t, cf taint, kill bool) {
	root, whole, rt := u.ptrRoot(x, cf)
	u.storeRoot(root, whole && kill, t|rt)
}

func (u *uniformity) storeRoot(root *symbol, kill bool, t taint) {
	if root == nil {
		return
	}
	u.put(root, t, kill)
	if root.kind == symParam {
		u.stored |= u.paramBit(root)
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
		return u.vars.get(u, s)
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
		if info.call == callFn && i < len(info.fn.params) && functionPtr(info.fn.params[i].typ) {
			// The callee tracks the memory behind the pointer as the
			// parameter's value: the argument's is that memory's.
			args[i] = u.deref(a, cf)
		}
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
					u.storePtr(c.Args[i], r|cf, cf, true) // r holds the memory's old value where the callee may keep it
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
	if !u.live {
		return // unreachable code (after a return, break or continue): the call never runs
	}
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
	if !u.live {
		return
	}
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
