package wgsl

import "github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"

// Native subgroup matrices (Options.CooperativeMatrix): SPV_KHR_cooperative_matrix.
//
// A subgroup matrix type is an OpTypeCooperativeMatrixKHR of Subgroup scope
// with the type's rows and columns and the use of its role (left: MatrixAKHR,
// M x K; right: MatrixBKHR, K x N; result: MatrixAccumulatorKHR, M x N).
// subgroupMatrixLoad and Store take a pointer to the element at offset of
// the WGSL array and the layout RowMajorKHR or ColumnMajorKHR; the SPIR-V
// Stride counts elements of the pointer's type, the array's element type,
// which is exactly WGSL's stride (elements of the matrix's component type):
// element [r, c] is at pointer[r*stride + c] (row-major) or
// pointer[c*stride + r]. Bounds (coopBounds): in an array of fixed length the
// whole matrix is kept inside, by moving an offset (and a stride not known
// when the pipeline is made) where it would reach past the end, never by
// clamping an in-bounds offset, so a driver still sees the offset's
// alignment; in a runtime-sized array the first element's index is clamped
// as any index is, and elements past the end are left to the device's
// robustness (Vulkan's cooperativeMatrixRobustBufferAccess).
// subgroupMatrixMultiply is OpCooperativeMatrixMulAddKHR with a zero
// accumulator; integer operands and results carry their signedness in the
// Cooperative Matrix Operands.

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
		p, layout, stride := e.coopMemory(c, res)
		return e.op(spirv.OpCooperativeMatrixLoadKHR, e.typeID(res, plain), p, layout, stride)
	case "subgroupMatrixStore":
		ops, _ := matrixOperands(c)
		p, layout, stride := e.coopMemory(c, e.info(c.Args[ops.value]).typ)
		e.add(spirv.OpCooperativeMatrixStoreKHR, p, e.expr(c.Args[ops.value]), layout, stride)
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

// coopMemory gives the memory operands of a native load or store of matrix
// t: the pointer to the array element at the offset, the layout and the
// stride.
func (e *emitter) coopMemory(c *callExpr, t *wgslType) (p, layout, str uint32) {
	r, at, off, str, cm, offArg := e.matrixMemory(c)
	off, str = e.coopBounds(c, t, at, &r, off, str, cm, offArg)
	p = e.ptr(elemRef(r, off, at.Elem), at.Elem)
	layout = e.constU32(pick(cm, spirv.CooperativeMatrixLayoutColumnMajorKHR, spirv.CooperativeMatrixLayoutRowMajorKHR))
	return p, layout, str
}

// coopSpanLimit bounds the array lengths coopBounds computes spans for in
// 32 bits: offset, stride and length below it, a span of up to 64 rows
// cannot wrap.
const coopSpanLimit = 1 << 26

// coopBounds is the offset and stride of a native load or store of matrix t
// (column-major where cm) in array at: the matrix's elements span
// (major-1)*stride + minor elements from the offset (major: its rows
// row-major, else its columns). Where at's length n is known when the
// pipeline is made and a matrix fits in it at all:
//   - with the stride known, the offset is kept where it is proved at most
//     n - span (a constant, or by the range analysis), and otherwise
//     replaced by 0 where it exceeds that (a select, not a clamp: an
//     in-bounds offset keeps its value, and so its alignment, which drivers
//     need to load whole rows at a time);
//   - with the stride known only later, offset and stride become 0 and
//     minor where the matrix would not fit.
//
// Elsewhere (a runtime-sized array, a stride too long for the array) the
// offset is clamped to the array as any index is.
func (e *emitter) coopBounds(c *callExpr, t, at *wgslType, r *refv, off, str uint32, cm bool, offArg int) (uint32, uint32) {
	if e.opt.NoIndexClamp {
		return off, str // the host guarantees bounds (Options.NoIndexClamp)
	}
	ops, _ := matrixOperands(c)
	major, minor := uint64(t.Rows), uint64(t.N)
	if cm {
		major, minor = minor, major
	}
	known := func(x expr) (uint64, bool) {
		v := e.info(x).val
		if v == nil || v.i < 0 {
			return 0, false
		}
		return uint64(v.i), true
	}
	clamp := func() (uint32, uint32) {
		if k, ok := known(c.Args[offArg]); !ok || !e.constInBounds(k, at) {
			off = e.clampIndex(off, c.Args[offArg], e.m.types.scalar(kU32), at, r)
		}
		return off, str
	}
	n, ok := e.constLength(at)
	if !ok || n >= coopSpanLimit || n < major*minor {
		return clamp()
	}
	u32 := e.m.types.scalar(kU32)
	ut, bt := e.typeID(u32, plain), e.typeID(e.m.types.scalar(kBool), plain)
	if s, ok := known(c.Args[ops.stride]); ok {
		span := (major-1)*s + minor
		if s >= coopSpanLimit || span > n {
			return clamp()
		}
		limit := n - span
		if k, ok := known(c.Args[offArg]); ok && k <= limit {
			return off, str
		}
		if rg, ok := e.ranges[c.Args[offArg]]; ok && e.info(c.Args[offArg]).typ.Kind == kU32 && rg.hi <= limit {
			return off, str
		}
		in := e.op(spirv.OpULessThanEqual, bt, off, e.constU32(uint32(limit)))
		return e.op(spirv.OpSelect, ut, in, off, e.constU32(0)), str
	}
	// off <= n && str <= n && off + str*(major-1) + minor <= n, in 32 bits
	// since each term is below coopSpanLimit.
	nc := e.constU32(uint32(n))
	end := e.op(spirv.OpIAdd, ut, off, e.op(spirv.OpIAdd, ut, e.op(spirv.OpIMul, ut, str, e.constU32(uint32(major-1))), e.constU32(uint32(minor))))
	in := e.op(spirv.OpLogicalAnd, bt,
		e.op(spirv.OpLogicalAnd, bt, e.op(spirv.OpULessThanEqual, bt, off, nc), e.op(spirv.OpULessThanEqual, bt, str, nc)),
		e.op(spirv.OpULessThanEqual, bt, end, nc))
	return e.op(spirv.OpSelect, ut, in, off, e.constU32(0)), e.op(spirv.OpSelect, ut, in, str, e.constU32(uint32(minor)))
}
