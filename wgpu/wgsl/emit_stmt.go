package wgsl

import (
	"fmt"
	"math"
	"slices"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"
)

type fnState struct {
	fn         *function
	vars       spirv.Section // OpVariables of the entry block
	body       spirv.Section
	label      uint32 // current block
	terminated bool   // the current block has its terminator
	values     map[*symbol]uint32
	ptrRefs    map[*symbol]refv // pointer parameters and lets
	// inMem holds the Function variables of lets and value parameters of
	// large aggregate types (see bigValue): read through access chains,
	// not as whole values.
	inMem map[*symbol]uint32
	// result is the pointer parameter a function returning a large
	// aggregate stores its result through, or 0.
	result uint32
	// prelude follows vars in the entry block: the overrides computed in
	// the shader (see computedOverride), once per function.
	prelude    spirv.Section
	inPrelude  bool
	computed   map[*symbol]uint32
	loops      []loopTargets
	inputsUsed map[uint32]bool
	// unrolled holds the counters of the loops being unrolled (unroll.go)
	// with their values in the copy of the body being emitted: reads of
	// them are constants.
	unrolled    map[*symbol]*value
	unrollScale int // the copies the enclosing unrolled loops make of what is being emitted (0: none)
}

// loopTargets are the branch targets of an enclosing loop or switch (cont is
// 0 for a switch: continue goes to the innermost loop).
type loopTargets struct{ merge, cont uint32 }

func (e *emitter) add(op spirv.Op, operands ...uint32) {
	if e.f.terminated {
		bugf("instruction %v after a block terminator", op)
	}
	e.f.body.Add(op, operands...)
}

// op emits an instruction with a result type and returns its result id.
func (e *emitter) op(op spirv.Op, ty uint32, operands ...uint32) uint32 {
	id := e.id()
	e.add(op, append([]uint32{ty, id}, operands...)...)
	return id
}

func (e *emitter) label(id uint32) {
	e.f.body.Add(spirv.OpLabel, id)
	e.f.label = id
	e.f.terminated = false
}

func (e *emitter) branch(target uint32) {
	if !e.f.terminated {
		e.add(spirv.OpBranch, target)
		e.f.terminated = true
	}
}

func (e *emitter) terminate(op spirv.Op, operands ...uint32) {
	e.add(op, operands...)
	e.f.terminated = true
}

// localVar allocates a Function variable in the entry block.
func (e *emitter) localVar(t *wgslType) uint32 {
	id := e.id()
	e.f.vars.Add(spirv.OpVariable, e.ptrType(spirv.StorageClassFunction, e.typeID(t, plain)), id, spirv.StorageClassFunction)
	return id
}

// function emits f; a function with pointer parameters is emitted as the
// variant fid for the pointer argument shapes (see emit_call.go).
func (e *emitter) function(f *function, fid uint32, shapes map[int]ptrShape) {
	e.f = &fnState{fn: f, values: map[*symbol]uint32{}, ptrRefs: map[*symbol]refv{}, inputsUsed: map[uint32]bool{}, computed: map[*symbol]uint32{}}
	var head spirv.Section
	ret := e.voidType()
	if f.result != nil {
		ret = e.typeID(f.result, plain)
	}
	var ptys []uint32
	var pids []uint32
	if f.result != nil && bigValue(f.result) { // returned through a pointer (see emit_copy.go)
		ptys = append(ptys, e.ptrType(spirv.StorageClassFunction, ret))
		e.f.result = e.id()
		pids = append(pids, e.f.result)
		ret = e.voidType()
	}
	if !f.compute {
		for i, p := range f.params {
			if p.typ.Kind == kPtr {
				e.ptrParams(p, shapes[i], &ptys, &pids)
				continue
			}
			ty := e.paramType(p.typ)
			id := e.id()
			e.name(id, p.name)
			if bigValue(p.typ) { // passed as a pointer to the caller's copy
				ty = e.ptrType(spirv.StorageClassFunction, ty)
				e.bindMem(p, id)
			} else {
				e.f.values[p] = id
			}
			ptys = append(ptys, ty)
			pids = append(pids, id)
		}
	}
	head.Add(spirv.OpFunction, ret, fid, 0, e.fnType(ret, ptys))
	for i := range pids {
		head.Add(spirv.OpFunctionParameter, ptys[i], pids[i])
	}
	entry := e.id()
	e.f.label = entry
	if f.compute {
		for i, p := range f.params {
			if p.typ.Kind == kStruct { // members with @builtin
				var parts []uint32
				for k, bi := range p.typ.Struct.Builtins {
					parts = append(parts, e.loadInput(bi, p.typ.Struct.Members[k].Type))
				}
				e.f.values[p] = e.op(spirv.OpCompositeConstruct, e.typeID(p.typ, plain), parts...)
				continue
			}
			e.f.values[p] = e.loadInput(f.builtins[i], p.typ)
		}
		e.initPrivate(f)
		if e.race != nil {
			e.raceEntry()
		}
		e.zeroWorkgroup(f)
	}
	e.stmts(f.decl.Body.Stmts)
	if !e.f.terminated {
		if f.result == nil {
			e.raceFlush()
			e.terminate(spirv.OpReturn)
		} else {
			e.terminate(spirv.OpUnreachable)
		}
	}
	e.funcs = append(e.funcs, head...)
	e.funcs.Add(spirv.OpLabel, entry)
	e.funcs = append(e.funcs, e.f.vars...)
	e.funcs = append(e.funcs, e.f.prelude...)
	e.funcs = append(e.funcs, e.f.body...)
	e.funcs.Add(spirv.OpFunctionEnd)
	if f.compute {
		e.entryPoint(f)
	}
	e.f = nil
}

// loadInput loads the Input variable of builtin value bi, of type t.
func (e *emitter) loadInput(bi string, t *wgslType) uint32 {
	if builtinValues[bi].linear {
		return e.linearIndex(bi)
	}
	in := e.input(bi)
	e.f.inputsUsed[in] = true
	return e.op(spirv.OpLoad, e.typeID(t, plain), in)
}

func (e *emitter) paramType(t *wgslType) uint32 {
	if t.Kind == kPtr {
		return e.ptrType(scFor(t.Space), e.typeID(t.Elem, flavorFor(t.Space)))
	}
	return e.typeID(t, plain)
}

// reachable returns the functions f calls, transitively, f included.
func reachable(f *function) []*function {
	seen := map[*function]bool{}
	var out []*function
	var walk func(*function)
	walk = func(g *function) {
		if seen[g] {
			return
		}
		seen[g] = true
		out = append(out, g)
		for _, h := range g.calls {
			walk(h)
		}
	}
	walk(f)
	return out
}

// usedWorkgroupVars lists the workgroup variables an entry point can touch.
func usedVars(f *function, space addrSpace, all []*symbol) []*symbol {
	used := map[*symbol]bool{}
	for _, g := range reachable(f) {
		for s := range g.usesVars {
			used[s] = true
		}
	}
	var out []*symbol
	for _, s := range all {
		if used[s] && (space == spaceNone || s.space == space) {
			out = append(out, s)
		}
	}
	return out
}

// initPrivate stores the initial values of the private variables f can
// touch whose initializers are computed in the shader (override-expressions
// that are not specialization constants).
func (e *emitter) initPrivate(f *function) {
	for _, s := range usedVars(f, spacePrivate, e.m.globals) {
		if s.initRuntime {
			e.store(e.globalRef(s), s.typ, e.expr(s.init))
		}
	}
}

// computedOverride is the value of an override computed in the shader from
// other overrides, emitted once per function in its entry block.
func (e *emitter) computedOverride(s *symbol) uint32 {
	if id, ok := e.f.computed[s]; ok {
		return id
	}
	if e.f.inPrelude {
		id := e.expr(s.derived)
		e.f.computed[s] = id
		return id
	}
	body, label, term := e.f.body, e.f.label, e.f.terminated
	e.f.body, e.f.terminated, e.f.inPrelude = e.f.prelude, false, true
	id := e.expr(s.derived)
	e.f.prelude, e.f.body, e.f.label, e.f.terminated, e.f.inPrelude = e.f.body, body, label, term, false
	e.f.computed[s] = id
	return id
}

// zeroWorkgroup gives workgroup memory its WGSL zero value, then the
// workgroup synchronizes. The invocations share the stores: the elements of
// an array (nested arrays flattened) go to the invocations in turn, by
// local_invocation_index, so every invocation makes about size/WG stores
// (one invocation storing a 40 KiB tile alone took longer than a matmul's
// whole K loop on an H200); small values are stored by invocation 0.
//
// Options.WorkgroupInit may ask for no stores (and no barrier) or for
// poison instead of zeros.
func (e *emitter) zeroWorkgroup(f *function) {
	vars := usedVars(f, spaceWorkgroup, e.m.globals)
	if len(vars) == 0 || e.opt.WorkgroupInit == WorkgroupUninitialized {
		return
	}
	u32 := e.typeID(e.m.types.scalar(kU32), plain)
	in := e.input("local_invocation_index")
	e.f.inputsUsed[in] = true
	z := wgZero{idx: e.op(spirv.OpLoad, u32, in), size: e.workgroupInvocations(f)}
	for _, s := range vars {
		e.zeroShared(&z, e.globalRef(s), s.typ)
	}
	e.controlBarrier(spirv.MemorySemanticsWorkgroupMemory) // the code's own barriers are counted from here
}

// wgZero is what zeroShared shares: the invocation's local_invocation_index
// and the workgroup's invocation count (ids).
type wgZero struct{ idx, size uint32 }

// workgroupInvocations is the id of the u32 number of invocations in one of
// f's workgroups: a constant, or computed from the override dimensions.
func (e *emitter) workgroupInvocations(f *function) uint32 {
	u32 := e.typeID(e.m.types.scalar(kU32), plain)
	n, known := uint32(1), uint32(0)
	for _, d := range f.wgSize {
		if d.override == nil {
			n *= uint32(max(d.val, 1))
			continue
		}
		v := e.specConstExpr(d.override)
		if known == 0 {
			known = v
		} else {
			known = e.op(spirv.OpIMul, u32, known, v)
		}
	}
	if known == 0 {
		return e.constU32(n)
	}
	if n == 1 {
		return known
	}
	return e.op(spirv.OpIMul, u32, known, e.constU32(n))
}

// zeroShared stores zero into workgroup memory r of type t, shared among the
// workgroup's invocations: an array's elements (nested arrays flattened) in a
// loop from local_invocation_index in steps of the workgroup's invocations,
// a large struct member by member, small values (one store of a null
// composite) by invocation 0.
func (e *emitter) zeroShared(z *wgZero, r refv, t *wgslType) {
	u32 := e.typeID(e.m.types.scalar(kU32), plain)
	switch {
	case t.Kind == kArray && (t.CountOverride != nil || bigValue(t)):
		var counts []uint32 // element counts, outermost first
		leaf := t
		for leaf.Kind == kArray {
			n := e.constU32(uint32(leaf.N))
			if leaf.CountOverride != nil {
				n = e.specConstExpr(leaf.CountOverride.expr)
			}
			counts = append(counts, n)
			leaf = leaf.Elem
		}
		// inner[k] is the product of the counts inside level k (0: none),
		// total that of them all.
		inner := make([]uint32, len(counts))
		total := counts[len(counts)-1]
		for k := len(counts) - 2; k >= 0; k-- {
			inner[k] = total
			total = e.op(spirv.OpIMul, u32, total, counts[k])
		}
		e.counterLoop(func() uint32 { return z.idx }, total, func() uint32 { return z.size }, func(i uint32) {
			el, at := r, t
			for k := range counts {
				j := i
				if inner[k] != 0 {
					j = e.op(spirv.OpUDiv, u32, i, inner[k])
				}
				if k > 0 {
					j = e.op(spirv.OpUMod, u32, j, counts[k])
				}
				el, at = elemRef(el, j, at.Elem), at.Elem
			}
			e.initMem(el, at)
		})
	case t.Kind == kStruct && bigValue(t):
		for k, m := range t.Struct.Members {
			e.zeroShared(z, e.memberRef(r, t, k), m.Type)
		}
	default:
		boolT := e.typeID(e.m.types.scalar(kBool), plain)
		first := e.op(spirv.OpIEqual, boolT, z.idx, e.constU32(0))
		then, merge := e.id(), e.id()
		e.add(spirv.OpSelectionMerge, merge, 0)
		e.terminate(spirv.OpBranchConditional, first, then, merge)
		e.label(then)
		e.initMem(r, t)
		e.branch(merge)
		e.label(merge)
	}
}

// initMem stores workgroup memory's start value into r of type t: zeros, or
// poison's under WorkgroupPoison.
func (e *emitter) initMem(r refv, t *wgslType) {
	val := func(t *wgslType) uint32 { return e.null(e.typeID(t, plain)) }
	if e.opt.WorkgroupInit == WorkgroupPoison {
		val = e.poison
	}
	e.fillMem(r, t, val)
}

// poison is the id of WorkgroupPoison's constant of type t: NaN floats, -1,
// the largest u32, true, and composites (atomics as their integers) of
// those.
func (e *emitter) poison(t *wgslType) uint32 {
	switch t.Kind {
	case kBool:
		return e.constant(t, &value{b: true})
	case kI32:
		return e.constant(t, &value{i: -1})
	case kU32:
		return e.constant(t, &value{i: math.MaxUint32})
	case kF32, kF16:
		return e.constant(t, &value{f: math.NaN()})
	case kAtomic:
		return e.poison(t.Elem)
	case kVec, kMat, kArray, kStruct:
		ty := e.typeID(t, plain)
		key := fmt.Sprint("poison ", ty)
		if id, ok := e.constIDs[key]; ok {
			return id
		}
		parts := []uint32{ty, 0}
		n := t.N
		if t.Kind == kStruct {
			n = len(t.Struct.Members)
		}
		for i := range n {
			parts = append(parts, e.poison(elemType(t, i)))
		}
		parts[1] = e.id()
		e.decls.Add(spirv.OpConstantComposite, parts...)
		e.constIDs[key] = parts[1]
		return parts[1]
	}
	bugf("no poison value of type %s", t)
	return 0
}

// barrier is a barrier of the source (workgroupBarrier, storageBarrier and
// workgroupUniformLoad's): a control barrier that the race check counts.
func (e *emitter) barrier(mem uint32) {
	e.controlBarrier(mem)
	e.raceBarrier(mem)
}

// controlBarrier synchronizes the workgroup's invocations and orders the
// memory mem names.
func (e *emitter) controlBarrier(mem uint32) {
	scope := e.constU32(spirv.ScopeWorkgroup)
	sem := e.constU32(mem | spirv.MemorySemanticsAcquireRelease)
	e.add(spirv.OpControlBarrier, scope, scope, sem)
}

func (e *emitter) entryPoint(f *function) {
	var iface []uint32
	for id := range e.f.inputsUsed {
		iface = append(iface, id)
	}
	slices.Sort(iface)
	fid := e.fnIDs[f]
	e.entries.Add(spirv.OpEntryPoint, append(append([]uint32{spirv.ExecutionModelGLCompute, fid}, spirv.String(f.decl.Name)...), iface...)...)
	var size [3]uint32
	hasOverride := false
	for i, d := range f.wgSize {
		size[i] = uint32(max(d.val, 1))
		if d.override != nil {
			hasOverride = true
		}
	}
	e.modes.Add(spirv.OpExecutionMode, fid, spirv.ExecutionModeLocalSize, size[0], size[1], size[2])
	if hasOverride {
		u32 := e.m.types.scalar(kU32)
		var parts []uint32
		for _, d := range f.wgSize {
			if d.override != nil {
				parts = append(parts, e.specConstExpr(d.override))
			} else {
				parts = append(parts, e.constU32(uint32(d.val)))
			}
		}
		id := e.id()
		e.decls.Add(spirv.OpSpecConstantComposite, append([]uint32{e.typeID(e.m.types.vec(3, u32), plain), id}, parts...)...)
		e.decorate(id, spirv.DecorationBuiltIn, spirv.BuiltInWorkgroupSize)
		e.wgSizeID = id
	}
}

func (e *emitter) stmts(ss []stmt) {
	for _, s := range ss {
		if e.f.terminated {
			return // dead code after return/break/continue
		}
		e.stmt(s)
	}
}

func (e *emitter) stmt(s stmt) {
	if e.race != nil {
		e.race.pos = s.stmtPos()
	}
	switch s := s.(type) {
	case *blockStmt:
		e.stmts(s.Stmts)
	case *declStmt:
		e.localDecl(s.Decl)
	case *assignStmt:
		e.assign(s)
	case *incDecStmt:
		r := e.ref(s.X)
		t := e.m.info[s.X].typ
		old := e.load(r, t)
		op := spirv.OpIAdd
		if s.Op == opDec {
			op = spirv.OpISub
		}
		one := e.constant(t, &value{i: 1})
		e.store(r, t, e.op(op, e.typeID(t, plain), old, one))
	case *ifStmt:
		e.ifStmt(s)
	case *forStmt:
		if s.Init != nil {
			e.stmt(s.Init)
		}
		control := e.forLoopControl(s)
		if e.unrolled(s, control) {
			return
		}
		var update []stmt
		if s.Update != nil {
			update = []stmt{s.Update}
		}
		e.loop(s.Cond, s.Body.Stmts, update, nil, control)
	case *whileStmt:
		e.loop(s.Cond, s.Body.Stmts, nil, nil, spirv.LoopControlNone)
	case *loopStmt:
		var cont []stmt
		if s.Continuing != nil {
			cont = s.Continuing.Stmts
		}
		e.loop(nil, s.Body.Stmts, cont, s.BreakIf, spirv.LoopControlNone)
	case *breakStmt:
		e.terminate(spirv.OpBranch, e.f.loops[len(e.f.loops)-1].merge)
	case *continueStmt:
		for i := len(e.f.loops) - 1; i >= 0; i-- {
			if c := e.f.loops[i].cont; c != 0 {
				e.terminate(spirv.OpBranch, c)
				return
			}
		}
		bugf("continue outside a loop")
	case *switchStmt:
		e.switchStmt(s)
	case *returnStmt:
		if s.X == nil || e.f.fn.result == nil {
			e.raceFlush()
			e.terminate(spirv.OpReturn)
		} else if e.f.result != 0 {
			e.storeValue(e.localRefOf(e.f.result, e.f.fn.result), e.f.fn.result, s.X)
			e.terminate(spirv.OpReturn)
		} else {
			e.terminate(spirv.OpReturnValue, e.expr(s.X))
		}
	case *callStmt:
		e.callExpr(s.Call)
	case *constAssert:
	default:
		bugf("unknown statement %T", s)
	}
}

func (e *emitter) localDecl(d *varDecl) {
	s := e.declSym(d)
	switch d.Kind {
	case "const":
	case "let":
		if s.typ.Kind == kPtr {
			e.f.ptrRefs[s] = e.ptrRef(d.Init)
			return
		}
		if bigValue(s.typ) {
			if v, ok := e.immutableMem(d.Init); ok { // the memory of another let or parameter
				e.bindMem(s, v)
				return
			}
			if c, ok := unparen(d.Init).(*callExpr); ok && e.memRoot(c) { // a result no one else sees
				e.bindMem(s, e.ref(c).base)
				return
			}
			v := e.localVar(s.typ)
			e.name(v, d.Name)
			e.storeValue(e.localRefOf(v, s.typ), s.typ, d.Init)
			e.bindMem(s, v)
			return
		}
		e.f.values[s] = e.expr(d.Init)
	case "var":
		v := e.localVar(s.typ)
		e.name(v, d.Name)
		e.f.values[s] = v
		if d.Init != nil {
			e.storeValue(e.localRefOf(v, s.typ), s.typ, d.Init)
		} else {
			e.add(spirv.OpStore, v, e.null(e.typeID(s.typ, plain)))
		}
	}
}

// declSym finds the symbol the checker made for a local declaration.
func (e *emitter) declSym(d *varDecl) *symbol {
	s := e.m.localSyms[d]
	if s == nil {
		bugf("local '%s' was not checked", d.Name)
	}
	return s
}

func (e *emitter) assign(s *assignStmt) {
	if s.LHS == nil {
		if e.info(s.RHS).typ.Kind == kPtr {
			e.ptrRef(s.RHS) // the indices' side effects; no pointer needs to exist
			return
		}
		e.expr(s.RHS)
		return
	}
	if m, ok := unparen(s.LHS).(*memberExpr); ok && e.info(m).swizzleOf {
		e.swizzleAssign(s, m)
		return
	}
	r := e.ref(s.LHS)
	t := e.m.info[s.LHS].typ
	if s.Op == opAssign {
		e.storeValue(r, t, s.RHS)
		return
	}
	old := e.load(r, t)
	rt := e.m.info[s.RHS].typ
	v := e.binaryOp(s.Op, old, t, e.expr(s.RHS), rt, t)
	e.store(r, t, v)
}

// swizzleAssign emits v.xy = e (or v.xy += e, ...) as one store per named
// component, so the components not named are not written.
func (e *emitter) swizzleAssign(s *assignStmt, m *memberExpr) {
	info := e.info(m)
	var r refv
	if info.autoDeref {
		r = e.derefPtr(m.X)
	} else {
		r = e.ref(m.X)
	}
	vt := info.typ // the swizzle's vector type
	st := vt.Elem
	comp := func(k int) refv {
		c := r
		c.idx = append(append([]uint32(nil), r.idx...), e.constU32(uint32(info.swizzle[k])))
		c.block = 0
		return c
	}
	var v uint32
	if s.Op == opAssign {
		v = e.expr(s.RHS)
	} else { // as *r = *r op e2: the old value is read first
		parts := make([]uint32, len(info.swizzle))
		for k := range parts {
			parts[k] = e.load(comp(k), st)
		}
		old := e.op(spirv.OpCompositeConstruct, e.typeID(vt, plain), parts...)
		v = e.binaryOp(s.Op, old, vt, e.expr(s.RHS), e.info(s.RHS).typ, vt)
	}
	for k := range info.swizzle {
		e.store(comp(k), st, e.op(spirv.OpCompositeExtract, e.typeID(st, plain), v, uint32(k)))
	}
}

func (e *emitter) ifStmt(s *ifStmt) {
	// A constant condition (a const-expression; in a specialized module,
	// override-expressions too) takes one arm whatever the inputs: that arm
	// is emitted as plain code and the other, dead, is left out, as a
	// driver would drop it (so that nothing in it reaches a driver: its
	// loads, calls and variables).
	if v := e.info(s.Cond).val; v != nil {
		if v.b {
			e.stmts(s.Then.Stmts)
		} else if s.Else != nil {
			e.stmt(s.Else)
		}
		return
	}
	c := e.expr(s.Cond)
	then, merge := e.id(), e.id()
	els := merge
	if s.Else != nil {
		els = e.id()
	}
	e.add(spirv.OpSelectionMerge, merge, 0)
	e.terminate(spirv.OpBranchConditional, c, then, els)
	e.label(then)
	e.stmts(s.Then.Stmts)
	e.branch(merge)
	if s.Else != nil {
		e.label(els)
		e.stmt(s.Else)
		e.branch(merge)
	}
	e.label(merge)
}

// loop emits the structured loop shared by for, while and loop:
//
//	header: OpLoopMerge merge cont; -> cond
//	cond:   if !cond -> merge; -> body
//	body ... -> cont
//	cont:   continuing; break if -> merge; -> header
//
// control is OpLoopMerge's loop control (forLoopControl).
func (e *emitter) loop(cond expr, body []stmt, cont []stmt, breakIf expr, control uint32) {
	header, bodyL, contL, merge := e.id(), e.id(), e.id(), e.id()
	e.branch(header)
	e.label(header)
	e.add(spirv.OpLoopMerge, merge, contL, control)
	if cond != nil {
		condL := e.id()
		e.terminate(spirv.OpBranch, condL)
		e.label(condL)
		c := e.expr(cond)
		e.terminate(spirv.OpBranchConditional, c, bodyL, merge)
	} else {
		e.terminate(spirv.OpBranch, bodyL)
	}
	e.label(bodyL)
	e.f.loops = append(e.f.loops, loopTargets{merge: merge, cont: contL})
	e.stmts(body)
	e.f.loops = e.f.loops[:len(e.f.loops)-1]
	e.branch(contL)
	e.label(contL)
	e.stmts(cont)
	if breakIf != nil {
		c := e.expr(breakIf)
		e.terminate(spirv.OpBranchConditional, c, merge, header)
	} else {
		e.branch(header)
	}
	e.label(merge)
}

func (e *emitter) switchStmt(s *switchStmt) {
	sel := e.expr(s.Sel)
	st := e.info(s.Sel).typ
	merge := e.id()
	labels := make([]uint32, len(s.Clauses))
	var def uint32
	var targets []uint32
	for i, cl := range s.Clauses {
		labels[i] = e.id()
		for _, x := range cl.Selectors {
			if x == nil {
				def = labels[i]
				continue
			}
			targets = append(targets, bitsOf(e.info(x).val, st), labels[i])
		}
	}
	e.add(spirv.OpSelectionMerge, merge, 0)
	e.terminate(spirv.OpSwitch, append([]uint32{sel, def}, targets...)...)
	e.f.loops = append(e.f.loops, loopTargets{merge: merge})
	for i, cl := range s.Clauses {
		e.label(labels[i])
		e.stmts(cl.Body.Stmts)
		e.branch(merge)
	}
	e.f.loops = e.f.loops[:len(e.f.loops)-1]
	e.label(merge)
}
