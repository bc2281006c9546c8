package wgsl

func isBuiltinFn(name string) bool { return builtinTable[name] != nil }

// builtinCall checks a call of a builtin function (see builtinTable).
func (c *checker) builtinCall(e *callExpr, stmt bool) *exprInfo {
	return c.tableCall(e, builtinTable[e.Fn.Name], stmt)
}

// convertPair unifies the first two arguments (select's values).
func (c *checker) convertPair(e *callExpr, xs []*exprInfo) bool {
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

func (c *checker) cmpxchgResult(el *wgslType) *wgslType {
	name := "__atomic_compare_exchange_result_" + el.String()
	st := &structType{Name: name, Members: []field{
		{Name: "old_value", Type: el, Offset: 0, Align: 4, Size: 4},
		{Name: "exchanged", Type: c.ts.scalar(kBool), Offset: 4, Align: 4, Size: 4},
	}, Align: 4, Size: 8}
	return c.ts.get(wgslType{Kind: kStruct, Struct: st})
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
func lowAboveHigh(lo, hi *value, s *wgslType) bool {
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
func matFn(name string, v *value, m *wgslType) *value {
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
