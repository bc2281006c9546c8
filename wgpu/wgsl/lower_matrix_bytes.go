package wgsl

import "github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"

// Lowered loads and stores that reinterpret memory: the layout-template
// form of subgroupMatrixLoad and Store through an array of other values
// than the matrix's shader scalar type (any f32, f16, i32 or u32 scalar or
// vector; see builtin_matrix.go). Row (column) j of the matrix starts at
// byte (offset + j*stride) * S of the array, S its stride in bytes, and its
// components follow one another from there, C bytes each (1 for i8 and u8,
// 2 for f16, else 4), little-endian, as the native load reads them.
//
// The array is taken as a sequence of units, its scalars (U bytes: 2 for
// f16, else 4), each read and written whole: an element of a scalar array,
// a component of a vector one. A vec3 element's fourth unit is padding: it
// reads as zero and is never written. A unit's bits travel as a u32 (an f16
// one in the low half, through a vec2<f16> bitcast, so without 16-bit
// integers), so every value keeps its bits.
//
//   - A load reads, for each component, the unit holding it (C <= U: its
//     bits shifted down) or the two units holding it (C = 4, U = 2).
//   - A store with C >= U writes each component's unit(s) from one
//     invocation, as lowStore does elements. With C < U several components
//     share a unit, so the invocations take units instead (each of a row's
//     ⌈minor*C/U⌉ from one invocation, rows and units numbered as
//     lowStore numbers elements) and compose a unit from the components it
//     holds. Where a row's components end inside a unit, its other bytes
//     are kept: with an atomic and and or on an i32 or u32 unit (as the
//     narrow store in lower_matrix.go does), a read, merge and write on an
//     f32 or f16 one, which a store of the same unit by another subgroup at
//     the same time may undo (a native store of such a row writes only its
//     bytes).
//
// Indices are clamped to the array as any index is.

// reinterprets reports whether a load or store of matrix t through array
// type at takes the array's bytes as other values: an array whose element
// is not t's shader scalar type (i8 and u8 in i32 or u32 arrays, as the bool
// form takes them, are read by lowElement).
func reinterprets(at, t *wgslType) bool { return at.Elem != t.Elem }

// byteView is an array seen as units (see the top of this file).
type byteView struct {
	r     refv      // the array
	at    *wgslType // its type
	unit  *wgslType // its scalar type
	lanes int       // 1 for a scalar array, else the vector's width
	s     uint32    // the array's stride in bytes
	u     uint32    // a unit's size in bytes: 2 or 4
}

func (e *emitter) newByteView(r refv, at *wgslType) *byteView {
	v := &byteView{r: r, at: at, unit: at.Elem, lanes: 1, s: uint32(at.Stride())}
	if at.Elem.Kind == kVec {
		v.unit, v.lanes = at.Elem.Elem, at.Elem.N
	}
	v.u = uint32(v.unit.Size())
	return v
}

// unitRef is the reference to the unit at byte b (an id, a multiple of
// v.u), its array index clamped, and valid, a bool id that is false for a
// vec3's padding (0 where every unit of the array is a value).
func (e *emitter) unitRef(v *byteView, b uint32) (ref refv, valid uint32) {
	u32 := e.m.types.scalar(kU32)
	ut := e.typeID(u32, plain)
	idx := e.op(spirv.OpUDiv, ut, b, e.constU32(v.s))
	idx = e.clampIndex(idx, nil, u32, v.at, &v.r)
	if v.lanes == 1 {
		return elemRef(v.r, idx, v.unit), 0
	}
	lane := e.op(spirv.OpUDiv, ut, e.op(spirv.OpUMod, ut, b, e.constU32(v.s)), e.constU32(v.u))
	if uint32(v.lanes)*v.u < v.s { // padding after the last lane
		valid = e.op(spirv.OpULessThan, e.typeID(e.m.types.scalar(kBool), plain), lane, e.constU32(uint32(v.lanes)))
		lane = e.ext(ut, spirv.GLSLUMin, lane, e.constU32(uint32(v.lanes-1)))
	}
	return elemRef(elemRef(v.r, idx, v.at.Elem), lane, v.unit), valid
}

// readUnit is the bits of the unit at byte b (an id): a u32, an f16 unit's
// in the low half; 0 for padding.
func (e *emitter) readUnit(v *byteView, b uint32) uint32 {
	ref, valid := e.unitRef(v, b)
	bits := e.toBits(e.load(ref, v.unit), v.unit)
	if valid != 0 {
		bits = e.op(spirv.OpSelect, e.typeID(e.m.types.scalar(kU32), plain), valid, bits, e.constU32(0))
	}
	return bits
}

// writeUnit stores bits (a u32 id; an f16 unit takes the low half) into the
// unit at byte b; nothing into padding.
func (e *emitter) writeUnit(v *byteView, b, bits uint32) {
	ref, valid := e.unitRef(v, b)
	store := func() { e.store(ref, v.unit, e.fromBits(bits, v.unit)) }
	if valid == 0 {
		store()
		return
	}
	e.ifThen(valid, store)
}

// toBits is x, of scalar type t (f32, f16, i32 or u32), as a u32 of its
// bits (an f16's in the low half, the high half zero).
func (e *emitter) toBits(x uint32, t *wgslType) uint32 {
	ts := e.m.types
	ut := e.typeID(ts.scalar(kU32), plain)
	switch t.Kind {
	case kU32:
		return x
	case kF16:
		h2 := e.typeID(ts.vec(2, t), plain)
		return e.op(spirv.OpBitcast, ut, e.op(spirv.OpCompositeConstruct, h2, x, e.constant(t, &value{})))
	}
	return e.op(spirv.OpBitcast, ut, x)
}

// fromBits is the value of scalar type t whose bits are u32 id bits (an
// f16 takes the low half).
func (e *emitter) fromBits(bits uint32, t *wgslType) uint32 {
	ts := e.m.types
	switch t.Kind {
	case kU32:
		return bits
	case kF16:
		h2 := e.typeID(ts.vec(2, t), plain)
		return e.op(spirv.OpCompositeExtract, e.typeID(t, plain), e.op(spirv.OpBitcast, h2, bits), 0)
	}
	return e.op(spirv.OpBitcast, e.typeID(t, plain), bits)
}

// ifThen emits body in a selection that runs where bool id cond is true.
func (e *emitter) ifThen(cond uint32, body func()) {
	then, merge := e.id(), e.id()
	e.add(spirv.OpSelectionMerge, merge, 0)
	e.terminate(spirv.OpBranchConditional, cond, then, merge)
	e.label(then)
	body()
	e.branch(merge)
	e.label(merge)
}

// componentByte is the byte of the array where component minor of row
// (column) major of a matrix of c-byte components starts: (off +
// major*stride) * S + minor*c, all u32 ids but c.
func (e *emitter) componentByte(v *byteView, off, stride, major, minor uint32, c int) uint32 {
	ut := e.typeID(e.m.types.scalar(kU32), plain)
	start := e.op(spirv.OpIMul, ut, e.op(spirv.OpIAdd, ut, off, e.op(spirv.OpIMul, ut, major, stride)), e.constU32(v.s))
	return e.op(spirv.OpIAdd, ut, start, e.op(spirv.OpIMul, ut, minor, e.constU32(uint32(c))))
}

// majorMinor splits element i (an id, row-major over matrix t) into its
// row (column) and its place in it, column-major where cm.
func (e *emitter) majorMinor(t *wgslType, i uint32, cm bool) (major, minor uint32) {
	ut := e.typeID(e.m.types.scalar(kU32), plain)
	cols := e.constU32(uint32(t.N))
	row, col := e.op(spirv.OpUDiv, ut, i, cols), e.op(spirv.OpUMod, ut, i, cols)
	if cm {
		return col, row
	}
	return row, col
}

// byteLoad emits a reinterpreting subgroupMatrixLoad of matrix t: every
// invocation reads every component.
func (e *emitter) byteLoad(v *byteView, t *wgslType, off, stride uint32, cm bool) uint32 {
	ut := e.typeID(e.m.types.scalar(kU32), plain)
	c := componentBytes(t)
	tmp := e.localVar(t)
	e.countLoop(e.constU32(uint32(t.N*t.Rows)), func(i uint32) {
		major, minor := e.majorMinor(t, i, cm)
		b := e.componentByte(v, off, stride, major, minor, c)
		var bits uint32
		switch {
		case uint32(c) > v.u: // a 4-byte component in two f16 units
			lo := e.readUnit(v, b)
			hi := e.readUnit(v, e.op(spirv.OpIAdd, ut, b, e.constU32(2)))
			bits = e.op(spirv.OpBitwiseOr, ut, lo, e.op(spirv.OpShiftLeftLogical, ut, hi, e.constU32(16)))
		default: // inside one unit, at a multiple of c
			rem := e.op(spirv.OpBitwiseAnd, ut, b, e.constU32(v.u-1))
			unit := e.readUnit(v, e.op(spirv.OpISub, ut, b, rem))
			bits = e.op(spirv.OpShiftRightLogical, ut, unit, e.op(spirv.OpShiftLeftLogical, ut, rem, e.constU32(3)))
		}
		e.add(spirv.OpStore, e.lowSlot(tmp, t, i), e.componentFromBits(t, bits))
	})
	return e.op(spirv.OpLoad, e.typeID(t, plain), tmp)
}

// componentFromBits is the element of matrix t whose bits are the low
// componentBytes(t) bytes of u32 id bits: an i8 sign-extended, a u8
// zero-extended.
func (e *emitter) componentFromBits(t *wgslType, bits uint32) uint32 {
	if !t.Narrow {
		return e.fromBits(bits, t.Elem)
	}
	ty := e.typeID(t.Elem, plain)
	if t.Elem.Kind == kI32 {
		return e.op(spirv.OpBitFieldSExtract, ty, e.op(spirv.OpBitcast, ty, bits), e.constU32(0), e.constU32(8))
	}
	return e.op(spirv.OpBitFieldUExtract, ty, bits, e.constU32(0), e.constU32(8))
}

// componentBits is element x of matrix t as a u32 of its componentBytes(t)
// bytes, the rest zero.
func (e *emitter) componentBits(t *wgslType, x uint32) uint32 {
	bits := e.toBits(x, t.Elem)
	if t.Narrow {
		bits = e.op(spirv.OpBitwiseAnd, e.typeID(e.m.types.scalar(kU32), plain), bits, e.constU32(0xff))
	}
	return bits
}

// byteStore emits a reinterpreting subgroupMatrixStore of the matrix of
// type t in Function variable tmp into memory of address space sp, the
// invocation of rank rank of count taking its share (see the top of this
// file).
func (e *emitter) byteStore(v *byteView, t *wgslType, tmp, off, stride uint32, cm bool, sp addrSpace, rank, count uint32) {
	ts := e.m.types
	ut := e.typeID(ts.scalar(kU32), plain)
	c := uint32(componentBytes(t))
	elem := func(major, minor uint32) uint32 { // the bits of component minor of row (column) major
		i := e.op(spirv.OpIAdd, ut, e.op(spirv.OpIMul, ut, major, e.constU32(uint32(t.N))), minor)
		if cm {
			i = e.op(spirv.OpIAdd, ut, e.op(spirv.OpIMul, ut, minor, e.constU32(uint32(t.N))), major)
		}
		return e.componentBits(t, e.op(spirv.OpLoad, e.typeID(t.Elem, plain), e.lowSlot(tmp, t, i)))
	}
	if c >= v.u {
		e.strideLoop(rank, e.constU32(uint32(t.N*t.Rows)), count, func(i uint32) {
			major, minor := e.majorMinor(t, i, cm)
			b := e.componentByte(v, off, stride, major, minor, int(c))
			bits := elem(major, minor)
			for k := uint32(0); k < c/v.u; k++ { // a 4-byte component in two f16 units: the low half first
				e.writeUnit(v, e.op(spirv.OpIAdd, ut, b, e.constU32(k*v.u)), e.op(spirv.OpShiftRightLogical, ut, bits, e.constU32(16*k)))
			}
		})
		return
	}
	majors, minors := uint32(t.Rows), uint32(t.N)
	if cm {
		majors, minors = minors, majors
	}
	parts := v.u / c                      // components to a unit
	units := (minors + parts - 1) / parts // units to a row (column)
	partial := minors%parts != 0          // its last unit holds other bytes too
	bt := e.typeID(ts.scalar(kBool), plain)
	e.strideLoop(rank, e.constU32(majors*units), count, func(k uint32) {
		major := e.op(spirv.OpUDiv, ut, k, e.constU32(units))
		q := e.op(spirv.OpUMod, ut, k, e.constU32(units))
		b := e.componentByte(v, off, stride, major, e.op(spirv.OpIMul, ut, q, e.constU32(parts)), int(c))
		bits, mask := e.constU32(0), e.constU32(0)
		for p := uint32(0); p < parts; p++ {
			minor := e.op(spirv.OpIAdd, ut, e.op(spirv.OpIMul, ut, q, e.constU32(parts)), e.constU32(p))
			shift := e.constU32(8 * c * p)
			if !partial {
				bits = e.op(spirv.OpBitwiseOr, ut, bits, e.op(spirv.OpShiftLeftLogical, ut, elem(major, minor), shift))
				continue
			}
			in := e.op(spirv.OpULessThan, bt, minor, e.constU32(minors))
			m := e.ext(ut, spirv.GLSLUMin, minor, e.constU32(minors-1)) // in the matrix; its bits count only where in
			part := e.op(spirv.OpShiftLeftLogical, ut, elem(major, m), shift)
			bits = e.op(spirv.OpBitwiseOr, ut, bits, e.op(spirv.OpSelect, ut, in, part, e.constU32(0)))
			mask = e.op(spirv.OpBitwiseOr, ut, mask, e.op(spirv.OpSelect, ut, in, e.constU32((1<<(8*c)-1)<<(8*c*p)), e.constU32(0)))
		}
		if !partial {
			e.writeUnit(v, b, bits)
			return
		}
		if v.unit.Kind == kI32 || v.unit.Kind == kU32 {
			e.atomicMerge(v, b, sp, bits, mask)
			return
		}
		old := e.readUnit(v, b)
		keep := e.op(spirv.OpBitwiseAnd, ut, old, e.op(spirv.OpNot, ut, mask))
		e.writeUnit(v, b, e.op(spirv.OpBitwiseOr, ut, keep, bits))
	})
}

// atomicMerge puts bits into the bytes of mask of the i32 or u32 unit at
// byte b (a scalar array's element or a vector's component), keeping its
// other bytes: an atomic and, then an atomic or, in memory of address space
// sp; nothing into padding.
func (e *emitter) atomicMerge(v *byteView, b uint32, sp addrSpace, bits, mask uint32) {
	ut := e.typeID(e.m.types.scalar(kU32), plain)
	ref, valid := e.unitRef(v, b)
	merge := func() { e.atomicAndOr(ref, v.unit, sp, e.op(spirv.OpNot, ut, mask), bits) }
	if valid == 0 {
		merge()
		return
	}
	e.ifThen(valid, merge)
}
