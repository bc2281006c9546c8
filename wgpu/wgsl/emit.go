package wgsl

import (
	"fmt"
	"runtime/debug"
	"sort"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"
)

// flavor selects how an aggregate type is laid out in SPIR-V: plain (function,
// private, workgroup memory and values), explicit layout (Offset/ArrayStride,
// for storage, uniform and push-constant memory) or the Block-decorated
// top-level struct of one buffer variable.
type flavor int

const (
	plain flavor = iota
	laidOut
	// ubo is the explicit layout of the uniform address space where a type
	// holds a narrow matrix (see narrowMat); other types use laidOut there.
	ubo
)

// bug is panicked by the emitter when it meets something the checker should
// have rejected; emit turns it into an *InternalError.
type bug struct{ msg string }

func bugf(format string, args ...any) { panic(bug{fmt.Sprintf(format, args...)}) }

type emitter struct {
	m    *checked
	opt  Options
	next uint32

	caps     map[uint32]bool
	exts     map[string]bool // OpExtension names
	glsl     uint32
	entries  spirv.Section
	modes    spirv.Section
	debug    spirv.Section
	annots   spirv.Section
	decls    spirv.Section // types, constants, global variables
	funcs    spirv.Section
	typeIDs  map[string]uint32
	constIDs map[string]uint32
	constOf  map[constRef]uint32 // the constants already emitted, by value and type
	globals  map[*symbol]*globalVar
	inputs   map[string]uint32 // builtin name -> Input variable
	fnIDs    map[*function]uint32
	specIDs  map[*symbol]uint32
	wgSizeID uint32
	variants map[string]*fnVariant // functions with pointer parameters, by argument shape
	pending  []*fnVariant
	// constIndex maps u32 constants (constant, constU32) back to their value.
	constIndex map[uint32]uint32
	// ranges holds the proved ranges of index expressions (ranges.go).
	ranges map[expr]interval

	f *fnState
	// race is the race check's state (Options.RaceCheck), or nil.
	race *raceState
}

type globalVar struct {
	id      uint32
	sc      uint32
	wrapped bool   // the store type is member 0 of a Block wrapper struct
	block   uint32 // Block struct type id when the store type is a struct
	split   bool   // a narrow uniform matrix: its columns are the Block's members
}

// emitDefault translates a checked module to SPIR-V 1.3 for Vulkan, under the
// zero Options, as Module.SPIRV holds it. Its errors are compiler bugs (*InternalError), never the user's, except for valid WGSL
// that specialization constants cannot express (see Module.NoSPIRV), which
// only Module.Specialize compiles.
func emitDefault(m *checked) (words []uint32, err error) {
	if m != nil && m.noSPIRV != "" {
		return nil, fmt.Errorf("%s: no whole-module SPIR-V: %s", m.file.Name, m.noSPIRV)
	}
	return emit(m, Options{})
}

func emit(m *checked, opt Options) (words []uint32, err error) {
	words, _, err = emitInfo(m, opt)
	return words, err
}

// emitInfo is emit, which also returns the race check's layout (nil without
// Options.RaceCheck).
func emitInfo(m *checked, opt Options) (words []uint32, race *raceInfo, err error) {
	if m == nil || m.file == nil {
		return nil, nil, &InternalError{Msg: "emit needs the result of check"}
	}
	e := &emitter{m: m, next: 1, caps: map[uint32]bool{}, typeIDs: map[string]uint32{}, constIDs: map[string]uint32{}, constOf: map[constRef]uint32{},
		globals: map[*symbol]*globalVar{}, inputs: map[string]uint32{}, fnIDs: map[*function]uint32{}, specIDs: map[*symbol]uint32{}, opt: opt, variants: map[string]*fnVariant{}, constIndex: map[uint32]uint32{}}
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bug)
			if !ok {
				b = bug{fmt.Sprint(r)}
			}
			words, race, err = nil, nil, &InternalError{File: m.file.Name, Msg: b.msg, Stack: string(debug.Stack())}
		}
	}()
	if !opt.NoIndexClamp {
		e.ranges = analyzeRanges(m)
	}
	e.module()
	return e.assemble(), e.raceInfo(), nil
}

func (e *emitter) id() uint32 { e.next++; return e.next - 1 }

func (e *emitter) capability(c uint32) { e.caps[c] = true }

func (e *emitter) name(id uint32, name string) {
	e.debug.Add(spirv.OpName, append([]uint32{id}, spirv.String(name)...)...)
}

func (e *emitter) decorate(id uint32, dec uint32, args ...uint32) {
	e.annots.Add(spirv.OpDecorate, append([]uint32{id, dec}, args...)...)
}

func (e *emitter) module() {
	e.capability(spirv.CapabilityShader)
	e.glsl = e.id()
	for _, s := range e.m.overrides {
		e.override(s)
	}
	for _, s := range e.m.globals {
		e.global(s)
	}
	if e.opt.RaceCheck != nil {
		e.raceSetup()
	}
	for _, f := range e.m.funcs {
		if !hasPtrParams(f) {
			e.fnIDs[f] = e.id()
			e.name(e.fnIDs[f], f.decl.Name)
		}
	}
	for _, f := range e.m.funcs {
		if !hasPtrParams(f) {
			e.function(f, e.fnIDs[f], nil)
		}
	}
	e.emitVariants()
	if e.race != nil {
		e.raceFunctions()
	}
}

func (e *emitter) assemble() []uint32 {
	var caps []int
	for c := range e.caps {
		caps = append(caps, int(c))
	}
	sort.Ints(caps)
	var head spirv.Section
	for _, c := range caps {
		head.Add(spirv.OpCapability, uint32(c))
	}
	var exts []string
	for x := range e.exts {
		exts = append(exts, x)
	}
	sort.Strings(exts)
	for _, x := range exts {
		head.Add(spirv.OpExtension, spirv.String(x)...)
	}
	head.Add(spirv.OpExtInstImport, append([]uint32{e.glsl}, spirv.String("GLSL.std.450")...)...)
	head.Add(spirv.OpMemoryModel, spirv.AddressingModelLogical, spirv.MemoryModelGLSL450)
	words := []uint32{spirv.Magic, spirv.Version13, 0, e.next, 0}
	for _, s := range []spirv.Section{head, e.entries, e.modes, e.debug, e.annots, e.decls, e.funcs} {
		words = append(words, s...)
	}
	return words
}

// ---- types ----

func scFor(s addrSpace) uint32 {
	switch s {
	case spaceFunction:
		return spirv.StorageClassFunction
	case spacePrivate:
		return spirv.StorageClassPrivate
	case spaceWorkgroup:
		return spirv.StorageClassWorkgroup
	case spaceUniform:
		return spirv.StorageClassUniform
	case spaceStorage:
		return spirv.StorageClassStorageBuffer
	case spacePushConstant:
		return spirv.StorageClassPushConstant
	}
	bugf("no storage class for address space %q", s)
	return 0
}

func flavorFor(s addrSpace) flavor {
	switch s {
	case spaceUniform:
		return ubo
	case spaceStorage, spacePushConstant:
		return laidOut
	}
	return plain
}

// isAggregate reports types whose SPIR-V id depends on the flavor.
func isAggregate(t *wgslType) bool { return t.Kind == kArray || t.Kind == kStruct }

// narrowMat reports a matrix whose column stride is not a multiple of 16
// (matCx2<f32>, the f16 matrices). WGSL lays these out with the column
// vector's alignment, but Vulkan's uniform buffers (extended alignment) need
// 16-byte matrix strides. So in the uniform address space, as Tint does, a
// narrow matrix is split into its column vectors: consecutive members of the
// enclosing struct, or of a struct standing for the matrix where it is an
// array element or a whole buffer.
func narrowMat(t *wgslType) bool { return t.Kind == kMat && t.Stride()%16 != 0 }

// hasNarrowMat reports a narrow matrix anywhere in t.
func hasNarrowMat(t *wgslType) bool {
	switch t.Kind {
	case kMat:
		return narrowMat(t)
	case kArray:
		return hasNarrowMat(t.Elem)
	case kStruct:
		for _, m := range t.Struct.Members {
			if hasNarrowMat(m.Type) {
				return true
			}
		}
	}
	return false
}

// needsRecast reports whether a value of type t loaded from memory of
// flavor fl must be rebuilt to be used as a plain value.
func needsRecast(t *wgslType, fl flavor) bool {
	return fl != plain && isAggregate(t) || fl == ubo && narrowMat(t)
}

// uboMember is the index in the ubo flavor of member k of struct t: each
// narrow matrix before it takes one member per column.
func uboMember(t *wgslType, k int) int {
	n := 0
	for _, m := range t.Struct.Members[:k] {
		if narrowMat(m.Type) {
			n += m.Type.N
		} else {
			n++
		}
	}
	return n
}

func (e *emitter) typeID(t *wgslType, fl flavor) uint32 {
	if fl == ubo && !hasNarrowMat(t) {
		fl = laidOut
	}
	if !isAggregate(t) && t.Kind != kAtomic && fl != ubo {
		fl = plain
	}
	key := fmt.Sprintf("%s/%d", t, fl)
	if t.CountOverride != nil {
		key = fmt.Sprintf("%s#%p", key, t.CountOverride.expr)
	}
	if id, ok := e.typeIDs[key]; ok {
		return id
	}
	var id uint32
	switch t.Kind {
	case kBool:
		id = e.id()
		e.decls.Add(spirv.OpTypeBool, id)
	case kI32, kU32, kAbstractInt:
		id = e.id()
		sign := uint32(0)
		if t.Kind != kU32 {
			sign = 1
		}
		e.decls.Add(spirv.OpTypeInt, id, 32, sign)
	case kF32, kAbstractFloat:
		id = e.id()
		e.decls.Add(spirv.OpTypeFloat, id, 32)
	case kF16:
		e.capability(spirv.CapabilityFloat16)
		id = e.id()
		e.decls.Add(spirv.OpTypeFloat, id, 16)
	case kVec:
		el := e.typeID(t.Elem, plain)
		id = e.id()
		e.decls.Add(spirv.OpTypeVector, id, el, uint32(t.N))
	case kAtomic:
		return e.typeID(t.Elem, plain)
	case kMat:
		if fl == ubo {
			id = e.columnStruct(t)
			break
		}
		col := e.typeID(t.Elem, plain)
		id = e.id()
		e.decls.Add(spirv.OpTypeMatrix, id, col, uint32(t.N))
	case kArray:
		el := e.typeID(t.Elem, fl)
		switch {
		case t.CountOverride != nil:
			n := e.specConstExpr(t.CountOverride.expr)
			id = e.id()
			e.decls.Add(spirv.OpTypeArray, id, el, n)
		case t.N == 0:
			id = e.id()
			e.decls.Add(spirv.OpTypeRuntimeArray, id, el)
		default:
			n := e.constU32(uint32(t.N))
			id = e.id()
			e.decls.Add(spirv.OpTypeArray, id, el, n)
		}
		if fl != plain {
			e.decorate(id, spirv.DecorationArrayStride, uint32(t.Stride()))
		}
	case kStruct:
		id = e.structType(t, fl)
	case kSubgroupMatrix:
		if e.opt.CooperativeMatrix {
			id = e.coopType(t)
		} else {
			id = e.lowMatrixType(t)
		}
	default:
		bugf("no SPIR-V type for %s", t)
	}
	e.typeIDs[key] = id
	return id
}

func (e *emitter) structType(t *wgslType, fl flavor) uint32 {
	if fl == ubo {
		if hasNarrowMat(t) {
			return e.uboStruct(t)
		}
		fl = laidOut
	}
	var ms []uint32
	for _, m := range t.Struct.Members {
		ms = append(ms, e.typeID(m.Type, fl))
	}
	id := e.id()
	e.decls.Add(spirv.OpTypeStruct, append([]uint32{id}, ms...)...)
	e.name(id, t.Struct.Name)
	for i, m := range t.Struct.Members {
		e.debug.Add(spirv.OpMemberName, append([]uint32{id, uint32(i)}, spirv.String(m.Name)...)...)
		if fl == laidOut {
			e.annots.Add(spirv.OpMemberDecorate, id, uint32(i), spirv.DecorationOffset, uint32(m.Offset))
			e.matrixLayout(id, uint32(i), m.Type, fl)
		}
	}
	return id
}

// uboStruct is struct t in the uniform layout, its narrow matrices split
// into one member per column (named m_0, m_1, ...).
func (e *emitter) uboStruct(t *wgslType) uint32 {
	type member struct {
		ty     uint32
		name   string
		offset int
		mat    *wgslType // a matrix member that keeps its matrix type
	}
	var ms []member
	for _, m := range t.Struct.Members {
		if narrowMat(m.Type) {
			col := e.typeID(m.Type.Elem, plain)
			for c := range m.Type.N {
				ms = append(ms, member{col, fmt.Sprintf("%s_%d", m.Name, c), m.Offset + c*m.Type.Stride(), nil})
			}
			continue
		}
		ms = append(ms, member{e.typeID(m.Type, ubo), m.Name, m.Offset, m.Type})
	}
	ops := []uint32{0}
	for _, m := range ms {
		ops = append(ops, m.ty)
	}
	id := e.id()
	ops[0] = id
	e.decls.Add(spirv.OpTypeStruct, ops...)
	e.name(id, t.Struct.Name)
	for i, m := range ms {
		e.debug.Add(spirv.OpMemberName, append([]uint32{id, uint32(i)}, spirv.String(m.name)...)...)
		e.annots.Add(spirv.OpMemberDecorate, id, uint32(i), spirv.DecorationOffset, uint32(m.offset))
		if m.mat != nil {
			e.matrixLayout(id, uint32(i), m.mat, ubo)
		}
	}
	return id
}

// columnStruct is a narrow matrix in the uniform layout: a struct of its
// column vectors, for an array element or a whole buffer.
func (e *emitter) columnStruct(t *wgslType) uint32 {
	col := e.typeID(t.Elem, plain)
	ops := []uint32{0}
	for range t.N {
		ops = append(ops, col)
	}
	id := e.id()
	ops[0] = id
	e.decls.Add(spirv.OpTypeStruct, ops...)
	for c := range t.N {
		e.annots.Add(spirv.OpMemberDecorate, id, uint32(c), spirv.DecorationOffset, uint32(c*t.Stride()))
	}
	return id
}

func (e *emitter) ptrType(sc uint32, elem uint32) uint32 {
	key := fmt.Sprintf("ptr %d %d", sc, elem)
	if id, ok := e.typeIDs[key]; ok {
		return id
	}
	id := e.id()
	e.decls.Add(spirv.OpTypePointer, id, sc, elem)
	e.typeIDs[key] = id
	return id
}

func (e *emitter) voidType() uint32 {
	if id, ok := e.typeIDs["void"]; ok {
		return id
	}
	id := e.id()
	e.decls.Add(spirv.OpTypeVoid, id)
	e.typeIDs["void"] = id
	return id
}

func (e *emitter) fnType(ret uint32, params []uint32) uint32 {
	key := fmt.Sprint("fn", ret, params)
	if id, ok := e.typeIDs[key]; ok {
		return id
	}
	id := e.id()
	e.decls.Add(spirv.OpTypeFunction, append([]uint32{id, ret}, params...)...)
	e.typeIDs[key] = id
	return id
}

// ---- constants ----

func (e *emitter) constU32(v uint32) uint32 {
	id := e.constant(e.m.types.scalar(kU32), &value{i: int64(v)})
	e.constIndex[id] = v
	return id
}

// constRef is a constant value of a type, as the emitter meets it.
type constRef struct {
	t *wgslType
	v *value
}

// constant emits constant v of type t once. Constants share components
// (array(a, a) holds a twice), so a composite is keyed by the ids of its
// components, each emitted once: the work and the SPIR-V stay in proportion
// to the distinct components, not to the components of the expanded value.
// A zero composite is an OpConstantNull.
func (e *emitter) constant(t *wgslType, v *value) uint32 {
	if t.isAbstract() {
		t = concreteDefault(e.m.types, t)
	}
	composite := v.elems != nil || v.zeroComposite
	ref := constRef{t, v}
	if id, ok := e.constOf[ref]; ok && composite {
		return id
	}
	ty := e.typeID(t, plain)
	if v.zeroComposite {
		id := e.null(ty)
		e.constOf[ref] = id
		return id
	}
	var parts []uint32
	key := fmt.Sprint(ty, "=", bitsOf(v, t))
	if composite {
		for i, el := range v.elems {
			parts = append(parts, e.constant(elemType(t, i), el))
		}
		key = fmt.Sprint(ty, parts)
	}
	id, ok := e.constIDs[key]
	if !ok {
		id = e.id()
		switch t.Kind {
		case kBool:
			if v.b {
				e.decls.Add(spirv.OpConstantTrue, ty, id)
			} else {
				e.decls.Add(spirv.OpConstantFalse, ty, id)
			}
		case kI32, kU32, kF32, kF16:
			e.decls.Add(spirv.OpConstant, ty, id, bitsOf(v, t))
		case kVec, kMat, kArray, kStruct:
			e.decls.Add(spirv.OpConstantComposite, append([]uint32{ty, id}, parts...)...)
		default:
			bugf("no constant of type %s", t)
		}
		e.constIDs[key] = id
	}
	if composite {
		e.constOf[ref] = id
	}
	if t.Kind == kU32 {
		e.constIndex[id] = uint32(v.i)
	}
	return id
}

func (e *emitter) null(t uint32) uint32 {
	key := fmt.Sprint("null ", t)
	if id, ok := e.constIDs[key]; ok {
		return id
	}
	id := e.id()
	e.decls.Add(spirv.OpConstantNull, t, id)
	e.constIDs[key] = id
	return id
}

func concreteDefault(ts *types, t *wgslType) *wgslType {
	switch t.Kind {
	case kAbstractInt:
		return ts.scalar(kI32)
	case kAbstractFloat:
		return ts.scalar(kF32)
	case kVec:
		return ts.vec(t.N, concreteDefault(ts, t.Elem))
	case kMat:
		return ts.get(wgslType{Kind: kMat, N: t.N, Elem: concreteDefault(ts, t.Elem)})
	case kArray:
		return ts.array(concreteDefault(ts, t.Elem), t.N)
	case kStruct:
		if t.Struct.concrete != nil {
			return t.Struct.concrete
		}
	}
	return t
}

// ---- overrides and module-scope override-expressions ----

func (e *emitter) override(s *symbol) {
	if s.computed {
		return // computed where it is used (computedOverride)
	}
	if s.derived != nil {
		id := e.specConstExpr(s.derived)
		e.name(id, s.name)
		e.specIDs[s] = id
		return
	}
	ty := e.typeID(s.typ, plain)
	id := e.id()
	v := s.val
	if v == nil {
		v = &value{}
	}
	if s.typ.Kind == kBool {
		if v.b {
			e.decls.Add(spirv.OpSpecConstantTrue, ty, id)
		} else {
			e.decls.Add(spirv.OpSpecConstantFalse, ty, id)
		}
	} else {
		e.decls.Add(spirv.OpSpecConstant, ty, id, bitsOf(v, s.typ))
	}
	e.decorate(id, spirv.DecorationSpecId, uint32(s.overrideID))
	e.name(id, s.name)
	e.specIDs[s] = id
}

// specConstExpr emits a const-expression, an override or an integer
// override-expression at module scope.
func (e *emitter) specConstExpr(x expr) uint32 {
	info := e.m.info[x]
	if info == nil {
		bugf("unchecked override-expression")
	}
	if info.val != nil {
		return e.constant(info.typ, info.val)
	}
	switch x := x.(type) {
	case *ident:
		if id, ok := e.specIDs[info.sym]; ok {
			return id
		}
	case *parenExpr:
		return e.specConstExpr(x.X)
	case *binaryExpr:
		a, b := e.specConstExpr(x.X), e.specConstExpr(x.Y)
		signed := info.typ.Kind == kI32
		var op spirv.Op
		switch x.Op {
		case opAdd:
			op = spirv.OpIAdd
		case opSub:
			op = spirv.OpISub
		case opMul:
			op = spirv.OpIMul
		case opDiv:
			op = pick(signed, spirv.OpSDiv, spirv.OpUDiv)
		case opRem:
			op = pick(signed, spirv.OpSRem, spirv.OpUMod)
		case opShl:
			op = spirv.OpShiftLeftLogical
		case opShr:
			op = pick(signed, spirv.OpShiftRightArithmetic, spirv.OpShiftRightLogical)
		case opAnd:
			op = spirv.OpBitwiseAnd
		case opOr:
			op = spirv.OpBitwiseOr
		case opXor:
			op = spirv.OpBitwiseXor
		}
		if op != 0 {
			id := e.id()
			e.decls.Add(spirv.OpSpecConstantOp, e.typeID(info.typ, plain), id, uint32(op), a, b)
			return id
		}
	}
	bugf("unsupported override-expression at offset %d", x.exprPos())
	return 0
}

func pick[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

// ---- global variables ----

func (e *emitter) global(s *symbol) {
	sc := scFor(s.space)
	g := &globalVar{sc: sc}
	var store uint32
	switch s.space {
	case spaceStorage, spaceUniform, spacePushConstant:
		if s.typ.hasF16() {
			switch s.space {
			case spaceStorage:
				e.capability(spirv.CapabilityStorageBuffer16BitAccess)
			case spaceUniform:
				e.capability(spirv.CapabilityUniformAndStorageBuffer16BitAccess)
			case spacePushConstant:
				e.capability(spirv.CapabilityStoragePushConstant16)
			}
		}
		switch {
		case s.typ.Kind == kStruct:
			store = e.structType(s.typ, flavorFor(s.space))
			g.block = store
		case s.space == spaceUniform && narrowMat(s.typ):
			store = e.columnStruct(s.typ)
			e.name(store, s.name+"_block")
			g.block, g.split = store, true
		default:
			inner := e.typeID(s.typ, flavorFor(s.space))
			store = e.id()
			e.decls.Add(spirv.OpTypeStruct, store, inner)
			e.annots.Add(spirv.OpMemberDecorate, store, 0, spirv.DecorationOffset, 0)
			e.matrixLayout(store, 0, s.typ, flavorFor(s.space))
			e.name(store, s.name+"_block")
			g.wrapped = true
		}
		e.decorate(store, spirv.DecorationBlock)
	default:
		store = e.typeID(s.typ, plain)
	}
	ptr := e.ptrType(sc, store)
	g.id = e.id()
	switch {
	case s.space == spacePrivate && s.init != nil && !s.initRuntime:
		e.decls.Add(spirv.OpVariable, ptr, g.id, sc, e.specConstExpr(s.init))
	case s.space == spacePrivate:
		e.decls.Add(spirv.OpVariable, ptr, g.id, sc, e.null(store))
	default:
		e.decls.Add(spirv.OpVariable, ptr, g.id, sc)
	}
	e.name(g.id, s.name)
	if s.space == spaceStorage || s.space == spaceUniform {
		e.decorate(g.id, spirv.DecorationDescriptorSet, uint32(s.group))
		e.decorate(g.id, spirv.DecorationBinding, uint32(s.binding))
		if s.space == spaceStorage && s.access == accessRead {
			e.decorate(g.id, spirv.DecorationNonWritable)
		}
	}
	e.globals[s] = g
}

// input returns the Input variable of a builtin value.
func (e *emitter) input(name string) uint32 {
	if id, ok := e.inputs[name]; ok {
		return id
	}
	v, ok := builtinValues[name]
	if !ok || v.linear {
		bugf("no Input variable for builtin %q", name)
	}
	if v.subgroup {
		e.capability(spirv.CapabilityGroupNonUniform)
	}
	t := v.typ(e.m.types)
	id := e.id()
	e.decls.Add(spirv.OpVariable, e.ptrType(spirv.StorageClassInput, e.typeID(t, plain)), id, spirv.StorageClassInput)
	e.decorate(id, spirv.DecorationBuiltIn, v.spirv)
	e.name(id, name)
	e.inputs[name] = id
	return id
}

// matrixLayout decorates a struct member holding a matrix, or an array of
// them, with its column-major layout; in the ubo flavor a narrow matrix is a
// struct of columns and takes none.
func (e *emitter) matrixLayout(st, member uint32, t *wgslType, fl flavor) {
	for t.Kind == kArray {
		t = t.Elem
	}
	if t.Kind == kMat && (fl != ubo || !narrowMat(t)) {
		e.annots.Add(spirv.OpMemberDecorate, st, member, spirv.DecorationColMajor)
		e.annots.Add(spirv.OpMemberDecorate, st, member, spirv.DecorationMatrixStride, uint32(t.Stride()))
	}
}
