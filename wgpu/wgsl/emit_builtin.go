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
	case bSubArith, bSubBits, bSubShuffle, bSubBroadcast, bSubBroadcastFirst, bSubElect, bSubVote, bSubBallot:
		return e.subgroup(c, info, ty)
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

func (e *emitter) subgroup(c *Call, info *exprInfo, ty uint32) uint32 {
	name := c.Fn.Name
	e.capability(spirv.CapabilityGroupNonUniform)
	scope := e.constU32(spirv.ScopeSubgroup)
	var as []uint32
	for _, a := range c.Args {
		as = append(as, e.expr(a))
	}
	s := info.typ.scalarOf()
	lane := func() uint32 {
		if e.info(c.Args[1]).typ.Kind == KI32 {
			return e.op(spirv.OpBitcast, e.typeID(e.m.types.scalar(KU32), plain), as[1])
		}
		return as[1]
	}
	arith := func(f, si, u spirv.Op, group uint32) uint32 {
		e.capability(spirv.CapabilityGroupNonUniformArithmetic)
		op := u
		if s.isFloat() {
			op = f
		} else if s.Kind == KI32 {
			op = si
		}
		return e.op(op, ty, scope, group, as[0])
	}
	switch name {
	case "subgroupAdd":
		return arith(spirv.OpGroupNonUniformFAdd, spirv.OpGroupNonUniformIAdd, spirv.OpGroupNonUniformIAdd, spirv.GroupOperationReduce)
	case "subgroupInclusiveAdd":
		return arith(spirv.OpGroupNonUniformFAdd, spirv.OpGroupNonUniformIAdd, spirv.OpGroupNonUniformIAdd, spirv.GroupOperationInclusiveScan)
	case "subgroupExclusiveAdd":
		return arith(spirv.OpGroupNonUniformFAdd, spirv.OpGroupNonUniformIAdd, spirv.OpGroupNonUniformIAdd, spirv.GroupOperationExclusiveScan)
	case "subgroupMul":
		return arith(spirv.OpGroupNonUniformFMul, spirv.OpGroupNonUniformIMul, spirv.OpGroupNonUniformIMul, spirv.GroupOperationReduce)
	case "subgroupInclusiveMul":
		return arith(spirv.OpGroupNonUniformFMul, spirv.OpGroupNonUniformIMul, spirv.OpGroupNonUniformIMul, spirv.GroupOperationInclusiveScan)
	case "subgroupExclusiveMul":
		return arith(spirv.OpGroupNonUniformFMul, spirv.OpGroupNonUniformIMul, spirv.OpGroupNonUniformIMul, spirv.GroupOperationExclusiveScan)
	case "subgroupMin":
		return arith(spirv.OpGroupNonUniformFMin, spirv.OpGroupNonUniformSMin, spirv.OpGroupNonUniformUMin, spirv.GroupOperationReduce)
	case "subgroupMax":
		return arith(spirv.OpGroupNonUniformFMax, spirv.OpGroupNonUniformSMax, spirv.OpGroupNonUniformUMax, spirv.GroupOperationReduce)
	case "subgroupAnd":
		return arith(0, spirv.OpGroupNonUniformBitwiseAnd, spirv.OpGroupNonUniformBitwiseAnd, spirv.GroupOperationReduce)
	case "subgroupOr":
		return arith(0, spirv.OpGroupNonUniformBitwiseOr, spirv.OpGroupNonUniformBitwiseOr, spirv.GroupOperationReduce)
	case "subgroupXor":
		return arith(0, spirv.OpGroupNonUniformBitwiseXor, spirv.OpGroupNonUniformBitwiseXor, spirv.GroupOperationReduce)
	case "subgroupBroadcast":
		e.capability(spirv.CapabilityGroupNonUniformBallot)
		return e.op(spirv.OpGroupNonUniformBroadcast, ty, scope, as[0], lane())
	case "subgroupBroadcastFirst":
		e.capability(spirv.CapabilityGroupNonUniformBallot)
		return e.op(spirv.OpGroupNonUniformBroadcastFirst, ty, scope, as[0])
	case "subgroupShuffle", "subgroupShuffleXor":
		e.capability(spirv.CapabilityGroupNonUniformShuffle)
		return e.op(pick(name == "subgroupShuffle", spirv.OpGroupNonUniformShuffle, spirv.OpGroupNonUniformShuffleXor), ty, scope, as[0], lane())
	case "subgroupShuffleUp", "subgroupShuffleDown":
		e.capability(spirv.CapabilityGroupNonUniformShuffleRelative)
		return e.op(pick(name == "subgroupShuffleUp", spirv.OpGroupNonUniformShuffleUp, spirv.OpGroupNonUniformShuffleDown), ty, scope, as[0], lane())
	case "subgroupElect":
		return e.op(spirv.OpGroupNonUniformElect, ty, scope)
	case "subgroupAll", "subgroupAny":
		e.capability(spirv.CapabilityGroupNonUniformVote)
		return e.op(pick(name == "subgroupAll", spirv.OpGroupNonUniformAll, spirv.OpGroupNonUniformAny), ty, scope, as[0])
	case "subgroupBallot":
		e.capability(spirv.CapabilityGroupNonUniformBallot)
		return e.op(spirv.OpGroupNonUniformBallot, ty, scope, as[0])
	}
	bugf("unknown subgroup builtin %s", name)
	return 0
}
