package wgsl

import "github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"

// The subgroup operations of 'enable subgroups;' (the quad operations are in
// builtin_geom.go): reductions and scans, shuffles, broadcasts, elect, votes
// and ballot, as builtinTable entries.

// subgroupKind is the argument rule of a subgroup operation.
type subgroupKind int

const (
	subArith     subgroupKind = iota // numeric scalar or vector
	subBits                          // integer scalar or vector
	subShuffle                       // numeric scalar or vector and a lane
	subBroadcast                     // numeric scalar or vector and a constant lane
	subFirst                         // numeric scalar or vector
	subElect                         // no arguments
	subVote                          // a bool
	subBallot                        // a bool, giving vec4<u32>
)

func addSubgroup(b map[string]*tableBuiltin) {
	add := func(name string, nargs int, kind subgroupKind, emit func(e *emitter, res *wgslType, as []uint32, argT []*wgslType) uint32) {
		b[name] = &tableBuiltin{nargs: nargs, subgroup: true,
			sig: func(c *checker, e *callExpr, xs []*exprInfo) *wgslType { return c.sigSubgroup(e, xs, kind) },
			emit: func(e *emitter, res *wgslType, as []uint32, argT []*wgslType) uint32 {
				e.capability(spirv.CapabilityGroupNonUniform)
				return emit(e, res, as, argT)
			}}
	}
	// arith: an operation of the float, i32 and u32 forms (f == 0: integers
	// only) and its group operation.
	arith := func(name string, kind subgroupKind, f, si, u spirv.Op, group uint32) {
		add(name, 1, kind, func(e *emitter, res *wgslType, as []uint32, _ []*wgslType) uint32 {
			e.capability(spirv.CapabilityGroupNonUniformArithmetic)
			s := res.scalarOf()
			op := u
			if s.isFloat() {
				op = f
			} else if s.Kind == kI32 {
				op = si
			}
			return e.op(op, e.typeID(res, plain), e.constU32(spirv.ScopeSubgroup), group, as[0])
		})
	}
	for _, g := range []struct {
		suffix string
		group  uint32
	}{{"", spirv.GroupOperationReduce}, {"Inclusive", spirv.GroupOperationInclusiveScan}, {"Exclusive", spirv.GroupOperationExclusiveScan}} {
		arith("subgroup"+g.suffix+"Add", subArith, spirv.OpGroupNonUniformFAdd, spirv.OpGroupNonUniformIAdd, spirv.OpGroupNonUniformIAdd, g.group)
		arith("subgroup"+g.suffix+"Mul", subArith, spirv.OpGroupNonUniformFMul, spirv.OpGroupNonUniformIMul, spirv.OpGroupNonUniformIMul, g.group)
	}
	arith("subgroupMin", subArith, spirv.OpGroupNonUniformFMin, spirv.OpGroupNonUniformSMin, spirv.OpGroupNonUniformUMin, spirv.GroupOperationReduce)
	arith("subgroupMax", subArith, spirv.OpGroupNonUniformFMax, spirv.OpGroupNonUniformSMax, spirv.OpGroupNonUniformUMax, spirv.GroupOperationReduce)
	arith("subgroupAnd", subBits, 0, spirv.OpGroupNonUniformBitwiseAnd, spirv.OpGroupNonUniformBitwiseAnd, spirv.GroupOperationReduce)
	arith("subgroupOr", subBits, 0, spirv.OpGroupNonUniformBitwiseOr, spirv.OpGroupNonUniformBitwiseOr, spirv.GroupOperationReduce)
	arith("subgroupXor", subBits, 0, spirv.OpGroupNonUniformBitwiseXor, spirv.OpGroupNonUniformBitwiseXor, spirv.GroupOperationReduce)

	// laneOp: an operation on a value and a u32 lane (an i32 lane is
	// reinterpreted), needing capability cap.
	laneOp := func(name string, kind subgroupKind, op spirv.Op, cap uint32) {
		add(name, 2, kind, func(e *emitter, res *wgslType, as []uint32, argT []*wgslType) uint32 {
			e.capability(cap)
			lane := as[1]
			if argT[1].Kind == kI32 {
				lane = e.op(spirv.OpBitcast, e.typeID(e.m.types.scalar(kU32), plain), lane)
			}
			return e.op(op, e.typeID(res, plain), e.constU32(spirv.ScopeSubgroup), as[0], lane)
		})
	}
	laneOp("subgroupBroadcast", subBroadcast, spirv.OpGroupNonUniformBroadcast, spirv.CapabilityGroupNonUniformBallot)
	laneOp("subgroupShuffle", subShuffle, spirv.OpGroupNonUniformShuffle, spirv.CapabilityGroupNonUniformShuffle)
	laneOp("subgroupShuffleXor", subShuffle, spirv.OpGroupNonUniformShuffleXor, spirv.CapabilityGroupNonUniformShuffle)
	laneOp("subgroupShuffleUp", subShuffle, spirv.OpGroupNonUniformShuffleUp, spirv.CapabilityGroupNonUniformShuffleRelative)
	laneOp("subgroupShuffleDown", subShuffle, spirv.OpGroupNonUniformShuffleDown, spirv.CapabilityGroupNonUniformShuffleRelative)

	// oneArg: an operation on one value, needing capability cap.
	oneArg := func(name string, kind subgroupKind, op spirv.Op, cap uint32) {
		add(name, 1, kind, func(e *emitter, res *wgslType, as []uint32, _ []*wgslType) uint32 {
			e.capability(cap)
			return e.op(op, e.typeID(res, plain), e.constU32(spirv.ScopeSubgroup), as[0])
		})
	}
	oneArg("subgroupBroadcastFirst", subFirst, spirv.OpGroupNonUniformBroadcastFirst, spirv.CapabilityGroupNonUniformBallot)
	oneArg("subgroupAll", subVote, spirv.OpGroupNonUniformAll, spirv.CapabilityGroupNonUniformVote)
	oneArg("subgroupAny", subVote, spirv.OpGroupNonUniformAny, spirv.CapabilityGroupNonUniformVote)
	oneArg("subgroupBallot", subBallot, spirv.OpGroupNonUniformBallot, spirv.CapabilityGroupNonUniformBallot)
	add("subgroupElect", 0, subElect, func(e *emitter, res *wgslType, _ []uint32, _ []*wgslType) uint32 {
		return e.op(spirv.OpGroupNonUniformElect, e.typeID(res, plain), e.constU32(spirv.ScopeSubgroup))
	})
}

// sigSubgroup checks the arguments of a subgroup operation of the given
// kind and returns its result type.
func (c *checker) sigSubgroup(e *callExpr, xs []*exprInfo, kind subgroupKind) *wgslType {
	name := e.Fn.Name
	if !c.noMatrices(e, xs) {
		return nil
	}
	switch kind {
	case subElect:
		return c.ts.scalar(kBool)
	case subVote, subBallot:
		if xs[0].typ.Kind != kBool {
			c.errorf(e.Pos, "'%s' needs a bool, got '%s'", name, xs[0].typ)
			return nil
		}
		if kind == subBallot {
			return c.ts.vec(4, c.ts.scalar(kU32))
		}
		return c.ts.scalar(kBool)
	}
	c.materialize(e.Args[0])
	t := c.out.info[e.Args[0]].typ
	s := t.scalarOf()
	// Every value argument is a concrete numeric scalar or vector: the
	// specification has no bool overloads (not even for the shuffles).
	if t.Kind != kVec && !t.isScalar() || s.Kind == kBool {
		c.errorf(e.Pos, "'%s' needs a numeric scalar or vector, got '%s'", name, t)
		return nil
	}
	if kind == subBits && !s.isInt() {
		c.errorf(e.Pos, "'%s' needs integers, got '%s'", name, t)
		return nil
	}
	if len(e.Args) == 2 {
		switch name {
		case "subgroupShuffleXor", "subgroupShuffleUp", "subgroupShuffleDown":
			// the mask and the deltas are u32 only (an abstract int converts)
			if !c.convertTo(e.Args[1], c.ts.scalar(kU32)) {
				return nil
			}
		default:
			c.materialize(e.Args[1])
		}
		it := c.out.info[e.Args[1]].typ
		if it.Kind != kU32 && it.Kind != kI32 {
			c.errorSpan(e.Args[1], "'%s' needs an i32 or u32 lane argument, got '%s'", name, it)
			return nil
		}
		if kind == subBroadcast && xs[1].val == nil {
			c.errorSpan(e.Args[1], "the lane of 'subgroupBroadcast' must be a const-expression")
			return nil
		}
		// A constant lane, delta or mask outside [0, 128) is a
		// shader-creation error (an i32 one is negative or too large).
		if v := c.out.info[e.Args[1]].val; v != nil && (v.i < 0 || v.i >= 128) {
			c.errorSpan(e.Args[1], "the lane argument of '%s' is %d, not in [0, 128)", name, v.i)
			return nil
		}
	}
	return t
}
