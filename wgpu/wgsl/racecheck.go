package wgsl

import (
	"fmt"
	"strings"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"
)

// The race check (Options.RaceCheck) finds data races on workgroup memory:
// two invocations of a workgroup touching one scalar of a workgroup variable
// between the same two barriers, at least one of them writing. Such code
// works on a CPU's Vulkan driver, which runs a workgroup's invocations in a
// fixed order, and fails on a GPU, whose invocations interleave. It checks
// read_write storage buffers too, between workgroups and within one:
// racecheck_storage.go.
//
// Every load and store of workgroup memory is followed by a call that
// checks and records it in a shadow of the
// workgroup's memory, kept in a storage buffer: per scalar of every
// workgroup variable (components of vectors and matrices, elements of
// arrays, struct members: WGSL gives no other view of workgroup memory, so
// two accesses meet exactly where their scalars do) three words, each a tag
// interval<<11 | invocation:
//
//	W    the last writer;
//	R+   the largest reader, by atomicMax of its tag;
//	R-   the smallest reader, by atomicMax of interval<<11 | (2047 - invocation).
//
// The interval is the number of workgroupBarrier calls (and the two of each
// workgroupUniformLoad) an invocation has passed, plus one (the barrier
// after workgroup memory's zeroing is not counted: nothing before it is
// checked): all of a
// workgroup's invocations pass the same barriers, so every access in
// interval t happens after every access in interval t-1, and a tag of an
// earlier interval is smaller than every tag of a later one. A read in
// interval t races where W holds another invocation's tag of interval t; a
// write where W does, or R+ or R- names another invocation of interval t.
// Each access updates its own word first and reads the other's after, with
// atomics, so of a read and a write meeting in one interval at least one
// sees the other, in either order. storageBarrier does not order workgroup
// memory, and atomics are not data races: neither is checked.
//
// The shadow buffer holds one region of 3*slots words per workgroup of the
// dispatch, at 3*slots*workgroup_index, then the storage buffers' shadows;
// the host zeroes it before each dispatch (zero is no access: intervals
// start at 1). Each invocation counts
// the races it finds and keeps the first in Private variables, with selects
// rather than branches; before the entry point returns it adds its count to
// the report buffer's, and the first invocation to add a nonzero count
// describes its first race there: see RaceReportWords. Subgroup matrices are
// checked where they are lowered (element by element, as any access);
// native cooperative-matrix loads and stores are not.

// RaceCheck asks Compile and Specialize to instrument every access of
// workgroup memory for data races between a workgroup's invocations, and
// every non-atomic access of a read_write storage buffer for data races
// between the invocations of a dispatch (see Options.RaceCheck). The module
// then declares two more storage buffers at Group: the shadow
// (ShadowBinding, read_write array<u32>) and the report (ReportBinding,
// read_write array<u32>, RaceReportWords words).
type RaceCheck struct {
	Group, ShadowBinding, ReportBinding uint32
}

// RaceReportWords is the size in u32 words of a race-checked module's
// report buffer: word 0 counts the races found (each pair of accesses that
// meet counts once per scalar); words 1 to 9 describe one of them (the
// first found by the first invocation to report, as its entry point
// returns): its kind
// (1 read after write, 2 write after read, 3 write after write), the
// variable (an index into the workgroup variables, then the checked
// storage bindings), the scalar within it (for workgroup memory in the
// order of its components, elements and members; for a storage buffer its
// byte offset over RaceBinding.Unit), the local invocation index of the
// access that found it and of the other, the barrier interval (1 before the
// first barrier; for storage memory, the storageBarrier interval), the byte
// offset in the source of the statement making the access, the workgroup's
// workgroup_index and the other access's. The host zeroes it before the
// first dispatch.
const RaceReportWords = 16

// raceInvBits is the tag's bits of the invocation: invocations 0 .. 1023 and
// 2047 - invocation for R-.
const raceInvBits = 11

// raceState is what the emitter keeps for the race check.
type raceState struct {
	shadow, report    uint32    // the buffers' variables
	inv, epoch, base  uint32    // Private u32s: local_invocation_index, the interval, the region's first word
	storageEpoch      uint32    // Private u32: the storage interval (see racecheck_storage.go)
	wgIndex           uint32    // Private u32: workgroup_index
	count             uint32    // Private u32: the races this invocation found
	record            [7]uint32 // Private u32s: its first's kind, variable, scalar, other invocation, interval, source offset, other's workgroup
	read, write       uint32    // the workgroup checks' function ids (emitted by raceFunctions)
	sread, swrite     uint32    // the storage checks' function ids, where the module has buffers to check
	vars              map[uint32]*raceVar
	buffers           map[uint32]*raceBuffer // read_write storage variables, by variable id
	bufList           []*raceBuffer          // the same, in the shadow's order
	slots             uint32                 // scalars of all workgroup variables
	names             []string               // workgroup variables, by index
	pos               int                    // the source offset of the statement being emitted
	wordPtr, u32, bty uint32
}

// raceVar is one workgroup variable in the shadow.
type raceVar struct {
	index int
	first uint32 // its first scalar
	typ   *wgslType
}

// raceInfo is what a race-checked module tells the host: its workgroup
// variables by index, the shadow words one workgroup needs, and the
// storage bindings it checks, whose report indices follow the workgroup
// variables'.
type raceInfo struct {
	vars        []string
	regionWords uint64
	bindings    []RaceBinding
}

// raceSlots is the number of scalars of workgroup type t, or false where an
// array's count is an override-expression (only Specialize knows it).
func raceSlots(t *wgslType) (uint64, bool) {
	switch t.Kind {
	case kVec:
		return uint64(t.N), true
	case kMat:
		return uint64(t.N * t.Elem.N), true
	case kArray:
		if t.CountOverride != nil || t.N <= 0 {
			return 0, false
		}
		n, ok := raceSlots(t.Elem)
		return uint64(t.N) * n, ok
	case kStruct:
		var sum uint64
		for _, m := range t.Struct.Members {
			n, ok := raceSlots(m.Type)
			if !ok {
				return 0, false
			}
			sum += n
		}
		return sum, true
	}
	return 1, true
}

// raceUnsized is why a module cannot be race-checked as a whole ("" if it
// can): a workgroup array whose count is an override-expression.
func raceUnsized(m *checked) string {
	for _, s := range m.globals {
		if s.space != spaceWorkgroup {
			continue
		}
		if _, ok := raceSlots(s.typ); !ok {
			return fmt.Sprintf("the race check needs workgroup variable %q's size, which an override sets: Specialize compiles it per pipeline", s.name)
		}
	}
	return ""
}

// raceSetup declares the race check's buffers and state, and lays out the
// shadow of the module's workgroup variables.
func (e *emitter) raceSetup() {
	rc := e.opt.RaceCheck
	ts := e.m.types
	r := &raceState{vars: map[uint32]*raceVar{}}
	r.u32 = e.typeID(ts.scalar(kU32), plain)
	r.bty = e.typeID(ts.scalar(kBool), plain)
	var total uint64
	for _, s := range e.m.globals {
		if s.space != spaceWorkgroup {
			continue
		}
		n, ok := raceSlots(s.typ)
		if !ok {
			bugf("race check of override-sized workgroup variable %s", s.name)
		}
		r.vars[e.globals[s].id] = &raceVar{index: len(r.names), first: uint32(total), typ: s.typ}
		r.names = append(r.names, s.name)
		total += n
	}
	if 3*total >= 1<<32 {
		bugf("race check: %d scalars of workgroup memory", total)
	}
	r.slots = uint32(total)
	arr := e.id()
	e.decls.Add(spirv.OpTypeRuntimeArray, arr, r.u32)
	e.decorate(arr, spirv.DecorationArrayStride, 4)
	block := e.id()
	e.decls.Add(spirv.OpTypeStruct, block, arr)
	e.annots.Add(spirv.OpMemberDecorate, block, 0, spirv.DecorationOffset, 0)
	e.decorate(block, spirv.DecorationBlock)
	e.name(block, "race_block")
	r.wordPtr = e.ptrType(spirv.StorageClassStorageBuffer, r.u32)
	buffer := func(name string, binding uint32) uint32 {
		id := e.id()
		e.decls.Add(spirv.OpVariable, e.ptrType(spirv.StorageClassStorageBuffer, block), id, spirv.StorageClassStorageBuffer)
		e.decorate(id, spirv.DecorationDescriptorSet, rc.Group)
		e.decorate(id, spirv.DecorationBinding, binding)
		e.name(id, name)
		return id
	}
	r.shadow = buffer("race_shadow", rc.ShadowBinding)
	r.report = buffer("race_report", rc.ReportBinding)
	private := func(name string) uint32 {
		id := e.id()
		e.decls.Add(spirv.OpVariable, e.ptrType(spirv.StorageClassPrivate, r.u32), id, spirv.StorageClassPrivate, e.null(r.u32))
		e.name(id, name)
		return id
	}
	r.inv, r.epoch, r.base, r.wgIndex = private("race_invocation"), private("race_interval"), private("race_base"), private("race_workgroup")
	r.storageEpoch = private("race_storage_interval")
	r.count = private("race_count")
	for k, name := range []string{"kind", "variable", "scalar", "other", "interval", "offset", "other_workgroup"} {
		r.record[k] = private("race_first_" + name)
	}
	r.read, r.write = e.id(), e.id()
	e.name(r.read, "race_read")
	e.name(r.write, "race_write")
	e.race = r
	e.raceStorageSetup(private)
}

// raceInfo is the layout the host needs, after emission.
func (e *emitter) raceInfo() *raceInfo {
	if e.race == nil {
		return nil
	}
	info := &raceInfo{vars: e.race.names, regionWords: 3 * uint64(e.race.slots)}
	for _, b := range e.race.bufList {
		info.bindings = append(info.bindings, b.info)
	}
	return info
}

// raceEntry starts an entry point's race state: its invocation, intervals
// 1, its workgroup's region of the shadow and the storage shadows.
func (e *emitter) raceEntry() {
	r := e.race
	ts := e.m.types
	inv := e.loadInput("local_invocation_index", ts.scalar(kU32))
	wg := e.loadInput("workgroup_index", ts.scalar(kU32))
	e.add(spirv.OpStore, r.inv, inv)
	e.add(spirv.OpStore, r.wgIndex, wg)
	e.add(spirv.OpStore, r.epoch, e.constU32(1))
	e.add(spirv.OpStore, r.storageEpoch, e.constU32(1))
	e.add(spirv.OpStore, r.base, e.op(spirv.OpIMul, r.u32, wg, e.constU32(3*r.slots)))
	e.raceStorageEntry()
}

// raceBarrier counts a barrier: in the workgroup interval if it orders
// workgroup memory, in the storage interval if it orders storage memory.
func (e *emitter) raceBarrier(mem uint32) {
	if e.race == nil {
		return
	}
	for _, c := range []struct {
		sem, epoch uint32
	}{{spirv.MemorySemanticsWorkgroupMemory, e.race.epoch}, {spirv.MemorySemanticsUniformMemory, e.race.storageEpoch}} {
		if mem&c.sem != 0 {
			ep := e.op(spirv.OpLoad, e.race.u32, c.epoch)
			e.add(spirv.OpStore, c.epoch, e.op(spirv.OpIAdd, e.race.u32, ep, e.constU32(1)))
		}
	}
}

// raceAccess checks an access of workgroup memory r, a value of type t:
// every scalar it covers, in a call of the read or write check.
func (e *emitter) raceAccess(r refv, t *wgslType, write bool) {
	if e.race == nil {
		return
	}
	if r.space == spaceStorage {
		e.raceStorageAccess(r, t, write)
		return
	}
	if r.space != spaceWorkgroup {
		return
	}
	v := e.race.vars[r.base]
	if v == nil {
		bugf("workgroup access not rooted at a workgroup variable")
	}
	u32 := e.race.u32
	at := v.typ
	fixed := v.first
	var dyn uint32 // the run-time part of the first scalar, or 0
	addDyn := func(x uint32) {
		if dyn == 0 {
			dyn = x
		} else {
			dyn = e.op(spirv.OpIAdd, u32, dyn, x)
		}
	}
	for _, idx := range r.idx {
		var step uint64
		switch at.Kind {
		case kArray:
			step, _ = raceSlots(at.Elem)
			at = at.Elem
		case kVec:
			step = 1
			at = at.Elem
		case kMat:
			step = uint64(at.Elem.N)
			at = at.Elem
		case kStruct:
			k, ok := e.constIndex[idx]
			if !ok {
				bugf("run-time struct member index")
			}
			for _, m := range at.Struct.Members[:k] {
				n, _ := raceSlots(m.Type)
				fixed += uint32(n)
			}
			at = at.Struct.Members[k].Type
			continue
		default:
			bugf("race check: index into %s", at)
		}
		if k, ok := e.constIndex[idx]; ok {
			fixed += k * uint32(step)
			continue
		}
		if step != 1 {
			idx = e.op(spirv.OpIMul, u32, idx, e.constU32(uint32(step)))
		}
		addDyn(idx)
	}
	first := e.constU32(fixed)
	if dyn != 0 {
		first = e.op(spirv.OpIAdd, u32, dyn, first)
	}
	n, _ := raceSlots(t)
	fn := pick(write, e.race.write, e.race.read)
	e.op(spirv.OpFunctionCall, e.voidType(), fn, e.constU32(uint32(v.index)), first, e.constU32(uint32(n)), e.constU32(uint32(e.race.pos)))
}

// raceFunctions emits the read and write checks of workgroup memory, each
// (variable, first scalar, scalars, source offset) -> void, and those of
// storage memory where the module has buffers to check.
func (e *emitter) raceFunctions() {
	r := e.race
	for _, write := range []bool{false, true} {
		e.raceFunction(pick(write, r.write, r.read), 4, func(ps []uint32) {
			e.raceCheckBody(write, ps[0], ps[1], ps[2], ps[3])
		})
	}
	e.raceStorageFunctions()
}

// raceFunction emits function fid of n u32 parameters returning void, whose
// body body emits given the parameters' ids.
func (e *emitter) raceFunction(fid uint32, n int, body func(ps []uint32)) {
	r := e.race
	saved := e.f
	e.f = &fnState{values: map[*symbol]uint32{}, ptrRefs: map[*symbol]refv{}, inputsUsed: map[uint32]bool{}, computed: map[*symbol]uint32{}}
	params := make([]uint32, n)
	for i := range params {
		params[i] = r.u32
	}
	var head spirv.Section
	head.Add(spirv.OpFunction, e.voidType(), fid, 0, e.fnType(e.voidType(), params))
	ps := make([]uint32, n)
	for i := range ps {
		ps[i] = e.id()
		head.Add(spirv.OpFunctionParameter, r.u32, ps[i])
	}
	entry := e.id()
	e.f.label = entry
	body(ps)
	e.terminate(spirv.OpReturn)
	e.funcs = append(e.funcs, head...)
	e.funcs.Add(spirv.OpLabel, entry)
	e.funcs = append(e.funcs, e.f.vars...)
	e.funcs = append(e.funcs, e.f.body...)
	e.funcs.Add(spirv.OpFunctionEnd)
	e.f = saved
}

// raceCheckBody checks scalars first .. first+n-1 of variable v (see the
// package's race check comment) and notes a race in the invocation's
// record, without a branch (a CPU driver's compile time grows with the
// branches of every access): raceFlush reports it.
func (e *emitter) raceCheckBody(write bool, v, first, n, pos uint32) {
	r := e.race
	u32, bty := r.u32, r.bty
	ld := func(p uint32) uint32 { return e.op(spirv.OpLoad, u32, p) }
	inv, ep, base := ld(r.inv), ld(r.epoch), ld(r.base)
	c := func(k uint32) uint32 { return e.constU32(k) }
	tag := e.op(spirv.OpBitwiseOr, u32, e.op(spirv.OpShiftLeftLogical, u32, ep, c(raceInvBits)), inv)
	scope, relaxed := c(spirv.ScopeWorkgroup), c(0)
	word := func(i uint32) uint32 { return e.op(spirv.OpAccessChain, r.wordPtr, r.shadow, c(0), i) }
	mask := c(1<<raceInvBits - 1)
	// other is whether tag w is of this interval and not this invocation's
	// (flip: w names 2047 - invocation), and the invocation it names.
	other := func(w uint32, flip bool) (uint32, uint32) {
		same := e.op(spirv.OpIEqual, bty, e.op(spirv.OpShiftRightLogical, u32, w, c(raceInvBits)), ep)
		who := e.op(spirv.OpBitwiseAnd, u32, w, mask)
		if flip {
			who = e.op(spirv.OpISub, u32, mask, who)
		}
		return e.op(spirv.OpLogicalAnd, bty, same, e.op(spirv.OpINotEqual, bty, who, inv)), who
	}
	e.counterLoop(func() uint32 { return c(0) }, n, func() uint32 { return c(1) }, func(i uint32) {
		s := e.op(spirv.OpIAdd, u32, first, i)
		w0 := e.op(spirv.OpIAdd, u32, base, e.op(spirv.OpIMul, u32, s, c(3)))
		pw, pmax, pmin := word(w0), word(e.op(spirv.OpIAdd, u32, w0, c(1))), word(e.op(spirv.OpIAdd, u32, w0, c(2)))
		var kind, who, race uint32
		if write {
			old := e.op(spirv.OpAtomicExchange, u32, pw, scope, relaxed, tag)
			waw, wOther := other(old, false)
			rmax, rOther := other(e.op(spirv.OpAtomicLoad, u32, pmax, scope, relaxed), false)
			rmin, nOther := other(e.op(spirv.OpAtomicLoad, u32, pmin, scope, relaxed), true)
			race = e.op(spirv.OpLogicalOr, bty, waw, e.op(spirv.OpLogicalOr, bty, rmax, rmin))
			kind = e.op(spirv.OpSelect, u32, waw, c(3), c(2))
			who = e.op(spirv.OpSelect, u32, waw, wOther, e.op(spirv.OpSelect, u32, rmax, rOther, nOther))
		} else {
			e.op(spirv.OpAtomicUMax, u32, pmax, scope, relaxed, tag)
			low := e.op(spirv.OpBitwiseOr, u32, e.op(spirv.OpShiftLeftLogical, u32, ep, c(raceInvBits)), e.op(spirv.OpISub, u32, mask, inv))
			e.op(spirv.OpAtomicUMax, u32, pmin, scope, relaxed, low)
			race, who = other(e.op(spirv.OpAtomicLoad, u32, pw, scope, relaxed), false)
			kind = c(1)
		}
		e.raceNote(race, [7]uint32{kind, v, s, who, ep, pos, ld(r.wgIndex)})
	})
}

// raceNote counts a race where race (a bool id) holds and, if it is the
// invocation's first, records it: its kind, variable, scalar, other
// invocation, interval, source offset and other's workgroup (see
// raceState.record), with selects rather than a branch.
func (e *emitter) raceNote(race uint32, rec [7]uint32) {
	r := e.race
	u32 := r.u32
	ld := func(p uint32) uint32 { return e.op(spirv.OpLoad, u32, p) }
	count := ld(r.count)
	firstRace := e.op(spirv.OpLogicalAnd, r.bty, race, e.op(spirv.OpIEqual, r.bty, count, e.constU32(0)))
	e.add(spirv.OpStore, r.count, e.op(spirv.OpIAdd, u32, count, e.op(spirv.OpSelect, u32, race, e.constU32(1), e.constU32(0))))
	for k, val := range rec {
		e.add(spirv.OpStore, r.record[k], e.op(spirv.OpSelect, u32, firstRace, val, ld(r.record[k])))
	}
}

// raceFlush, before an entry point returns, adds the races the invocation
// found to the report's count and, if they are the first, describes the
// first of them there (see RaceReportWords).
func (e *emitter) raceFlush() {
	r := e.race
	if r == nil || e.f.fn == nil || !e.f.fn.compute {
		return
	}
	u32, bty := r.u32, r.bty
	c := func(k uint32) uint32 { return e.constU32(k) }
	ld := func(p uint32) uint32 { return e.op(spirv.OpLoad, u32, p) }
	word := func(i uint32) uint32 { return e.op(spirv.OpAccessChain, r.wordPtr, r.report, c(0), c(i)) }
	dev, relaxed := c(spirv.ScopeDevice), c(0)
	count := ld(r.count)
	found := e.op(spirv.OpINotEqual, bty, count, c(0))
	then, merge := e.id(), e.id()
	e.add(spirv.OpSelectionMerge, merge, 0)
	e.terminate(spirv.OpBranchConditional, found, then, merge)
	e.label(then)
	before := e.op(spirv.OpAtomicIAdd, u32, word(0), dev, relaxed, count)
	isFirst := e.op(spirv.OpIEqual, bty, before, c(0))
	first, fmerge := e.id(), e.id()
	e.add(spirv.OpSelectionMerge, fmerge, 0)
	e.terminate(spirv.OpBranchConditional, isFirst, first, fmerge)
	e.label(first)
	rec := r.record
	for k, p := range []uint32{rec[0], rec[1], rec[2], r.inv, rec[3], rec[4], rec[5], r.wgIndex, rec[6]} {
		e.add(spirv.OpAtomicStore, word(uint32(k+1)), dev, relaxed, ld(p))
	}
	e.branch(fmerge)
	e.label(fmerge)
	e.branch(merge)
	e.label(merge)
}

// Race is a data race on workgroup or storage memory found by a
// race-checked pipeline (Options.RaceCheck), as DecodeRace reads it from
// the report buffer.
type Race struct {
	Count uint32 // races found in all (the first is described)
	Kind  string // "read after write", "write after read" or "write after write"
	// Var is the workgroup variable, or the storage buffer variable where
	// Binding is not nil.
	Var string
	// Binding is the storage binding of a race on storage memory (nil for
	// workgroup memory).
	Binding *RaceBinding
	// Scalar is the scalar within the variable: for workgroup memory in the
	// order of its components, elements and members; for a storage buffer
	// its byte offset in the bound range over Binding.Unit.
	Scalar     uint32
	Invocation uint32 // local_invocation_index of the access that found it
	Other      uint32 // local_invocation_index of the other access
	// Interval is the barriers the invocations had passed, plus one: for
	// workgroup memory workgroupBarrier and workgroupUniformLoad's two; for
	// storage memory storageBarrier.
	Interval       uint32
	Workgroup      uint32 // workgroup_index of the access that found it
	OtherWorkgroup uint32 // workgroup_index of the other access
	At             *Error // the statement making the access (Msg empty)
	EntryPoint     string
}

// Error describes the race as "file:line:col: data race on workgroup
// memory: ..." or "... data race on storage memory: ...".
func (r *Race) Error() string {
	at := "?"
	if r.At != nil {
		at = fmt.Sprintf("%s:%d:%d", r.At.File, r.At.Line, r.At.Col)
	}
	var b strings.Builder
	if r.Binding == nil {
		when := "before the first barrier"
		switch {
		case r.Interval == 2:
			when = "after the first barrier"
		case r.Interval > 2:
			when = fmt.Sprintf("after %d barriers", r.Interval-1)
		}
		fmt.Fprintf(&b, "%s: data race on workgroup memory (%s): %s scalar %d, invocation %d here and invocation %d, "+
			"%s, workgroup %d", at, r.Kind, r.Var, r.Scalar, r.Invocation, r.Other, when, r.Workgroup)
	} else {
		fmt.Fprintf(&b, "%s: data race on storage memory (%s): @group(%d) @binding(%d) %s scalar %d (byte %d), "+
			"invocation %d of workgroup %d here and invocation %d of workgroup %d",
			at, r.Kind, r.Binding.Group, r.Binding.Binding, r.Var, r.Scalar, uint64(r.Scalar)*uint64(r.Binding.Unit),
			r.Invocation, r.Workgroup, r.Other, r.OtherWorkgroup)
		if r.Workgroup == r.OtherWorkgroup {
			b.WriteString(", with no storageBarrier between them")
			if r.Interval > 1 {
				fmt.Fprintf(&b, " (both after storageBarrier %d)", r.Interval-1)
			}
		}
	}
	if r.Count > 1 {
		fmt.Fprintf(&b, " (and %d more)", r.Count-1)
	}
	if r.At != nil && r.At.Source != "" {
		fmt.Fprintf(&b, "\n\t%s", strings.TrimSpace(r.At.Source))
	}
	return b.String()
}

// DecodeRace reads a report buffer of a pipeline compiled by s with
// Options.RaceCheck: nil when it records no race, an error when the words
// are not such a report.
func (s *Specialized) DecodeRace(words []uint32) (*Race, error) {
	if s.race == nil {
		return nil, fmt.Errorf("the module was compiled without the race check")
	}
	if len(words) < RaceReportWords {
		return nil, fmt.Errorf("race report of %d words, want %d", len(words), RaceReportWords)
	}
	if words[0] == 0 {
		return nil, nil
	}
	kinds := map[uint32]string{1: "read after write", 2: "write after read", 3: "write after write"}
	r := &Race{Count: words[0], Kind: kinds[words[1]], Scalar: words[3], Invocation: words[4], Other: words[5],
		Interval: words[6], Workgroup: words[8], OtherWorkgroup: words[9], EntryPoint: s.entry}
	v, nv := int(words[2]), len(s.race.vars)
	if r.Kind == "" || v >= nv+len(s.race.bindings) || int(words[7]) > len(s.source) {
		return nil, fmt.Errorf("race report %v does not fit the module", words[:10])
	}
	if v < nv {
		r.Var = s.race.vars[v]
	} else {
		b := s.race.bindings[v-nv]
		r.Var, r.Binding = b.Name, &b
	}
	r.At = newError(s.file, s.source, int(words[7]), "")
	return r, nil
}

// RaceShadowWords is the u32 words of the race check's shadow buffer one
// workgroup of the pipeline needs (0 without Options.RaceCheck): a dispatch
// of n workgroups binds at least n times as many.
func (s *Specialized) RaceShadowWords() uint64 {
	if s.race == nil {
		return 0
	}
	return s.race.regionWords
}
