package wgsl

import "strings"

func (c *checker) call(e *callExpr, stmt bool) *exprInfo {
	name := e.Fn.Name
	if s := c.lookup(name); s != nil {
		switch s.kind {
		case symFn:
			return c.userCall(e, s.fn, stmt)
		case symType:
			if len(e.Fn.Args) > 0 {
				c.errorf(e.Pos, "'%s' takes no template arguments", name)
				return nil
			}
			return c.construct(e, s.typ, stmt)
		}
		c.errorf(e.Pos, "'%s' is not a function", name)
		return nil
	}
	if _, ok := matrixBuiltins[name]; ok {
		return c.matrixCall(e, stmt)
	}
	if _, _, isMat := matName(name); c.builtinTypes[name] != nil || templated[name] && name != "bitcast" || isMat {
		return c.construct(e, nil, stmt)
	}
	if name == "bitcast" {
		return c.bitcast(e, stmt)
	}
	if isBuiltinFn(name) {
		if len(e.Fn.Args) > 0 {
			c.errorf(e.Pos, "'%s' takes no template arguments", name)
			return nil
		}
		return c.builtinCall(e, stmt)
	}
	if strings.HasPrefix(name, "texture") {
		c.errorf(e.Pos, "textures are not supported ('%s'): this compiler handles buffers only", name)
		return nil
	}
	c.errorf(e.Pos, "unknown function '%s'", name)
	return nil
}

func (c *checker) args(e *callExpr) ([]*exprInfo, bool) {
	xs := make([]*exprInfo, len(e.Args))
	ok := true
	for i, a := range e.Args {
		xs[i] = c.rvalue(a)
		if xs[i] == nil {
			ok = false
		}
	}
	return xs, ok
}

func (c *checker) userCall(e *callExpr, f *function, stmt bool) *exprInfo {
	if c.fn == nil {
		c.errorf(e.Pos, "functions cannot be called here (not a const-expression)")
		return nil
	}
	if f.compute {
		c.errorf(e.Pos, "entry point '%s' cannot be called", f.decl.Name)
		return nil
	}
	if len(e.Args) != len(f.params) {
		c.errorf(e.Pos, "'%s' takes %d arguments, got %d", f.decl.Name, len(f.params), len(e.Args))
		return nil
	}
	if _, ok := c.args(e); !ok {
		return nil
	}
	for i, p := range f.params {
		if p.typ == nil {
			return nil
		}
		if !c.convertTo(e.Args[i], p.typ) {
			return nil
		}
	}
	c.fn.calls = append(c.fn.calls, f)
	if f.result == nil && !stmt {
		c.errorf(e.Pos, "function '%s' does not return a value", f.decl.Name)
		return nil
	}
	t := f.result
	if t == nil {
		t = c.ts.scalar(kBool) // placeholder for statement calls; never read
	}
	return &exprInfo{typ: t, call: callFn, fn: f}
}

func (c *checker) mustUse(e *callExpr, stmt bool) bool {
	if stmt {
		c.errorf(e.Pos, "the result of '%s' must be used", e.Fn.Name)
		return false
	}
	return true
}

// construct checks a value constructor or conversion; t is nil for predeclared
// type names whose template arguments may be inferred.
func (c *checker) construct(e *callExpr, t *wgslType, stmt bool) *exprInfo {
	if !c.mustUse(e, stmt) {
		return nil
	}
	xs, ok := c.args(e)
	if !ok {
		return nil
	}
	name := e.Fn.Name
	if t == nil {
		switch {
		case (name == "vec2" || name == "vec3" || name == "vec4") && len(e.Fn.Args) == 0:
			if len(xs) == 0 {
				// vecN() is the zero vector of abstract-int.
				t := c.ts.vec(int(name[3]-'0'), c.ts.scalar(kAbstractInt))
				return &exprInfo{typ: t, call: callZero, val: zeroValue(t)}
			}
			var es []expr
			var ss []*exprInfo
			for i, x := range xs {
				if !x.typ.scalarOf().isScalar() {
					c.errorSpan(e.Args[i], "vector components must be scalars or vectors, not '%s'", x.typ)
					return nil
				}
				es = append(es, e.Args[i])
				ss = append(ss, x)
			}
			s := c.unifyScalars(e.Pos, es, ss)
			if s == nil {
				return nil
			}
			t = c.ts.vec(int(name[3]-'0'), s)
		case isMatName(name) && len(e.Fn.Args) == 0:
			cols, rows, _ := matName(name)
			if len(xs) == 0 {
				c.errorf(e.Pos, "cannot infer the component type of '%s()'; write %s<f32>()", name, name)
				return nil
			}
			sc := c.unifyScalars(e.Pos, e.Args, xs)
			if sc == nil {
				return nil
			}
			if sc.Kind == kAbstractInt {
				sc = c.ts.scalar(kAbstractFloat)
			}
			if !sc.isFloat() {
				c.errorf(e.Pos, "matrix components must be floats, not '%s'", sc)
				return nil
			}
			t = c.ts.mat(cols, rows, sc)
		case name == "array" && len(e.Fn.Args) == 0:
			if len(xs) == 0 {
				c.errorf(e.Pos, "cannot infer the element type of 'array()'")
				return nil
			}
			el := xs[0].typ
			for _, x := range xs[1:] {
				if x.typ != el && x.typ.isAbstract() == el.isAbstract() {
					c.errorf(e.Pos, "array elements have different types: '%s' and '%s'", el, x.typ)
					return nil
				}
				if !x.typ.isAbstract() {
					el = x.typ
				}
			}
			if el.isAbstract() {
				// AbstractFloat wins over AbstractInt.
				for _, x := range xs {
					if x.typ.scalarOf().Kind == kAbstractFloat {
						el = c.withScalar(x.typ, x.typ.scalarOf())
					}
				}
			}
			if !el.constructible() {
				c.errorf(e.Pos, "array elements must be constructible, not '%s'", el)
				return nil
			}
			t = c.ts.array(el, len(xs))
		default:
			t = c.typeOf(e.Fn)
			if t == nil {
				return nil
			}
		}
	}
	if !t.constructible() {
		c.errorf(e.Pos, "type '%s' cannot be constructed", t)
		return nil
	}
	if t.hasSubgroupMatrix() {
		if out := c.matrixConstruct(e, t, xs); out != nil || t.Kind == kSubgroupMatrix || len(xs) == 0 || c.fn == nil {
			return out
		}
	}
	_, isOverride := classOf(xs...)
	out := &exprInfo{typ: t, call: callConstruct, override: isOverride}
	if len(xs) == 0 {
		out.call = callZero
		out.val = zeroValue(t)
		return out
	}
	switch t.Kind {
	case kBool, kI32, kU32, kF32, kF16:
		if len(xs) != 1 || !xs[0].typ.isScalar() {
			c.errorf(e.Pos, "'%s' takes one scalar argument", t)
			return nil
		}
		if xs[0].typ != t {
			out.call = callConvert
		}
	case kVec:
		if len(xs) == 1 && xs[0].typ.Kind == kVec {
			if xs[0].typ.N != t.N {
				c.errorf(e.Pos, "cannot convert '%s' to '%s'", xs[0].typ, t)
				return nil
			}
			if xs[0].typ != t {
				out.call = callConvert
			}
			break
		}
		n := 0
		for i, x := range xs {
			if x.typ.Kind != kVec && !x.typ.isScalar() || !x.typ.scalarOf().isScalar() { // a matrix has a scalar element too
				c.errorSpan(e.Args[i], "vector components must be scalars or vectors, not '%s'", x.typ)
				return nil
			}
			if !c.convertTo(e.Args[i], c.withScalar(x.typ, t.Elem)) {
				return nil
			}
			if x.typ.Kind == kVec {
				n += x.typ.N
			} else {
				n++
			}
		}
		if n != t.N && !(len(xs) == 1 && n == 1) {
			c.errorf(e.Pos, "'%s' needs %d components, got %d", t, t.N, n)
			return nil
		}
	case kMat:
		if len(xs) == 1 && xs[0].typ.Kind == kMat {
			if xs[0].typ.N != t.N || xs[0].typ.Elem.N != t.Elem.N {
				c.errorf(e.Pos, "cannot convert '%s' to '%s'", xs[0].typ, t)
				return nil
			}
			if xs[0].typ != t {
				if xs[0].typ.isAbstract() {
					c.convertTo(e.Args[0], t)
				} else {
					out.call = callConvert
				}
			}
			break
		}
		want := t.Elem
		if len(xs) == t.N*t.Elem.N {
			want = t.Elem.Elem
		} else if len(xs) != t.N {
			c.errorf(e.Pos, "'%s' needs %d column vectors or %d scalars, got %d arguments", t, t.N, t.N*t.Elem.N, len(xs))
			return nil
		}
		for i := range xs {
			if !c.convertTo(e.Args[i], want) {
				return nil
			}
		}
	case kArray:
		if len(xs) != t.N {
			c.errorf(e.Pos, "'%s' needs %d elements, got %d", t, t.N, len(xs))
			return nil
		}
		for i := range xs {
			if !c.convertTo(e.Args[i], t.Elem) {
				return nil
			}
		}
	case kStruct:
		ms := t.Struct.Members
		if len(xs) != len(ms) {
			c.errorf(e.Pos, "'%s' has %d members, got %d arguments", t, len(ms), len(xs))
			return nil
		}
		for i := range xs {
			if !c.convertTo(e.Args[i], ms[i].Type) {
				return nil
			}
		}
	default:
		c.errorf(e.Pos, "type '%s' cannot be constructed", t)
		return nil
	}
	if isConst, _ := classOf(xs...); isConst {
		v, err := c.constructValue(e, t, out.call)
		if err != nil {
			c.errorf(e.Pos, "%v", err)
			return nil
		}
		out.val = v
	} else {
		c.runtimeOperands(e.Args, xs)
	}
	return out
}

// constructValue evaluates a constructor whose arguments are all constant.
func (c *checker) constructValue(e *callExpr, t *wgslType, kind callKind) (*value, error) {
	arg := func(i int) *exprInfo { return c.out.info[e.Args[i]] }
	if kind == callConvert {
		return convertValue(arg(0).val, arg(0).typ, t, true)
	}
	switch t.Kind {
	case kVec:
		v := &value{}
		for i := range e.Args {
			a := arg(i)
			if a.typ.Kind == kVec {
				v.elems = append(v.elems, a.val.elems...)
			} else {
				v.elems = append(v.elems, a.val)
			}
		}
		for len(v.elems) < t.N {
			v.elems = append(v.elems, v.elems[0])
		}
		return v, nil
	case kMat:
		if len(e.Args) == 1 {
			return arg(0).val, nil
		}
		v := &value{}
		if len(e.Args) == t.N {
			for i := range e.Args {
				v.elems = append(v.elems, arg(i).val)
			}
			return v, nil
		}
		rows := t.Elem.N
		for col := range t.N {
			cv := &value{}
			for r := range rows {
				cv.elems = append(cv.elems, arg(col*rows+r).val)
			}
			v.elems = append(v.elems, cv)
		}
		return v, nil
	case kArray, kStruct:
		v := &value{}
		for i := range e.Args {
			v.elems = append(v.elems, arg(i).val)
		}
		return v, nil
	}
	return arg(0).val, nil
}

func isMatName(n string) bool { _, _, ok := matName(n); return ok }

func (c *checker) bitcast(e *callExpr, stmt bool) *exprInfo {
	if !c.mustUse(e, stmt) {
		return nil
	}
	if len(e.Fn.Args) != 1 {
		c.errorf(e.Pos, "bitcast needs a target type: bitcast<u32>(x)")
		return nil
	}
	t := c.typeOf(e.Fn.Args[0])
	if t == nil {
		return nil
	}
	if len(e.Args) != 1 {
		c.errorf(e.Pos, "bitcast takes one argument")
		return nil
	}
	x := c.rvalue(e.Args[0])
	if x == nil {
		return nil
	}
	if x.typ.isAbstract() {
		c.materialize(e.Args[0])
	}
	okType := func(t *wgslType) bool {
		s := t.scalarOf()
		return s.isNumeric() && !s.isAbstract() && (t.Kind == kVec || t.isScalar())
	}
	if !okType(t) || !okType(x.typ) || t.Size() != x.typ.Size() || (t.Kind == kVec && t.N == 3) != (x.typ.Kind == kVec && x.typ.N == 3) {
		c.errorf(e.Pos, "cannot bitcast '%s' to '%s'", x.typ, t)
		return nil
	}
	out := &exprInfo{typ: t, call: callBitcast}
	if x.val != nil {
		v, err := bitcastValue(x.val, x.typ, t)
		if err != nil {
			c.errorf(e.Pos, "%v", err)
			return nil
		}
		out.val = v
	}
	return out
}
