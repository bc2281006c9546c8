package wgsl

import (
	"math"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"
)

// The vector and matrix builtins of builtinTable: dot, length, distance,
// normalize, cross, all, any, select, transpose and determinant.

func addVectorMatrix(b map[string]*tableBuiltin) {
	glsl := func(inst uint32) func(e *emitter, res *wgslType, as []uint32, _ []*wgslType) uint32 {
		return func(e *emitter, res *wgslType, as []uint32, _ []*wgslType) uint32 {
			return e.ext(e.typeID(res, plain), inst, as...)
		}
	}
	b["dot"] = &tableBuiltin{nargs: 2, sig: sigGeometric, eval: evalGeometric("dot"), emit: emitDot}
	b["length"] = &tableBuiltin{nargs: 1, sig: sigGeometric, eval: evalGeometric("length"), emit: glsl(spirv.GLSLLength)}
	b["distance"] = &tableBuiltin{nargs: 2, sig: sigGeometric, eval: evalGeometric("distance"), emit: glsl(spirv.GLSLDistance)}
	b["normalize"] = &tableBuiltin{nargs: 1, sig: sigGeometric, eval: evalGeometric("normalize"), emit: glsl(spirv.GLSLNormalize)}
	b["cross"] = &tableBuiltin{nargs: 2, sig: sigGeometric, eval: evalGeometric("cross"), emit: glsl(spirv.GLSLCross)}
	for _, all := range []bool{true, false} {
		b[pick(all, "all", "any")] = &tableBuiltin{nargs: 1, sig: sigAllAny, eval: evalAllAny(all),
			emit: func(e *emitter, res *wgslType, as []uint32, argT []*wgslType) uint32 {
				if argT[0].Kind != kVec {
					return as[0]
				}
				return e.op(pick(all, spirv.OpAll, spirv.OpAny), e.typeID(res, plain), as[0])
			}}
	}
	b["select"] = &tableBuiltin{nargs: 3, sig: sigSelect,
		eval: func(_ *types, args []*value, _ []*wgslType, _ *wgslType) (*value, error) {
			return selectValue(args[0], args[1], args[2]), nil
		},
		emit: func(e *emitter, res *wgslType, as []uint32, argT []*wgslType) uint32 {
			cond := as[2]
			if res.Kind == kVec && argT[2].Kind != kVec {
				cond = e.splat(cond, argT[2], res.N)
			}
			return e.op(spirv.OpSelect, e.typeID(res, plain), cond, as[1], as[0])
		}}
	b["transpose"] = &tableBuiltin{nargs: 1, sig: sigMatrix,
		eval: func(_ *types, args []*value, argT []*wgslType, _ *wgslType) (*value, error) {
			return matFn("transpose", args[0], argT[0]), nil
		},
		emit: func(e *emitter, res *wgslType, as []uint32, _ []*wgslType) uint32 {
			return e.op(spirv.OpTranspose, e.typeID(res, plain), as...)
		}}
	b["determinant"] = &tableBuiltin{nargs: 1, sig: sigMatrix,
		eval: func(_ *types, args []*value, argT []*wgslType, _ *wgslType) (*value, error) {
			v := matFn("determinant", args[0], argT[0])
			r, ok := roundFloat(v.f, argT[0].scalarOf().Kind)
			if !ok || math.IsNaN(r) {
				return nil, errorf("'determinant' of a constant is not finite")
			}
			return &value{f: r}, nil
		},
		emit: glsl(spirv.GLSLDeterminant)}
}

// noMatrices reports an error for a matrix argument.
func (c *checker) noMatrices(e *callExpr, xs []*exprInfo) bool {
	for i, x := range xs {
		if x.typ.Kind == kMat {
			c.errorSpan(e.Args[i], "'%s' does not take matrices", e.Fn.Name)
			return false
		}
	}
	return true
}

// sigGeometric: dot(vecN<T>, vecN<T>) -> T for numeric T; length and
// distance of float scalars or vectors -> the scalar; normalize(vecN<F>)
// and cross(vec3<F>, vec3<F>) -> their argument type.
func sigGeometric(c *checker, e *callExpr, xs []*exprInfo) *wgslType {
	name := e.Fn.Name
	if !c.noMatrices(e, xs) {
		return nil
	}
	s := c.unifyScalars(e.Pos, e.Args, xs)
	if s == nil {
		return nil
	}
	if name != "dot" && s.Kind == kAbstractInt {
		s = c.ts.scalar(kAbstractFloat)
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
	switch name {
	case "dot":
		if t.Kind != kVec || !s.isNumeric() {
			c.errorf(e.Pos, "'dot' needs numeric vectors, got %s", typeListOf(xs))
			return nil
		}
		return s
	case "length", "distance":
		if !s.isFloat() {
			c.errorf(e.Pos, "'%s' needs float arguments", name)
			return nil
		}
		return s
	case "normalize":
		if t.Kind != kVec || !s.isFloat() {
			c.errorf(e.Pos, "'normalize' needs a float vector")
			return nil
		}
	default: // cross
		if t.Kind != kVec || t.N != 3 || !s.isFloat() {
			c.errorf(e.Pos, "'cross' needs vec3 float arguments")
			return nil
		}
	}
	return t
}

// sigAllAny: all and any of bool or vecN<bool> -> bool.
func sigAllAny(c *checker, e *callExpr, xs []*exprInfo) *wgslType {
	if !c.noMatrices(e, xs) {
		return nil
	}
	if xs[0].typ.scalarOf().Kind != kBool {
		c.errorf(e.Pos, "'%s' needs bool or vector of bool, got '%s'", e.Fn.Name, xs[0].typ)
		return nil
	}
	return c.ts.scalar(kBool)
}

// sigSelect: select(f: T, t: T, cond: bool) -> T and select(vecN<T>,
// vecN<T>, vecN<bool>) -> vecN<T>.
func sigSelect(c *checker, e *callExpr, xs []*exprInfo) *wgslType {
	if !c.noMatrices(e, xs) || !c.convertPair(e, xs) {
		return nil
	}
	t := c.out.info[e.Args[0]].typ
	ct := xs[2].typ
	if !t.constructible() || ct.scalarOf().Kind != kBool || ct.Kind == kVec && (t.Kind != kVec || t.N != ct.N) {
		c.errorf(e.Pos, "'select' needs (T, T, bool) or (vecN<T>, vecN<T>, vecN<bool>), got %s", typeListOf(xs))
		return nil
	}
	return t
}

// sigMatrix: transpose(matCxR<T>) -> matRxC<T>; determinant(matNxN<T>) -> T.
func sigMatrix(c *checker, e *callExpr, xs []*exprInfo) *wgslType {
	name := e.Fn.Name
	m := xs[0].typ
	if m.Kind != kMat {
		c.errorSpan(e.Args[0], "'%s' needs a matrix, got '%s'", name, m)
		return nil
	}
	if name == "transpose" {
		return c.ts.mat(m.Elem.N, m.N, m.Elem.Elem)
	}
	if m.N != m.Elem.N {
		c.errorSpan(e.Args[0], "'determinant' needs a square matrix, got '%s'", m)
		return nil
	}
	return m.Elem.Elem
}

func evalAllAny(all bool) func(*types, []*value, []*wgslType, *wgslType) (*value, error) {
	return func(_ *types, args []*value, _ []*wgslType, _ *wgslType) (*value, error) {
		v := args[0]
		if v.elems == nil {
			return v, nil
		}
		r := all
		for _, e := range v.elems {
			if all {
				r = r && e.b
			} else {
				r = r || e.b
			}
		}
		return &value{b: r}, nil
	}
}

// emitDot is OpDot for floats; integer vectors multiply and add their
// components.
func emitDot(e *emitter, res *wgslType, as []uint32, argT []*wgslType) uint32 {
	ty := e.typeID(res, plain)
	at := argT[0]
	if at.Elem.isFloat() {
		return e.op(spirv.OpDot, ty, as...)
	}
	prod := e.op(spirv.OpIMul, e.typeID(at, plain), as[0], as[1])
	sum := e.op(spirv.OpCompositeExtract, ty, prod, 0)
	for i := 1; i < at.N; i++ {
		sum = e.op(spirv.OpIAdd, ty, sum, e.op(spirv.OpCompositeExtract, ty, prod, uint32(i)))
	}
	return sum
}

// evalGeometric evaluates dot, length, distance, normalize and cross on
// constants, in float64 and rounded to the arguments' scalar type (integer
// dot products by dotInt).
func evalGeometric(name string) func(*types, []*value, []*wgslType, *wgslType) (*value, error) {
	return func(_ *types, args []*value, argT []*wgslType, _ *wgslType) (*value, error) {
		s := argT[0].scalarOf()
		get := func(v *value) []float64 {
			if v.elems == nil {
				return []float64{v.f}
			}
			var out []float64
			for _, e := range v.elems {
				out = append(out, e.f)
			}
			return out
		}
		if name == "dot" && !s.isFloat() {
			return dotInt(args[0], args[1], s)
		}
		a := get(args[0])
		round := func(f float64) (*value, error) {
			r, ok := roundFloat(f, s.Kind)
			if !ok {
				return nil, errorf("'%s' overflows in a const-expression", name)
			}
			return &value{f: r}, nil
		}
		switch name {
		case "dot":
			b := get(args[1])
			sum := 0.0
			for i := range a {
				sum += a[i] * b[i]
			}
			return round(sum)
		case "length", "normalize", "distance":
			if name == "distance" {
				b := get(args[1])
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
		}
		b := get(args[1]) // cross
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
}

// dotInt is the dot product of integer vectors u and v of scalar type s:
// i32 and u32 products and sums wrap, as the operators do; an AbstractInt
// one must not overflow.
func dotInt(u, v *value, s *wgslType) (*value, error) {
	var sum int64
	for i := range u.elems {
		a, b := u.elems[i].i, v.elems[i].i
		switch s.Kind {
		case kI32:
			sum = int64(int32(sum) + int32(a)*int32(b))
		case kU32:
			sum = int64(uint32(sum) + uint32(a)*uint32(b))
		default:
			p, err := evalBinary(opMul, &value{i: a}, &value{i: b}, s, s, s)
			if err != nil {
				return nil, err
			}
			r, err := evalBinary(opAdd, &value{i: sum}, p, s, s, s)
			if err != nil {
				return nil, err
			}
			sum = r.i
		}
	}
	return &value{i: sum}, nil
}
