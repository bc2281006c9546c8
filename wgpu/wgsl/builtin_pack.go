package wgsl

import (
	"math"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"
)

// packing is one of the data packing formats of pack<name> and unpack<name>:
// n components of bits each, as snorm, unorm or binary16 floats.
type packing struct {
	n, bits      int
	norm         float64 // 127, 255, 32767, 65535; 0 for binary16
	signed       bool
	pack, unpack uint32 // GLSL.std.450 instructions (pack only for binary16)
}

var packings = map[string]packing{
	"4x8snorm":  {4, 8, 127, true, spirv.GLSLPackSnorm4x8, spirv.GLSLUnpackSnorm4x8},
	"4x8unorm":  {4, 8, 255, false, spirv.GLSLPackUnorm4x8, spirv.GLSLUnpackUnorm4x8},
	"2x16snorm": {2, 16, 32767, true, spirv.GLSLPackSnorm2x16, spirv.GLSLUnpackSnorm2x16},
	"2x16unorm": {2, 16, 65535, false, spirv.GLSLPackUnorm2x16, spirv.GLSLUnpackUnorm2x16},
	"2x16float": {2, 16, 0, true, spirv.GLSLPackHalf2x16, spirv.GLSLUnpackHalf2x16},
}

func (p packing) vecType() string { return "vec" + string(rune('0'+p.n)) + "<f32>" }

// packComponent is the specification's encoding of one component.
func (p packing) packComponent(x float64) (uint32, error) {
	mask := uint32(1)<<p.bits - 1
	if p.norm == 0 {
		r, ok := convertFloat(x, kF16)
		if !ok {
			return 0, errorf("'pack2x16float' of %g: outside the finite range of f16", x)
		}
		return uint32(f16Bits(r)), nil
	}
	lo := 0.0
	if p.signed {
		lo = -1
	}
	// In f32 arithmetic, as the emitted code computes it.
	c := float32(math.Min(1, math.Max(lo, x)))
	return uint32(int32(math.Floor(float64(0.5+float32(p.norm)*c)))) & mask, nil
}

func (p packing) unpackComponent(b uint32) float64 {
	switch {
	case p.norm == 0:
		return f16Value(uint16(b))
	case p.signed:
		v := int32(b<<(32-p.bits)) >> (32 - p.bits)
		return math.Max(float64(v)/p.norm, -1)
	}
	return float64(b) / p.norm
}

func (p packing) packBuiltin() *tableBuiltin {
	return &tableBuiltin{nargs: 1, sig: sigFixed("u32", p.vecType()),
		eval: func(_ *types, args []*value, _ []*wgslType, _ *wgslType) (*value, error) {
			var r uint32
			for i, el := range args[0].elems {
				b, err := p.packComponent(el.f)
				if err != nil {
					return nil, err
				}
				r |= b << (i * p.bits)
			}
			return &value{i: int64(r)}, nil
		},
		emit: func(e *emitter, res *wgslType, as []uint32, argT []*wgslType) uint32 {
			if p.norm == 0 {
				return e.ext(e.typeID(res, plain), p.pack, as[0])
			}
			return e.packNorm(p, argT[0], as[0])
		}}
}

func (p packing) unpackBuiltin() *tableBuiltin {
	return &tableBuiltin{nargs: 1, sig: sigFixed(p.vecType(), "u32"),
		eval: func(_ *types, args []*value, _ []*wgslType, _ *wgslType) (*value, error) {
			out := &value{}
			for i := range p.n {
				b := uint32(args[0].i) >> (i * p.bits) & (1<<p.bits - 1)
				out.elems = append(out.elems, &value{f: float64(float32(p.unpackComponent(b)))})
			}
			return out, nil
		},
		emit: func(e *emitter, res *wgslType, as []uint32, _ []*wgslType) uint32 {
			return e.ext(e.typeID(res, plain), p.unpack, as[0])
		}}
}

// packNorm emits the specification's formula, floor(0.5 + norm * clamp(x,
// lo, 1)) per component, rather than GLSL's PackSnorm/Unorm, whose rounding of
// ties differs.
func (e *emitter) packNorm(p packing, ft *wgslType, x uint32) uint32 {
	ts := e.m.types
	fty := e.typeID(ft, plain)
	lo := 0.0
	if p.signed {
		lo = -1
	}
	fconst := func(k float64) uint32 { return e.constant(ft, e.splatValue(ft, &value{f: k})) }
	x = e.ext(fty, spirv.GLSLFClamp, x, fconst(lo), fconst(1))
	x = e.op(spirv.OpFMul, fty, x, fconst(p.norm))
	x = e.ext(fty, spirv.GLSLFloor, e.op(spirv.OpFAdd, fty, x, fconst(0.5)))
	it, ut := ts.vec(p.n, ts.scalar(kI32)), ts.vec(p.n, ts.scalar(kU32))
	x = e.op(spirv.OpBitcast, e.typeID(ut, plain), e.op(spirv.OpConvertFToS, e.typeID(it, plain), x))
	x = e.op(spirv.OpBitwiseAnd, e.typeID(ut, plain), x, e.splatConst(ut, 1<<p.bits-1))
	var sh [4]int64
	for k := range sh {
		sh[k] = int64(k * p.bits)
	}
	v := &value{}
	for _, s := range sh[:p.n] {
		v.elems = append(v.elems, &value{i: s})
	}
	x = e.op(spirv.OpShiftLeftLogical, e.typeID(ut, plain), x, e.constant(ut, v))
	return e.sumLanes(spirv.OpBitwiseOr, ts.scalar(kU32), x, p.n)
}

// f16Value decodes IEEE binary16 bits.
func f16Value(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, frac := int(h>>10&0x1f), float64(h&0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return sign * math.Inf(1)
	}
	return sign * math.Ldexp(1024+frac, exp-25)
}

// byteLanes are the shifts of the four bytes of a packed 4x8 integer.
var byteLanes = [4]int64{0, 8, 16, 24}

// packBytes is pack4xI8, pack4xU8 and their Clamp forms.
func packBytes(signed, clamp bool) *tableBuiltin {
	in := pick(signed, "vec4<i32>", "vec4<u32>")
	return &tableBuiltin{nargs: 1, sig: sigFixed("u32", in),
		eval: func(_ *types, args []*value, _ []*wgslType, _ *wgslType) (*value, error) {
			var r uint32
			for i, el := range args[0].elems {
				v := el.i
				if clamp {
					v = pick(signed, min(max(v, -128), 127), min(v, 255))
				}
				r |= uint32(v) & 0xff << byteLanes[i]
			}
			return &value{i: int64(r)}, nil
		},
		emit: func(e *emitter, res *wgslType, as []uint32, argT []*wgslType) uint32 {
			ts := e.m.types
			u4 := ts.vec(4, ts.scalar(kU32))
			x := as[0]
			switch {
			case clamp && signed:
				x = e.ext(e.typeID(argT[0], plain), spirv.GLSLSClamp, x, e.splatConst(argT[0], -128), e.splatConst(argT[0], 127))
			case clamp:
				x = e.ext(e.typeID(u4, plain), spirv.GLSLUMin, x, e.splatConst(u4, 255))
			}
			if signed {
				x = e.op(spirv.OpBitcast, e.typeID(u4, plain), x)
			}
			x = e.op(spirv.OpBitwiseAnd, e.typeID(u4, plain), x, e.splatConst(u4, 0xff))
			x = e.op(spirv.OpShiftLeftLogical, e.typeID(u4, plain), x, e.laneShifts(u4, byteLanes))
			return e.sumLanes(spirv.OpBitwiseOr, res, x, 4)
		}}
}

// unpackBytes is unpack4xI8 (sign-extending) and unpack4xU8.
func unpackBytes(signed bool) *tableBuiltin {
	out := pick(signed, "vec4<i32>", "vec4<u32>")
	return &tableBuiltin{nargs: 1, sig: sigFixed(out, "u32"),
		eval: func(_ *types, args []*value, _ []*wgslType, res *wgslType) (*value, error) {
			v := &value{}
			for _, sh := range byteLanes {
				b := uint32(args[0].i) >> sh & 0xff
				if signed {
					v.elems = append(v.elems, &value{i: int64(int8(b))})
				} else {
					v.elems = append(v.elems, &value{i: int64(b)})
				}
			}
			return v, nil
		},
		emit: func(e *emitter, res *wgslType, as []uint32, _ []*wgslType) uint32 {
			return e.unpackBytes(signed, res, as[0])
		}}
}

// dotBytes is dot4I8Packed and dot4U8Packed.
func dotBytes(signed bool) *tableBuiltin {
	return &tableBuiltin{nargs: 2, sig: sigFixed(pick(signed, "i32", "u32"), "u32", "u32"),
		eval: func(_ *types, args []*value, _ []*wgslType, _ *wgslType) (*value, error) {
			var sum int64
			for _, sh := range byteLanes {
				a, b := uint32(args[0].i)>>sh&0xff, uint32(args[1].i)>>sh&0xff
				if signed {
					sum += int64(int8(a)) * int64(int8(b))
				} else {
					sum += int64(a) * int64(b)
				}
			}
			return &value{i: sum}, nil
		},
		emit: func(e *emitter, res *wgslType, as []uint32, _ []*wgslType) uint32 {
			v4 := e.m.types.vec(4, res)
			a, b := e.unpackBytes(signed, v4, as[0]), e.unpackBytes(signed, v4, as[1])
			return e.sumLanes(spirv.OpIAdd, res, e.op(spirv.OpIMul, e.typeID(v4, plain), a, b), 4)
		}}
}

func (e *emitter) unpackBytes(signed bool, v4 *wgslType, x uint32) uint32 {
	ty := e.typeID(v4, plain)
	if signed {
		x = e.op(spirv.OpBitcast, e.typeID(v4.Elem, plain), x)
		v := e.splat(x, v4.Elem, 4)
		v = e.op(spirv.OpShiftLeftLogical, ty, v, e.laneShifts(v4, [4]int64{24, 16, 8, 0}))
		return e.op(spirv.OpShiftRightArithmetic, ty, v, e.splatConst(v4, 24))
	}
	v := e.op(spirv.OpShiftRightLogical, ty, e.splat(x, v4.Elem, 4), e.laneShifts(v4, byteLanes))
	return e.op(spirv.OpBitwiseAnd, ty, v, e.splatConst(v4, 0xff))
}

func (e *emitter) laneShifts(t *wgslType, sh [4]int64) uint32 {
	v := &value{}
	for _, s := range sh {
		v.elems = append(v.elems, &value{i: s})
	}
	return e.constant(t, v)
}

// sumLanes folds the n lanes of v with op into a scalar of type res.
func (e *emitter) sumLanes(op spirv.Op, res *wgslType, v uint32, n int) uint32 {
	ty := e.typeID(res, plain)
	r := e.op(spirv.OpCompositeExtract, ty, v, 0)
	for i := uint32(1); i < uint32(n); i++ {
		r = e.op(op, ty, r, e.op(spirv.OpCompositeExtract, ty, v, i))
	}
	return r
}
