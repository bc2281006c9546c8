package wgsl

import (
	"math"
	"math/bits"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"
)

// The componentwise numeric builtins (exp, min, clamp, sign, countOneBits,
// ...): every argument a scalar or vector of one shape (mix's factor may be
// a scalar), one scalar type for all of them, a result of the arguments'
// type. Each is described once by a numeric: its argument rule, its
// constant evaluation on float64 or int64 components and its GLSL.std.450
// instructions.

// numRule is the scalar types a numeric builtin takes.
type numRule int

const (
	numFloat numRule = iota // floats; abstract-int arguments become abstract-float
	numAny                  // any numeric scalar
	numSign                 // floats and signed integers
	numInt                  // integers; abstract-int arguments become i32
)

type numeric struct {
	nargs int
	rule  numRule
	// f and i evaluate one component of constant float and integer
	// arguments (nil where the rule allows no such arguments).
	f func(x ...float64) float64
	i func(k kind, x ...int64) int64
	// glsl, glslS and glslU are the GLSL.std.450 instructions for float,
	// i32 and u32 arguments; op, when set, is the core instruction instead.
	glsl, glslS, glslU uint32
	op                 spirv.Op
}

func addNumeric(b map[string]*tableBuiltin) {
	f1 := func(f func(float64) float64, glsl uint32) numeric {
		return numeric{nargs: 1, rule: numFloat, f: func(x ...float64) float64 { return f(x[0]) }, glsl: glsl}
	}
	f2 := func(f func(a, b float64) float64, glsl uint32) numeric {
		return numeric{nargs: 2, rule: numFloat, f: func(x ...float64) float64 { return f(x[0], x[1]) }, glsl: glsl}
	}
	f3 := func(f func(a, b, c float64) float64, glsl uint32) numeric {
		return numeric{nargs: 3, rule: numFloat, f: func(x ...float64) float64 { return f(x[0], x[1], x[2]) }, glsl: glsl}
	}
	bits1 := func(f func(x uint32) uint32, op spirv.Op) numeric {
		return numeric{nargs: 1, rule: numInt, op: op, i: func(k kind, x ...int64) int64 {
			r := f(uint32(x[0]))
			if k == kI32 {
				return int64(int32(r))
			}
			return int64(r)
		}}
	}
	all := map[string]numeric{
		"exp": f1(math.Exp, spirv.GLSLExp), "exp2": f1(math.Exp2, spirv.GLSLExp2),
		"log": f1(math.Log, spirv.GLSLLog), "log2": f1(math.Log2, spirv.GLSLLog2),
		"sqrt": f1(math.Sqrt, spirv.GLSLSqrt), "inverseSqrt": f1(func(x float64) float64 { return 1 / math.Sqrt(x) }, spirv.GLSLInverseSqrt),
		"sin": f1(math.Sin, spirv.GLSLSin), "cos": f1(math.Cos, spirv.GLSLCos), "tan": f1(math.Tan, spirv.GLSLTan),
		"asin": f1(math.Asin, spirv.GLSLAsin), "acos": f1(math.Acos, spirv.GLSLAcos), "atan": f1(math.Atan, spirv.GLSLAtan),
		"sinh": f1(math.Sinh, spirv.GLSLSinh), "cosh": f1(math.Cosh, spirv.GLSLCosh), "tanh": f1(math.Tanh, spirv.GLSLTanh),
		"asinh": f1(math.Asinh, spirv.GLSLAsinh), "acosh": f1(math.Acosh, spirv.GLSLAcosh), "atanh": f1(math.Atanh, spirv.GLSLAtanh),
		"floor": f1(math.Floor, spirv.GLSLFloor), "ceil": f1(math.Ceil, spirv.GLSLCeil),
		"round": f1(math.RoundToEven, spirv.GLSLRoundEven), "trunc": f1(math.Trunc, spirv.GLSLTrunc),
		"fract":    f1(func(x float64) float64 { return x - math.Floor(x) }, spirv.GLSLFract),
		"degrees":  f1(func(x float64) float64 { return x * 180 / math.Pi }, spirv.GLSLDegrees),
		"radians":  f1(func(x float64) float64 { return x * math.Pi / 180 }, spirv.GLSLRadians),
		"saturate": f1(func(x float64) float64 { return math.Min(math.Max(x, 0), 1) }, spirv.GLSLFClamp), // with 0 and 1
		"pow": f2(func(x, y float64) float64 { // WGSL defines pow(x, y) as exp2(y * log2(x))
			if x < 0 || x == 0 && y <= 0 {
				return math.NaN()
			}
			return math.Pow(x, y)
		}, spirv.GLSLPow),
		"atan2": f2(math.Atan2, spirv.GLSLAtan2),
		"step":  f2(func(edge, x float64) float64 { return b2f(x >= edge) }, spirv.GLSLStep),
		"fma":   f3(func(a, b, c float64) float64 { return a*b + c }, spirv.GLSLFma),
		"mix":   f3(func(a, b, t float64) float64 { return a*(1-t) + b*t }, spirv.GLSLFMix),
		"smoothstep": f3(func(lo, hi, x float64) float64 {
			t := math.Min(math.Max((x-lo)/(hi-lo), 0), 1)
			return t * t * (3 - 2*t)
		}, spirv.GLSLSmoothStep),
		"abs": {nargs: 1, rule: numAny, glsl: spirv.GLSLFAbs, glslS: spirv.GLSLSAbs,
			f: func(x ...float64) float64 { return math.Abs(x[0]) },
			i: func(k kind, x ...int64) int64 {
				if k == kI32 && x[0] == math.MinInt32 {
					return x[0]
				}
				return abs64(x[0])
			}},
		"min": {nargs: 2, rule: numAny, glsl: spirv.GLSLFMin, glslS: spirv.GLSLSMin, glslU: spirv.GLSLUMin,
			f: func(x ...float64) float64 { return math.Min(x[0], x[1]) },
			i: func(_ kind, x ...int64) int64 { return min(x[0], x[1]) }},
		"max": {nargs: 2, rule: numAny, glsl: spirv.GLSLFMax, glslS: spirv.GLSLSMax, glslU: spirv.GLSLUMax,
			f: func(x ...float64) float64 { return math.Max(x[0], x[1]) },
			i: func(_ kind, x ...int64) int64 { return max(x[0], x[1]) }},
		"clamp": {nargs: 3, rule: numAny, glsl: spirv.GLSLFClamp, glslS: spirv.GLSLSClamp, glslU: spirv.GLSLUClamp,
			f: func(x ...float64) float64 { return math.Min(math.Max(x[0], x[1]), x[2]) },
			i: func(_ kind, x ...int64) int64 { return min(max(x[0], x[1]), x[2]) }},
		"sign": {nargs: 1, rule: numSign, glsl: spirv.GLSLFSign, glslS: spirv.GLSLSSign,
			f: func(x ...float64) float64 { return float64(cmp(x[0] < 0, x[0] > 0)) },
			i: func(_ kind, x ...int64) int64 { return int64(cmp(x[0] < 0, x[0] > 0)) }},
		"countOneBits": bits1(func(x uint32) uint32 { return uint32(bits.OnesCount32(x)) }, spirv.OpBitCount),
		"reverseBits":  bits1(bits.Reverse32, spirv.OpBitReverse),
	}
	for name, n := range all {
		b[name] = &tableBuiltin{nargs: n.nargs,
			sig:  func(c *checker, e *callExpr, xs []*exprInfo) *wgslType { return c.sigNumeric(e, xs, n.rule) },
			eval: n.eval(name),
			emit: func(e *emitter, res *wgslType, as []uint32, argT []*wgslType) uint32 {
				return n.emit(e, name, res, as, argT)
			},
		}
	}
}

// sigNumeric checks the arguments of a numeric builtin and returns the
// result type: the arguments' shape with their unified scalar type.
func (c *checker) sigNumeric(e *callExpr, xs []*exprInfo, rule numRule) *wgslType {
	name := e.Fn.Name
	for i, x := range xs {
		if x.typ.Kind == kMat {
			c.errorSpan(e.Args[i], "'%s' does not take matrices", name)
			return nil
		}
	}
	if name == "mix" && xs[2].typ.Kind != kVec && xs[0].typ.Kind == kVec {
		// mix(vec, vec, scalar): splat the scalar factor.
		s := c.unifyScalars(e.Pos, e.Args, xs)
		if s == nil {
			return nil
		}
		if !c.convertTo(e.Args[2], s) {
			return nil
		}
	}
	s := c.unifyScalars(e.Pos, e.Args, xs)
	if s == nil {
		return nil
	}
	shape := xs[0].typ
	for i, x := range xs {
		if x.typ.Kind == kVec && shape.Kind == kVec && x.typ.N != shape.N || (x.typ.Kind == kVec) != (shape.Kind == kVec) && !(name == "mix" && i == 2 && x.typ.Kind != kVec) {
			c.errorf(e.Pos, "'%s' arguments must have the same shape: %s", name, typeListOf(xs))
			return nil
		}
	}
	switch rule {
	case numFloat:
		if s.Kind == kAbstractInt {
			s = c.ts.scalar(kAbstractFloat)
			for i := range xs {
				c.convertTo(e.Args[i], c.withScalar(xs[i].typ, s))
			}
		}
		if !s.isFloat() {
			c.errorf(e.Pos, "'%s' needs float arguments, got %s", name, typeListOf(xs))
			return nil
		}
	case numAny:
		if !s.isNumeric() {
			c.errorf(e.Pos, "'%s' needs numeric arguments, got %s", name, typeListOf(xs))
			return nil
		}
	case numSign:
		if !(s.isFloat() || s.isSigned()) {
			c.errorf(e.Pos, "'%s' needs a float or signed integer, got '%s'", name, xs[0].typ)
			return nil
		}
	case numInt:
		if !s.isInt() {
			c.errorf(e.Pos, "'%s' needs an integer, got '%s'", name, xs[0].typ)
			return nil
		}
		if s.isAbstract() { // no abstract overload: the argument becomes i32
			s = c.ts.scalar(kI32)
			c.convertTo(e.Args[0], c.withScalar(xs[0].typ, s))
		}
	}
	if name == "clamp" && xs[1].val != nil && xs[2].val != nil && lowAboveHigh(xs[1].val, xs[2].val, s) {
		c.errorf(e.Pos, "clamp needs low <= high")
		return nil
	}
	if name == "smoothstep" && xs[0].val != nil && xs[1].val != nil && sameComponent(xs[0].val, xs[1].val) {
		c.errorf(e.Pos, "smoothstep needs low != high")
		return nil
	}
	return c.withScalar(shape, s)
}

// eval returns the constant evaluation of numeric builtin name: f or i
// per component, the scalar type that of the first argument.
func (n numeric) eval(name string) func(*types, []*value, []*wgslType, *wgslType) (*value, error) {
	return func(_ *types, args []*value, argT []*wgslType, res *wgslType) (*value, error) {
		s := argT[0].scalarOf()
		if s.isFloat() && n.f == nil || !s.isFloat() && n.i == nil {
			return nil, errorf("'%s' cannot be evaluated on constant '%s' arguments", name, s)
		}
		one := func(k int) (*value, error) {
			if s.isFloat() {
				xs := make([]float64, len(args))
				for i, a := range args {
					xs[i] = component(a, k).f
				}
				r, ok := roundFloat(n.f(xs...), s.Kind)
				if !ok || math.IsNaN(r) {
					return nil, errorf("'%s' of a constant is not finite", name)
				}
				return &value{f: r}, nil
			}
			xs := make([]int64, len(args))
			for i, a := range args {
				xs[i] = component(a, k).i
			}
			return &value{i: n.i(s.Kind, xs...)}, nil
		}
		if res.Kind != kVec {
			return one(0)
		}
		out := &value{}
		for k := range res.N {
			r, err := one(k)
			if err != nil {
				return nil, err
			}
			out.elems = append(out.elems, r)
		}
		return out, nil
	}
}

// component is component k of a vector constant, or the scalar v itself.
func component(v *value, k int) *value {
	if v.elems != nil {
		return v.elems[k]
	}
	return v
}

// emit emits numeric builtin name on argument ids as, of result type res.
func (n numeric) emit(e *emitter, name string, res *wgslType, as []uint32, argT []*wgslType) uint32 {
	ty := e.typeID(res, plain)
	s := res.scalarOf()
	switch {
	case n.op != 0:
		return e.op(n.op, ty, as...)
	case name == "saturate":
		zero := e.constant(res, e.splatValue(res, &value{}))
		one := e.constant(res, e.splatValue(res, &value{f: 1}))
		return e.ext(ty, spirv.GLSLFClamp, as[0], zero, one)
	case name == "mix" && res.Kind == kVec && argT[2].Kind != kVec:
		as[2] = e.splat(as[2], argT[2], res.N)
	case s.Kind == kU32 && name == "abs":
		return as[0]
	}
	switch {
	case s.isFloat():
		return e.ext(ty, n.glsl, as...)
	case s.Kind == kI32:
		return e.ext(ty, n.glslS, as...)
	}
	return e.ext(ty, n.glslU, as...)
}
