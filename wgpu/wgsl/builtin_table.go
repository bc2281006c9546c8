package wgsl

import (
	"math"
	"math/bits"
	"strings"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"
)

// tableBuiltin describes one builtin function once for the checker, constant
// evaluation, the uniformity analysis and the emitter.
type tableBuiltin struct {
	nargs int
	// sig checks the arguments, applies the automatic conversions the
	// overloads call for, and returns the result type, or nil after reporting
	// an error.
	sig func(c *checker, e *callExpr, xs []*exprInfo) *wgslType
	// eval computes the result from constant arguments of types ts.
	eval func(ts *types, args []*value, argT []*wgslType, res *wgslType) (*value, error)
	// emit emits the call on argument ids as of result type res.
	emit func(e *emitter, res *wgslType, as []uint32, argT []*wgslType) uint32
	// emitCall, where set instead of emit, emits the call from its
	// argument expressions (arrayLength needs its pointer's access chain).
	emitCall func(e *emitter, c *callExpr, res *wgslType) uint32
	// subgroup marks an operation of the subgroups extension: it needs
	// 'enable subgroups;', is never a const-expression, is checked by the
	// subgroup uniformity rule and gives a non-uniform value.
	subgroup bool
	// matrix marks a subgroup matrix builtin (builtin_matrix.go), which the
	// checker takes before the table.
	matrix bool
	// runtime marks a builtin that is never a const-expression (eval is
	// nil); noValue one that returns nothing and so stands only as a
	// statement; discardable one whose result may go unused.
	runtime, noValue, discardable bool
	// flow is the builtin's rule in the uniformity analysis.
	flow flowRule
	// ptrUse is how the builtin uses the memory its pointer arguments
	// designate, for the alias analysis.
	ptrUse ptrUse
	// constArgs, where set, rejects constant arguments that are errors even
	// when the other arguments are known only at run time (vals[i] is nil
	// for a non-constant argument; ts are the arguments' types).
	constArgs func(vals []*value, ts []*wgslType) error
}

// ptrUse is what a builtin does with the memory behind its pointer
// arguments.
type ptrUse int

const (
	ptrReadWrite ptrUse = iota // reads and writes it (the atomic read-modify-writes)
	ptrNone                    // neither (arrayLength)
	ptrRead                    // reads it
	ptrWrite                   // writes it
)

// flowRule is how the uniformity analysis treats a call of a builtin.
type flowRule int

const (
	flowArgs       flowRule = iota // the result is as uniform as the arguments
	flowUniform                    // the result is uniform
	flowNonUniform                 // the result is never uniform (atomics)
	flowBarrier                    // needs uniform control flow; the result is uniform
)

var builtinTable map[string]*tableBuiltin

func init() {
	intUnary := func(f func(s *wgslType, x uint32) uint32, emit func(e *emitter, res *wgslType, x uint32) uint32) *tableBuiltin {
		return &tableBuiltin{nargs: 1, sig: sigInt(0),
			eval: perComponent(func(s *wgslType, x []uint32) (uint32, error) { return f(s, x[0]), nil }),
			emit: func(e *emitter, res *wgslType, as []uint32, _ []*wgslType) uint32 { return emit(e, res, as[0]) }}
	}
	b := map[string]*tableBuiltin{
		"countLeadingZeros": intUnary(func(_ *wgslType, x uint32) uint32 { return uint32(bits.LeadingZeros32(x)) },
			func(e *emitter, res *wgslType, x uint32) uint32 {
				msb := e.ext(e.typeID(res, plain), spirv.GLSLFindUMsb, x)
				return e.op(spirv.OpISub, e.typeID(res, plain), e.splatConst(res, 31), msb)
			}),
		"countTrailingZeros": intUnary(func(_ *wgslType, x uint32) uint32 { return uint32(bits.TrailingZeros32(x)) },
			func(e *emitter, res *wgslType, x uint32) uint32 {
				lsb := e.ext(e.typeID(res, plain), spirv.GLSLFindILsb, x)
				zero := e.op(spirv.OpIEqual, e.typeID(e.boolLike(res), plain), x, e.splatConst(res, 0))
				return e.op(spirv.OpSelect, e.typeID(res, plain), zero, e.splatConst(res, 32), lsb)
			}),
		"firstLeadingBit": intUnary(firstLeadingBit,
			func(e *emitter, res *wgslType, x uint32) uint32 {
				return e.ext(e.typeID(res, plain), pick(res.scalarOf().Kind == kI32, spirv.GLSLFindSMsb, spirv.GLSLFindUMsb), x)
			}),
		"firstTrailingBit": intUnary(func(_ *wgslType, x uint32) uint32 {
			if x == 0 {
				return math.MaxUint32
			}
			return uint32(bits.TrailingZeros32(x))
		}, func(e *emitter, res *wgslType, x uint32) uint32 {
			return e.ext(e.typeID(res, plain), spirv.GLSLFindILsb, x)
		}),
		"extractBits": {nargs: 3, sig: sigBits(1),
			eval: perComponent(func(s *wgslType, x []uint32) (uint32, error) {
				return extractBits(s.Kind == kI32, x[0], x[1], x[2]), nil
			}),
			emit: func(e *emitter, res *wgslType, as []uint32, _ []*wgslType) uint32 {
				o, n := e.clampBitRange(as[1], as[2])
				return e.op(pick(res.scalarOf().Kind == kI32, spirv.OpBitFieldSExtract, spirv.OpBitFieldUExtract), e.typeID(res, plain), as[0], o, n)
			},
			constArgs: constBitRange(1)},
		"insertBits": {nargs: 4, sig: sigBits(2),
			eval: perComponent(func(_ *wgslType, x []uint32) (uint32, error) { return insertBits(x[0], x[1], x[2], x[3]), nil }),
			emit: func(e *emitter, res *wgslType, as []uint32, _ []*wgslType) uint32 {
				o, n := e.clampBitRange(as[2], as[3])
				return e.op(spirv.OpBitFieldInsert, e.typeID(res, plain), as[0], as[1], o, n)
			},
			constArgs: constBitRange(2)},
		"ldexp": {nargs: 2, sig: sigLdexp, eval: evalLdexp, constArgs: constLdexpExponent,
			emit: func(e *emitter, res *wgslType, as []uint32, _ []*wgslType) uint32 {
				return e.ext(e.typeID(res, plain), spirv.GLSLLdexp, as...)
			}},
		"frexp": {nargs: 1, sig: sigSplit("frexp"), eval: evalSplit,
			emit: func(e *emitter, res *wgslType, as []uint32, _ []*wgslType) uint32 {
				return e.ext(e.typeID(res, plain), spirv.GLSLFrexpStruct, as...)
			}},
		"modf": {nargs: 1, sig: sigSplit("modf"), eval: evalSplit,
			emit: func(e *emitter, res *wgslType, as []uint32, _ []*wgslType) uint32 {
				return e.ext(e.typeID(res, plain), spirv.GLSLModfStruct, as...)
			}},
		"quantizeToF16": {nargs: 1, sig: sigQuantize,
			eval: perFloat(func(x float64) (float64, error) {
				r, ok := convertFloat(x, kF16)
				if !ok {
					return 0, errorf("'quantizeToF16' of %g: outside the finite range of f16", x)
				}
				return r, nil
			}),
			emit: func(e *emitter, res *wgslType, as []uint32, _ []*wgslType) uint32 {
				return e.op(spirv.OpQuantizeToF16, e.typeID(res, plain), as[0])
			}},
	}
	for name, p := range packings {
		b["pack"+name] = p.packBuiltin()
		b["unpack"+name] = p.unpackBuiltin()
	}
	for _, signed := range []bool{true, false} {
		for _, clamp := range []bool{false, true} {
			name := pick(signed, "pack4xI8", "pack4xU8") + pick(clamp, "Clamp", "")
			b[name] = packBytes(signed, clamp)
		}
		b[pick(signed, "unpack4xI8", "unpack4xU8")] = unpackBytes(signed)
		b[pick(signed, "dot4I8Packed", "dot4U8Packed")] = dotBytes(signed)
	}
	addGeometryAndQuads(b)
	addNumeric(b)
	addVectorMatrix(b)
	addSubgroup(b)
	addMemory(b)
	addMatrix(b)
	builtinTable = b
}

// tableCall checks a call of a builtin in builtinTable.
func (c *checker) tableCall(e *callExpr, b *tableBuiltin, stmt bool) *exprInfo {
	name := e.Fn.Name
	if b.subgroup && !c.out.enables["subgroups"] {
		c.errorf(e.Pos, "'%s' requires 'enable subgroups;'", name)
		return nil
	}
	if (b.subgroup || b.runtime) && c.fn == nil {
		c.errorf(e.Pos, "'%s' cannot be used in a const-expression", name)
		return nil
	}
	switch {
	case b.noValue:
		if !stmt {
			c.errorf(e.Pos, "'%s' does not return a value", name)
			return nil
		}
	case b.discardable:
	default:
		if !c.mustUse(e, stmt) {
			return nil
		}
	}
	if len(e.Args) != b.nargs {
		c.errorf(e.Pos, "'%s' takes %d arguments, got %d", name, b.nargs, len(e.Args))
		return nil
	}
	xs, ok := c.args(e)
	if !ok {
		return nil
	}
	res := b.sig(c, e, xs)
	if res == nil {
		return nil
	}
	out := &exprInfo{typ: res, call: callBuiltin, builtin: name}
	if b.subgroup || b.runtime {
		return out
	}
	vals := make([]*value, len(e.Args))
	ts := make([]*wgslType, len(e.Args))
	for i, a := range e.Args {
		xs[i] = c.out.info[a]
		vals[i], ts[i] = xs[i].val, xs[i].typ
	}
	if b.constArgs != nil {
		if err := b.constArgs(vals, ts); err != nil {
			c.errorf(e.Pos, "'%s': %v", name, err)
			return nil
		}
	}
	if isConst, _ := classOf(xs...); isConst {
		v, err := b.eval(c.ts, vals, ts, res)
		if err != nil {
			c.errorf(e.Pos, "%v", err)
			return nil
		}
		out.val = v
		return out
	}
	c.runtimeOperands(e.Args, xs)
	out.typ = c.concreteOf(res)
	_, out.override = classOf(xs...)
	return out
}

// emitTable emits a call of a builtin in builtinTable.
func (e *emitter) emitTable(c *callExpr, b *tableBuiltin, info *exprInfo) uint32 {
	if b.emitCall != nil {
		return b.emitCall(e, c, info.typ)
	}
	as := make([]uint32, len(c.Args))
	ts := make([]*wgslType, len(c.Args))
	for i, a := range c.Args {
		as[i] = e.expr(a)
		ts[i] = e.info(a).typ
	}
	return b.emit(e, info.typ, as, ts)
}

// ---- signatures ----

// intShaped converts an abstract-int argument to i32 and reports whether the
// argument is an i32 or u32 scalar or vector.
func (c *checker) intShaped(e *callExpr, i int, xs []*exprInfo) *wgslType {
	t := xs[i].typ
	if t.scalarOf().Kind == kAbstractInt {
		t = c.withScalar(t, c.ts.scalar(kI32))
		if !c.convertTo(e.Args[i], t) {
			return nil
		}
	}
	if s := t.scalarOf(); (t.Kind != kVec && !t.isScalar()) || s.Kind != kI32 && s.Kind != kU32 {
		c.errorSpan(e.Args[i], "'%s' needs an i32 or u32 scalar or vector, got '%s'", e.Fn.Name, t)
		return nil
	}
	return t
}

// sigInt: (T) -> T for T an i32/u32 scalar or vector.
func sigInt(int) func(c *checker, e *callExpr, xs []*exprInfo) *wgslType {
	return func(c *checker, e *callExpr, xs []*exprInfo) *wgslType { return c.intShaped(e, 0, xs) }
}

// sigBits: (T, ... T, offset: u32, count: u32) -> T with nT leading T arguments.
func sigBits(nT int) func(c *checker, e *callExpr, xs []*exprInfo) *wgslType {
	return func(c *checker, e *callExpr, xs []*exprInfo) *wgslType {
		var t *wgslType
		if xs[0].typ.isAbstract() && nT == 2 && !xs[1].typ.isAbstract() {
			t = c.intShaped(e, 1, xs) // insertBits(5, x, ...) takes x's type
			if t == nil || !c.convertTo(e.Args[0], t) {
				return nil
			}
		} else if t = c.intShaped(e, 0, xs); t == nil {
			return nil
		}
		for i := 1; i < nT; i++ {
			if !c.convertTo(e.Args[i], t) {
				return nil
			}
		}
		for i := nT; i < nT+2; i++ {
			if !c.convertTo(e.Args[i], c.ts.scalar(kU32)) {
				return nil
			}
		}
		return t
	}
}

// floatShaped reports whether t is a float scalar or vector, after turning
// abstract-int into abstract-float.
func (c *checker) floatShaped(e *callExpr, i int, xs []*exprInfo) *wgslType {
	t := xs[i].typ
	if t.scalarOf().Kind == kAbstractInt {
		t = c.withScalar(t, c.ts.scalar(kAbstractFloat))
		if !c.convertTo(e.Args[i], t) {
			return nil
		}
	}
	if (t.Kind != kVec && !t.isScalar()) || !t.scalarOf().isFloat() {
		c.errorSpan(e.Args[i], "'%s' needs a float scalar or vector, got '%s'", e.Fn.Name, t)
		return nil
	}
	return t
}

// sigLdexp: ldexp(T, I) -> T; I is an i32 vector exactly when T is a vector,
// and concrete exactly when T is.
func sigLdexp(c *checker, e *callExpr, xs []*exprInfo) *wgslType {
	t := c.floatShaped(e, 0, xs)
	if t == nil {
		return nil
	}
	it := xs[1].typ
	if (it.Kind == kVec) != (t.Kind == kVec) || it.Kind == kVec && it.N != t.N || !(it.scalarOf().Kind == kI32 || it.scalarOf().Kind == kAbstractInt) {
		c.errorSpan(e.Args[1], "'ldexp' needs an i32 exponent of the shape of '%s', got '%s'", t, it)
		return nil
	}
	if t.isAbstract() && !it.isAbstract() { // a concrete exponent makes the significand f32
		t = c.withScalar(t, c.ts.scalar(kF32))
		if !c.convertTo(e.Args[0], t) {
			return nil
		}
	}
	if !t.isAbstract() && !c.convertTo(e.Args[1], c.withScalar(t, c.ts.scalar(kI32))) {
		return nil
	}
	return t
}

// sigSplit: frexp and modf return a struct of two members of T's shape.
// For an abstract T the struct is abstract too (members abstract-float and,
// for frexp's exp, abstract-int) and materializes to the f32 struct.
func sigSplit(name string) func(c *checker, e *callExpr, xs []*exprInfo) *wgslType {
	return func(c *checker, e *callExpr, xs []*exprInfo) *wgslType {
		t := c.floatShaped(e, 0, xs)
		if t == nil {
			return nil
		}
		return c.splitResult(name, t)
	}
}

// splitResult is the result struct of frexp or modf for argument type t.
func (c *checker) splitResult(name string, t *wgslType) *wgslType {
	second, sname := t, "whole"
	if name == "frexp" {
		second, sname = c.withScalar(t, c.ts.scalar(pick(t.isAbstract(), kAbstractInt, kI32))), "exp"
	}
	s := t.scalarOf().String()
	if t.isAbstract() {
		s = "abstract"
	}
	suffix := s
	if t.Kind == kVec {
		suffix = "vec" + string(rune('0'+t.N)) + "_" + s
	}
	al, sz := max(t.Align(), second.Align()), roundUp(second.Align(), t.Size())
	st := &structType{Name: "__" + name + "_result_" + suffix, Members: []field{
		{Name: "fract", Type: t, Offset: 0, Align: t.Align(), Size: t.Size()},
		{Name: sname, Type: second, Offset: sz, Align: second.Align(), Size: second.Size()},
	}, Align: al}
	st.Size = roundUp(al, sz+second.Size())
	if t.isAbstract() {
		st.concrete = c.splitResult(name, c.concreteOf(t))
	}
	return c.ts.get(wgslType{Kind: kStruct, Struct: st})
}

func sigQuantize(c *checker, e *callExpr, xs []*exprInfo) *wgslType {
	t := c.floatShaped(e, 0, xs)
	if t == nil {
		return nil
	}
	if t.isAbstract() {
		t = c.withScalar(t, c.ts.scalar(kF32))
		if !c.convertTo(e.Args[0], t) {
			return nil
		}
	}
	if t.scalarOf().Kind != kF32 {
		c.errorSpan(e.Args[0], "'quantizeToF16' needs f32 or vecN<f32>, got '%s'", t)
		return nil
	}
	return t
}

// sigFixed: one fixed argument type (given by its WGSL spelling) per
// parameter and a fixed result type.
func sigFixed(res string, params ...string) func(c *checker, e *callExpr, xs []*exprInfo) *wgslType {
	return func(c *checker, e *callExpr, xs []*exprInfo) *wgslType {
		for i, p := range params {
			if !c.convertTo(e.Args[i], fixedType(c.ts, p)) {
				return nil
			}
		}
		return fixedType(c.ts, res)
	}
}

func fixedType(ts *types, s string) *wgslType {
	kinds := map[string]kind{"i32": kI32, "u32": kU32, "f32": kF32}
	if k, ok := kinds[s]; ok {
		return ts.scalar(k)
	}
	// vecN<S>
	return ts.vec(int(s[3]-'0'), ts.scalar(kinds[strings.TrimSuffix(s[5:], ">")]))
}

// ---- constant evaluation ----

// perComponent lifts f over 32-bit integer arguments to scalars and vectors;
// scalar arguments (offsets, counts) are shared by all components.
func perComponent(f func(s *wgslType, x []uint32) (uint32, error)) func(*types, []*value, []*wgslType, *wgslType) (*value, error) {
	return func(_ *types, args []*value, argT []*wgslType, res *wgslType) (*value, error) {
		s := res.scalarOf()
		one := func(k int) (*value, error) {
			xs := make([]uint32, len(args))
			for i, a := range args {
				if a.elems != nil {
					a = a.elems[k]
				}
				xs[i] = uint32(a.i)
			}
			r, err := f(s, xs)
			return valueFromBits(r, s), err
		}
		if res.Kind != kVec {
			return one(0)
		}
		out := &value{}
		for k := range res.N {
			v, err := one(k)
			if err != nil {
				return nil, err
			}
			out.elems = append(out.elems, v)
		}
		return out, nil
	}
}

// perFloat lifts f over one float scalar or vector, rounding to the result type.
func perFloat(f func(x float64) (float64, error)) func(*types, []*value, []*wgslType, *wgslType) (*value, error) {
	return func(_ *types, args []*value, _ []*wgslType, res *wgslType) (*value, error) {
		one := func(v *value) (*value, error) {
			r, err := f(v.f)
			if err != nil {
				return nil, err
			}
			r, ok := roundFloat(r, res.scalarOf().Kind)
			if !ok {
				return nil, errorf("'%s' overflows in a const-expression", res.scalarOf())
			}
			return &value{f: r}, nil
		}
		if args[0].elems == nil {
			return one(args[0])
		}
		out := &value{}
		for _, el := range args[0].elems {
			v, err := one(el)
			if err != nil {
				return nil, err
			}
			out.elems = append(out.elems, v)
		}
		return out, nil
	}
}

func firstLeadingBit(s *wgslType, x uint32) uint32 {
	if s.Kind == kI32 && int32(x) < 0 {
		x = ^x
	}
	if x == 0 {
		return math.MaxUint32
	}
	return uint32(31 - bits.LeadingZeros32(x))
}

// constBitRange rejects a constant offset and count (arguments i and i+1 of
// extractBits or insertBits) that reach past bit 31: the specification makes
// that a shader-creation error whatever the other arguments; only ranges
// known at run time are clamped (bitRange).
func constBitRange(i int) func(vals []*value, _ []*wgslType) error {
	return func(vals []*value, _ []*wgslType) error {
		o, n := vals[i], vals[i+1]
		if o == nil || n == nil {
			return nil
		}
		if uint64(uint32(o.i))+uint64(uint32(n.i)) > 32 {
			return errorf("offset %d + count %d is more than the bit width 32", uint32(o.i), uint32(n.i))
		}
		return nil
	}
}

// constLdexpExponent rejects a constant exponent above bias + 1 of the
// significand's type (128 for f32, 16 for f16), any component of it: a
// shader-creation error even when the significand is known only at run time.
func constLdexpExponent(vals []*value, ts []*wgslType) error {
	e := vals[1]
	s := ts[0].scalarOf()
	if e == nil || vals[0] != nil || s.isAbstract() {
		return nil // all-constant calls are checked by evalLdexp
	}
	bias := map[kind]int64{kF16: 15, kF32: 127}[s.Kind]
	if m := maxComponent(e); m > bias+1 {
		return errorf("exponent %d is more than %d for '%s'", m, bias+1, s)
	}
	return nil
}

// bitRange is the specification's clamping of extractBits/insertBits ranges.
func bitRange(offset, count uint32) (o, c uint32) {
	o = min(offset, 32)
	return o, min(count, 32-o)
}

func extractBits(signed bool, e, offset, count uint32) uint32 {
	o, c := bitRange(offset, count)
	if c == 0 {
		return 0
	}
	v := e >> o
	if c < 32 {
		v &= 1<<c - 1
		if signed && v>>(c-1)&1 == 1 {
			v |= ^uint32(0) << c
		}
	}
	return v
}

func insertBits(e, newbits, offset, count uint32) uint32 {
	o, c := bitRange(offset, count)
	if c == 0 {
		return e
	}
	mask := uint32(math.MaxUint32)
	if c < 32 {
		mask = (1<<c - 1) << o
	}
	return e&^mask | newbits<<o&mask
}

func evalLdexp(_ *types, args []*value, argT []*wgslType, res *wgslType) (*value, error) {
	s := res.scalarOf()
	bias := map[kind]int64{kF16: 15, kF32: 127, kAbstractFloat: 1023}[s.Kind]
	one := func(x, e *value) (*value, error) {
		if e.i > bias+1 {
			return nil, errorf("'ldexp' exponent %d is too large for '%s'", e.i, s)
		}
		r, ok := roundFloat(math.Ldexp(x.f, int(e.i)), s.Kind)
		if !ok {
			return nil, errorf("'ldexp' overflows '%s' in a const-expression", s)
		}
		return &value{f: r}, nil
	}
	if res.Kind != kVec {
		return one(args[0], args[1])
	}
	out := &value{}
	for k := range res.N {
		v, err := one(args[0].elems[k], args[1].elems[k])
		if err != nil {
			return nil, err
		}
		out.elems = append(out.elems, v)
	}
	return out, nil
}

// evalSplit evaluates frexp and modf into their result structs.
func evalSplit(_ *types, args []*value, _ []*wgslType, res *wgslType) (*value, error) {
	frexp := res.Struct.Members[1].Name == "exp"
	one := func(x float64) (a, b *value) {
		if frexp {
			f, e := math.Frexp(x)
			return &value{f: f}, &value{i: int64(e)}
		}
		w, f := math.Modf(x)
		return &value{f: f}, &value{f: w}
	}
	if args[0].elems == nil {
		a, b := one(args[0].f)
		return &value{elems: []*value{a, b}}, nil
	}
	fa, fb := &value{}, &value{}
	for _, el := range args[0].elems {
		a, b := one(el.f)
		fa.elems, fb.elems = append(fa.elems, a), append(fb.elems, b)
	}
	return &value{elems: []*value{fa, fb}}, nil
}

// ---- emitter helpers ----

// splatConst is the constant k of integer type t (scalar or vector).
func (e *emitter) splatConst(t *wgslType, k int64) uint32 {
	return e.constant(t, e.splatValue(t, &value{i: k}))
}

// boolLike is bool or vecN<bool> of t's shape.
func (e *emitter) boolLike(t *wgslType) *wgslType {
	b := e.m.types.scalar(kBool)
	if t.Kind == kVec {
		return e.m.types.vec(t.N, b)
	}
	return b
}

// clampBitRange emits bitRange: o = min(offset, 32), c = min(count, 32 - o).
func (e *emitter) clampBitRange(offset, count uint32) (o, c uint32) {
	u := e.typeID(e.m.types.scalar(kU32), plain)
	w := e.constU32(32)
	o = e.ext(u, spirv.GLSLUMin, offset, w)
	return o, e.ext(u, spirv.GLSLUMin, count, e.op(spirv.OpISub, u, w, o))
}
