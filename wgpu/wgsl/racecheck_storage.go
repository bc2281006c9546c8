package wgsl

import (
	"math/bits"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"
)

// The race check of storage memory (Options.RaceCheck, with racecheck.go's
// of workgroup memory) finds data races through read_write storage buffers
// during one dispatch: two non-atomic accesses of one scalar, at least one a
// write, by
//
//   - invocations of different workgroups: nothing orders the workgroups of
//     a dispatch, so any such pair is a race;
//   - two invocations of one workgroup: any such pair with no storageBarrier
//     between them (a workgroupBarrier does not order storage memory, even
//     for a write after another's read).
//
// Why. WGSL follows the Vulkan memory model (WGSL spec, "Memory Model"):
// two accesses of one location, one a write, race unless location-ordered.
// For a write and a later read or write by another invocation that takes
// availability and visibility operations ordered by happens-before, which
// between invocations is inter-thread-happens-before<SC>: it passes a
// release and an acquire barrier only for accesses in the storage classes
// SC the barriers' semantics name. workgroupBarrier (and
// workgroupUniformLoad) has AcquireRelease|WorkgroupMemory semantics,
// storageBarrier AcquireRelease|UniformMemory (WGSL spec, "Memory
// Semantics"), and StorageBuffer is a UniformMemory class: so only
// storageBarrier orders a read or a write after another invocation's write.
//
// A write after another's read needs, in the model, only the read to
// happen-before the write, and a workgroupBarrier does not give that either:
// its release orders only workgroup memory, and the WGSL spec says a
// synchronization function orders in program order only the memory
// operations it affects, so a compiler may move a storage read past a
// workgroupBarrier. The check holds kernels to that, though a read whose
// value is used before the barrier could not in practice be moved past it
// (as Vulkan's synchronization chapter has it for commands, a write after
// read needs only an execution dependency): a kernel that needs the order
// says so with a storageBarrier, which costs little, and no driver's
// reading of the rule is left to chance. (topk_logits_shared.wgsl read the
// previous dispatch's top-K entries, entry j by invocation j, before
// invocation 0 overwrote them after workgroupBarriers only; it has a
// storageBarrier there now.)
//
// WGSL also says a write to a vector's component may access the whole
// vector, so such a write is checked as a write of the whole vector. Two
// bindings of one buffer are two memory model references; races between
// them (aliasing) are outside the check, and so are atomics, which are not
// data races, and read-only bindings, which nothing writes in a dispatch.
//
// Each read_write storage variable has a shadow of raceStorageWords words
// per scalar of its bound range (its fixed part, and as many elements of a
// runtime-sized array as arrayLength counts; a scalar is 2 bytes in a
// variable holding f16, else 4), in the shadow buffer after the
// workgroups' regions, one after the other in the order of RaceBindings.
// The host zeroes them before each dispatch, with the regions. The words
// hold tags of an access's workgroup w (workgroup_index + 1, 21 bits),
// invocation i (local_invocation_index, 11 bits) and storage interval s
// (storageBarrier calls passed, plus one):
//
//	0 W   the last writer's w<<11 | i (exchanged)
//	1 WS  the last writer's s (exchanged)
//	2 RX  max over readers of w<<11 | i: of the readers of the largest w, the largest i
//	3 RN  max over readers of (2^21-1 - w)<<11 | (2047 - i): of the smallest w, the smallest i
//	4 R+  max over readers of s<<11 | i
//	5 R-  max over readers of s<<11 | (2047 - i)
//
// A read races where W names another workgroup, or another invocation of
// its own with WS its storage interval. A write races where W does, or RX
// or RN names another workgroup (the readers' smallest and largest), or
// where all readers are of its workgroup and R+ or R- names another
// invocation in its storage interval (the intervals of one workgroup only
// grow). As for workgroup memory, each access updates its own words before
// it reads the others', with atomics, so of two accesses that race at least
// one sees the other.

// raceStorageWords is the shadow's u32 words per scalar of a storage buffer.
const raceStorageWords = 6

// RaceMaxWorkgroups is the most workgroups a race-checked dispatch of a
// pipeline with storage bindings to check may have: the shadow's tags keep
// 21 bits of workgroup_index + 1, and 2^21 - 1 - (workgroup_index + 1)
// must not be 0.
const RaceMaxWorkgroups = 1<<21 - 2

// RaceBinding is a read_write storage binding that a race-checked pipeline
// checks (see Specialized.RaceBindings).
type RaceBinding struct {
	Group, Binding uint32
	Name           string // the variable
	// Unit is the bytes of one scalar of the shadow: 2 where the
	// variable's type holds f16, else 4.
	Unit uint32
	// Fixed is the bytes of the variable before its runtime-sized array,
	// or of the whole variable where it has none.
	Fixed uint64
	// Stride is the runtime-sized array's element stride, 0 where there is
	// none.
	Stride uint64
}

// Scalars is the number of scalars the check shadows for the binding when
// bound bytes are bound: those of the fixed part and of the runtime-sized
// array's elements that fit (its arrayLength).
func (b RaceBinding) Scalars(bound uint64) uint64 {
	n := b.Fixed
	if b.Stride != 0 && bound > b.Fixed {
		n += (bound - b.Fixed) / b.Stride * b.Stride
	}
	return n / uint64(b.Unit)
}

// ShadowWords is the u32 words of the race check's shadow buffer the
// binding takes in a dispatch when bound bytes are bound.
func (b RaceBinding) ShadowWords(bound uint64) uint64 { return raceStorageWords * b.Scalars(bound) }

// RaceBindings lists the read_write storage bindings the pipeline's race
// check shadows (nil without Options.RaceCheck), in the order of their
// shadows in the shadow buffer, after the n workgroups' regions of
// RaceShadowWords each: a dispatch needs the sum of their ShadowWords more.
func (s *Specialized) RaceBindings() []RaceBinding {
	if s.race == nil {
		return nil
	}
	return s.race.bindings
}

// raceBuffer is one read_write storage variable in the shadow.
type raceBuffer struct {
	index       int // in the report's variables: after the workgroup variables
	info        RaceBinding
	typ         *wgslType
	v           uint32 // the variable
	wrapped     bool   // its type is member 0 of a Block wrapper
	member      uint32 // the member holding its runtime-sized array
	base, units uint32 // Private u32s: its first word in the shadow, its scalars
}

// raceBindingOf lays out the shadow of storage variable s.
func raceBindingOf(s *symbol) RaceBinding {
	b := RaceBinding{Group: uint32(s.group), Binding: uint32(s.binding), Name: s.name, Unit: 4}
	if s.typ.hasF16() {
		b.Unit = 2
	}
	switch t := s.typ; {
	case t.Kind == kArray && t.runtimeSized():
		b.Stride = uint64(t.Stride())
	case t.Kind == kStruct && t.runtimeSized():
		last := t.Struct.Members[len(t.Struct.Members)-1]
		b.Fixed, b.Stride = uint64(last.Offset), uint64(last.Type.Stride())
	default:
		b.Fixed = uint64(t.Size())
	}
	return b
}

// raceStorageSetup adds the module's read_write storage variables to the
// race check, each with two Private u32s made by private.
func (e *emitter) raceStorageSetup(private func(name string) uint32) {
	r := e.race
	r.buffers = map[uint32]*raceBuffer{}
	for _, s := range e.m.globals {
		if s.space != spaceStorage || s.access != accessReadWrite {
			continue
		}
		g := e.globals[s]
		b := &raceBuffer{index: len(r.names) + len(r.bufList), info: raceBindingOf(s), typ: s.typ, v: g.id, wrapped: g.wrapped}
		if b.info.Fixed%uint64(b.info.Unit) != 0 || b.info.Stride%uint64(b.info.Unit) != 0 {
			bugf("race check: storage variable %s is not laid out in %d-byte scalars", s.name, b.info.Unit)
		}
		if s.typ.Kind == kStruct {
			b.member = uint32(len(s.typ.Struct.Members) - 1)
		}
		b.base, b.units = private("race_"+s.name+"_base"), private("race_"+s.name+"_scalars")
		r.buffers[g.id] = b
		r.bufList = append(r.bufList, b)
	}
	if len(r.bufList) > 0 {
		r.sread, r.swrite = e.id(), e.id()
		e.name(r.sread, "race_storage_read")
		e.name(r.swrite, "race_storage_write")
	}
}

// raceStorageEntry computes, as an entry point starts, where each storage
// variable's shadow starts and how many scalars it has.
func (e *emitter) raceStorageEntry() {
	r := e.race
	if len(r.bufList) == 0 {
		return
	}
	ts := e.m.types
	u32 := r.u32
	nwg := e.loadInput("num_workgroups", ts.vec(3, ts.scalar(kU32)))
	groups := e.op(spirv.OpCompositeExtract, u32, nwg, 0)
	for k := uint32(1); k < 3; k++ {
		groups = e.op(spirv.OpIMul, u32, groups, e.op(spirv.OpCompositeExtract, u32, nwg, k))
	}
	next := e.op(spirv.OpIMul, u32, groups, e.constU32(3*r.slots))
	for _, b := range r.bufList {
		unit := uint64(b.info.Unit)
		units := e.constU32(uint32(b.info.Fixed / unit))
		if b.info.Stride != 0 {
			n := e.op(spirv.OpArrayLength, u32, b.v, b.member)
			units = e.op(spirv.OpIAdd, u32, units, e.op(spirv.OpIMul, u32, n, e.constU32(uint32(b.info.Stride/unit))))
		}
		e.add(spirv.OpStore, b.units, units)
		e.add(spirv.OpStore, b.base, next)
		next = e.op(spirv.OpIAdd, u32, next, e.op(spirv.OpIMul, u32, units, e.constU32(raceStorageWords)))
	}
}

// raceStorageAccess checks an access of storage memory r, a value of type
// t: every scalar of the bytes it covers, in a call of the read or write
// check. An access of a read-only variable is not checked.
func (e *emitter) raceStorageAccess(r refv, t *wgslType, write bool) {
	b := e.race.buffers[r.base]
	if b == nil {
		return
	}
	idx := r.idx
	if b.wrapped {
		idx = idx[1:]
	}
	containers := make([]*wgslType, len(idx))
	at := b.typ
	for i, x := range idx {
		containers[i] = at
		switch at.Kind {
		case kArray, kVec, kMat:
			at = at.Elem
		case kStruct:
			k, ok := e.constIndex[x]
			if !ok {
				bugf("run-time struct member index")
			}
			at = at.Struct.Members[k].Type
		default:
			bugf("race check: index into %s", at)
		}
	}
	if n := len(idx); write && n > 0 && containers[n-1].Kind == kVec {
		// A write to a component may access the whole vector (WGSL spec,
		// "Memory Operation").
		at, idx = containers[n-1], idx[:n-1]
	}
	u32 := e.race.u32
	var fixed uint64
	var dyn uint32 // the run-time part of the byte offset, or 0
	for i, x := range idx {
		var stride uint64
		switch c := containers[i]; c.Kind {
		case kArray, kMat:
			stride = uint64(c.Stride())
		case kVec:
			stride = uint64(c.Elem.Size())
		case kStruct:
			fixed += uint64(c.Struct.Members[e.constIndex[x]].Offset)
			continue
		}
		if k, ok := e.constIndex[x]; ok {
			fixed += uint64(k) * stride
			continue
		}
		if stride != 1 {
			x = e.op(spirv.OpIMul, u32, x, e.constU32(uint32(stride)))
		}
		if dyn == 0 {
			dyn = x
		} else {
			dyn = e.op(spirv.OpIAdd, u32, dyn, x)
		}
	}
	unit := uint64(b.info.Unit)
	size := uint64(at.Size())
	if fixed%unit != 0 || size%unit != 0 || fixed >= 1<<32 {
		bugf("race check: storage access at byte %d of %d bytes in %d-byte scalars", fixed, size, unit)
	}
	shift := e.constU32(uint32(bits.TrailingZeros64(unit)))
	first := e.constU32(uint32(fixed / unit))
	if dyn != 0 {
		first = e.op(spirv.OpIAdd, u32, e.op(spirv.OpShiftRightLogical, u32, dyn, shift), first)
	}
	ld := func(p uint32) uint32 { return e.op(spirv.OpLoad, u32, p) }
	fn := pick(write, e.race.swrite, e.race.sread)
	e.op(spirv.OpFunctionCall, e.voidType(), fn, e.constU32(uint32(b.index)), first, e.constU32(uint32(size/unit)),
		e.constU32(uint32(e.race.pos)), ld(b.base), ld(b.units))
}

// raceStorageFunctions emits the read and write checks of storage memory,
// each (variable, first scalar, scalars, source offset, the variable's
// first shadow word, its scalars) -> void, where the module has variables
// to check.
func (e *emitter) raceStorageFunctions() {
	r := e.race
	if len(r.bufList) == 0 {
		return
	}
	for _, write := range []bool{false, true} {
		e.raceFunction(pick(write, r.swrite, r.sread), 6, func(ps []uint32) {
			e.raceStorageBody(write, ps[0], ps[1], ps[2], ps[3], ps[4], ps[5])
		})
	}
}

// raceStorageBody checks scalars first .. first+n-1 of storage variable v,
// whose shadow starts at word base and has units scalars (see the comment
// at the top of this file), and notes a race in the invocation's record,
// without a branch.
func (e *emitter) raceStorageBody(write bool, v, first, n, pos, base, units uint32) {
	r := e.race
	u32, bty := r.u32, r.bty
	c := func(k uint32) uint32 { return e.constU32(k) }
	ld := func(p uint32) uint32 { return e.op(spirv.OpLoad, u32, p) }
	or := func(a, b uint32) uint32 { return e.op(spirv.OpLogicalOr, bty, a, b) }
	and := func(a, b uint32) uint32 { return e.op(spirv.OpLogicalAnd, bty, a, b) }
	ne := func(a, b uint32) uint32 { return e.op(spirv.OpINotEqual, bty, a, b) }
	eq := func(a, b uint32) uint32 { return e.op(spirv.OpIEqual, bty, a, b) }
	sub := func(a, b uint32) uint32 { return e.op(spirv.OpISub, u32, a, b) }
	sel := func(cond, a, b uint32) uint32 { return e.op(spirv.OpSelect, u32, cond, a, b) }
	pack := func(hi, lo uint32) uint32 {
		return e.op(spirv.OpBitwiseOr, u32, e.op(spirv.OpShiftLeftLogical, u32, hi, c(raceInvBits)), lo)
	}
	mask, wgMax := c(1<<raceInvBits-1), c(1<<(32-raceInvBits)-1)
	hi := func(w uint32) uint32 { return e.op(spirv.OpShiftRightLogical, u32, w, c(raceInvBits)) }
	lo := func(w uint32) uint32 { return e.op(spirv.OpBitwiseAnd, u32, w, mask) }
	inv, ep, wg := ld(r.inv), ld(r.storageEpoch), ld(r.wgIndex)
	w1 := e.op(spirv.OpIAdd, u32, wg, c(1))
	scope, relaxed := c(spirv.ScopeDevice), c(0)
	last := sub(units, c(1))
	zero := c(0)
	e.counterLoop(func() uint32 { return c(0) }, n, func() uint32 { return c(1) }, func(i uint32) {
		s := e.ext(u32, spirv.GLSLUMin, e.op(spirv.OpIAdd, u32, first, i), last)
		w0 := e.op(spirv.OpIAdd, u32, base, e.op(spirv.OpIMul, u32, s, c(raceStorageWords)))
		word := func(k uint32) uint32 {
			return e.op(spirv.OpAccessChain, r.wordPtr, r.shadow, c(0), e.op(spirv.OpIAdd, u32, w0, c(k)))
		}
		// writer is whether writer tag w of interval wep races with this
		// access, and the invocation and workgroup it names.
		writer := func(w, wep uint32) (race, who, whoWG uint32) {
			ww1, wi := hi(w), lo(w)
			race = and(ne(w, zero), or(ne(ww1, w1), and(eq(wep, ep), ne(wi, inv))))
			return race, wi, sub(ww1, c(1))
		}
		var race, kind, who, whoWG, interval uint32
		if write {
			old := e.op(spirv.OpAtomicExchange, u32, word(0), scope, relaxed, pack(w1, inv))
			oldEp := e.op(spirv.OpAtomicExchange, u32, word(1), scope, relaxed, ep)
			rx, rn, rp, rm := e.raceLoad(word(2)), e.raceLoad(word(3)), e.raceLoad(word(4)), e.raceLoad(word(5))
			waw, ow, owg := writer(old, oldEp)
			xw1, nw1 := hi(rx), sub(wgMax, hi(rn))
			xr := and(ne(rx, zero), ne(xw1, w1)) // a reader of a larger workgroup
			nr := and(ne(rn, zero), ne(nw1, w1)) // of a smaller one
			pi, mi := lo(rp), sub(mask, lo(rm))
			pr := and(eq(hi(rp), ep), ne(pi, inv)) // of this storage interval, a larger invocation
			mr := and(eq(hi(rm), ep), ne(mi, inv)) // a smaller one
			race = or(waw, or(or(xr, nr), or(pr, mr)))
			kind, interval = sel(waw, c(3), c(2)), ep
			who = sel(waw, ow, sel(xr, lo(rx), sel(nr, sub(mask, lo(rn)), sel(pr, pi, mi))))
			whoWG = sel(waw, owg, sel(xr, sub(xw1, c(1)), sel(nr, sub(nw1, c(1)), wg)))
		} else {
			e.op(spirv.OpAtomicUMax, u32, word(2), scope, relaxed, pack(w1, inv))
			e.op(spirv.OpAtomicUMax, u32, word(3), scope, relaxed, pack(sub(wgMax, w1), sub(mask, inv)))
			e.op(spirv.OpAtomicUMax, u32, word(4), scope, relaxed, pack(ep, inv))
			e.op(spirv.OpAtomicUMax, u32, word(5), scope, relaxed, pack(ep, sub(mask, inv)))
			race, who, whoWG = writer(e.raceLoad(word(0)), e.raceLoad(word(1)))
			kind, interval = c(1), ep
		}
		e.raceNote(race, [7]uint32{kind, v, s, who, interval, pos, whoWG})
	})
}

// raceLoad is a relaxed atomic load, device scope, of the shadow word p.
func (e *emitter) raceLoad(p uint32) uint32 {
	return e.op(spirv.OpAtomicLoad, e.race.u32, p, e.constU32(spirv.ScopeDevice), e.constU32(0))
}
