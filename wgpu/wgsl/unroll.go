package wgsl

import (
	"math"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"
)

// Unroll hints for native subgroup matrices.
//
// A kernel keeps its result matrices in an array indexed by loop counters
// (`acc[i * FN + j]` in `for (var i = 0u; i < FM; i++)`). A GPU holds a
// cooperative matrix in registers only where every index into such an array
// is a constant, that is once the loops around it are unrolled; otherwise the
// array goes to local memory and each multiply-add waits on it. WGSL has no
// unroll attribute (GLSL kernels say `[[unroll]]` for this reason), so where
// the module's matrices are native (Options.CooperativeMatrix) the emitter
// marks with LoopControl Unroll every for loop whose trip count is fixed once
// the pipeline is made and whose body indexes an array of subgroup matrices.
// The same holds for the registers a kernel keeps beside them in small
// function-scope arrays indexed by a run-time value (a tile on its way to
// workgroup memory, `rx[l]` in `for (var l = 0u; l < XL; l++)`): such a loop
// gets the hint too where its trip count, known by then (the pipeline's
// module is specialized), is at most maxUnrollTrips. It is a hint: a driver
// that cannot unroll ignores it, and no result changes. Lowered matrices get
// no hint (a driver that unrolled their element loops would compile far
// longer for nothing).

// forLoopControl is the loop control of s's OpLoopMerge.
func (e *emitter) forLoopControl(s *forStmt) uint32 {
	if !e.opt.CooperativeMatrix || !e.fixedTrip(s) {
		return spirv.LoopControlNone
	}
	matrices, registers := false, false
	walkStmts(s.Body.Stmts, func(x expr) {
		if ix, ok := x.(*indexExpr); ok {
			i := e.info(ix.X)
			if t := i.typ; t != nil && t.Kind == kArray {
				matrices = matrices || t.Elem.hasSubgroupMatrix()
				registers = registers || i.ref && i.space == spaceFunction && e.info(ix.Index).val == nil
			}
		}
	})
	if matrices {
		return spirv.LoopControlUnroll
	}
	if n, ok := e.tripCount(s); registers && ok && n <= maxUnrollTrips {
		return spirv.LoopControlUnroll
	}
	return spirv.LoopControlNone
}

// maxUnrollTrips is the most trips of a loop over a function-scope array
// that gets the unroll hint for it (the coop kernels' tiles take at most 16
// vec4 loads per invocation).
const maxUnrollTrips = 32

// tripCount is the trips of a fixedTrip loop whose bounds and step are
// known now (consts, or overrides in a specialized module): for
// `i = A; i < B; i += C` and its variants, the i values the condition
// admits before it first fails, counted in at most maxUnrollTrips+1 steps.
func (e *emitter) tripCount(s *forStmt) (uint64, bool) {
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
		return 0, false
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
		return 0, false
	}
	var step int64
	switch u := s.Update.(type) {
	case *incDecStmt:
		step = pick(u.Op == opInc, int64(1), -1)
	case *assignStmt:
		k, ok := val(u.RHS)
		if !ok {
			return 0, false
		}
		step = pick(u.Op == opAdd, k, -k)
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
	n := uint64(0)
	for i := a; holds(i) && i >= 0 && i <= math.MaxUint32; i += step {
		if n++; n > maxUnrollTrips {
			break
		}
	}
	return n, true
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

// walkStmts calls f on every expression in ss, nested statements and
// subexpressions included (not template arguments, which are types or
// constants).
func walkStmts(ss []stmt, f func(expr)) {
	for _, s := range ss {
		walkStmt(s, f)
	}
}

func walkStmt(s stmt, f func(expr)) {
	switch s := s.(type) {
	case *blockStmt:
		walkStmts(s.Stmts, f)
	case *declStmt:
		walkExpr(s.Decl.Init, f)
	case *assignStmt:
		walkExpr(s.LHS, f)
		walkExpr(s.RHS, f)
	case *incDecStmt:
		walkExpr(s.X, f)
	case *ifStmt:
		walkExpr(s.Cond, f)
		walkStmt(s.Then, f)
		if s.Else != nil {
			walkStmt(s.Else, f)
		}
	case *forStmt:
		if s.Init != nil {
			walkStmt(s.Init, f)
		}
		walkExpr(s.Cond, f)
		if s.Update != nil {
			walkStmt(s.Update, f)
		}
		walkStmt(s.Body, f)
	case *whileStmt:
		walkExpr(s.Cond, f)
		walkStmt(s.Body, f)
	case *loopStmt:
		walkStmt(s.Body, f)
		if s.Continuing != nil {
			walkStmt(s.Continuing, f)
		}
		walkExpr(s.BreakIf, f)
	case *switchStmt:
		walkExpr(s.Sel, f)
		for _, cl := range s.Clauses {
			walkStmt(cl.Body, f)
		}
	case *returnStmt:
		walkExpr(s.X, f)
	case *callStmt:
		walkExpr(s.Call, f)
	}
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
