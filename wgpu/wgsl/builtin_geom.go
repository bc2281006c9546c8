package wgsl

import (
	"math"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"
)

// The vector geometry builtins faceForward, reflect and refract, and the
// quad operations of the subgroups extension, as builtinTable entries.

func addGeometryAndQuads(b map[string]*tableBuiltin) {
	glsl := func(inst uint32) func(e *emitter, res *wgslType, as []uint32, _ []*wgslType) uint32 {
		return func(e *emitter, res *wgslType, as []uint32, _ []*wgslType) uint32 {
			return e.ext(e.typeID(res, plain), inst, as...)
		}
	}
	b["faceForward"] = &tableBuiltin{nargs: 3, sig: sigFloatVecs(3, false), eval: evalVec(faceForward), emit: glsl(spirv.GLSLFaceForward)}
	b["reflect"] = &tableBuiltin{nargs: 2, sig: sigFloatVecs(2, false), eval: evalVec(reflect), emit: glsl(spirv.GLSLReflect)}
	b["refract"] = &tableBuiltin{nargs: 3, sig: sigFloatVecs(2, true), eval: evalVec(refract), emit: glsl(spirv.GLSLRefract)}
	quad := func(dir uint32) *tableBuiltin {
		return &tableBuiltin{nargs: 1, sig: sigQuad, subgroup: true,
			emit: func(e *emitter, res *wgslType, as []uint32, _ []*wgslType) uint32 {
				e.capability(spirv.CapabilityGroupNonUniformQuad)
				return e.op(spirv.OpGroupNonUniformQuadSwap, e.typeID(res, plain), e.constU32(spirv.ScopeSubgroup), as[0], e.constU32(dir))
			}}
	}
	b["quadSwapX"], b["quadSwapY"], b["quadSwapDiagonal"] = quad(0), quad(1), quad(2)
	b["quadBroadcast"] = &tableBuiltin{nargs: 2, sig: sigQuad, subgroup: true,
		emit: func(e *emitter, res *wgslType, as []uint32, argT []*wgslType) uint32 {
			e.capability(spirv.CapabilityGroupNonUniformQuad)
			id := as[1]
			if argT[1].Kind == kI32 {
				id = e.op(spirv.OpBitcast, e.typeID(e.m.types.scalar(kU32), plain), id)
			}
			return e.op(spirv.OpGroupNonUniformQuadBroadcast, e.typeID(res, plain), e.constU32(spirv.ScopeSubgroup), as[0], id)
		}}
}

// sigFloatVecs: nT arguments of one float vector type T, then, with
// scalarLast, one of T's element type; the result is T.
func sigFloatVecs(nT int, scalarLast bool) func(c *checker, e *callExpr, xs []*exprInfo) *wgslType {
	return func(c *checker, e *callExpr, xs []*exprInfo) *wgslType {
		s := c.unifyScalars(e.Pos, e.Args, xs)
		if s == nil {
			return nil
		}
		if s.Kind == kAbstractInt {
			s = c.ts.scalar(kAbstractFloat)
		}
		var t *wgslType
		for i, a := range e.Args {
			at := c.out.info[a].typ
			want := i < nT
			if want && (at.Kind != kVec || t != nil && at.N != t.N) || !want && at.Kind == kVec {
				c.errorf(e.Pos, "'%s' needs %s, got %s", e.Fn.Name, pick(scalarLast, "(vecN<T>, vecN<T>, T)", "vectors of one float type"), typeListOf(xs))
				return nil
			}
			if !c.convertTo(a, c.withScalar(at, s)) {
				return nil
			}
			if want && t == nil {
				t = c.withScalar(at, s)
			}
		}
		if !s.isFloat() {
			c.errorf(e.Pos, "'%s' needs float vectors, got %s", e.Fn.Name, typeListOf(xs))
			return nil
		}
		return t
	}
}

// evalVec lifts f over constant float vectors, rounding to the result type.
func evalVec(f func(args [][]float64) []float64) func(*types, []*value, []*wgslType, *wgslType) (*value, error) {
	return func(_ *types, args []*value, _ []*wgslType, res *wgslType) (*value, error) {
		in := make([][]float64, len(args))
		for i, a := range args {
			if a.elems == nil {
				in[i] = []float64{a.f}
				continue
			}
			for _, el := range a.elems {
				in[i] = append(in[i], el.f)
			}
		}
		out := &value{}
		for _, r := range f(in) {
			r, ok := roundFloat(r, res.scalarOf().Kind)
			if !ok {
				return nil, errorf("'%s' overflows in a const-expression", res.scalarOf())
			}
			out.elems = append(out.elems, &value{f: r})
		}
		return out, nil
	}
}

func dot64(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// faceForward(e1, e2, e3) is e1 if dot(e2, e3) < 0, else -e1.
func faceForward(a [][]float64) []float64 {
	out := append([]float64(nil), a[0]...)
	if dot64(a[1], a[2]) >= 0 {
		for i := range out {
			out[i] = -out[i]
		}
	}
	return out
}

// reflect(e1, e2) is e1 - 2 dot(e2, e1) e2.
func reflect(a [][]float64) []float64 {
	d := dot64(a[1], a[0])
	out := make([]float64, len(a[0]))
	for i := range out {
		out[i] = a[0][i] - 2*d*a[1][i]
	}
	return out
}

// refract(e1, e2, eta): with k = 1 - eta² (1 - dot(e2, e1)²), the zero vector
// if k < 0, else eta e1 - (eta dot(e2, e1) + sqrt(k)) e2.
func refract(a [][]float64) []float64 {
	eta, d := a[2][0], dot64(a[1], a[0])
	k := 1 - eta*eta*(1-d*d)
	out := make([]float64, len(a[0]))
	if k < 0 {
		return out
	}
	for i := range out {
		out[i] = eta*a[0][i] - (eta*d+math.Sqrt(k))*a[1][i]
	}
	return out
}

// sigQuad: quadSwapX/Y/Diagonal(e) and quadBroadcast(e, id) for e a
// concrete numeric scalar or vector and id a const-expression in [0, 4).
func sigQuad(c *checker, e *callExpr, xs []*exprInfo) *wgslType {
	c.materialize(e.Args[0])
	t := c.out.info[e.Args[0]].typ
	if t.Kind != kVec && !t.isScalar() || !t.scalarOf().isNumeric() {
		c.errorSpan(e.Args[0], "'%s' needs a numeric scalar or vector, got '%s'", e.Fn.Name, t)
		return nil
	}
	if len(e.Args) == 2 {
		c.materialize(e.Args[1])
		it := c.out.info[e.Args[1]].typ
		if it.Kind != kU32 && it.Kind != kI32 {
			c.errorSpan(e.Args[1], "'quadBroadcast' needs an i32 or u32 id, got '%s'", it)
			return nil
		}
		if xs[1].val == nil {
			c.errorSpan(e.Args[1], "the id of 'quadBroadcast' must be a const-expression")
			return nil
		}
		if xs[1].val.i < 0 || xs[1].val.i > 3 {
			c.errorSpan(e.Args[1], "the id of 'quadBroadcast' must be in [0, 4), got %d", xs[1].val.i)
			return nil
		}
	}
	return t
}
