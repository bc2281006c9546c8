package wgsl

import (
	"fmt"
	"math"
	"math/bits"
)

// evalUnary evaluates a unary operator on a constant of type t.
func evalUnary(op operator, v *value, t *wgslType) (*value, error) {
	if v.elems != nil {
		out := &value{elems: make([]*value, len(v.elems))}
		for i, e := range v.elems {
			r, err := evalUnary(op, e, t.Elem)
			if err != nil {
				return nil, err
			}
			out.elems[i] = r
		}
		return out, nil
	}
	switch op {
	case opNot:
		return &value{b: !v.b}, nil
	case opCompl:
		switch t.Kind {
		case kU32:
			return &value{i: int64(^uint32(v.i))}, nil
		}
		return &value{i: ^v.i}, nil
	case opNeg:
		if t.isFloat() {
			return &value{f: -v.f}, nil
		}
		if t.Kind == kI32 && v.i == math.MinInt32 || v.i == math.MinInt64 {
			// The most negative value is its own negation, for
			// AbstractInt too (the specification's negation rule).
			return v, nil
		}
		return &value{i: -v.i}, nil
	}
	return nil, fmt.Errorf("bad unary operator %s", op)
}

// evalBinary evaluates a binary operator on constants; a scalar operand is
// broadcast against a vector one. rt is the result type.
func evalBinary(op operator, l, r *value, lt, rt, res *wgslType) (*value, error) {
	if l.elems != nil || r.elems != nil {
		n := len(l.elems)
		if n == 0 {
			n = len(r.elems)
		}
		out := &value{elems: make([]*value, n)}
		for i := range n {
			le, re := l, r
			if l.elems != nil {
				le = l.elems[i]
			}
			if r.elems != nil {
				re = r.elems[i]
			}
			v, err := evalBinary(op, le, re, lt.scalarOf(), rt.scalarOf(), res.scalarOf())
			if err != nil {
				return nil, err
			}
			out.elems[i] = v
		}
		return out, nil
	}
	k := lt.Kind
	switch op {
	case opLogAnd:
		return &value{b: l.b && r.b}, nil
	case opLogOr:
		return &value{b: l.b || r.b}, nil
	case opEq, opNe, opLt, opGt, opLe, opGe:
		var c int
		switch {
		case k == kBool:
			if l.b != r.b {
				c = 1
			}
		case lt.isFloat():
			if math.IsNaN(l.f) || math.IsNaN(r.f) {
				return &value{b: op == opNe}, nil
			}
			c = cmp(l.f < r.f, l.f > r.f)
		default:
			c = cmp(l.i < r.i, l.i > r.i)
		}
		var b bool
		switch op {
		case opEq:
			b = c == 0
		case opNe:
			b = c != 0
		case opLt:
			b = c < 0
		case opGt:
			b = c > 0
		case opLe:
			b = c <= 0
		case opGe:
			b = c >= 0
		}
		return &value{b: b}, nil
	}
	if k == kBool {
		switch op {
		case opAnd:
			return &value{b: l.b && r.b}, nil
		case opOr:
			return &value{b: l.b || r.b}, nil
		}
	}
	if lt.isFloat() {
		var f float64
		switch op {
		case opAdd:
			f = l.f + r.f
		case opSub:
			f = l.f - r.f
		case opMul:
			f = l.f * r.f
		case opDiv:
			if r.f == 0 {
				return nil, fmt.Errorf("division by zero in a const-expression")
			}
			f = l.f / r.f
		case opRem:
			if r.f == 0 {
				return nil, fmt.Errorf("remainder by zero in a const-expression")
			}
			f = math.Mod(l.f, r.f)
		default:
			return nil, fmt.Errorf("operator '%s' cannot be applied to floats", op)
		}
		rf, ok := roundFloat(f, k)
		if !ok {
			return nil, fmt.Errorf("'%s' overflows '%s' in a const-expression", op, lt)
		}
		return &value{f: rf}, nil
	}
	a, b := l.i, r.i
	var x int64
	overflow := false
	switch op {
	case opAdd:
		x = a + b
		overflow = (a > 0 && b > 0 && x < 0) || (a < 0 && b < 0 && x >= 0)
	case opSub:
		x = a - b
		overflow = (a >= 0 && b < 0 && x < 0) || (a < 0 && b > 0 && x >= 0)
	case opMul:
		hi, lo := bits.Mul64(uint64(abs64(a)), uint64(abs64(b)))
		overflow = hi != 0 || lo > math.MaxInt64 || a == math.MinInt64 || b == math.MinInt64
		x = a * b
	case opDiv, opRem:
		if b == 0 {
			return nil, fmt.Errorf("integer division by zero in a const-expression")
		}
		if a == math.MinInt64 && b == -1 || k == kI32 && a == math.MinInt32 && b == -1 {
			return nil, fmt.Errorf("integer division overflows in a const-expression")
		}
		if op == opDiv {
			x = a / b
		} else {
			x = a % b
		}
	case opAnd:
		x = a & b
	case opOr:
		x = a | b
	case opXor:
		x = a ^ b
	case opShl, opShr:
		if b < 0 || b > math.MaxUint32 {
			return nil, fmt.Errorf("the shift amount %d cannot be represented as 'u32'", b)
		}
		if k == kAbstractInt {
			return shiftAbstract(op, a, b)
		}
		if b >= 32 {
			return nil, fmt.Errorf("shift by %d is not less than the bit width 32", b)
		}
		if op == opShr {
			if k == kU32 {
				x = int64(uint32(a) >> b)
			} else {
				x = a >> b
			}
			return &value{i: x}, nil
		}
		switch k {
		case kU32:
			x = int64(uint32(a) << b)
			if uint64(a)<<b>>32 != 0 {
				overflow = true
			}
		default:
			x = int64(int32(a) << b)
			if int64(int32(a)<<b)>>b != a {
				overflow = true
			}
		}
	default:
		return nil, fmt.Errorf("operator '%s' cannot be applied to integers", op)
	}
	switch {
	case (op == opAdd || op == opSub || op == opMul) && k == kI32:
		return &value{i: int64(int32(x))}, nil // concrete integers wrap, as at run time
	case (op == opAdd || op == opSub || op == opMul) && k == kU32:
		return &value{i: int64(uint32(x))}, nil
	case overflow || !intFits(x, k):
		return nil, fmt.Errorf("'%s' overflows '%s' in a const-expression", op, lt)
	}
	return &value{i: x}, nil
}

// shiftAbstract shifts an AbstractInt by b bits (0 <= b < 2^32). The
// amount is not taken modulo a bit width, so a right shift by 64 or more
// leaves only the sign; a left shift must not lose bits that differ from the
// result's sign bit (the b+1 most significant bits of a are equal).
func shiftAbstract(op operator, a, b int64) (*value, error) {
	if op == opShr {
		return &value{i: a >> min(b, 63)}, nil
	}
	if a == 0 {
		return &value{}, nil
	}
	if b >= 64 || a<<b>>b != a {
		return nil, fmt.Errorf("'%s' overflows 'abstract-int' in a const-expression", op)
	}
	return &value{i: a << b}, nil
}

func cmp(lt, gt bool) int {
	switch {
	case lt:
		return -1
	case gt:
		return 1
	}
	return 0
}

func abs64(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

// specConstInt reports whether e is an integer override-expression the
// emitter can express with OpSpecConstantOp (identifiers, literals and
// integer arithmetic), as array counts and workgroup sizes need.
func (c *checker) specConstInt(e expr) bool {
	x := c.out.info[e]
	if x == nil || !x.typ.isInt() || x.typ.Kind == kVec {
		return false
	}
	if x.val != nil {
		return true
	}
	switch e := e.(type) {
	case *ident:
		return x.sym != nil && x.sym.kind == symOverride && !x.sym.computed
	case *parenExpr:
		return c.specConstInt(e.X)
	case *binaryExpr:
		switch e.Op {
		case opAdd, opSub, opMul, opDiv, opRem, opShl, opShr, opAnd, opOr, opXor:
			return c.specConstInt(e.X) && c.specConstInt(e.Y)
		}
	}
	return false
}

// evalMatMul evaluates M*v, v*M and M*M on constants (columns of rows).
func evalMatMul(op operator, l, r *value, lt, rt, res *wgslType) (*value, error) {
	s := res.scalarOf()
	dot := func(a, b []float64) (*value, error) {
		sum := 0.0
		for i := range a {
			sum += a[i] * b[i]
		}
		f, ok := roundFloat(sum, s.Kind)
		if !ok {
			return nil, fmt.Errorf("matrix product overflows '%s' in a const-expression", s)
		}
		return &value{f: f}, nil
	}
	col := func(v *value) []float64 {
		out := make([]float64, len(v.elems))
		for i, e := range v.elems {
			out[i] = e.f
		}
		return out
	}
	row := func(m *value, r int) []float64 {
		out := make([]float64, len(m.elems))
		for i, c := range m.elems {
			out[i] = c.elems[r].f
		}
		return out
	}
	mulMV := func(m, v *value, rows int) (*value, error) {
		out := &value{}
		for r := range rows {
			d, err := dot(row(m, r), col(v))
			if err != nil {
				return nil, err
			}
			out.elems = append(out.elems, d)
		}
		return out, nil
	}
	switch {
	case lt.Kind == kMat && rt.Kind == kVec:
		return mulMV(l, r, lt.Elem.N)
	case lt.Kind == kVec && rt.Kind == kMat:
		out := &value{}
		for _, c := range r.elems {
			d, err := dot(col(l), col(c))
			if err != nil {
				return nil, err
			}
			out.elems = append(out.elems, d)
		}
		return out, nil
	default: // M*M: each column of the result is l times a column of r
		out := &value{}
		for _, c := range r.elems {
			v, err := mulMV(l, c, lt.Elem.N)
			if err != nil {
				return nil, err
			}
			out.elems = append(out.elems, v)
		}
		return out, nil
	}
}
