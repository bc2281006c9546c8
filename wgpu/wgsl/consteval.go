package wgsl

import (
	"fmt"
	"math"
	"math/bits"
)

// evalUnary evaluates a unary operator on a constant of type t.
func evalUnary(op Operator, v *value, t *Type) (*value, error) {
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
	case OpNot:
		return &value{b: !v.b}, nil
	case OpCompl:
		switch t.Kind {
		case KU32:
			return &value{i: int64(^uint32(v.i))}, nil
		}
		return &value{i: ^v.i}, nil
	case OpNeg:
		if t.isFloat() {
			return &value{f: -v.f}, nil
		}
		if t.Kind == KI32 && v.i == math.MinInt32 {
			return v, nil // wraps, as at run time
		}
		if v.i == math.MinInt64 {
			return nil, fmt.Errorf("negation overflows '%s'", t)
		}
		return &value{i: -v.i}, nil
	}
	return nil, fmt.Errorf("bad unary operator %s", op)
}

// evalBinary evaluates a binary operator on constants; a scalar operand is
// broadcast against a vector one. rt is the result type.
func evalBinary(op Operator, l, r *value, lt, rt, res *Type) (*value, error) {
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
	case OpLogAnd:
		return &value{b: l.b && r.b}, nil
	case OpLogOr:
		return &value{b: l.b || r.b}, nil
	case OpEq, OpNe, OpLt, OpGt, OpLe, OpGe:
		var c int
		switch {
		case k == KBool:
			if l.b != r.b {
				c = 1
			}
		case lt.isFloat():
			if math.IsNaN(l.f) || math.IsNaN(r.f) {
				return &value{b: op == OpNe}, nil
			}
			c = cmp(l.f < r.f, l.f > r.f)
		default:
			c = cmp(l.i < r.i, l.i > r.i)
		}
		var b bool
		switch op {
		case OpEq:
			b = c == 0
		case OpNe:
			b = c != 0
		case OpLt:
			b = c < 0
		case OpGt:
			b = c > 0
		case OpLe:
			b = c <= 0
		case OpGe:
			b = c >= 0
		}
		return &value{b: b}, nil
	}
	if k == KBool {
		switch op {
		case OpAnd:
			return &value{b: l.b && r.b}, nil
		case OpOr:
			return &value{b: l.b || r.b}, nil
		}
	}
	if lt.isFloat() {
		var f float64
		switch op {
		case OpAdd:
			f = l.f + r.f
		case OpSub:
			f = l.f - r.f
		case OpMul:
			f = l.f * r.f
		case OpDiv:
			if r.f == 0 {
				return nil, fmt.Errorf("division by zero in a const-expression")
			}
			f = l.f / r.f
		case OpRem:
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
	case OpAdd:
		x = a + b
		overflow = (a > 0 && b > 0 && x < 0) || (a < 0 && b < 0 && x >= 0)
	case OpSub:
		x = a - b
		overflow = (a >= 0 && b < 0 && x < 0) || (a < 0 && b > 0 && x >= 0)
	case OpMul:
		hi, lo := bits.Mul64(uint64(abs64(a)), uint64(abs64(b)))
		overflow = hi != 0 || lo > math.MaxInt64 || a == math.MinInt64 || b == math.MinInt64
		x = a * b
	case OpDiv, OpRem:
		if b == 0 {
			return nil, fmt.Errorf("integer division by zero in a const-expression")
		}
		if a == math.MinInt64 && b == -1 || k == KI32 && a == math.MinInt32 && b == -1 {
			return nil, fmt.Errorf("integer division overflows in a const-expression")
		}
		if op == OpDiv {
			x = a / b
		} else {
			x = a % b
		}
	case OpAnd:
		x = a & b
	case OpOr:
		x = a | b
	case OpXor:
		x = a ^ b
	case OpShl, OpShr:
		width := int64(32)
		if k == KAbstractInt {
			width = 64
		}
		if b < 0 || b >= width {
			return nil, fmt.Errorf("shift by %d is not less than the bit width %d", b, width)
		}
		if op == OpShr {
			if k == KU32 {
				x = int64(uint32(a) >> b)
			} else {
				x = a >> b
			}
			return &value{i: x}, nil
		}
		switch k {
		case KU32:
			x = int64(uint32(a) << b)
			if uint64(a)<<b>>32 != 0 {
				overflow = true
			}
		case KI32:
			x = int64(int32(a) << b)
			if int64(int32(a)<<b)>>b != a {
				overflow = true
			}
		default:
			x = a << b
			if x>>b != a {
				overflow = true
			}
		}
	default:
		return nil, fmt.Errorf("operator '%s' cannot be applied to integers", op)
	}
	switch {
	case (op == OpAdd || op == OpSub || op == OpMul) && k == KI32:
		return &value{i: int64(int32(x))}, nil // concrete integers wrap, as at run time
	case (op == OpAdd || op == OpSub || op == OpMul) && k == KU32:
		return &value{i: int64(uint32(x))}, nil
	case overflow || !intFits(x, k):
		return nil, fmt.Errorf("'%s' overflows '%s' in a const-expression", op, lt)
	}
	return &value{i: x}, nil
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
func (c *checker) specConstInt(e Expr) bool {
	x := c.out.info[e]
	if x == nil || !x.typ.isInt() || x.typ.Kind == KVec {
		return false
	}
	if x.val != nil {
		return true
	}
	switch e := e.(type) {
	case *Ident:
		return x.sym != nil && x.sym.kind == symOverride && !x.sym.computed
	case *Paren:
		return c.specConstInt(e.X)
	case *Binary:
		switch e.Op {
		case OpAdd, OpSub, OpMul, OpDiv, OpRem, OpShl, OpShr, OpAnd, OpOr, OpXor:
			return c.specConstInt(e.X) && c.specConstInt(e.Y)
		}
	}
	return false
}

// evalMatMul evaluates M*v, v*M and M*M on constants (columns of rows).
func evalMatMul(op Operator, l, r *value, lt, rt, res *Type) (*value, error) {
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
	case lt.Kind == KMat && rt.Kind == KVec:
		return mulMV(l, r, lt.Elem.N)
	case lt.Kind == KVec && rt.Kind == KMat:
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
