package wgsl

import "github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"

// Unrolling for registers.
//
// A kernel keeps its result matrices in an array indexed by loop counters
// (`acc[i * FN + j]` in `for (var i = 0u; i < FM; i++)`). A GPU holds a
// cooperative matrix in registers only where every index into such an array
// is a constant, that is once the loops around it are unrolled; otherwise the
// array goes to local memory and each multiply-add waits on it. The same
// holds for the registers any kernel keeps in small function-scope arrays
// indexed by a run-time value (matmul_shared.wgsl's TM x TN accumulators, a
// tile on its way to workgroup memory, `rx[l]` in
// `for (var l = 0u; l < XL; l++)`): a driver whose unroller declines such a
// loop (a long body, as an epilogue with GELU or the KV-cache writes makes)
// puts the whole array in scratch memory, every access a memory round trip
// (AMD's compiler did, on RDNA2 and GCN, for matmul_shared.wgsl's 8 x 8
// tilings with those epilogues; TestCompileStatistics checks). WGSL has no
// unroll attribute (GLSL kernels say `[[unroll]]`), so the emitter takes
// the for loops whose trip count is fixed once the pipeline is made
// (fixedTrip) and whose body indexes such a register array by a value that
// changes with the loop's counter (counterDerived), with at most
// maxUnrollTrips trips, or, where the module's matrices are native, an array
// of subgroup matrices, in a module for a device with matrix units
// (Options.CooperativeMatrix) or for a GPU (Options.UnrollRegisters: not
// for a CPU's driver, which gains nothing and compiles the unrolled code
// far more slowly), and:
//   - where the trip count is already known (the pipeline's module is
//     specialized: its overrides are constants) and at most
//     maxUnrollTrips, and the body leaves the counter and the loop's own
//     control alone (unrollable), unrolls the loop itself (unrolled): the
//     body once per trip (nested unrolled loops: at most maxUnrollCopies
//     copies of the innermost body), reads of the counter in each copy
//     that trip's value, u32 +, - and * of constants folded, so that an
//     index such as i * FN + j is a constant in the module and no driver
//     has to unroll or fold anything (a driver's unroller may decline a
//     loop with barriers or a long body);
//   - else marks the loop with LoopControl Unroll, a hint a driver may
//     ignore.
//
// No result changes. Loops over lowered matrices get neither (a driver
// would compile their element loops far longer for nothing), unless
// Options.UnrollLoops asks, as tests do to run the unrolled code on devices
// without matrix units.

// forLoopControl is the loop control of s's OpLoopMerge.
func (e *emitter) forLoopControl(s *forStmt) uint32 {
	if !(e.opt.CooperativeMatrix || e.opt.UnrollLoops || e.opt.UnrollRegisters) || !e.fixedTrip(s) {
		return spirv.LoopControlNone
	}
	matrices, registers := false, false
	derived := e.counterDerived(s)
	walkStmts(s.Body.Stmts, func(x expr) {
		if ix, ok := x.(*indexExpr); ok {
			i := e.info(ix.X)
			if t := i.typ; t != nil && t.Kind == kArray {
				matrices = matrices || t.Elem.hasSubgroupMatrix()
				registers = registers || i.ref && i.space == spaceFunction && e.info(ix.Index).val == nil && e.mentions(ix.Index, derived)
			}
		}
	})
	if matrices { // native matrices only (or where tests ask): lowered ones' element loops would be copied for nothing
		if e.opt.CooperativeMatrix || e.opt.UnrollLoops {
			return spirv.LoopControlUnroll
		}
		return spirv.LoopControlNone
	}
	if v, ok := e.tripValues(s); registers && ok && len(v) <= maxUnrollTrips {
		return spirv.LoopControlUnroll
	}
	return spirv.LoopControlNone
}

// unrolled emits for loop s (its init already emitted) unrolled, and
// reports whether it did: where its loop control is Unroll, its trip values
// are known and at most maxUnrollTrips, and its body leaves the counter and
// the loop's own control alone (unrollable).
func (e *emitter) unrolled(s *forStmt, control uint32) bool {
	vals, ok := e.unrollTrips(s, control)
	scale := max(e.f.unrollScale, 1)
	if !ok || scale*len(vals)*e.innerCopies(s.Body.Stmts) > maxUnrollCopies {
		return false // inner loops first: they index with the counters closest to the arrays
	}
	e.f.unrollScale = scale * len(vals)
	defer func() { e.f.unrollScale = scale }()
	sym := e.declSym(s.Init.(*declStmt).Decl)
	v := e.f.values[sym]
	if e.f.unrolled == nil {
		e.f.unrolled = map[*symbol]*value{}
	}
	defer delete(e.f.unrolled, sym)
	for _, x := range vals {
		if e.f.terminated {
			break // the body returned: the copies after it are dead
		}
		e.add(spirv.OpStore, v, e.constant(sym.typ, &value{i: x}))
		e.f.unrolled[sym] = &value{i: x}
		e.stmts(s.Body.Stmts)
	}
	return true
}

// unrollTrips is the counter's values of for loop s with loop control
// control where the emitter may unroll it: the control is Unroll, its trip
// values are known and at most maxUnrollTrips, and it is unrollable.
func (e *emitter) unrollTrips(s *forStmt, control uint32) ([]int64, bool) {
	if control != spirv.LoopControlUnroll || !e.unrollable(s) {
		return nil, false
	}
	vals, ok := e.tripValues(s)
	return vals, ok && len(vals) <= maxUnrollTrips
}

// innerCopies is the most copies of an innermost body that the loops
// nested in ss would make, unrolled: the largest product of the trips of
// nested for loops the emitter may unroll (1 for none).
func (e *emitter) innerCopies(ss []stmt) int {
	best := 1
	var visit func(ss []stmt)
	visit = func(ss []stmt) {
		for _, st := range ss {
			switch st := st.(type) {
			case *blockStmt:
				visit(st.Stmts)
			case *ifStmt:
				visit([]stmt{st.Then})
				if st.Else != nil {
					visit([]stmt{st.Else})
				}
			case *forStmt:
				n := 1
				if e.fixedTrip(st) {
					if vals, ok := e.unrollTrips(st, e.forLoopControl(st)); ok {
						n = max(len(vals), 1)
					}
				}
				best = max(best, n*e.innerCopies(st.Body.Stmts))
			case *whileStmt:
				visit(st.Body.Stmts)
			case *loopStmt:
				visit(st.Body.Stmts)
			case *switchStmt:
				for _, cl := range st.Clauses {
					visit(cl.Body.Stmts)
				}
			}
		}
	}
	visit(ss)
	return best
}

// unrollable reports whether the body of fixedTrip loop s neither writes
// its counter (writes: an assignment, an increment, its address taken) nor
// breaks or continues s itself (a break in an inner loop or switch, a
// continue in an inner loop are theirs).
func (e *emitter) unrollable(s *forStmt) bool {
	if writes(e.m, s.Body, e.declSym(s.Init.(*declStmt).Decl)) {
		return false
	}
	ok := true
	var visit func(ss []stmt, inLoop, inSwitch bool)
	visit = func(ss []stmt, inLoop, inSwitch bool) {
		for _, st := range ss {
			switch st := st.(type) {
			case *blockStmt:
				visit(st.Stmts, inLoop, inSwitch)
			case *ifStmt:
				visit([]stmt{st.Then}, inLoop, inSwitch)
				if st.Else != nil {
					visit([]stmt{st.Else}, inLoop, inSwitch)
				}
			case *forStmt:
				visit(st.Body.Stmts, true, false)
			case *whileStmt:
				visit(st.Body.Stmts, true, false)
			case *loopStmt:
				visit(st.Body.Stmts, true, false)
				if st.Continuing != nil {
					visit(st.Continuing.Stmts, true, false)
				}
			case *switchStmt:
				for _, cl := range st.Clauses {
					visit(cl.Body.Stmts, inLoop, true)
				}
			case *breakStmt:
				ok = ok && (inLoop || inSwitch)
			case *continueStmt:
				ok = ok && inLoop
			}
		}
	}
	visit(s.Body.Stmts, false, false)
	return ok
}

// maxUnrollTrips is the most trips of a loop over a function-scope array
// that gets the unroll hint for it (the coop kernels' tiles take at most 16
// vec4 loads per invocation), and of a loop the emitter unrolls.
const maxUnrollTrips = 32

// maxUnrollCopies bounds the copies of a body that nested unrolled loops
// make (the product of their trips), so that nesting cannot blow a module
// up (the coop kernels stay far below it: TestCoopKernelsNative would find
// a matrix index left to run time).
const maxUnrollCopies = 512

// tripValues is the counter's values, trip by trip, of a fixedTrip loop
// whose bounds and step are known now (consts, or overrides in a
// specialized module): for `i = A; i < B; i += C` and its variants, the
// values the condition admits before it first fails, stepped in the
// counter's type (a u32 counting down past 0 wraps); at most
// maxUnrollTrips+1 of them (more means too many).
func (e *emitter) tripValues(s *forStmt) ([]int64, bool) {
	d := s.Init.(*declStmt)
	c := s.Cond.(*binaryExpr)
	val := func(x expr) (int64, bool) {
		v := e.info(x).val
		if v == nil {
			return 0, false
		}
		return v.i, true
	}
	a, ok := val(d.Decl.Init)
	if !ok {
		return nil, false
	}
	var bound int64
	var counterLeft bool
	if id, isID := c.X.(*ident); isID && e.info(id).sym != nil && e.info(id).sym.decl == d.Decl {
		counterLeft = true
		bound, ok = val(c.Y)
	} else {
		bound, ok = val(c.X)
	}
	if !ok {
		return nil, false
	}
	var step int64
	switch u := s.Update.(type) {
	case *incDecStmt:
		step = pick(u.Op == opInc, int64(1), -1)
	case *assignStmt:
		k, ok := val(u.RHS)
		if !ok {
			return nil, false
		}
		step = pick(u.Op == opAdd, k, -k)
	}
	wrap := func(x int64) int64 { return int64(int32(x)) }
	if e.declSym(d.Decl).typ.Kind == kU32 {
		wrap = func(x int64) int64 { return int64(uint32(x)) }
	}
	holds := func(i int64) bool {
		l, r := i, bound
		if !counterLeft {
			l, r = bound, i
		}
		switch c.Op {
		case opLt:
			return l < r
		case opLe:
			return l <= r
		case opGt:
			return l > r
		case opGe:
			return l >= r
		}
		return l != r
	}
	var vals []int64
	for i := wrap(a); holds(i) && len(vals) <= maxUnrollTrips; i = wrap(i + step) {
		vals = append(vals, i)
	}
	return vals, true
}

// fixedTrip reports whether s is `for (var i = A; i op B; update)` with A and
// B const- or override-expressions and update one of i++, i--, i += C,
// i -= C (C likewise): a loop whose trip count is known when the pipeline is
// made (unless its body writes i, which only makes the hint useless).
func (e *emitter) fixedTrip(s *forStmt) bool {
	d, ok := s.Init.(*declStmt)
	if !ok || d.Decl.Init == nil || !e.fixed(d.Decl.Init) {
		return false
	}
	counter := func(x expr) bool {
		id, ok := x.(*ident)
		return ok && e.info(id).sym != nil && e.info(id).sym.decl == d.Decl
	}
	c, ok := s.Cond.(*binaryExpr)
	if !ok {
		return false
	}
	switch c.Op {
	case opLt, opLe, opGt, opGe, opNe:
	default:
		return false
	}
	if !(counter(c.X) && e.fixed(c.Y)) && !(counter(c.Y) && e.fixed(c.X)) {
		return false
	}
	switch u := s.Update.(type) {
	case *incDecStmt:
		return counter(u.X)
	case *assignStmt:
		return (u.Op == opAdd || u.Op == opSub) && counter(u.LHS) && e.fixed(u.RHS)
	}
	return false
}

// fixed reports whether x's value is known when the pipeline is made: a
// const-expression or an override-expression.
func (e *emitter) fixed(x expr) bool {
	i := e.info(x)
	return !i.ref && (i.val != nil || i.override)
}

// counterDerived is the counter of for loop s and the locals of its body
// whose values are computed from it (a declaration's initializer or an
// assignment that mentions one of them, transitively): what makes an index
// into a register array differ from trip to trip, so that only unrolling
// this loop makes it a constant. (An index that varies with an inner loop's
// counter only is that loop's to unroll: unrolling the outer one too would
// lengthen the code and the registers live for nothing.)
func (e *emitter) counterDerived(s *forStmt) map[*symbol]bool {
	d := map[*symbol]bool{e.declSym(s.Init.(*declStmt).Decl): true}
	for changed := true; changed; {
		changed = false
		eachStmt(s.Body.Stmts, func(st stmt) {
			var sym *symbol
			var x expr
			switch st := st.(type) {
			case *declStmt:
				if st.Decl.Init != nil {
					sym, x = e.declSym(st.Decl), st.Decl.Init
				}
			case *assignStmt:
				if id, ok := st.LHS.(*ident); ok {
					if i := e.m.info[id]; i != nil {
						sym, x = i.sym, st.RHS
					}
				}
			}
			if sym != nil && !d[sym] && e.mentions(x, d) {
				d[sym] = true
				changed = true
			}
		})
	}
	return d
}

// mentions reports whether x names one of the symbols in syms.
func (e *emitter) mentions(x expr, syms map[*symbol]bool) bool {
	found := false
	walkExpr(x, func(y expr) {
		if id, ok := y.(*ident); ok {
			if i := e.m.info[id]; i != nil && syms[i.sym] {
				found = true
			}
		}
	})
	return found
}

// eachStmt calls f on every statement in ss, nested ones included.
func eachStmt(ss []stmt, f func(stmt)) {
	for _, s := range ss {
		f(s)
		switch s := s.(type) {
		case *blockStmt:
			eachStmt(s.Stmts, f)
		case *ifStmt:
			eachStmt([]stmt{s.Then}, f)
			if s.Else != nil {
				eachStmt([]stmt{s.Else}, f)
			}
		case *forStmt:
			if s.Init != nil {
				eachStmt([]stmt{s.Init}, f)
			}
			if s.Update != nil {
				eachStmt([]stmt{s.Update}, f)
			}
			eachStmt([]stmt{s.Body}, f)
		case *whileStmt:
			eachStmt([]stmt{s.Body}, f)
		case *loopStmt:
			eachStmt([]stmt{s.Body}, f)
			if s.Continuing != nil {
				eachStmt([]stmt{s.Continuing}, f)
			}
		case *switchStmt:
			for _, cl := range s.Clauses {
				eachStmt([]stmt{cl.Body}, f)
			}
		}
	}
}

// walkStmts calls f on every expression in ss, nested statements and
// subexpressions included (not template arguments, which are types or
// constants).
func walkStmts(ss []stmt, f func(expr)) {
	eachStmt(ss, func(s stmt) {
		switch s := s.(type) {
		case *declStmt:
			walkExpr(s.Decl.Init, f)
		case *assignStmt:
			walkExpr(s.LHS, f)
			walkExpr(s.RHS, f)
		case *incDecStmt:
			walkExpr(s.X, f)
		case *ifStmt:
			walkExpr(s.Cond, f)
		case *forStmt:
			walkExpr(s.Cond, f)
		case *whileStmt:
			walkExpr(s.Cond, f)
		case *loopStmt:
			walkExpr(s.BreakIf, f)
		case *switchStmt:
			walkExpr(s.Sel, f)
		case *returnStmt:
			walkExpr(s.X, f)
		case *callStmt:
			walkExpr(s.Call, f)
		}
	})
}

func walkExpr(x expr, f func(expr)) {
	if x == nil {
		return
	}
	f(x)
	switch x := x.(type) {
	case *unaryExpr:
		walkExpr(x.X, f)
	case *binaryExpr:
		walkExpr(x.X, f)
		walkExpr(x.Y, f)
	case *callExpr:
		for _, a := range x.Args {
			walkExpr(a, f)
		}
	case *indexExpr:
		walkExpr(x.X, f)
		walkExpr(x.Index, f)
	case *memberExpr:
		walkExpr(x.X, f)
	case *parenExpr:
		walkExpr(x.X, f)
	}
}
