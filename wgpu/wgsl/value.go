package wgsl

import (
	"fmt"
	"math"
)

// value is a constant computed by the checker: a scalar (b, i or f by the
// type it belongs to) or a composite (elems). u32 values live in i.
//
// A large array or struct zero value (more than maxConstScalars scalars) is
// a zeroComposite with no elems: the type's count comes from the source, so
// the value's components are made only when one is picked (elem), and the
// emitter writes the whole as OpConstantNull. Arrays, structs and their
// zero values are never operands of the constant operators, so only
// component access, conversion and emission meet zero composites.
type value struct {
	b             bool
	i             int64
	f             float64
	elems         []*value
	zeroComposite bool
}

func (v *value) String() string {
	switch {
	case v.zeroComposite:
		return "{zero}"
	case v.elems != nil:
		return fmt.Sprint(v.elems)
	}
	return fmt.Sprintf("{%v %d %g}", v.b, v.i, v.f)
}

// elem is component i of v, a composite of type t.
func (v *value) elem(t *wgslType, i int) *value {
	if v.zeroComposite {
		return zeroValue(elemType(t, i))
	}
	return v.elems[i]
}

// maxConstScalars bounds the composites zeroValue builds element by
// element; larger zero values are zero composites.
const maxConstScalars = 4096

// scalarCount is the number of scalars in a value of type t (one element
// for a runtime-sized array). The checker bounds every array and struct to
// 0xffffffff bytes, so the count fits an int.
func scalarCount(t *wgslType) int {
	switch t.Kind {
	case kVec:
		return t.N
	case kMat:
		return t.N * t.Elem.N
	case kArray:
		return max(t.N, 1) * scalarCount(t.Elem)
	case kStruct:
		n := 0
		for _, m := range t.Struct.Members {
			n += scalarCount(m.Type)
		}
		return n
	}
	return 1
}

// zeroValue is the zero value of a constructible type.
func zeroValue(t *wgslType) *value {
	if (t.Kind == kArray || t.Kind == kStruct) && scalarCount(t) > maxConstScalars {
		return &value{zeroComposite: true}
	}
	switch t.Kind {
	case kVec:
		v := &value{elems: make([]*value, t.N)}
		for i := range v.elems {
			v.elems[i] = &value{}
		}
		return v
	case kArray, kMat:
		v := &value{elems: make([]*value, t.N)}
		for i := range v.elems {
			v.elems[i] = zeroValue(t.Elem)
		}
		return v
	case kStruct:
		v := &value{elems: make([]*value, len(t.Struct.Members))}
		for i, m := range t.Struct.Members {
			v.elems[i] = zeroValue(m.Type)
		}
		return v
	}
	return &value{}
}

// f16Round rounds x to the nearest f16 value (ties to even); it returns
// ±Inf when x is out of range.
func f16Round(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 {
		return x
	}
	a := math.Abs(x)
	if a >= 65520 { // halfway between 65504 and 65536 rounds up to infinity
		return math.Copysign(math.Inf(1), x)
	}
	e := math.Floor(math.Log2(a))
	if e < -14 {
		e = -14 // subnormals: fixed spacing 2^-24
	}
	q := math.Pow(2, e-10)
	r := math.RoundToEven(a/q) * q
	return math.Copysign(r, x)
}

// F16Bits encodes x (already an f16 value) as IEEE binary16 bits.
func f16Bits(x float64) uint16 {
	var sign uint16
	if math.Signbit(x) {
		sign = 0x8000
		x = -x
	}
	switch {
	case math.IsNaN(x):
		return 0x7e00
	case math.IsInf(x, 0):
		return sign | 0x7c00
	case x == 0:
		return sign
	}
	e := int(math.Floor(math.Log2(x)))
	if e < -14 {
		return sign | uint16(math.RoundToEven(x/math.Pow(2, -24)))
	}
	m := math.RoundToEven((x/math.Pow(2, float64(e)) - 1) * 1024)
	if m == 1024 {
		m = 0
		e++
	}
	return sign | uint16(e+15)<<10 | uint16(m)
}

// convertFloat is the specification's numeric conversion of x to the float
// kind k: x rounds to a neighbouring value of k, but x beyond k's finite
// range (65504 for f16, math.MaxFloat32 for f32) is an error even where it
// would round to the largest finite value; ok reports success.
func convertFloat(x float64, k kind) (float64, bool) {
	switch {
	case k == kF32 && math.Abs(x) > math.MaxFloat32, k == kF16 && math.Abs(x) > 65504:
		return 0, false
	}
	return roundFloat(x, k)
}

// roundFloat rounds x to the precision of the float kind k and reports
// whether it stayed finite.
func roundFloat(x float64, k kind) (float64, bool) {
	switch k {
	case kF32:
		r := float64(float32(x))
		return r, !math.IsInf(r, 0) || math.IsInf(x, 0)
	case kF16:
		r := f16Round(x)
		return r, !math.IsInf(r, 0) || math.IsInf(x, 0)
	}
	return x, !math.IsInf(x, 0) && !math.IsNaN(x)
}

// intFits reports whether i is representable in integer kind k.
func intFits(i int64, k kind) bool {
	switch k {
	case kI32:
		return i >= math.MinInt32 && i <= math.MaxInt32
	case kU32:
		return i >= 0 && i <= math.MaxUint32
	}
	return true
}

// convertValue converts a constant between types of the same shape. explicit
// selects value-constructor semantics (f32(x)), which truncate and saturate;
// implicit conversions of abstract values must be exact.
func convertValue(v *value, from, to *wgslType, explicit bool) (*value, error) {
	if v.elems == nil && !v.zeroComposite {
		return convertScalar(v, from, to, explicit)
	}
	return convertComposite(v, from, to, explicit, map[convertKey]*value{})
}

// convertKey is one component conversion: constants share their components
// (array(a, a, a) holds a three times), so a conversion converts each
// distinct component once, and nested sharing costs no more than its source.
type convertKey struct {
	v        *value
	from, to *wgslType
}

func convertComposite(v *value, from, to *wgslType, explicit bool, done map[convertKey]*value) (*value, error) {
	switch {
	case v.zeroComposite:
		return zeroValue(to), nil
	case v.elems == nil:
		return convertScalar(v, from, to, explicit)
	}
	k := convertKey{v, from, to}
	if out, ok := done[k]; ok {
		return out, nil
	}
	out := &value{elems: make([]*value, len(v.elems))}
	for i, e := range v.elems {
		c, err := convertComposite(e, elemType(from, i), elemType(to, i), explicit, done)
		if err != nil {
			return nil, err
		}
		out.elems[i] = c
	}
	done[k] = out
	return out, nil
}

// convertScalar is convertValue for scalars.
func convertScalar(v *value, from, to *wgslType, explicit bool) (*value, error) {
	fk, tk := from.Kind, to.Kind
	switch {
	case fk == tk:
		return v, nil
	case tk == kBool:
		if from.isFloat() {
			return &value{b: v.f != 0}, nil
		}
		return &value{b: v.i != 0}, nil
	case fk == kBool:
		if to.isFloat() {
			return &value{f: b2f(v.b)}, nil
		}
		return &value{i: int64(b2f(v.b))}, nil
	case from.isInt() && to.isInt():
		if !explicit || fk == kAbstractInt {
			if !intFits(v.i, tk) {
				return nil, fmt.Errorf("value %d cannot be represented as '%s'", v.i, to)
			}
			return &value{i: v.i}, nil
		}
		switch tk {
		case kI32:
			return &value{i: int64(int32(uint32(v.i)))}, nil
		case kU32:
			return &value{i: int64(uint32(v.i))}, nil
		}
		return &value{i: v.i}, nil
	case from.isInt() && to.isFloat():
		r, ok := convertFloat(float64(v.i), tk)
		if !ok {
			return nil, fmt.Errorf("value %d cannot be represented as '%s'", v.i, to)
		}
		return &value{f: r}, nil
	case from.isFloat() && to.isFloat():
		r, ok := convertFloat(v.f, tk)
		if !ok {
			return nil, fmt.Errorf("value %g cannot be represented as '%s'", v.f, to)
		}
		return &value{f: r}, nil
	case from.isFloat() && to.isInt():
		if !explicit {
			return nil, fmt.Errorf("cannot convert a float to '%s' implicitly", to)
		}
		// The result is the integer closest to trunc(v) that the source type
		// also represents: f32's largest values in i32 and u32 are 2147483520
		// and 4294967040; AbstractFloat (float64) holds both types' maxima.
		t := math.Trunc(v.f)
		hiI32, hiU32 := float64(math.MaxInt32), float64(math.MaxUint32)
		if fk == kF32 {
			hiI32, hiU32 = 2147483520, 4294967040
		}
		switch tk {
		case kI32:
			t = math.Max(math.Min(t, hiI32), math.MinInt32)
		case kU32:
			t = math.Max(math.Min(t, hiU32), 0)
		default:
			if t >= 9.223372036854775e18 || t < -9.223372036854775e18 {
				return nil, fmt.Errorf("value %g cannot be represented as an integer", v.f)
			}
		}
		if math.IsNaN(t) {
			t = 0
		}
		return &value{i: int64(t)}, nil
	}
	return nil, fmt.Errorf("cannot convert '%s' to '%s'", from, to)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// elemType is the type of component i of a composite type.
func elemType(t *wgslType, i int) *wgslType {
	if t.Kind == kStruct {
		return t.Struct.Members[i].Type
	}
	return t.Elem
}

// bitsOf returns the raw bits of a concrete scalar constant, as SPIR-V wants them.
func bitsOf(v *value, t *wgslType) uint32 {
	switch t.Kind {
	case kBool:
		if v.b {
			return 1
		}
		return 0
	case kF32:
		return math.Float32bits(float32(v.f))
	case kF16:
		return uint32(f16Bits(v.f))
	}
	return uint32(v.i)
}

// bitcastValue is bitcast<to>(v) of a constant v of type from (scalars or
// vectors of 32- or 16-bit components, of equal size): the components' bits
// are laid end to end, lowest component first, and cut anew. A float result
// that is not finite is an error, as every const-expression's.
func bitcastValue(v *value, from, to *wgslType) (*value, error) {
	comps := func(t *wgslType) (int, *wgslType) {
		if t.Kind == kVec {
			return t.N, t.Elem
		}
		return 1, t
	}
	fn, fs := comps(from)
	tn, ts := comps(to)
	var bits uint64 // at most 128 bits: vec4<u32> or vec4<f16> in two halves
	var words []uint32
	nbits := 0
	for i := range fn {
		el := v
		if from.Kind == kVec {
			el = &value{}
			if v.elems != nil {
				el = v.elems[i]
			}
		}
		b, w := uint64(bitsOf(el, fs)), int(fs.Size())*8
		bits |= (b & (1<<w - 1)) << nbits
		nbits += w
		if nbits == 32 {
			words = append(words, uint32(bits))
			bits, nbits = 0, 0
		}
	}
	w := int(ts.Size()) * 8
	out := make([]*value, tn)
	for i := range out {
		word := words[i*w/32]
		b := word >> (i * w % 32) & uint32(1<<w-1)
		out[i] = valueFromBits(b, ts)
		if ts.isFloat() && (math.IsInf(out[i].f, 0) || math.IsNaN(out[i].f)) {
			return nil, fmt.Errorf("bitcast<%s> of a constant gives %v, not a finite '%s'", to, out[i].f, ts)
		}
	}
	if to.Kind != kVec {
		return out[0], nil
	}
	return &value{elems: out}, nil
}

// valueFromBits is the inverse of bitsOf, for bitcast.
func valueFromBits(bits uint32, t *wgslType) *value {
	switch t.Kind {
	case kF32:
		return &value{f: float64(math.Float32frombits(bits))}
	case kF16:
		return &value{f: f16Value(uint16(bits))}
	case kI32:
		return &value{i: int64(int32(bits))}
	}
	return &value{i: int64(bits)}
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
