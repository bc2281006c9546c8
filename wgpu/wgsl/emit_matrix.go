package wgsl

import "github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"

// Native subgroup matrices (Options.CooperativeMatrix): SPV_KHR_cooperative_matrix.
//
// A subgroup matrix type is an OpTypeCooperativeMatrixKHR of Subgroup scope
// with the type's rows and columns and the use of its role (left: MatrixAKHR,
// M x K; right: MatrixBKHR, K x N; result: MatrixAccumulatorKHR, M x N).
// subgroupMatrixLoad and Store take a pointer to the element at offset of
// the WGSL array (its index clamped to the array as any index is) and the
// layout RowMajorKHR or ColumnMajorKHR; the SPIR-V Stride counts elements of
// the pointer's type, the array's element type, which is exactly WGSL's
// stride (elements of the matrix's component type): element [r, c] is at
// pointer[r*stride + c] (row-major) or pointer[c*stride + r]. Elements past
// the array's end are left to the device's robustness (Vulkan's
// cooperativeMatrixRobustBufferAccess). subgroupMatrixMultiply is
// OpCooperativeMatrixMulAddKHR with a zero accumulator; integer operands and
// results carry their signedness in the Cooperative Matrix Operands.

// coopType is the OpTypeCooperativeMatrixKHR of subgroup matrix t.
func (e *emitter) coopType(t *wgslType) uint32 {
	e.capability(spirv.CapabilityCooperativeMatrixKHR)
	e.extension("SPV_KHR_cooperative_matrix")
	use := map[matrixRole]uint32{
		roleLeft:   spirv.CooperativeMatrixUseMatrixAKHR,
		roleRight:  spirv.CooperativeMatrixUseMatrixBKHR,
		roleResult: spirv.CooperativeMatrixUseMatrixAccumulatorKHR,
	}[t.Role]
	el := e.typeID(t.Elem, plain)
	scope, rows, cols, u := e.constU32(spirv.ScopeSubgroup), e.constU32(uint32(t.Rows)), e.constU32(uint32(t.N)), e.constU32(use)
	id := e.id()
	e.decls.Add(spirv.OpTypeCooperativeMatrixKHR, id, el, scope, rows, cols, u)
	return id
}

// extension declares SPIR-V extension name.
func (e *emitter) extension(name string) {
	if e.exts == nil {
		e.exts = map[string]bool{}
	}
	e.exts[name] = true
}

// coopCall emits a subgroup matrix builtin as SPV_KHR_cooperative_matrix.
func (e *emitter) coopCall(c *callExpr, res *wgslType) uint32 {
	switch c.Fn.Name {
	case "subgroupMatrixLoad":
		p, layout, stride := e.coopMemory(c)
		return e.op(spirv.OpCooperativeMatrixLoadKHR, e.typeID(res, plain), p, layout, stride)
	case "subgroupMatrixStore":
		p, layout, stride := e.coopMemory(c)
		e.add(spirv.OpCooperativeMatrixStoreKHR, p, e.expr(c.Args[2]), layout, stride)
		return 0
	case "subgroupMatrixMultiply", "subgroupMatrixMultiplyAccumulate":
		lt, rt := e.info(c.Args[0]).typ, e.info(c.Args[1]).typ
		a, b := e.expr(c.Args[0]), e.expr(c.Args[1])
		var acc uint32
		if len(c.Args) == 3 {
			acc = e.expr(c.Args[2])
		} else {
			acc = e.null(e.typeID(res, plain))
		}
		ops := []uint32{a, b, acc}
		var signs uint32
		for _, s := range []struct {
			t    *wgslType
			mask uint32
		}{
			{lt.Elem, spirv.CooperativeMatrixOperandsMatrixASignedComponentsKHR},
			{rt.Elem, spirv.CooperativeMatrixOperandsMatrixBSignedComponentsKHR},
			{res.Elem, spirv.CooperativeMatrixOperandsMatrixCSignedComponentsKHR | spirv.CooperativeMatrixOperandsMatrixResultSignedComponentsKHR},
		} {
			if s.t.Kind == kI32 {
				signs |= s.mask
			}
		}
		if signs != 0 {
			ops = append(ops, signs)
		}
		return e.op(spirv.OpCooperativeMatrixMulAddKHR, e.typeID(res, plain), ops...)
	}
	bugf("unknown subgroup matrix builtin %s", c.Fn.Name)
	return 0
}

// coopMemory gives the memory operands of a native load or store: the
// pointer to the array element at the offset, the layout and the stride.
func (e *emitter) coopMemory(c *callExpr) (p, layout, str uint32) {
	r, at, off, str, cm, offArg := e.matrixMemory(c)
	if v := e.info(c.Args[offArg]).val; v == nil || v.i < 0 || !e.constInBounds(uint64(v.i), at) {
		off = e.clampIndex(off, c.Args[offArg], e.m.types.scalar(kU32), at, &r)
	}
	p = e.ptr(elemRef(r, off, at.Elem), at.Elem)
	layout = e.constU32(pick(cm, spirv.CooperativeMatrixLayoutColumnMajorKHR, spirv.CooperativeMatrixLayoutRowMajorKHR))
	return p, layout, str
}
