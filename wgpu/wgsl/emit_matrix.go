package wgsl

import (
	"fmt"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"
)

// Native subgroup matrices (Options.CooperativeMatrix): SPV_KHR_cooperative_matrix.
//
// A subgroup matrix type is an OpTypeCooperativeMatrixKHR of Subgroup scope
// with the type's rows and columns and the use of its role (left: MatrixAKHR,
// M x K; right: MatrixBKHR, K x N; result: MatrixAccumulatorKHR, M x N).
// subgroupMatrixLoad and Store take a pointer to the element at offset of
// the WGSL array and the layout RowMajorKHR or ColumnMajorKHR; the SPIR-V
// Stride counts elements of the pointer's type, the array's element type,
// which is exactly WGSL's stride (elements of the array; of the matrix's
// component type where the array holds them):
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
// Cooperative Matrix Operands. The scalar builtins are the component type's
// add, subtract or multiply of the matrix and a matrix filled with the
// scalar (OpCompositeConstruct), as the extension allows.
//
// An array of other values than the matrix's shader scalar type (the
// layout-template form takes any f32, f16, i32 or u32 scalar or vector) is
// read and written the same way, through a pointer to its element at the
// offset, the stride counting its elements: SPIR-V's load and store take
// the matrix's components from the bytes there, as the WGSL extension
// specifies.
//
// i8 and u8 matrices have 8-bit integer components (capability Int8), so a
// fill value or scalar (i32 or u32) is clamped to their range and converted.
// Their loads and stores take the array's 32-bit elements as four
// components each, through a pointer to the element at the offset with
// stride elements from row to row (column to column), both divided by 4 in
// the bool form, which counts components: the extension lets the pointer's
// type differ from the components, and counts the stride in the pointer's
// type.

// coopType is the OpTypeCooperativeMatrixKHR of subgroup matrix t.
func (e *emitter) coopType(t *wgslType) uint32 {
	e.capability(spirv.CapabilityCooperativeMatrixKHR)
	e.extension("SPV_KHR_cooperative_matrix")
	use := map[matrixRole]uint32{
		roleLeft:   spirv.CooperativeMatrixUseMatrixAKHR,
		roleRight:  spirv.CooperativeMatrixUseMatrixBKHR,
		roleResult: spirv.CooperativeMatrixUseMatrixAccumulatorKHR,
	}[t.Role]
	el := e.coopComponent(t)
	scope, rows, cols, u := e.constU32(spirv.ScopeSubgroup), e.constU32(uint32(t.Rows)), e.constU32(uint32(t.N)), e.constU32(use)
	id := e.id()
	e.decls.Add(spirv.OpTypeCooperativeMatrixKHR, id, el, scope, rows, cols, u)
	return id
}

// coopComponent is the SPIR-V component type of native matrix t: an 8-bit
// integer for i8 and u8, else its shader scalar type.
func (e *emitter) coopComponent(t *wgslType) uint32 {
	if !t.Narrow {
		return e.typeID(t.Elem, plain)
	}
	signed := pick(t.Elem.Kind == kI32, uint32(1), 0)
	key := fmt.Sprintf("int8/%d", signed)
	if id, ok := e.typeIDs[key]; ok {
		return id
	}
	e.capability(spirv.CapabilityInt8)
	id := e.id()
	e.decls.Add(spirv.OpTypeInt, id, 8, signed)
	e.typeIDs[key] = id
	return id
}

// matrixScalar is s, a value of matrix t's shader scalar type, as an
// element of t: for i8 and u8 clamped to their range and, natively,
// converted to the 8-bit component; else s itself.
func (e *emitter) matrixScalar(t *wgslType, s uint32) uint32 {
	if !t.Narrow {
		return s
	}
	lo, hi := narrowRange(t.Elem)
	signed := t.Elem.Kind == kI32
	v := e.ext(e.typeID(t.Elem, plain), pick(signed, spirv.GLSLSClamp, spirv.GLSLUClamp), s,
		e.constant(t.Elem, &value{i: lo}), e.constant(t.Elem, &value{i: hi}))
	if !e.opt.CooperativeMatrix {
		return v
	}
	return e.op(pick(signed, spirv.OpSConvert, spirv.OpUConvert), e.coopComponent(t), v)
}

// matrixScalarOp emits subgroupMatrixScalarAdd, Subtract or Multiply of
// matrix type t: natively the operation on the matrix and one filled with
// the scalar; lowered, on every element (the 8-bit ones wrapped).
func (e *emitter) matrixScalarOp(c *callExpr, t *wgslType) uint32 {
	ops := matrixScalarOps[c.Fn.Name]
	op := pick(t.Elem.isFloat(), ops[0], ops[1])
	m := e.expr(c.Args[0])
	s := e.matrixScalar(t, e.expr(c.Args[1]))
	ty := e.typeID(t, plain)
	if e.opt.CooperativeMatrix {
		return e.op(op, ty, m, e.op(spirv.OpCompositeConstruct, ty, s))
	}
	tmp := e.localVar(t)
	e.add(spirv.OpStore, tmp, m)
	st := e.typeID(t.Elem, plain)
	e.countLoop(e.constU32(uint32(t.N*t.Rows)), func(i uint32) {
		slot := e.lowSlot(tmp, t, i)
		e.add(spirv.OpStore, slot, e.wrapNarrow(t, e.op(op, st, e.op(spirv.OpLoad, st, slot), s)))
	})
	return e.op(spirv.OpLoad, ty, tmp)
}

// wrapNarrow is v, an element of lowered matrix t computed in its shader
// scalar type, taken modulo 256 into the range of t's 8-bit components
// (i8: sign-extended from its low byte), as native 8-bit arithmetic wraps;
// v itself for other components.
func (e *emitter) wrapNarrow(t *wgslType, v uint32) uint32 {
	if !t.Narrow {
		return v
	}
	ty := e.typeID(t.Elem, plain)
	if t.Elem.Kind == kI32 {
		return e.op(spirv.OpBitFieldSExtract, ty, v, e.constU32(0), e.constU32(8))
	}
	return e.op(spirv.OpBitwiseAnd, ty, v, e.constU32(0xff))
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
	if _, ok := matrixScalarOps[c.Fn.Name]; ok {
		return e.matrixScalarOp(c, res)
	}
	bugf("unknown subgroup matrix builtin %s", c.Fn.Name)
	return 0
}

// coopMemory gives the memory operands of a native load or store of matrix
// t: the pointer to the array element at the offset, the layout and the
// stride.
func (e *emitter) coopMemory(c *callExpr, t *wgslType) (p, layout, str uint32) {
	r, at, off, str, cm, offArg := e.matrixMemory(c)
	div := uint64(1)
	if t.Narrow && !layoutTemplated(c) { // the bool form counts components, four to an array element
		div = 4
		off, str = e.quarter(off), e.quarter(str)
	}
	off, str = e.coopBounds(c, t, at, &r, off, str, cm, offArg, div)
	p = e.ptr(elemRef(r, off, at.Elem), at.Elem)
	layout = e.constU32(pick(cm, spirv.CooperativeMatrixLayoutColumnMajorKHR, spirv.CooperativeMatrixLayoutRowMajorKHR))
	return p, layout, str
}

// coopSpanLimit bounds the array lengths coopBounds computes spans for in
// 32 bits: offset, stride and length below it, a span of up to 64 rows
// cannot wrap.
const coopSpanLimit = 1 << 26

// layoutTemplated reports whether load or store c takes its layout as a
// template argument (subgroupMatrixLoad<T, row_major>(p, offset, stride)),
// whose offset and stride count the array's elements, not the bool form's
// components: they differ for i8 and u8, 4 components to an element.
func layoutTemplated(c *callExpr) bool {
	ops, _ := matrixOperands(c)
	return ops.layout != nil
}

// quarter is u32 id x divided by 4 (a constant where x is one).
func (e *emitter) quarter(x uint32) uint32 {
	if v, ok := e.constIndex[x]; ok {
		return e.constU32(v / 4)
	}
	return e.op(spirv.OpShiftRightLogical, e.typeID(e.m.types.scalar(kU32), plain), x, e.constU32(2))
}

// coopBounds is the offset and stride of a native load or store of matrix t
// (column-major where cm) in array at, both in array elements (the
// arguments' divided by div): its elements span (major-1)*stride +
// ⌈minor*sizeof(component)/sizeof(array element)⌉ array elements from the
// offset (major: its rows row-major, else its columns; minor: the other
// count; sizeof the byte sizes, the array element's its stride: an i8 or
// u8 matrix takes a quarter of a u32 element per component, an f16 one
// half). Where at's length n is known when the
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
func (e *emitter) coopBounds(c *callExpr, t, at *wgslType, r *refv, off, str uint32, cm bool, offArg int, div uint64) (uint32, uint32) {
	if e.opt.NoIndexClamp {
		return off, str // the host guarantees bounds (Options.NoIndexClamp)
	}
	ops, _ := matrixOperands(c)
	major, minor := uint64(t.Rows), uint64(t.N)
	if cm {
		major, minor = minor, major
	}
	comp, elem := uint64(componentBytes(t)), uint64(at.Stride())
	minor = (minor*comp + elem - 1) / elem
	known := func(x expr) (uint64, bool) {
		v := e.info(x).val
		if v == nil || v.i < 0 {
			return 0, false
		}
		return uint64(v.i) / div, true
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
		if rg, ok := e.ranges[c.Args[offArg]]; ok && e.info(c.Args[offArg]).typ.Kind == kU32 && rg.hi/div <= limit {
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
