package wgsl

import "github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"

// Whole copies of arrays and structs between buffer memory (the laidOut and
// ubo flavors) and values (plain) change the SPIR-V type, and SPIR-V 1.3 has
// no OpCopyLogical: recast rebuilds the value one composite at a time. For a
// large aggregate that is one OpCompositeExtract per element, so copying an
// array<f32, 8192> would add tens of thousands of words. Drivers also split
// every whole-aggregate load, store and value into one instruction per
// element (lavapipe took 78 s to compile a kernel copying a few 4 KiB
// structs that way). So a large aggregate (bigValue) never becomes one
// SPIR-V value where it can be avoided:
//
//   - copies between memories (assignment, var and let initializers from a
//     memory location) run element by element in a loop (copyMem);
//   - lets and value parameters of such types live in a Function variable
//     (fnState.inMem) and are read through access chains; a let made from
//     another let, a parameter or a call result shares its memory;
//   - value parameters and results are passed as pointers to Function
//     variables the caller makes (a let or parameter held in memory is
//     passed as it is: it is never written).
//
// The emitted code then does not grow with the array length.

// maxInlineCopy bounds the composites recast rebuilds inline for one copy;
// a larger copy becomes a loop.
const maxInlineCopy = 64

// copyCost counts the composite extractions recast needs to rebuild a value
// of type t, saturating just above maxInlineCopy.
func copyCost(t *wgslType) int {
	n := 0
	switch t.Kind {
	case kArray:
		if t.N == 0 || t.CountOverride != nil {
			return 0 // never copied between flavors
		}
		per := 1 + copyCost(t.Elem)
		if t.N > maxInlineCopy || t.N*per > maxInlineCopy {
			return maxInlineCopy + 1
		}
		n = t.N * per
	case kStruct:
		for _, m := range t.Struct.Members {
			n += 1 + copyCost(m.Type)
			if n > maxInlineCopy {
				return maxInlineCopy + 1
			}
		}
	case kMat:
		n = t.N // a narrow matrix in uniform memory is rebuilt from columns
	}
	return n
}

// bigValue reports an array or struct whose copies copyMem makes, element
// by element, and whose lets and value parameters live in Function memory.
func bigValue(t *wgslType) bool { return isAggregate(t) && copyCost(t) > maxInlineCopy }

// bigCopy reports a copy of type t between memory of flavor fl and a value
// that copyMem should make, instead of one recast.
func bigCopy(t *wgslType, fl flavor) bool {
	return fl != plain && bigValue(t)
}

// bindMem records Function variable v as the memory of let or value
// parameter s.
func (e *emitter) bindMem(s *symbol, v uint32) {
	if e.f.inMem == nil {
		e.f.inMem = map[*symbol]uint32{}
	}
	e.f.inMem[s] = v
}

// memRoot reports whether x names a let or value parameter held in memory
// (see bindMem) or calls a function returning a large aggregate, or is an
// element or member of one, so that e.ref(x) reaches it.
func (e *emitter) memRoot(x expr) bool {
	for {
		switch y := x.(type) {
		case *parenExpr:
			x = y.X
		case *indexExpr:
			x = y.X
		case *memberExpr:
			if e.info(y).swizzle != nil {
				return false
			}
			x = y.X
		case *ident:
			_, ok := e.f.inMem[e.info(y).sym]
			return ok
		case *callExpr:
			info := e.info(y)
			return info.call == callFn && info.val == nil && bigValue(info.typ)
		default:
			return false
		}
	}
}

// immutableMem returns the Function variable or pointer parameter holding x
// when x names a whole let or value parameter kept in memory: memory that
// is never written after its initialization.
func (e *emitter) immutableMem(x expr) (uint32, bool) {
	for {
		p, ok := x.(*parenExpr)
		if !ok {
			break
		}
		x = p.X
	}
	id, ok := x.(*ident)
	if !ok {
		return 0, false
	}
	v, ok := e.f.inMem[e.info(id).sym]
	return v, ok
}

// storeValue stores the value of expression x, of type t, into r. A large
// aggregate read from memory is copied element by element, never becoming
// one SPIR-V value: drivers split such values into one instruction per
// element.
func (e *emitter) storeValue(r refv, t *wgslType, x expr) {
	if bigValue(t) {
		if info := e.info(x); info.val == nil && (info.ref || e.memRoot(x)) {
			e.copyMem(r, e.ref(x), t)
			return
		}
	}
	e.store(r, t, e.expr(x))
}

// loadVia loads the large aggregate r of type t by copying it into a
// Function variable element by element and loading that.
func (e *emitter) loadVia(r refv, t *wgslType) uint32 {
	tmp := e.localRef(t)
	e.copyMem(tmp, r, t)
	return e.op(spirv.OpLoad, e.typeID(t, plain), tmp.base)
}

// storeVia stores value v of the large aggregate type t into r through a
// Function variable, element by element.
func (e *emitter) storeVia(r refv, t *wgslType, v uint32) {
	tmp := e.localRef(t)
	e.add(spirv.OpStore, tmp.base, v)
	e.copyMem(r, tmp, t)
}

// localRef is a new Function variable of type t.
func (e *emitter) localRef(t *wgslType) refv { return e.localRefOf(e.localVar(t), t) }

// localRefOf is Function variable v of type t.
func (e *emitter) localRefOf(v uint32, t *wgslType) refv {
	return refv{base: v, sc: spirv.StorageClassFunction, space: spaceFunction,
		ty: e.ptrType(spirv.StorageClassFunction, e.typeID(t, plain))}
}

// copyMem copies the value of type t at src to dst, where the two may be of
// different flavors: small parts with one load and store (recast between
// them), large arrays in a loop over their elements, large structs member
// by member.
func (e *emitter) copyMem(dst, src refv, t *wgslType) {
	if copyCost(t) <= maxInlineCopy {
		e.store(dst, t, e.load(src, t))
		return
	}
	switch t.Kind {
	case kArray:
		e.countLoop(e.constU32(uint32(t.N)), func(i uint32) {
			e.copyMem(elemRef(dst, i, t.Elem), elemRef(src, i, t.Elem), t.Elem)
		})
	case kStruct:
		for k, m := range t.Struct.Members {
			e.copyMem(e.memberRef(dst, t, k), e.memberRef(src, t, k), m.Type)
		}
	default:
		bugf("no element-wise copy of %s", t)
	}
}

// elemRef is element i (an id) of the array r, of element type et.
func elemRef(r refv, i uint32, et *wgslType) refv {
	r.idx = append(append([]uint32(nil), r.idx...), i)
	r.block = 0
	r.split = r.space == spaceUniform && narrowMat(et)
	return r
}

// memberRef is member k of the struct r of type st (see ref's *Member case
// for the uniform layout of narrow matrices).
func (e *emitter) memberRef(r refv, st *wgslType, k int) refv {
	r.block = 0
	if r.space == spaceUniform && hasNarrowMat(st) {
		narrow := narrowMat(st.Struct.Members[k].Type)
		k = uboMember(st, k)
		if narrow {
			r.split, r.col0 = true, uint32(k)
			return r
		}
	}
	r.idx = append(append([]uint32(nil), r.idx...), e.constU32(uint32(k)))
	return r
}

// fillMem stores into r of type t in plain memory the value val gives for
// each part small enough for one store: large and override-sized arrays in
// a loop over their elements, large structs member by member.
func (e *emitter) fillMem(r refv, t *wgslType, val func(*wgslType) uint32) {
	switch {
	case t.Kind == kArray && t.CountOverride != nil:
		e.countLoop(e.specConstExpr(t.CountOverride.expr), func(i uint32) {
			e.fillMem(elemRef(r, i, t.Elem), t.Elem, val)
		})
	case !bigValue(t):
		e.add(spirv.OpStore, e.ptr(r, t), val(t))
	case t.Kind == kArray:
		e.countLoop(e.constU32(uint32(t.N)), func(i uint32) {
			e.fillMem(elemRef(r, i, t.Elem), t.Elem, val)
		})
	default:
		for k, m := range t.Struct.Members {
			e.fillMem(e.memberRef(r, t, k), m.Type, val)
		}
	}
}

// countLoop emits a structured loop running body(i) for i = 0 .. n-1, where
// n is the id of a u32 and i the id of the counter's value in the body.
func (e *emitter) countLoop(n uint32, body func(i uint32)) {
	e.counterLoop(func() uint32 { return e.constU32(0) }, n, func() uint32 { return e.constU32(1) }, body)
}
