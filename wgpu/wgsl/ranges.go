package wgsl

// A value-range analysis of u32 index expressions, so that the emitter can
// leave out the clamp of an index it proves below the length of a fixed-size
// array or vector (clampIndex). It runs over the checked module before
// emission (analyzeRanges) and yields the proved range of every index
// expression it can bound. It is deliberately small and sound: an interval
// [lo, hi] is known only for
//
//   - constants (overrides are constants once a pipeline specializes them);
//   - lets, through their initializers (a let never changes);
//   - an entry point's builtin parameters: local_invocation_index below the
//     product of a constant workgroup size (while it is a u32),
//     local_invocation_id's components below theirs, subgroup_id below and
//     num_subgroups up to that product,
//     subgroup_invocation_id below 128 and subgroup_size up to 128 (Vulkan's
//     largest subgroup);
//   - the value parameters of a function, as the union of the arguments of
//     every call in the module (functions are walked callers first; WGSL has
//     no recursion);
//   - the counter of a for loop `for (var i = A; cond; update)` inside the
//     loop's body, when neither the body nor cond can change i (no assignment,
//     increment or address of i there): cond holds whenever the body runs, so
//     its comparisons of i bound i; and when update only moves i one way
//     without wrapping (i++, i += c, i *= c, i <<= c up; i--, i -= c, i /= c,
//     i >>= c down), i also stays on A's side;
//   - lets, parameters and counters compared in a condition: in the branch
//     the condition selects (if, the right operand of && and ||, loop
//     bodies), and after an `if` whose branch ends in return, break or
//     continue, in the rest of the block;
//   - + - * / % & >> << min max select over known ranges, when no u32
//     operation can wrap (else unknown), with WGSL's rules for division by
//     zero and shift amounts (which the emitter keeps).
//
// Anything else is unknown, and an unknown index keeps its clamp: variables
// other than such counters, memory, i32 values (only non-negative constants
// are known), function results, other builtins. Out of bounds accesses of
// workgroup or private memory are undefined behaviour in Vulkan: a wrong proof
// would be a real bug, so each rule errs towards "unknown" (tests in
// ranges_test.go try to fool it).

import "math"

// interval is a set of u32 values [lo, hi].
type interval struct{ lo, hi uint64 }

var allU32 = interval{0, math.MaxUint32}

func (r interval) meet(s interval) (interval, bool) {
	r = interval{max(r.lo, s.lo), min(r.hi, s.hi)}
	return r, r.lo <= r.hi
}

func (r interval) join(s interval) interval { return interval{min(r.lo, s.lo), max(r.hi, s.hi)} }

// maxRangeDepth bounds the expressions and lets followed through, against
// pathological chains.
const maxRangeDepth = 24

// ranges is the state of one analysis of a checked module.
type ranges struct {
	m  *checked
	fn *function // the function being walked
	// env holds the ranges known at the current point of the walk beyond
	// what identRange derives: loop counters in their bodies, and lets,
	// parameters and counters narrowed by conditions. A scope that narrows
	// works on a copy (narrow) and puts the old map back when it ends.
	env map[*symbol]interval
	// params is the union of the arguments passed to each value parameter
	// so far (nil map: parameters are unknown).
	params map[*symbol]interval
	done   map[*function]bool
	proved map[expr]interval
	// broken is set when a call reaches a function walked already or the
	// walk meets a node it does not know: parameter ranges cannot be trusted.
	broken bool
}

// analyzeRanges is the range of every index expression of m the analysis
// can bound.
func analyzeRanges(m *checked) map[expr]interval {
	r := runRanges(m, true)
	if r.broken {
		r = runRanges(m, false)
	}
	return r.proved
}

func runRanges(m *checked, useParams bool) *ranges {
	r := &ranges{m: m, done: map[*function]bool{}, proved: map[expr]interval{}}
	if useParams {
		r.params = map[*symbol]interval{}
	}
	for _, f := range callersFirst(m.funcs) {
		if f.decl == nil || f.decl.Body == nil {
			continue
		}
		r.fn, r.env = f, map[*symbol]interval{}
		r.stmts(f.decl.Body.Stmts)
		r.done[f] = true
	}
	return r
}

// callersFirst orders funcs so that every function comes after all the
// functions that call it.
func callersFirst(funcs []*function) []*function {
	callers := map[*function]int{}
	for _, f := range funcs {
		for _, g := range uniqueCalls(f) {
			callers[g]++
		}
	}
	var order, ready []*function
	for _, f := range funcs {
		if callers[f] == 0 {
			ready = append(ready, f)
		}
	}
	for len(ready) > 0 {
		f := ready[0]
		ready = ready[1:]
		order = append(order, f)
		for _, g := range uniqueCalls(f) {
			if callers[g]--; callers[g] == 0 {
				ready = append(ready, g)
			}
		}
	}
	if len(order) != len(funcs) { // a cycle: WGSL has none, but stay safe
		return funcs
	}
	return order
}

func uniqueCalls(f *function) []*function {
	seen := map[*function]bool{}
	var out []*function
	for _, g := range f.calls {
		if !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	return out
}

// narrow makes env a copy of itself before a scope changes it; the caller
// restores the saved map when the scope ends.
func (r *ranges) narrow(env map[*symbol]interval) map[*symbol]interval {
	c := make(map[*symbol]interval, len(env)+1)
	for k, v := range env {
		c[k] = v
	}
	return c
}

func (r *ranges) stmts(list []stmt) {
	saved := r.env
	defer func() { r.env = saved }()
	for _, s := range list {
		r.stmt(s)
		// After `if c { ... return; }`, c is false in the rest of the block
		// (and true after `if c { ... } else { ... return; }`).
		if is, ok := s.(*ifStmt); ok {
			thenExits, elseExits := exits(is.Then), is.Else != nil && exits(is.Else)
			switch {
			case thenExits && !elseExits:
				r.env = r.refine(r.env, is.Cond, false)
			case elseExits && !thenExits:
				r.env = r.refine(r.env, is.Cond, true)
			}
		}
	}
}

// exits reports whether control never leaves s at its end: a block whose
// last statement is return, break or continue (any path through it ends in
// one of those, or in one that leaves an inner loop or switch and so goes on
// to that last statement).
func exits(s stmt) bool {
	if b, ok := s.(*blockStmt); ok {
		if len(b.Stmts) == 0 {
			return false
		}
		s = b.Stmts[len(b.Stmts)-1]
	}
	switch s.(type) {
	case *returnStmt, *breakStmt, *continueStmt:
		return true
	}
	return false
}

func (r *ranges) stmt(s stmt) {
	switch s := s.(type) {
	case nil:
	case *blockStmt:
		r.stmts(s.Stmts)
	case *declStmt:
		r.expr(s.Decl.Init)
	case *assignStmt:
		r.expr(s.LHS)
		r.expr(s.RHS)
	case *incDecStmt:
		r.expr(s.X)
	case *ifStmt:
		// Only lets, parameters and counters are narrowed: none can change
		// between the test and the branch (a counter's loop body never
		// writes it).
		r.expr(s.Cond)
		saved := r.env
		r.env = r.refine(saved, s.Cond, true)
		r.stmts(s.Then.Stmts)
		r.env = r.refine(saved, s.Cond, false)
		r.stmt(s.Else)
		r.env = saved
	case *forStmt:
		saved := r.env
		r.stmt(s.Init)
		r.expr(s.Cond)
		r.stmt(s.Update)
		if v, rg, ok := r.loopCounter(s); ok {
			r.env = r.narrow(r.env)
			r.env[v] = rg
		}
		if s.Cond != nil {
			r.env = r.refine(r.env, s.Cond, true)
		}
		r.stmts(s.Body.Stmts)
		r.env = saved
	case *whileStmt:
		r.expr(s.Cond)
		saved := r.env
		r.env = r.refine(saved, s.Cond, true)
		r.stmts(s.Body.Stmts)
		r.env = saved
	case *loopStmt:
		// The continuing block sees the body's declarations but runs after a
		// continue too: none of the body's narrowing reaches it.
		r.stmts(s.Body.Stmts)
		if s.Continuing != nil {
			r.stmts(s.Continuing.Stmts)
		}
		r.expr(s.BreakIf)
	case *switchStmt:
		r.expr(s.Sel)
		for _, cl := range s.Clauses {
			r.stmts(cl.Body.Stmts)
		}
	case *returnStmt:
		r.expr(s.X)
	case *callStmt:
		r.expr(s.Call)
	case *breakStmt, *continueStmt, *constAssert:
	default:
		r.broken = true
	}
}

// expr walks x: it records the range of every index it can bound and the
// arguments of every call of a user function.
func (r *ranges) expr(x expr) {
	switch x := x.(type) {
	case nil, *ident, *lit:
	case *unaryExpr:
		r.expr(x.X)
	case *binaryExpr:
		r.expr(x.X)
		if x.Op == opLogAnd || x.Op == opLogOr { // y runs only when x is true (&&), false (||)
			saved := r.env
			r.env = r.refine(saved, x.X, x.Op == opLogAnd)
			r.expr(x.Y)
			r.env = saved
			return
		}
		r.expr(x.Y)
	case *callExpr:
		for _, a := range x.Args {
			r.expr(a)
		}
		info := r.m.info[x]
		if ops, ok := matrixOperands(x); ok && info != nil && info.call == callBuiltin {
			r.index(x.Args[ops.offset]) // a matrix's offset, for emit_matrix.go's coopBounds
		}
		if info == nil || info.call != callFn || info.fn == nil {
			return
		}
		if r.done[info.fn] || len(x.Args) != len(info.fn.params) {
			r.broken = true
			return
		}
		if r.params == nil {
			return
		}
		// The argument is bounded in the caller's env at the call: the
		// callee's parameter takes the union over every call.
		for i, a := range x.Args {
			p := info.fn.params[i]
			rg, _ := r.rangeOrAll(a, 0)
			if old, ok := r.params[p]; ok {
				rg = old.join(rg)
			}
			r.params[p] = rg
		}
	case *indexExpr:
		r.expr(x.X)
		r.expr(x.Index)
		r.index(x.Index)
	case *memberExpr:
		r.expr(x.X)
	case *parenExpr:
		r.expr(x.X)
	default:
		r.broken = true
	}
}

// index records the range of index x where it can bound it, joined with
// the ranges x had where it was walked before.
func (r *ranges) index(x expr) {
	if rg, ok := r.rangeAt(x, 0); ok {
		if old, seen := r.proved[x]; seen {
			rg = old.join(rg)
		}
		r.proved[x] = rg
	}
}

func (r *ranges) rangeAt(x expr, depth int) (interval, bool) {
	if depth > maxRangeDepth || x == nil {
		return interval{}, false
	}
	info := r.m.info[x]
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
		return r.rangeAt(x.X, depth+1)
	case *ident:
		return r.identRange(info.sym, depth)
	case *memberExpr:
		// local_invocation_id.x, .y, .z
		id, ok := x.X.(*ident)
		if !ok || len(x.Name) != 1 {
			return interval{}, false
		}
		xi := r.m.info[id]
		if xi == nil || xi.sym == nil || r.builtinOf(xi.sym) != "local_invocation_id" {
			return interval{}, false
		}
		d := int(x.Name[0]) - 'x'
		if d < 0 || d > 2 {
			return interval{}, false
		}
		wg := r.fn.wgSize[d]
		if wg.override != nil || wg.val < 1 {
			return interval{}, false
		}
		return interval{0, uint64(wg.val - 1)}, true
	case *binaryExpr:
		// An operand of unknown range is any u32 (x % 2u is still below 2).
		a, _ := r.rangeOrAll(x.X, depth+1)
		b, _ := r.rangeOrAll(x.Y, depth+1)
		return binaryRange(x.Op, a, b)
	case *callExpr:
		if info.call != callBuiltin {
			return interval{}, false
		}
		var rs []interval
		for _, a := range x.Args {
			rg, _ := r.rangeOrAll(a, depth+1)
			rs = append(rs, rg)
		}
		switch {
		case info.builtin == "min" && len(rs) == 2:
			return interval{min(rs[0].lo, rs[1].lo), min(rs[0].hi, rs[1].hi)}, true
		case info.builtin == "max" && len(rs) == 2:
			return interval{max(rs[0].lo, rs[1].lo), max(rs[0].hi, rs[1].hi)}, true
		case info.builtin == "select" && len(rs) == 3:
			// select(f, t, cond): either value.
			return rs[0].join(rs[1]), true
		}
	}
	return interval{}, false
}

func isIdent(x expr) bool { _, ok := x.(*ident); return ok }

// rangeOrAll is rangeAt, or every u32 when the range is unknown; ok tells
// which.
func (r *ranges) rangeOrAll(x expr, depth int) (interval, bool) {
	if rg, ok := r.rangeAt(x, depth); ok {
		return rg, true
	}
	return allU32, false
}

// identRange is the range of a name: a let's initializer, a parameter's
// arguments or builtin, a loop counter in its body, each narrowed by env.
func (r *ranges) identRange(s *symbol, depth int) (interval, bool) {
	if s == nil {
		return interval{}, false
	}
	base, known := interval{}, false
	switch s.kind {
	case symLet:
		// The initializer is bounded here, in the env of the use: sound, as
		// every name env narrows (lets, parameters, counters in their loops'
		// bodies) has the same value at the let's declaration and here (the
		// let being in scope, both are in one iteration of every loop around
		// the declaration).
		base, known = r.rangeAt(s.init, depth+1)
	case symParam:
		base, known = r.builtinRange(r.builtinOf(s))
		if !known && r.params != nil {
			base, known = r.params[s]
		}
	case symLocalVar:
		// Only counters in their loops' bodies (set in env).
	default:
		return interval{}, false
	}
	if e, ok := r.env[s]; ok {
		if !known {
			return e, true
		}
		m, ok := base.meet(e)
		return m, ok // empty: dead code; say unknown
	}
	return base, known
}

// builtinRange is the range of an entry point's builtin parameter.
func (r *ranges) builtinRange(b string) (interval, bool) {
	switch b {
	// Vulkan: "The maximum number of invocations that an implementation can
	// support per subgroup is 128" (the SubgroupSize builtin), also with
	// subgroup size control; the invocation id is below the size.
	case "subgroup_invocation_id":
		return interval{0, 127}, true
	case "subgroup_size":
		return interval{1, 128}, true
	case "local_invocation_index", "subgroup_id", "num_subgroups":
		// n is the invocation count, known only while it is a u32: each
		// factor is checked before it multiplies, so n never wraps (three
		// dimensions can multiply past 2^64).
		n := uint64(1)
		for _, d := range r.fn.wgSize {
			if d.override != nil || d.val < 1 || uint64(d.val) > math.MaxUint32/n {
				return interval{}, false
			}
			n *= uint64(d.val)
		}
		if b == "num_subgroups" {
			return interval{1, n}, true
		}
		return interval{0, n - 1}, true
	}
	return interval{}, false
}

// builtinOf is the @builtin of an entry point's parameter s, "" for any other
// symbol.
func (r *ranges) builtinOf(s *symbol) string {
	fn := r.fn
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
// of the operation can wrap around (else unknown). Division by zero gives a
// and remainder by zero 0, and shift amounts are taken modulo 32, as the
// emitter has them.
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
		return interval{a.lo / max(b.hi, 1), a.hi / max(b.lo, 1)}, true
	case opRem:
		if a.hi < b.lo {
			return a, true
		}
		return interval{0, min(a.hi, max(b.hi, 1)-1)}, true
	case opAnd:
		return interval{0, min(a.hi, b.hi)}, true
	case opShr:
		if b.hi > 31 {
			return interval{0, a.hi}, true // any amount: never more than a
		}
		return interval{a.lo >> b.hi, a.hi >> b.lo}, true
	case opShl:
		if b.hi > 31 || a.hi<<b.hi > top {
			return interval{}, false
		}
		return interval{a.lo << b.lo, a.hi << b.hi}, true
	}
	return interval{}, false
}
