package wgsl

import "github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"

func (e *emitter) ext(ty uint32, inst uint32, args ...uint32) uint32 {
	return e.op(spirv.OpExtInst, ty, append([]uint32{e.glsl, inst}, args...)...)
}

func (e *emitter) builtin(c *Call, info *exprInfo) uint32 {
	name := c.Fn.Name
	ty := uint32(0)
	if info.typ != nil {
		ty = e.typeID(info.typ, plain)
	}
	args := func() []uint32 {
		var out []uint32
		for _, a := range c.Args {
			out = append(out, e.expr(a))
		}
		return out
	}
	if b := builtinTable[name]; b != nil {
		return e.emitTable(c, b, info)
	}
	switch cls := builtinFns[name]; cls {
	case bArrayLength:
		return e.arrayLength(c, ty)
	case bBarrier:
		if name == "workgroupBarrier" {
			e.barrier(spirv.MemorySemanticsWorkgroupMemory)
		} else {
			e.barrier(spirv.MemorySemanticsUniformMemory)
		}
		return 0
	case bAtomicLoad, bAtomicStore, bAtomicRMW, bAtomicCmpXchg:
		return e.atomic(c, info)
	case bUniformLoad:
		p := args()[0]
		e.barrier(spirv.MemorySemanticsWorkgroupMemory)
		v := e.op(spirv.OpLoad, ty, p)
		e.barrier(spirv.MemorySemanticsWorkgroupMemory)
		return v
	}
	bugf("unknown builtin %s", name)
	return 0
}

// arrayLength is OpArrayLength of the buffer a pointer leads to: &buf (a
// wrapped runtime array, member 0 of the Block), &buf.member (the last
// member of the buffer's struct), or a pointer parameter or let made from
// one of them (a runtime-sized array lives only in a storage buffer, so its
// pointer's root is always the buffer variable).
func (e *emitter) arrayLength(c *Call, ty uint32) uint32 {
	r := e.ptrRef(c.Args[0])
	member, ok := uint32(0), len(r.idx) == 1
	if ok {
		member, ok = e.constIndex[r.idx[0]]
	}
	if !ok || !e.isGlobalVar(r.base) {
		bugf("arrayLength of a pointer not into a buffer's runtime-sized array")
	}
	return e.op(spirv.OpArrayLength, ty, r.base, member)
}

func (e *emitter) atomic(c *Call, info *exprInfo) uint32 {
	name := c.Fn.Name
	pt := e.info(c.Args[0]).typ
	el := pt.Elem.Elem
	ty := e.typeID(el, plain)
	p := e.expr(c.Args[0])
	scope := e.constU32(spirv.ScopeDevice)
	if pt.Space == SpaceWorkgroup {
		scope = e.constU32(spirv.ScopeWorkgroup)
	}
	relaxed := e.constU32(0)
	var vals []uint32
	for _, a := range c.Args[1:] {
		vals = append(vals, e.expr(a))
	}
	signed := el.Kind == KI32
	switch name {
	case "atomicLoad":
		return e.op(spirv.OpAtomicLoad, ty, p, scope, relaxed)
	case "atomicStore":
		e.add(spirv.OpAtomicStore, p, scope, relaxed, vals[0])
		return 0
	case "atomicCompareExchangeWeak":
		old := e.op(spirv.OpAtomicCompareExchange, ty, p, scope, relaxed, relaxed, vals[1], vals[0])
		ok := e.op(spirv.OpIEqual, e.typeID(e.m.types.scalar(KBool), plain), old, vals[0])
		return e.op(spirv.OpCompositeConstruct, e.typeID(info.typ, plain), old, ok)
	}
	op := map[string]spirv.Op{
		"atomicAdd": spirv.OpAtomicIAdd, "atomicSub": spirv.OpAtomicISub,
		"atomicMax": pick(signed, spirv.OpAtomicSMax, spirv.OpAtomicUMax),
		"atomicMin": pick(signed, spirv.OpAtomicSMin, spirv.OpAtomicUMin),
		"atomicAnd": spirv.OpAtomicAnd, "atomicOr": spirv.OpAtomicOr, "atomicXor": spirv.OpAtomicXor,
		"atomicExchange": spirv.OpAtomicExchange,
	}[name]
	return e.op(op, ty, p, scope, relaxed, vals[0])
}
