package wgsl

import "github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"

// Lowered subgroup matrices (Options.CooperativeMatrix false): ordinary
// invocation code that every Vulkan 1.1 device with subgroup arithmetic
// runs, with the results of the native path up to rounding.
//
// Every invocation holds a whole matrix: a subgroup matrix of R rows and C
// columns is an array<T, R*C> value (element [r, c] at r*C + c), and since
// every argument of the builtins is uniform (checked), every invocation of a
// subgroup holds the same matrices. So
//
//   - subgroupMatrixLoad reads all R*C elements in every invocation;
//   - subgroupMatrixMultiply(Accumulate) computes the whole product in every
//     invocation: for each [m, n], starting from acc[m, n] (or zero), it adds
//     left[m, k] * right[k, n] for k = 0, 1, ..., K-1 in that order, with both
//     operands converted to the result's component type first and each
//     multiply and add in that type. That is what the native
//     OpCooperativeMatrixMulAddKHR specifies ("the operations occur using the
//     result type"): f16 operands into an f32 result accumulate in f32 (their
//     products are exact in f32), f16 into f16 in f16; integers wrap;
//   - subgroupMatrixStore writes each element from exactly one invocation of
//     the subgroup, so that no two invocations write one location: the
//     invocations that execute the store number themselves among the active
//     ones (rank = subgroupExclusiveAdd(1), count = subgroupAdd(1)), and the
//     invocation of rank r writes elements r, r+count, r+2*count, ... That is
//     right for every subgroup size (lavapipe 8 or 16, SwiftShader 4, 32 or
//     64 on GPUs) and for a partial last subgroup;
//   - the scalar builtins apply their operation to every element.
//
// i8 and u8 matrices hold their elements in their shader scalar type (i32,
// u32), always within the 8-bit range: fill values and scalars are clamped
// to it, and what arithmetic computes is wrapped back into it (modulo 256,
// as the native 8-bit arithmetic wraps). Memory holds four of their
// components to an array element, component j of a row (column) in byte
// j%4 of element offset + row*stride + j/4 (the layout-template form:
// offset and stride count array elements) or offset/4 + row*(stride/4) +
// j/4 (the bool form, which counts components: taken down to multiples of
// 4, as the native load reads them). A load extracts the byte; a store
// replaces it with two atomic operations on the array element (an and,
// then an or), so that invocations storing its other bytes, in this
// subgroup or any other, keep theirs.
//
// Memory indices are clamped to the array as any index is (unless
// Options.NoIndexClamp), so a load or store past the end stays inside it.

// componentBytes is the size in memory of a component of subgroup matrix
// t: 1 for i8 and u8, else its shader scalar type's.
func componentBytes(t *wgslType) int {
	if t.Narrow {
		return 1
	}
	return t.Elem.Size()
}

// lowMatrixType is the SPIR-V array type standing for subgroup matrix t.
func (e *emitter) lowMatrixType(t *wgslType) uint32 {
	el := e.typeID(t.Elem, plain)
	n := e.constU32(uint32(t.N * t.Rows))
	id := e.id()
	e.decls.Add(spirv.OpTypeArray, id, el, n)
	return id
}

// matrixCall emits a call of a subgroup matrix builtin of result type res.
func (e *emitter) matrixCall(c *callExpr, res *wgslType) uint32 {
	if e.opt.CooperativeMatrix {
		return e.coopCall(c, res)
	}
	switch c.Fn.Name {
	case "subgroupMatrixLoad":
		return e.lowLoad(c, res)
	case "subgroupMatrixStore":
		e.lowStore(c)
		return 0
	case "subgroupMatrixMultiply", "subgroupMatrixMultiplyAccumulate":
		return e.lowMulAdd(c, res)
	}
	if _, ok := matrixScalarOps[c.Fn.Name]; ok {
		return e.matrixScalarOp(c, res)
	}
	bugf("unknown subgroup matrix builtin %s", c.Fn.Name)
	return 0
}

// matrixFill emits T(s): the matrix of type t with every element s (for i8
// and u8, s clamped to their range).
func (e *emitter) matrixFill(t *wgslType, s uint32) uint32 {
	s = e.matrixScalar(t, s)
	if e.opt.CooperativeMatrix {
		return e.op(spirv.OpCompositeConstruct, e.typeID(t, plain), s)
	}
	parts := make([]uint32, t.N*t.Rows)
	for i := range parts {
		parts[i] = s
	}
	return e.op(spirv.OpCompositeConstruct, e.typeID(t, plain), parts...)
}

// matrixMemory gives the memory operands of a load or store: the array the
// pointer leads to, its type, the offset and stride ids (u32), the layout,
// and the argument index of the offset.
func (e *emitter) matrixMemory(c *callExpr) (r refv, at *wgslType, off, str uint32, cm bool, offArg int) {
	ops, ok := matrixOperands(c)
	if !ok {
		bugf("%s with %d template arguments and %d arguments", c.Fn.Name, len(c.Fn.Args), len(c.Args))
	}
	r = e.ptrRef(c.Args[ops.ptr])
	at = e.info(c.Args[ops.ptr]).typ.Elem
	u32 := e.typeID(e.m.types.scalar(kU32), plain)
	asU32 := func(i int) uint32 {
		v := e.expr(c.Args[i])
		if e.info(c.Args[i]).typ.Kind == kI32 {
			v = e.op(spirv.OpBitcast, u32, v)
		}
		return v
	}
	off, str = asU32(ops.offset), asU32(ops.stride)
	return r, at, off, str, ops.colMajor(e.m.info, c), ops.offset
}

// lowElement is the reference to the memory element holding matrix element
// i (an id, row-major over the matrix t), clamped to the array:
// p[offset + r*stride + c], or p[offset + c*stride + r] column-major; for
// i8 and u8 the element holding the component, and the bit offset of its
// byte there (see the top of this file; words: offset and stride count
// array elements, else components), 0 for other types.
func (e *emitter) lowElement(r refv, at, t *wgslType, off, stride uint32, colMajor, words bool, i uint32) (refv, uint32) {
	u32 := e.m.types.scalar(kU32)
	ut := e.typeID(u32, plain)
	major, minor := e.majorMinor(t, i, colMajor)
	shift, inner := uint32(0), minor
	if t.Narrow {
		if !words {
			off, stride = e.quarter(off), e.quarter(stride)
		}
		inner = e.quarter(minor)
	}
	idx := e.op(spirv.OpIAdd, ut, off, e.op(spirv.OpIAdd, ut, e.op(spirv.OpIMul, ut, major, stride), inner))
	if t.Narrow {
		shift = e.op(spirv.OpShiftLeftLogical, ut, e.op(spirv.OpBitwiseAnd, ut, minor, e.constU32(3)), e.constU32(3))
	}
	idx = e.clampIndex(idx, nil, u32, at, &r)
	return elemRef(r, idx, at.Elem), shift
}

// lowLoad emits subgroupMatrixLoad: every invocation reads every element.
func (e *emitter) lowLoad(c *callExpr, t *wgslType) uint32 {
	r, at, off, stride, cm, _ := e.matrixMemory(c)
	if reinterprets(at, t) {
		return e.byteLoad(e.newByteView(r, at), t, off, stride, cm)
	}
	tmp := e.localVar(t)
	e.countLoop(e.constU32(uint32(t.N*t.Rows)), func(i uint32) {
		ref, shift := e.lowElement(r, at, t, off, stride, cm, layoutTemplated(c), i)
		v := e.load(ref, t.Elem)
		if t.Narrow {
			extract := pick(t.Elem.Kind == kI32, spirv.OpBitFieldSExtract, spirv.OpBitFieldUExtract)
			v = e.op(extract, e.typeID(t.Elem, plain), v, shift, e.constU32(8))
		}
		e.add(spirv.OpStore, e.lowSlot(tmp, t, i), v)
	})
	return e.op(spirv.OpLoad, e.typeID(t, plain), tmp)
}

// lowNarrowStore puts v, an element of i8 or u8 matrix t, into its byte of
// the array element ref (at bit offset shift): an atomic and clears the
// byte, an atomic or sets it, in memory of address space sp.
func (e *emitter) lowNarrowStore(ref refv, t *wgslType, sp addrSpace, shift, v uint32) {
	ut := e.typeID(e.m.types.scalar(kU32), plain)
	if t.Elem.Kind == kI32 {
		v = e.op(spirv.OpBitcast, ut, v)
	}
	bits := e.op(spirv.OpShiftLeftLogical, ut, e.op(spirv.OpBitwiseAnd, ut, v, e.constU32(0xff)), shift)
	keep := e.op(spirv.OpNot, ut, e.op(spirv.OpShiftLeftLogical, ut, e.constU32(0xff), shift))
	e.atomicAndOr(ref, t.Elem, sp, keep, bits)
}

// atomicAndOr clears the bits of the i32 or u32 at ref (of type ty, in
// address space sp) that keep (a u32 id) clears, then sets those of bits
// (a u32 id): an atomic and, then an atomic or, so that invocations changing
// its other bits keep theirs.
func (e *emitter) atomicAndOr(ref refv, ty *wgslType, sp addrSpace, keep, bits uint32) {
	tid := e.typeID(ty, plain)
	if ty.Kind == kI32 {
		bits, keep = e.op(spirv.OpBitcast, tid, bits), e.op(spirv.OpBitcast, tid, keep)
	}
	p := e.ptr(ref, ty)
	scope, relaxed := e.constU32(pick(sp == spaceWorkgroup, uint32(spirv.ScopeWorkgroup), spirv.ScopeDevice)), e.constU32(spirv.MemorySemanticsRelaxed)
	e.op(spirv.OpAtomicAnd, tid, p, scope, relaxed, keep)
	e.op(spirv.OpAtomicOr, tid, p, scope, relaxed, bits)
}

// lowStore emits subgroupMatrixStore: each element from one invocation.
func (e *emitter) lowStore(c *callExpr) {
	t := e.info(c.Args[2]).typ // the value is argument 2 in both forms
	r, at, off, stride, cm, _ := e.matrixMemory(c)
	tmp := e.localVar(t)
	e.add(spirv.OpStore, tmp, e.expr(c.Args[2]))
	rank, count := e.subgroupRank()
	sp := e.info(c.Args[0]).typ.Space // the pointer is argument 0 in both forms
	if reinterprets(at, t) {
		e.byteStore(e.newByteView(r, at), t, tmp, off, stride, cm, sp, rank, count)
		return
	}
	e.strideLoop(rank, e.constU32(uint32(t.N*t.Rows)), count, func(i uint32) {
		v := e.op(spirv.OpLoad, e.typeID(t.Elem, plain), e.lowSlot(tmp, t, i))
		ref, shift := e.lowElement(r, at, t, off, stride, cm, layoutTemplated(c), i)
		if t.Narrow {
			e.lowNarrowStore(ref, t, sp, shift, v)
			return
		}
		e.store(ref, t.Elem, v)
	})
}

// subgroupRank numbers the invocations that execute it among the active
// ones of their subgroup: rank from 0, and count of them.
func (e *emitter) subgroupRank() (rank, count uint32) {
	e.capability(spirv.CapabilityGroupNonUniform)
	e.capability(spirv.CapabilityGroupNonUniformArithmetic)
	ut := e.typeID(e.m.types.scalar(kU32), plain)
	one, scope := e.constU32(1), e.constU32(spirv.ScopeSubgroup)
	rank = e.op(spirv.OpGroupNonUniformIAdd, ut, scope, spirv.GroupOperationExclusiveScan, one)
	count = e.op(spirv.OpGroupNonUniformIAdd, ut, scope, spirv.GroupOperationReduce, one)
	return rank, count
}

// lowSlot is a pointer to element i (an id) of the lowered matrix of type t
// in Function variable v.
func (e *emitter) lowSlot(v uint32, t *wgslType, i uint32) uint32 {
	return e.op(spirv.OpAccessChain, e.ptrType(spirv.StorageClassFunction, e.typeID(t.Elem, plain)), v, i)
}

// lowMulAdd emits subgroupMatrixMultiply(Accumulate) of result type res, in
// the order and precision the comment at the top of this file states.
func (e *emitter) lowMulAdd(c *callExpr, res *wgslType) uint32 {
	lt, rt := e.info(c.Args[0]).typ, e.info(c.Args[1]).typ
	a, b := e.localVar(lt), e.localVar(rt)
	e.add(spirv.OpStore, a, e.expr(c.Args[0]))
	e.add(spirv.OpStore, b, e.expr(c.Args[1]))
	out := e.localVar(res)
	if len(c.Args) == 3 {
		e.add(spirv.OpStore, out, e.expr(c.Args[2]))
	} else {
		e.add(spirv.OpStore, out, e.null(e.typeID(res, plain)))
	}
	u32 := e.m.types.scalar(kU32)
	ut := e.typeID(u32, plain)
	st := e.typeID(res.Elem, plain)
	nK, nN := e.constU32(uint32(lt.N)), e.constU32(uint32(rt.N))
	mul, add := spirv.OpIMul, spirv.OpIAdd
	if res.Elem.isFloat() {
		mul, add = spirv.OpFMul, spirv.OpFAdd
	}
	sum := e.localVar(res.Elem)
	e.countLoop(e.constU32(uint32(res.N*res.Rows)), func(i uint32) {
		m := e.op(spirv.OpUDiv, ut, i, nN)
		n := e.op(spirv.OpUMod, ut, i, nN)
		slot := e.lowSlot(out, res, i)
		e.add(spirv.OpStore, sum, e.op(spirv.OpLoad, st, slot))
		e.countLoop(nK, func(k uint32) {
			x := e.op(spirv.OpLoad, e.typeID(lt.Elem, plain), e.lowSlot(a, lt, e.op(spirv.OpIAdd, ut, e.op(spirv.OpIMul, ut, m, nK), k)))
			y := e.op(spirv.OpLoad, e.typeID(rt.Elem, plain), e.lowSlot(b, rt, e.op(spirv.OpIAdd, ut, e.op(spirv.OpIMul, ut, k, nN), n)))
			if lt.Elem != res.Elem {
				x, y = e.convert(x, lt.Elem, res.Elem), e.convert(y, rt.Elem, res.Elem)
			}
			e.add(spirv.OpStore, sum, e.op(add, st, e.op(spirv.OpLoad, st, sum), e.op(mul, st, x, y)))
		})
		e.add(spirv.OpStore, slot, e.wrapNarrow(res, e.op(spirv.OpLoad, st, sum)))
	})
	return e.op(spirv.OpLoad, e.typeID(res, plain), out)
}

// strideLoop emits a structured loop running body(i) for i = start,
// start+step, ... while i < n (all u32 ids).
func (e *emitter) strideLoop(start, n, step uint32, body func(i uint32)) {
	e.counterLoop(func() uint32 { return start }, n, func() uint32 { return step }, body)
}

// counterLoop is strideLoop with the start and the step made where the loop uses
// them (start() when the counter is set, step() in the continue block), so
// that constants get their ids in the order the loop's code needs them.
func (e *emitter) counterLoop(start func() uint32, n uint32, step func() uint32, body func(i uint32)) {
	ts := e.m.types
	u32 := e.typeID(ts.scalar(kU32), plain)
	boolT := e.typeID(ts.scalar(kBool), plain)
	ctr := e.localVar(ts.scalar(kU32))
	e.add(spirv.OpStore, ctr, start())
	header, cond, bodyL, cont, merge := e.id(), e.id(), e.id(), e.id(), e.id()
	e.branch(header)
	e.label(header)
	e.add(spirv.OpLoopMerge, merge, cont, 0)
	e.terminate(spirv.OpBranch, cond)
	e.label(cond)
	i := e.op(spirv.OpLoad, u32, ctr)
	e.terminate(spirv.OpBranchConditional, e.op(spirv.OpULessThan, boolT, i, n), bodyL, merge)
	e.label(bodyL)
	body(i)
	e.branch(cont)
	e.label(cont)
	e.add(spirv.OpStore, ctr, e.op(spirv.OpIAdd, u32, e.op(spirv.OpLoad, u32, ctr), step()))
	e.branch(header)
	e.label(merge)
}
