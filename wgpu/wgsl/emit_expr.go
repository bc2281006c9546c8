package wgsl

import "github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"

// refv is a memory location under construction: a base pointer and the
// access-chain indices that lead from it.
type refv struct {
	base  uint32
	idx   []uint32
	sc    uint32
	space addrSpace
	block uint32 // with no indices: the Block struct type the base points to
	ty    uint32 // pointer type of base, for a root in function memory
	// split marks a narrow matrix in uniform memory (see narrowMat): the
	// chain leads to the composite whose members col0, col0+1, ... are its
	// columns.
	split bool
	col0  uint32
}

func (e *emitter) info(x expr) *exprInfo {
	i := e.m.info[x]
	if i == nil {
		bugf("expression at offset %d was not checked", x.exprPos())
	}
	return i
}

func (e *emitter) ref(x expr) refv {
	info := e.info(x)
	switch x := x.(type) {
	case *parenExpr:
		return e.ref(x.X)
	case *ident:
		s := info.sym
		if e.globals[s] != nil {
			return e.globalRef(s)
		}
		if id, ok := e.f.values[s]; ok && s.kind == symLocalVar {
			return refv{base: id, sc: spirv.StorageClassFunction, space: spaceFunction,
				ty: e.ptrType(spirv.StorageClassFunction, e.typeID(s.typ, plain))}
		}
		if id, ok := e.f.inMem[s]; ok {
			return e.localRefOf(id, s.typ)
		}
	case *unaryExpr:
		if x.Op == opDeref {
			return e.derefPtr(x.X)
		}
	case *callExpr:
		if e.memRoot(x) {
			return e.localRefOf(e.callFn(x, info.fn), info.typ)
		}
	case *indexExpr:
		var r refv
		if info.autoDeref {
			r = e.derefPtr(x.X)
		} else {
			r = e.ref(x.X)
		}
		if r.split {
			return e.columnRef(r, x, e.containerType(x.X, info.autoDeref))
		}
		var idx uint32
		ct := e.containerType(x.X, info.autoDeref)
		switch v := e.info(x.Index).val; {
		case v == nil:
			idx = e.clampIndex(e.expr(x.Index), x.Index, e.info(x.Index).typ, ct, &r)
		case e.constInBounds(uint64(v.i), ct):
			idx = e.constU32(uint32(v.i)) // constant indices stay constants of one type
		default:
			// A length known only at run time (a runtime-sized array, an
			// override count in the whole module): clamped as a run-time
			// index is.
			idx = e.clampIndex(e.constU32(uint32(v.i)), x.Index, e.m.types.scalar(kU32), ct, &r)
		}
		r.idx = append(append([]uint32(nil), r.idx...), idx)
		r.block = 0
		r.split = r.space == spaceUniform && narrowMat(info.typ)
		return r
	case *memberExpr:
		var r refv
		if info.autoDeref {
			r = e.derefPtr(x.X)
		} else {
			r = e.ref(x.X)
		}
		k := info.field
		if info.swizzle != nil {
			k = info.swizzle[0]
		} else if st := e.containerType(x.X, info.autoDeref); r.space == spaceUniform && hasNarrowMat(st) {
			k = uboMember(st, k)
			if narrowMat(info.typ) {
				r.block = 0
				r.split, r.col0 = true, uint32(k)
				return r
			}
		}
		r.idx = append(append([]uint32(nil), r.idx...), e.constU32(uint32(k)))
		r.block = 0
		return r
	}
	bugf("expression at offset %d is not a memory location", x.exprPos())
	return refv{}
}

// globalRef is the memory of module-scope variable s.
func (e *emitter) globalRef(s *symbol) refv {
	g := e.globals[s]
	r := refv{base: g.id, sc: g.sc, space: s.space, block: g.block, split: g.split}
	if g.wrapped {
		r.idx = []uint32{e.constU32(0)}
	}
	return r
}

func (e *emitter) derefPtr(x expr) refv {
	pt := e.info(x).typ
	if pt.Kind != kPtr {
		bugf("dereference of non-pointer %s", pt)
	}
	return e.ptrRef(x)
}

// ptrRef is the memory location a pointer expression designates, from its
// root variable: &X, or a pointer parameter or let, each of which carries
// the root and access chain it was made from.
func (e *emitter) ptrRef(x expr) refv {
	switch x := x.(type) {
	case *parenExpr:
		return e.ptrRef(x.X)
	case *unaryExpr:
		if x.Op == opAddrOf {
			return e.ref(x.X)
		}
	case *ident:
		if r, ok := e.f.ptrRefs[e.info(x).sym]; ok {
			return r
		}
	}
	bugf("pointer expression at offset %d has no root", x.exprPos())
	return refv{}
}

// columnRef is column x.Index of the split matrix r of type mt. A constant
// column is a member of the composite r leads to; a run-time column can be
// reached only in a function-memory copy of the matrix (uniform memory is
// read-only, so a copy reads the same).
func (e *emitter) columnRef(r refv, x *indexExpr, mt *wgslType) refv {
	if v := e.info(x.Index).val; v != nil {
		r.idx = append(append([]uint32(nil), r.idx...), e.constU32(r.col0+uint32(v.i)))
		r.block, r.split, r.col0 = 0, false, 0
		return r
	}
	idx := e.clampIndex(e.expr(x.Index), x.Index, e.info(x.Index).typ, mt, nil)
	tmp := e.localVar(mt)
	e.add(spirv.OpStore, tmp, e.load(r, mt))
	return refv{base: tmp, idx: []uint32{idx}, sc: spirv.StorageClassFunction, space: spaceFunction,
		ty: e.ptrType(spirv.StorageClassFunction, e.typeID(mt, plain))}
}

// loadColumns loads the split matrix r of type t column by column.
func (e *emitter) loadColumns(r refv, t *wgslType) uint32 {
	col := e.typeID(t.Elem, plain)
	pty := e.ptrType(r.sc, col)
	parts := make([]uint32, t.N)
	for c := range parts {
		ops := append(append([]uint32{r.base}, r.idx...), e.constU32(r.col0+uint32(c)))
		parts[c] = e.op(spirv.OpLoad, col, e.op(spirv.OpAccessChain, pty, ops...))
	}
	return e.op(spirv.OpCompositeConstruct, e.typeID(t, plain), parts...)
}

// ptr materializes a reference as a pointer to a value of type t.
func (e *emitter) ptr(r refv, t *wgslType) uint32 {
	if r.split {
		bugf("pointer to a split uniform matrix")
	}
	if len(r.idx) == 0 {
		return r.base
	}
	return e.op(spirv.OpAccessChain, e.ptrType(r.sc, e.typeID(t, flavorFor(r.space))), append([]uint32{r.base}, r.idx...)...)
}

func (e *emitter) load(r refv, t *wgslType) uint32 {
	if r.split {
		return e.loadColumns(r, t)
	}
	fl := flavorFor(r.space)
	if bigCopy(t, fl) {
		return e.loadVia(r, t)
	}
	p := e.ptr(r, t)
	ty := e.typeID(t, fl)
	if r.block != 0 {
		ty = r.block
	}
	v := e.op(spirv.OpLoad, ty, p)
	e.raceAccess(r, t, false)
	if needsRecast(t, fl) {
		v = e.recast(v, t, fl, plain, 0)
	}
	return v
}

func (e *emitter) store(r refv, t *wgslType, v uint32) {
	fl := flavorFor(r.space)
	if fl == ubo {
		bugf("store into uniform memory")
	}
	if bigCopy(t, fl) {
		e.storeVia(r, t, v)
		return
	}
	p := e.ptr(r, t)
	if fl != plain && isAggregate(t) {
		v = e.recast(v, t, plain, fl, r.block)
	}
	e.add(spirv.OpStore, p, v)
	e.raceAccess(r, t, true)
}

// recast rebuilds an aggregate value between layout flavors (SPIR-V 1.3 has
// no OpCopyLogical). top, when non-zero, is the result type to build. Only
// reads leave the ubo flavor (uniform memory is read-only).
func (e *emitter) recast(v uint32, t *wgslType, from, to flavor, top uint32) uint32 {
	if from == ubo && !hasNarrowMat(t) {
		from = laidOut
	}
	if from == ubo && narrowMat(t) { // a column struct
		return e.columns(v, t, 0)
	}
	if !isAggregate(t) {
		return v
	}
	n := t.N
	if t.Kind == kStruct {
		n = len(t.Struct.Members)
	}
	if n == 0 {
		bugf("cannot copy runtime-sized %s", t)
	}
	parts := make([]uint32, n)
	for i := range n {
		mt := elemType(t, i)
		k := uint32(i)
		if from == ubo && t.Kind == kStruct {
			k = uint32(uboMember(t, i))
			if narrowMat(mt) {
				parts[i] = e.columns(v, mt, k)
				continue
			}
		}
		ex := e.op(spirv.OpCompositeExtract, e.typeID(mt, from), v, k)
		parts[i] = e.recast(ex, mt, from, to, 0)
	}
	if top == 0 {
		top = e.typeID(t, to)
	}
	return e.op(spirv.OpCompositeConstruct, top, parts...)
}

// columns builds matrix t from members col0, col0+1, ... of composite v.
func (e *emitter) columns(v uint32, t *wgslType, col0 uint32) uint32 {
	col := e.typeID(t.Elem, plain)
	parts := make([]uint32, t.N)
	for c := range parts {
		parts[c] = e.op(spirv.OpCompositeExtract, col, v, col0+uint32(c))
	}
	return e.op(spirv.OpCompositeConstruct, e.typeID(t, plain), parts...)
}

// constU32Pair is the values of a and b where both are u32 constants
// (constIndex).
func (e *emitter) constU32Pair(a uint32, at *wgslType, b uint32, bt *wgslType) (x, y uint32, ok bool) {
	if at.Kind != kU32 || bt.Kind != kU32 {
		return 0, 0, false
	}
	x, okA := e.constIndex[a]
	y, okB := e.constIndex[b]
	return x, y, okA && okB
}

// expr emits an expression and returns the id of its value.
func (e *emitter) expr(x expr) uint32 {
	info := e.info(x)
	if info.val != nil {
		return e.constant(info.typ, info.val)
	}
	if _, ok := x.(*ident); ok && info.sym != nil {
		if v, ok := e.f.unrolled[info.sym]; ok { // a counter of a loop being unrolled
			if info.typ.Kind == kU32 {
				return e.constU32(uint32(v.i))
			}
			return e.constant(info.typ, v)
		}
	}
	if info.ref || e.memRoot(x) {
		return e.load(e.ref(x), info.typ)
	}
	switch x := x.(type) {
	case *parenExpr:
		return e.expr(x.X)
	case *ident:
		s := info.sym
		if s != nil {
			if s.computed {
				return e.computedOverride(s)
			}
			if id, ok := e.specIDs[s]; ok {
				return id
			}
			if id, ok := e.f.values[s]; ok {
				return id
			}
			if r, ok := e.f.ptrRefs[s]; ok {
				return e.ptr(r, s.typ.Elem)
			}
		}
	case *unaryExpr:
		switch x.Op {
		case opAddrOf:
			xi := e.info(x.X)
			return e.ptr(e.ref(x.X), xi.typ)
		case opNeg:
			v := e.expr(x.X)
			op := spirv.OpSNegate
			if info.typ.scalarOf().isFloat() {
				op = spirv.OpFNegate
			}
			return e.op(op, e.typeID(info.typ, plain), v)
		case opNot:
			return e.op(spirv.OpLogicalNot, e.typeID(info.typ, plain), e.expr(x.X))
		case opCompl:
			return e.op(spirv.OpNot, e.typeID(info.typ, plain), e.expr(x.X))
		}
	case *binaryExpr:
		if x.Op == opLogAnd || x.Op == opLogOr {
			return e.shortCircuit(x)
		}
		a, b := e.expr(x.X), e.expr(x.Y)
		return e.binaryOp(x.Op, a, e.info(x.X).typ, b, e.info(x.Y).typ, info.typ)
	case *callExpr:
		return e.callExpr(x)
	case *indexExpr:
		xi := e.info(x.X)
		v := e.expr(x.X)
		ii := e.info(x.Index)
		ety := e.typeID(info.typ, plain)
		if ii.val != nil {
			return e.op(spirv.OpCompositeExtract, ety, v, uint32(ii.val.i))
		}
		// A run-time index into a vector or matrix value is clamped as one
		// into memory is: OpVectorExtractDynamic out of range is undefined.
		idx := e.clampIndex(e.expr(x.Index), x.Index, ii.typ, xi.typ, nil)
		if xi.typ.Kind == kVec {
			return e.op(spirv.OpVectorExtractDynamic, ety, v, idx)
		}
		tmp := e.localVar(xi.typ)
		e.add(spirv.OpStore, tmp, v)
		p := e.op(spirv.OpAccessChain, e.ptrType(spirv.StorageClassFunction, ety), tmp, idx)
		return e.op(spirv.OpLoad, ety, p)
	case *memberExpr:
		v := e.expr(x.X)
		ty := e.typeID(info.typ, plain)
		switch {
		case info.swizzle == nil:
			return e.op(spirv.OpCompositeExtract, ty, v, uint32(info.field))
		case len(info.swizzle) == 1:
			return e.op(spirv.OpCompositeExtract, ty, v, uint32(info.swizzle[0]))
		default:
			ops := []uint32{v, v}
			for _, k := range info.swizzle {
				ops = append(ops, uint32(k))
			}
			return e.op(spirv.OpVectorShuffle, ty, ops...)
		}
	}
	bugf("cannot emit expression %T at offset %d", x, x.exprPos())
	return 0
}

func (e *emitter) shortCircuit(x *binaryExpr) uint32 {
	boolT := e.typeID(e.m.types.scalar(kBool), plain)
	a := e.expr(x.X)
	if e.f.inPrelude { // override-expressions have no side effects
		return e.op(pick(x.Op == opLogAnd, spirv.OpLogicalAnd, spirv.OpLogicalOr), boolT, a, e.expr(x.Y))
	}
	from := e.f.label
	rhs, merge := e.id(), e.id()
	e.add(spirv.OpSelectionMerge, merge, 0)
	if x.Op == opLogAnd {
		e.terminate(spirv.OpBranchConditional, a, rhs, merge)
	} else {
		e.terminate(spirv.OpBranchConditional, a, merge, rhs)
	}
	e.label(rhs)
	b := e.expr(x.Y)
	rhsEnd := e.f.label
	e.branch(merge)
	e.label(merge)
	return e.op(spirv.OpPhi, boolT, a, from, b, rhsEnd)
}

// splat widens a scalar to an n-vector.
func (e *emitter) splat(v uint32, s *wgslType, n int) uint32 {
	parts := make([]uint32, n)
	for i := range parts {
		parts[i] = v
	}
	return e.op(spirv.OpCompositeConstruct, e.typeID(e.m.types.vec(n, s), plain), parts...)
}

func (e *emitter) binaryOp(op operator, a uint32, at *wgslType, b uint32, bt *wgslType, rt *wgslType) uint32 {
	s := at.scalarOf()
	if x, y, ok := e.constU32Pair(a, at, b, bt); ok && rt.Kind == kU32 && (op == opAdd || op == opSub || op == opMul) {
		// Folded, so that an index computed from an unrolled loop's
		// counters (unroll.go) is a constant in the module.
		switch op {
		case opAdd:
			return e.constU32(x + y)
		case opSub:
			return e.constU32(x - y)
		}
		return e.constU32(x * y)
	}
	ty := e.typeID(rt, plain)
	if at.Kind == kMat || bt.Kind == kMat {
		return e.matOp(op, a, at, b, bt, rt)
	}
	if op == opMul && s.isFloat() && at.Kind != bt.Kind {
		if at.Kind == kVec {
			return e.op(spirv.OpVectorTimesScalar, ty, a, b)
		}
		return e.op(spirv.OpVectorTimesScalar, ty, b, a)
	}
	if at.Kind == kVec && bt.Kind != kVec {
		b = e.splat(b, bt, at.N)
		bt = at
	} else if bt.Kind == kVec && at.Kind != kVec {
		a = e.splat(a, at, bt.N)
		at = bt
	}
	f, sg := s.isFloat(), s.Kind == kI32
	var o spirv.Op
	switch op {
	case opAdd:
		o = pick(f, spirv.OpFAdd, spirv.OpIAdd)
	case opSub:
		o = pick(f, spirv.OpFSub, spirv.OpISub)
	case opMul:
		o = pick(f, spirv.OpFMul, spirv.OpIMul)
	case opDiv, opRem:
		if f {
			o = pick(op == opDiv, spirv.OpFDiv, spirv.OpFRem)
			break
		}
		b = e.safeDivisor(a, b, at)
		if op == opDiv {
			o = pick(sg, spirv.OpSDiv, spirv.OpUDiv)
		} else {
			o = pick(sg, spirv.OpSRem, spirv.OpUMod)
		}
	case opAnd:
		o = pick(s.Kind == kBool, spirv.OpLogicalAnd, spirv.OpBitwiseAnd)
	case opOr:
		o = pick(s.Kind == kBool, spirv.OpLogicalOr, spirv.OpBitwiseOr)
	case opXor:
		o = spirv.OpBitwiseXor
	case opShl, opShr:
		mask := e.constant(bt, e.splatValue(bt, &value{i: 31}))
		b = e.op(spirv.OpBitwiseAnd, e.typeID(bt, plain), b, mask)
		if op == opShl {
			o = spirv.OpShiftLeftLogical
		} else {
			o = pick(sg, spirv.OpShiftRightArithmetic, spirv.OpShiftRightLogical)
		}
	case opEq:
		o = pick(f, spirv.OpFOrdEqual, pick(s.Kind == kBool, spirv.OpLogicalEqual, spirv.OpIEqual))
	case opNe:
		o = pick(f, spirv.OpFUnordNotEqual, pick(s.Kind == kBool, spirv.OpLogicalNotEqual, spirv.OpINotEqual))
	case opLt:
		o = pick(f, spirv.OpFOrdLessThan, pick(sg, spirv.OpSLessThan, spirv.OpULessThan))
	case opLe:
		o = pick(f, spirv.OpFOrdLessThanEqual, pick(sg, spirv.OpSLessThanEqual, spirv.OpULessThanEqual))
	case opGt:
		o = pick(f, spirv.OpFOrdGreaterThan, pick(sg, spirv.OpSGreaterThan, spirv.OpUGreaterThan))
	case opGe:
		o = pick(f, spirv.OpFOrdGreaterThanEqual, pick(sg, spirv.OpSGreaterThanEqual, spirv.OpUGreaterThanEqual))
	default:
		bugf("unknown operator %s", op)
	}
	return e.op(o, ty, a, b)
}

func (e *emitter) splatValue(t *wgslType, v *value) *value {
	if t.Kind != kVec {
		return v
	}
	out := &value{}
	for range t.N {
		out.elems = append(out.elems, v)
	}
	return out
}

// safeDivisor replaces divisors that WGSL defines specially (zero, and -1 with
// the most negative dividend) by 1, so e1 / e2 gives e1 and e1 % e2 gives 0.
func (e *emitter) safeDivisor(a, b uint32, t *wgslType) uint32 {
	ts := e.m.types
	bt := ts.scalar(kBool)
	if t.Kind == kVec {
		bt = ts.vec(t.N, bt)
	}
	bty := e.typeID(bt, plain)
	zero := e.constant(t, e.splatValue(t, &value{}))
	one := e.constant(t, e.splatValue(t, &value{i: 1}))
	bad := e.op(spirv.OpIEqual, bty, b, zero)
	if t.scalarOf().Kind == kI32 {
		minI := e.constant(t, e.splatValue(t, &value{i: -1 << 31}))
		minus1 := e.constant(t, e.splatValue(t, &value{i: -1}))
		ovf := e.op(spirv.OpLogicalAnd, bty, e.op(spirv.OpIEqual, bty, a, minI), e.op(spirv.OpIEqual, bty, b, minus1))
		bad = e.op(spirv.OpLogicalOr, bty, bad, ovf)
	}
	return e.op(spirv.OpSelect, e.typeID(t, plain), bad, one, b)
}

// convert emits a value conversion between scalar or vector types of equal shape.
func (e *emitter) convert(v uint32, from, to *wgslType) uint32 {
	if from == to {
		return v
	}
	fs, tsc := from.scalarOf(), to.scalarOf()
	ty := e.typeID(to, plain)
	switch {
	case tsc.Kind == kBool:
		zero := e.constant(from, e.splatValue(from, &value{}))
		return e.op(pick(fs.isFloat(), spirv.OpFUnordNotEqual, spirv.OpINotEqual), ty, v, zero)
	case fs.Kind == kBool:
		one := &value{i: 1, f: 1}
		return e.op(spirv.OpSelect, ty, v, e.constant(to, e.splatValue(to, one)), e.constant(to, e.splatValue(to, &value{})))
	case fs.isFloat() && tsc.isFloat():
		return e.op(spirv.OpFConvert, ty, v)
	case fs.isInt() && tsc.isInt():
		return e.op(spirv.OpBitcast, ty, v)
	case fs.isInt() && tsc.isFloat():
		return e.op(pick(fs.Kind == kI32, spirv.OpConvertSToF, spirv.OpConvertUToF), ty, v)
	case fs.isFloat() && tsc.isInt():
		// WGSL gives the value of the integer type closest to trunc(e) that
		// the float type also represents: clamp into the float range that
		// converts exactly (2147483520 is the largest f32 in i32, 4294967040
		// in u32), then convert. A NaN clamps to the lower bound.
		lo, hi := -2147483648.0, 2147483520.0
		if tsc.Kind == kU32 {
			lo, hi = 0, 4294967040.0
		}
		if fs.Kind == kF16 {
			lo, hi = max(lo, -65504), min(hi, 65504)
		}
		lov := e.constant(from, e.splatValue(from, &value{f: lo}))
		hiv := e.constant(from, e.splatValue(from, &value{f: hi}))
		c := e.op(spirv.OpExtInst, e.typeID(from, plain), e.glsl, spirv.GLSLNClamp, v, lov, hiv)
		return e.op(pick(tsc.Kind == kI32, spirv.OpConvertFToS, spirv.OpConvertFToU), ty, c)
	}
	bugf("cannot convert %s to %s", from, to)
	return 0
}

func (e *emitter) callExpr(c *callExpr) uint32 {
	info := e.info(c)
	if info.val != nil {
		return e.constant(info.typ, info.val)
	}
	switch info.call {
	case callFn:
		if bigValue(info.typ) {
			return e.op(spirv.OpLoad, e.typeID(info.typ, plain), e.callFn(c, info.fn))
		}
		return e.callFn(c, info.fn)
	case callConstruct:
		t := info.typ
		if t.Kind == kSubgroupMatrix {
			return e.matrixFill(t, e.expr(c.Args[0]))
		}
		if t.isScalar() || len(c.Args) == 1 && e.info(c.Args[0]).typ == t {
			return e.expr(c.Args[0]) // T(x) of a T is x itself
		}
		var parts []uint32
		for _, a := range c.Args {
			parts = append(parts, e.expr(a))
		}
		if t.Kind == kVec && len(parts) == 1 && e.info(c.Args[0]).typ.Kind != kVec {
			return e.splat(parts[0], t.Elem, t.N)
		}
		if t.Kind == kMat && len(parts) == t.N*t.Elem.N {
			// From scalars: build the columns first.
			rows := t.Elem.N
			cols := make([]uint32, t.N)
			for i := range cols {
				cols[i] = e.op(spirv.OpCompositeConstruct, e.typeID(t.Elem, plain), parts[i*rows:(i+1)*rows]...)
			}
			parts = cols
		}
		return e.op(spirv.OpCompositeConstruct, e.typeID(t, plain), parts...)
	case callConvert:
		from := e.info(c.Args[0]).typ
		v := e.expr(c.Args[0])
		if from.Kind == kMat { // column by column
			cols := make([]uint32, from.N)
			for i := range cols {
				col := e.op(spirv.OpCompositeExtract, e.typeID(from.Elem, plain), v, uint32(i))
				cols[i] = e.convert(col, from.Elem, info.typ.Elem)
			}
			return e.op(spirv.OpCompositeConstruct, e.typeID(info.typ, plain), cols...)
		}
		return e.convert(v, from, info.typ)
	case callBitcast:
		from := e.info(c.Args[0]).typ
		v := e.expr(c.Args[0])
		if from == info.typ {
			return v
		}
		return e.op(spirv.OpBitcast, e.typeID(info.typ, plain), v)
	case callZero:
		return e.null(e.typeID(info.typ, plain))
	case callBuiltin:
		return e.builtin(c, info)
	}
	bugf("unknown call at offset %d", c.Pos)
	return 0
}

// containerType is the type indexed by x[i] (through a pointer when autoDeref).
func (e *emitter) containerType(x expr, autoDeref bool) *wgslType {
	t := e.info(x).typ
	if autoDeref {
		t = t.Elem
	}
	return t
}

// clampIndex keeps a dynamic index in bounds, as WGSL requires that no access
// leaves its memory: min(u32(i), n-1), where n is the element count of a
// fixed array, an override-sized array or, for a runtime-sized buffer array
// (whose reference is always rooted at its buffer variable), arrayLength. A
// constant index into an array whose length is not known now is clamped here
// too (see constInBounds). Vectors and matrices are clamped against their
// static size N, in memory and as values (OpVectorExtractDynamic).
//
// An index the range analysis (ranges.go) proves below a constant length keeps
// no clamp: index is its expression.
func (e *emitter) clampIndex(idx uint32, index expr, it, t *wgslType, r *refv) uint32 {
	ts := e.m.types
	u32 := ts.scalar(kU32)
	uty := e.typeID(u32, plain)
	if it.Kind == kI32 {
		idx = e.op(spirv.OpBitcast, uty, idx)
	}
	if e.opt.NoIndexClamp {
		return idx // the host guarantees bounds (Options.NoIndexClamp)
	}
	if k, ok := e.constIndex[idx]; ok && it.Kind == kU32 { // a constant, as unrolling folds them (unroll.go)
		if n, ok := e.constLength(t); ok && uint64(k) < n {
			return idx
		}
	}
	if n, ok := e.constLength(t); ok && it.Kind == kU32 {
		if rg, known := e.ranges[index]; known && rg.hi < n {
			return idx // proved in bounds
		}
	}
	var last uint32
	switch {
	case t.Kind == kVec || t.Kind == kMat:
		last = e.constU32(uint32(t.N - 1))
	case t.Kind == kArray && t.CountOverride != nil:
		last = e.op(spirv.OpISub, uty, e.specConstExpr(t.CountOverride.expr), e.constU32(1))
	case t.Kind == kArray && t.N > 0:
		last = e.constU32(uint32(t.N - 1))
	case t.Kind == kArray && r != nil && len(r.idx) <= 1 && r.space == spaceStorage && e.isGlobalVar(r.base):
		member := uint32(0)
		if len(r.idx) == 1 {
			member = e.constIndex[r.idx[0]]
		}
		n := e.op(spirv.OpArrayLength, uty, r.base, member)
		last = e.op(spirv.OpISub, uty, n, e.constU32(1))
	default:
		// A runtime-sized array lives only in a storage buffer, and every
		// pointer to one keeps the buffer variable as its root (see
		// arrayLength): nothing else can reach here.
		bugf("index into a runtime-sized array not rooted at its buffer")
	}
	return e.ext(uty, spirv.GLSLUMin, idx, last)
}

// constInBounds reports whether constant index k is known to lie inside
// container t without a clamp: 0 always does (min(0, last) is 0, and a
// runtime-sized array or override count has at least one element); any
// other k only below a length known now. The checker has rejected constant
// indices past a known length.
func (e *emitter) constInBounds(k uint64, t *wgslType) bool {
	if k == 0 {
		return true
	}
	n, ok := e.constLength(t)
	return ok && k < n
}

func (e *emitter) isGlobalVar(id uint32) bool {
	for _, g := range e.globals {
		if g.id == id {
			return true
		}
	}
	return false
}

// matOp emits the matrix operators checked by matBinary.
func (e *emitter) matOp(op operator, a uint32, at *wgslType, b uint32, bt *wgslType, rt *wgslType) uint32 {
	ty := e.typeID(rt, plain)
	switch {
	case op == opAdd || op == opSub:
		fop := pick(op == opAdd, spirv.OpFAdd, spirv.OpFSub)
		return e.perColumn(at, a, b, func(x, y uint32) uint32 { return e.op(fop, e.typeID(at.Elem, plain), x, y) })
	case at.Kind == kMat && bt.isScalar():
		return e.op(spirv.OpMatrixTimesScalar, ty, a, b)
	case at.isScalar() && bt.Kind == kMat:
		return e.op(spirv.OpMatrixTimesScalar, ty, b, a)
	case at.Kind == kMat && bt.Kind == kVec:
		return e.op(spirv.OpMatrixTimesVector, ty, a, b)
	case at.Kind == kVec && bt.Kind == kMat:
		return e.op(spirv.OpVectorTimesMatrix, ty, a, b)
	case at.Kind == kMat && bt.Kind == kMat:
		return e.op(spirv.OpMatrixTimesMatrix, ty, a, b)
	}
	bugf("matrix operator %s on %s and %s", op, at, bt)
	return 0
}

// perColumn applies f to the columns of a and b and rebuilds the matrix.
func (e *emitter) perColumn(t *wgslType, a, b uint32, f func(x, y uint32) uint32) uint32 {
	col := e.typeID(t.Elem, plain)
	parts := make([]uint32, t.N)
	for i := range parts {
		x := e.op(spirv.OpCompositeExtract, col, a, uint32(i))
		y := e.op(spirv.OpCompositeExtract, col, b, uint32(i))
		parts[i] = f(x, y)
	}
	return e.op(spirv.OpCompositeConstruct, e.typeID(t, plain), parts...)
}
