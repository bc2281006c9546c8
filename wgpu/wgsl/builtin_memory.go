package wgsl

import "github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"

// The builtins of memory and synchronization, as builtinTable entries:
// arrayLength, the atomics, workgroupBarrier, storageBarrier and
// workgroupUniformLoad. None is a const-expression.

func addMemory(b map[string]*tableBuiltin) {
	b["arrayLength"] = &tableBuiltin{nargs: 1, runtime: true, flow: flowUniform, ptrUse: ptrNone, sig: sigArrayLength,
		emitCall: func(e *emitter, c *callExpr, res *wgslType) uint32 { return e.arrayLength(c, e.typeID(res, plain)) }}
	barrier := func(mem uint32) *tableBuiltin {
		return &tableBuiltin{nargs: 0, runtime: true, noValue: true, flow: flowBarrier,
			sig: func(c *checker, _ *callExpr, _ []*exprInfo) *wgslType { return c.ts.scalar(kBool) },
			emit: func(e *emitter, _ *wgslType, _ []uint32, _ []*wgslType) uint32 {
				e.barrier(mem)
				return 0
			}}
	}
	b["workgroupBarrier"] = barrier(spirv.MemorySemanticsWorkgroupMemory)
	b["storageBarrier"] = barrier(spirv.MemorySemanticsUniformMemory)
	b["workgroupUniformLoad"] = &tableBuiltin{nargs: 1, runtime: true, flow: flowBarrier, ptrUse: ptrRead, sig: sigUniformLoad,
		emit: func(e *emitter, res *wgslType, as []uint32, _ []*wgslType) uint32 {
			e.barrier(spirv.MemorySemanticsWorkgroupMemory)
			v := e.op(spirv.OpLoad, e.typeID(res, plain), as[0])
			e.barrier(spirv.MemorySemanticsWorkgroupMemory)
			return v
		}}

	// atomic: an atomic builtin of nargs arguments whose emission, given
	// the pointer, scope and the other arguments, is emit.
	atomic := func(nargs int, emit func(e *emitter, res, el *wgslType, p, scope uint32, vals []uint32) uint32) *tableBuiltin {
		return &tableBuiltin{nargs: nargs, runtime: true, flow: flowNonUniform, sig: sigAtomic,
			emit: func(e *emitter, res *wgslType, as []uint32, argT []*wgslType) uint32 {
				pt := argT[0]
				scope := e.constU32(pick(pt.Space == spaceWorkgroup, uint32(spirv.ScopeWorkgroup), spirv.ScopeDevice))
				return emit(e, res, pt.Elem.Elem, as[0], scope, as[1:])
			}}
	}
	relaxed := func(e *emitter) uint32 { return e.constU32(0) }
	b["atomicLoad"] = atomic(1, func(e *emitter, _, el *wgslType, p, scope uint32, _ []uint32) uint32 {
		return e.op(spirv.OpAtomicLoad, e.typeID(el, plain), p, scope, relaxed(e))
	})
	b["atomicStore"] = atomic(2, func(e *emitter, _, _ *wgslType, p, scope uint32, vals []uint32) uint32 {
		e.add(spirv.OpAtomicStore, p, scope, relaxed(e), vals[0])
		return 0
	})
	b["atomicStore"].noValue, b["atomicStore"].ptrUse = true, ptrWrite
	b["atomicLoad"].ptrUse = ptrRead
	b["atomicCompareExchangeWeak"] = atomic(3, func(e *emitter, res, el *wgslType, p, scope uint32, vals []uint32) uint32 {
		ty := e.typeID(el, plain)
		r := relaxed(e)
		old := e.op(spirv.OpAtomicCompareExchange, ty, p, scope, r, r, vals[1], vals[0])
		ok := e.op(spirv.OpIEqual, e.typeID(e.m.types.scalar(kBool), plain), old, vals[0])
		return e.op(spirv.OpCompositeConstruct, e.typeID(res, plain), old, ok)
	})
	rmw := func(signed, unsigned spirv.Op) *tableBuiltin {
		return atomic(2, func(e *emitter, _, el *wgslType, p, scope uint32, vals []uint32) uint32 {
			return e.op(pick(el.Kind == kI32, signed, unsigned), e.typeID(el, plain), p, scope, relaxed(e), vals[0])
		})
	}
	b["atomicAdd"] = rmw(spirv.OpAtomicIAdd, spirv.OpAtomicIAdd)
	b["atomicSub"] = rmw(spirv.OpAtomicISub, spirv.OpAtomicISub)
	b["atomicMax"] = rmw(spirv.OpAtomicSMax, spirv.OpAtomicUMax)
	b["atomicMin"] = rmw(spirv.OpAtomicSMin, spirv.OpAtomicUMin)
	b["atomicAnd"] = rmw(spirv.OpAtomicAnd, spirv.OpAtomicAnd)
	b["atomicOr"] = rmw(spirv.OpAtomicOr, spirv.OpAtomicOr)
	b["atomicXor"] = rmw(spirv.OpAtomicXor, spirv.OpAtomicXor)
	b["atomicExchange"] = rmw(spirv.OpAtomicExchange, spirv.OpAtomicExchange)
	for _, n := range []string{"atomicAdd", "atomicSub", "atomicMax", "atomicMin", "atomicAnd", "atomicOr", "atomicXor", "atomicExchange", "atomicCompareExchangeWeak"} {
		b[n].discardable = true
	}
}

// sigArrayLength: arrayLength(ptr<storage, array<T>>) -> u32.
func sigArrayLength(c *checker, e *callExpr, xs []*exprInfo) *wgslType {
	if !c.noMatrices(e, xs) {
		return nil
	}
	p := xs[0].typ
	if p.Kind != kPtr || p.Space != spaceStorage || p.Elem.Kind != kArray || !p.Elem.runtimeSized() {
		c.errorf(e.Pos, "'arrayLength' needs a pointer to a runtime-sized storage array, got '%s'", p)
		return nil
	}
	return c.ts.scalar(kU32)
}

// sigUniformLoad: workgroupUniformLoad(ptr<workgroup, T>) -> T.
func sigUniformLoad(c *checker, e *callExpr, xs []*exprInfo) *wgslType {
	if !c.noMatrices(e, xs) {
		return nil
	}
	p := xs[0].typ
	if p.Kind != kPtr || p.Space != spaceWorkgroup || !p.Elem.constructible() {
		c.errorf(e.Pos, "'workgroupUniformLoad' needs a pointer to a constructible workgroup variable, got '%s'", p)
		return nil
	}
	return p.Elem
}

// sigAtomic: the atomics take a pointer to a read_write atomic<T> and
// values of T; atomicLoad and the read-modify-write operations return T,
// atomicCompareExchangeWeak its result struct.
func sigAtomic(c *checker, e *callExpr, xs []*exprInfo) *wgslType {
	name := e.Fn.Name
	if !c.noMatrices(e, xs) {
		return nil
	}
	p := xs[0].typ
	if p.Kind != kPtr || p.Elem.Kind != kAtomic || p.Access != accessReadWrite {
		c.errorSpan(e.Args[0], "'%s' needs a pointer to a read_write atomic, got '%s'", name, p)
		return nil
	}
	el := p.Elem.Elem
	for i := 1; i < len(xs); i++ {
		c.convertTo(e.Args[i], el)
	}
	switch name {
	case "atomicStore":
		return c.ts.scalar(kBool)
	case "atomicCompareExchangeWeak":
		return c.cmpxchgResult(el)
	}
	return el
}
