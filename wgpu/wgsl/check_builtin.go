package wgsl

import (
	"math"
	"strings"
)

type bclass int

const (
	bDot bclass = iota + 1
	bLength
	bDistance
	bNormalize
	bCross
	bAllAny
	bSelect
	bArrayLength
	bBarrier
	bAtomicLoad
	bAtomicStore
	bAtomicRMW
	bAtomicCmpXchg
	bSubArith
	bSubBits
	bSubShuffle
	bSubBroadcast
	bSubBroadcastFirst
	bSubElect
	bSubVote
	bSubBallot
	bUniformLoad
	bTranspose
	bDeterminant
)

var builtinFns = map[string]bclass{
	"dot": bDot, "length": bLength, "distance": bDistance, "normalize": bNormalize, "cross": bCross,
	"all": bAllAny, "any": bAllAny, "select": bSelect, "arrayLength": bArrayLength,
	"workgroupBarrier": bBarrier, "storageBarrier": bBarrier,
	"atomicLoad": bAtomicLoad, "atomicStore": bAtomicStore,
	"atomicAdd": bAtomicRMW, "atomicSub": bAtomicRMW, "atomicMax": bAtomicRMW, "atomicMin": bAtomicRMW,
	"atomicAnd": bAtomicRMW, "atomicOr": bAtomicRMW, "atomicXor": bAtomicRMW, "atomicExchange": bAtomicRMW,
	"atomicCompareExchangeWeak": bAtomicCmpXchg,
	"subgroupAdd":               bSubArith, "subgroupMul": bSubArith, "subgroupMin": bSubArith, "subgroupMax": bSubArith,
	"subgroupExclusiveAdd": bSubArith, "subgroupInclusiveAdd": bSubArith,
	"subgroupExclusiveMul": bSubArith, "subgroupInclusiveMul": bSubArith,
	"subgroupAnd": bSubBits, "subgroupOr": bSubBits, "subgroupXor": bSubBits,
	"subgroupShuffle": bSubShuffle, "subgroupShuffleXor": bSubShuffle, "subgroupShuffleUp": bSubShuffle,
	"subgroupShuffleDown": bSubShuffle, "subgroupBroadcast": bSubBroadcast,
	"subgroupBroadcastFirst": bSubBroadcastFirst, "subgroupElect": bSubElect,
	"subgroupAll": bSubVote, "subgroupAny": bSubVote, "subgroupBallot": bSubBallot,
	"workgroupUniformLoad": bUniformLoad,
	"transpose":            bTranspose, "determinant": bDeterminant,
}

func isBuiltinFn(name string) bool { return builtinFns[name] != 0 || builtinTable[name] != nil }

func (c *checker) builtinCall(e *Call, stmt bool) *exprInfo {
	name := e.Fn.Name
	if b := builtinTable[name]; b != nil {
		return c.tableCall(e, b, stmt)
	}
	cls := builtinFns[name]
	if strings.HasPrefix(name, "subgroup") && !c.out.enables["subgroups"] {
		c.errorf(e.Pos, "'%s' requires 'enable subgroups;'", name)
		return nil
	}
	if c.fn == nil && cls >= bArrayLength {
		c.errorf(e.Pos, "'%s' cannot be used in a const-expression", name)
		return nil
	}
	switch cls {
	case bBarrier, bAtomicStore:
		if !stmt {
			c.errorf(e.Pos, "'%s' does not return a value", name)
			return nil
		}
	case bAtomicRMW, bAtomicCmpXchg:
	default:
		if !c.mustUse(e, stmt) {
			return nil
		}
	}
	nargs := map[bclass]int{bDot: 2, bLength: 1, bDistance: 2, bNormalize: 1, bCross: 2, bAllAny: 1, bSelect: 3, bArrayLength: 1,
		bBarrier: 0, bAtomicLoad: 1, bAtomicStore: 2, bAtomicRMW: 2, bAtomicCmpXchg: 3, bSubArith: 1, bSubBits: 1,
		bSubShuffle: 2, bSubBroadcast: 2, bSubBroadcastFirst: 1, bSubElect: 0, bSubVote: 1, bSubBallot: 1, bUniformLoad: 1, bTranspose: 1, bDeterminant: 1}[cls]
	if len(e.Args) != nargs {
		c.errorf(e.Pos, "'%s' takes %d arguments, got %d", name, nargs, len(e.Args))
		return nil
	}
	xs, ok := c.args(e)
	if !ok {
		return nil
	}
	out := &exprInfo{call: callBuiltin, builtin: name}
	for i, x := range xs {
		if x.typ.Kind == KMat && cls != bTranspose && cls != bDeterminant {
			c.errorSpan(e.Args[i], "'%s' does not take matrices", name)
			return nil
		}
	}
	switch cls {
	case bTranspose, bDeterminant:
		m := xs[0].typ
		if m.Kind != KMat {
			c.errorSpan(e.Args[0], "'%s' needs a matrix, got '%s'", name, m)
			return nil
		}
		if cls == bTranspose {
			out.typ = c.ts.mat(m.Elem.N, m.N, m.Elem.Elem)
		} else {
			if m.N != m.Elem.N {
				c.errorSpan(e.Args[0], "'determinant' needs a square matrix, got '%s'", m)
				return nil
			}
			out.typ = m.Elem.Elem
		}
		if xs[0].val != nil {
			out.val = matFn(name, xs[0].val, m)
			if r, ok := roundFloat(out.val.f, m.scalarOf().Kind); cls == bDeterminant && (!ok || math.IsNaN(r)) {
				c.errorf(e.Pos, "'determinant' of a constant is not finite")
				return nil
			} else if cls == bDeterminant {
				out.val = &value{f: r}
			}
		}
		return out
	case bDot, bLength, bDistance, bNormalize, bCross:
		s := c.unifyScalars(e.Pos, e.Args, xs)
		if s == nil {
			return nil
		}
		if cls != bDot && s.Kind == KAbstractInt {
			s = c.ts.scalar(KAbstractFloat)
			for i := range xs {
				c.convertTo(e.Args[i], c.withScalar(xs[i].typ, s))
			}
		}
		t := c.out.info[e.Args[0]].typ
		for _, a := range e.Args {
			if c.out.info[a].typ != t {
				c.errorf(e.Pos, "'%s' arguments must have the same type: %s", name, typeListOf(xs))
				return nil
			}
		}
		switch cls {
		case bDot:
			if t.Kind != KVec || !s.isNumeric() {
				c.errorf(e.Pos, "'dot' needs numeric vectors, got %s", typeListOf(xs))
				return nil
			}
			out.typ = s
		case bLength, bDistance:
			if !s.isFloat() {
				c.errorf(e.Pos, "'%s' needs float arguments", name)
				return nil
			}
			out.typ = s
		case bNormalize:
			if t.Kind != KVec || !s.isFloat() {
				c.errorf(e.Pos, "'normalize' needs a float vector")
				return nil
			}
			out.typ = t
		case bCross:
			if t.Kind != KVec || t.N != 3 || !s.isFloat() {
				c.errorf(e.Pos, "'cross' needs vec3 float arguments")
				return nil
			}
			out.typ = t
		}
	case bAllAny:
		if xs[0].typ.scalarOf().Kind != KBool {
			c.errorf(e.Pos, "'%s' needs bool or vector of bool, got '%s'", name, xs[0].typ)
			return nil
		}
		out.typ = c.ts.scalar(KBool)
	case bSelect:
		if !c.convertPair(e, xs) {
			return nil
		}
		t := c.out.info[e.Args[0]].typ
		ct := xs[2].typ
		if !t.constructible() || ct.scalarOf().Kind != KBool || ct.Kind == KVec && (t.Kind != KVec || t.N != ct.N) {
			c.errorf(e.Pos, "'select' needs (T, T, bool) or (vecN<T>, vecN<T>, vecN<bool>), got %s", typeListOf(xs))
			return nil
		}
		out.typ = t
		if xs[0].val != nil && xs[1].val != nil && xs[2].val != nil {
			out.val = selectValue(xs[0].val, xs[1].val, xs[2].val)
		}
		if out.val == nil {
			c.runtimeOperands(e.Args, xs)
			out.typ = c.out.info[e.Args[0]].typ
			_, out.override = classOf(xs...)
		}
		return out
	case bArrayLength:
		p := xs[0].typ
		if p.Kind != KPtr || p.Space != SpaceStorage || p.Elem.Kind != KArray || !p.Elem.runtimeSized() {
			c.errorf(e.Pos, "'arrayLength' needs a pointer to a runtime-sized storage array, got '%s'", p)
			return nil
		}
		out.typ = c.ts.scalar(KU32)
		return out
	case bBarrier:
		out.typ = c.ts.scalar(KBool)
		return out
	case bUniformLoad:
		p := xs[0].typ
		if p.Kind != KPtr || p.Space != SpaceWorkgroup || !p.Elem.constructible() {
			c.errorf(e.Pos, "'workgroupUniformLoad' needs a pointer to a constructible workgroup variable, got '%s'", p)
			return nil
		}
		out.typ = p.Elem
		return out
	case bAtomicLoad, bAtomicStore, bAtomicRMW, bAtomicCmpXchg:
		p := xs[0].typ
		if p.Kind != KPtr || p.Elem.Kind != KAtomic || p.Access != AccessReadWrite {
			c.errorSpan(e.Args[0], "'%s' needs a pointer to a read_write atomic, got '%s'", name, p)
			return nil
		}
		el := p.Elem.Elem
		for i := 1; i < len(xs); i++ {
			c.convertTo(e.Args[i], el)
		}
		switch cls {
		case bAtomicStore:
			out.typ = c.ts.scalar(KBool)
		case bAtomicCmpXchg:
			out.typ = c.cmpxchgResult(el)
		default:
			out.typ = el
		}
		return out
	case bSubArith, bSubBits, bSubShuffle, bSubBroadcast, bSubBroadcastFirst:
		c.materialize(e.Args[0])
		t := c.out.info[e.Args[0]].typ
		s := t.scalarOf()
		if t.Kind != KVec && !t.isScalar() || s.Kind == KBool && cls != bSubShuffle && cls != bSubBroadcast && cls != bSubBroadcastFirst {
			c.errorf(e.Pos, "'%s' needs a numeric scalar or vector, got '%s'", name, t)
			return nil
		}
		if cls == bSubBits && !s.isInt() {
			c.errorf(e.Pos, "'%s' needs integers, got '%s'", name, t)
			return nil
		}
		if len(e.Args) == 2 {
			c.materialize(e.Args[1])
			it := c.out.info[e.Args[1]].typ
			if it.Kind != KU32 && it.Kind != KI32 {
				c.errorSpan(e.Args[1], "'%s' needs an i32 or u32 lane argument, got '%s'", name, it)
				return nil
			}
			if cls == bSubBroadcast && xs[1].val == nil {
				c.errorSpan(e.Args[1], "the lane of 'subgroupBroadcast' must be a const-expression")
				return nil
			}
		}
		out.typ = t
		return out
	case bSubElect:
		out.typ = c.ts.scalar(KBool)
		return out
	case bSubVote, bSubBallot:
		if xs[0].typ.Kind != KBool {
			c.errorf(e.Pos, "'%s' needs a bool, got '%s'", name, xs[0].typ)
			return nil
		}
		out.typ = c.ts.scalar(KBool)
		if cls == bSubBallot {
			out.typ = c.ts.vec(4, c.ts.scalar(KU32))
		}
		return out
	}
	isConst, isOverride := classOf(xs...)
	out.override = isOverride
	if isConst {
		v, err := c.evalBuiltin(name, e, out.typ)
		if err != nil {
			c.errorf(e.Pos, "%v", err)
			return nil
		}
		out.val = v
	} else {
		c.runtimeOperands(e.Args, xs)
		out.typ = c.concreteOf(out.typ)
	}
	return out
}

// convertPair unifies the first two arguments (select's values).
func (c *checker) convertPair(e *Call, xs []*exprInfo) bool {
	a, b := xs[0], xs[1]
	if a.typ == b.typ {
		return true
	}
	if a.typ.isAbstract() && convertible(a.typ, b.typ) {
		return c.convertTo(e.Args[0], b.typ)
	}
	if b.typ.isAbstract() && convertible(b.typ, a.typ) {
		return c.convertTo(e.Args[1], a.typ)
	}
	if a.typ.isAbstract() && b.typ.isAbstract() {
		return c.unifyScalars(e.Pos, e.Args[:2], xs[:2]) != nil
	}
	c.errorf(e.Pos, "'select' values must have the same type: %s", typeListOf(xs[:2]))
	return false
}

func selectValue(f, t, cond *value) *value {
	if cond.elems == nil {
		if cond.b {
			return t
		}
		return f
	}
	out := &value{}
	for i, cb := range cond.elems {
		if cb.b {
			out.elems = append(out.elems, t.elems[i])
		} else {
			out.elems = append(out.elems, f.elems[i])
		}
	}
	return out
}

func (c *checker) cmpxchgResult(el *Type) *Type {
	name := "__atomic_compare_exchange_result_" + el.String()
	st := &StructType{Name: name, Members: []Field{
		{Name: "old_value", Type: el, Offset: 0, Align: 4, Size: 4},
		{Name: "exchanged", Type: c.ts.scalar(KBool), Offset: 4, Align: 4, Size: 4},
	}, Align: 4, Size: 8}
	return c.ts.get(Type{Kind: KStruct, Struct: st})
}

// evalBuiltin evaluates a componentwise numeric builtin on constant arguments.
func (c *checker) evalBuiltin(name string, e *Call, res *Type) (*value, error) {
	xs := make([]*exprInfo, len(e.Args))
	for i, a := range e.Args {
		xs[i] = c.out.info[a]
	}
	s := xs[0].typ.scalarOf()
	switch name {
	case "dot", "length", "distance", "normalize", "cross":
		return c.evalGeometric(name, xs, s)
	case "all", "any":
		v := xs[0].val
		if v.elems == nil {
			return v, nil
		}
		r := name == "all"
		for _, e := range v.elems {
			if name == "all" {
				r = r && e.b
			} else {
				r = r || e.b
			}
		}
		return &value{b: r}, nil
	}
	return nil, errorf("cannot evaluate '%s'", name)
}

func (c *checker) evalGeometric(name string, xs []*exprInfo, s *Type) (*value, error) {
	get := func(x *exprInfo) []float64 {
		var out []float64
		if x.val.elems == nil {
			return []float64{x.val.f}
		}
		for _, e := range x.val.elems {
			if s.isFloat() {
				out = append(out, e.f)
			} else {
				out = append(out, float64(e.i))
			}
		}
		return out
	}
	a := get(xs[0])
	round := func(f float64) (*value, error) {
		r, ok := roundFloat(f, s.Kind)
		if !ok {
			return nil, errorf("'%s' overflows in a const-expression", name)
		}
		return &value{f: r}, nil
	}
	switch name {
	case "dot":
		b := get(xs[1])
		if !s.isFloat() {
			var sum int64
			for i := range a {
				sum += int64(a[i]) * int64(b[i])
			}
			if !intFits(sum, s.Kind) {
				return nil, errorf("'dot' overflows '%s' in a const-expression", s)
			}
			return &value{i: sum}, nil
		}
		sum := 0.0
		for i := range a {
			sum += a[i] * b[i]
		}
		return round(sum)
	case "length", "normalize", "distance":
		if name == "distance" {
			b := get(xs[1])
			for i := range a {
				a[i] -= b[i]
			}
		}
		sum := 0.0
		for _, x := range a {
			sum += x * x
		}
		l := math.Sqrt(sum)
		if name != "normalize" {
			return round(l)
		}
		if l == 0 {
			return nil, errorf("'normalize' of a zero vector")
		}
		out := &value{}
		for _, x := range a {
			v, err := round(x / l)
			if err != nil {
				return nil, err
			}
			out.elems = append(out.elems, v)
		}
		return out, nil
	case "cross":
		b := get(xs[1])
		out := &value{}
		for _, f := range []float64{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]} {
			v, err := round(f)
			if err != nil {
				return nil, err
			}
			out.elems = append(out.elems, v)
		}
		return out, nil
	}
	return nil, errorf("cannot evaluate '%s'", name)
}

// sameComponent reports two constants equal in some component.
func sameComponent(a, b *value) bool {
	if a.elems == nil || b.elems == nil {
		return a.elems == nil && b.elems == nil && a.f == b.f && a.i == b.i
	}
	for i := range a.elems {
		if sameComponent(a.elems[i], b.elems[i]) {
			return true
		}
	}
	return false
}

// lowAboveHigh reports a component where clamp's constant low exceeds high.
func lowAboveHigh(lo, hi *value, s *Type) bool {
	if lo.elems == nil || hi.elems == nil {
		if lo.elems != nil || hi.elems != nil {
			return false
		}
		if s.isFloat() {
			return lo.f > hi.f
		}
		return lo.i > hi.i
	}
	for i := range lo.elems {
		if lowAboveHigh(lo.elems[i], hi.elems[i], s) {
			return true
		}
	}
	return false
}

// matFn evaluates transpose and determinant on a constant matrix.
func matFn(name string, v *value, m *Type) *value {
	at := func(c, r int) float64 { return v.elems[c].elems[r].f }
	if name == "transpose" {
		out := &value{}
		for r := range m.Elem.N {
			col := &value{}
			for c := range m.N {
				col.elems = append(col.elems, &value{f: at(c, r)})
			}
			out.elems = append(out.elems, col)
		}
		return out
	}
	var det func(idx []int, cols []int) float64
	det = func(rows, cols []int) float64 {
		if len(rows) == 1 {
			return at(cols[0], rows[0])
		}
		sum, sign := 0.0, 1.0
		for i, c := range cols {
			rest := append(append([]int{}, cols[:i]...), cols[i+1:]...)
			sum += sign * at(c, rows[0]) * det(rows[1:], rest)
			sign = -sign
		}
		return sum
	}
	idx := make([]int, m.N)
	for i := range idx {
		idx[i] = i
	}
	return &value{f: det(idx, idx)}
}
