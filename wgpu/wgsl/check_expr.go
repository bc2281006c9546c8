package wgsl

import (
	"math"
	"strconv"
	"strings"
)

func (c *checker) record(e Expr, x *exprInfo) *exprInfo {
	if x != nil {
		c.out.info[e] = x
	}
	return x
}

// rvalue checks e where a value is needed; references are loaded by the emitter.
func (c *checker) rvalue(e Expr) *exprInfo {
	x := c.expr(e)
	if x == nil {
		return nil
	}
	if x.ref && !x.typ.constructible() {
		if x.typ.Kind == KAtomic || x.typ.hasAtomic() {
			c.errorSpan(e, "atomics can only be accessed with atomic builtins such as atomicLoad(&x)")
		} else {
			c.errorSpan(e, "a value of type '%s' cannot be loaded", x.typ)
		}
		return nil
	}
	if _, isType := e.(*Ident); isType && x.sym != nil && x.sym.kind == symType {
		c.errorSpan(e, "type '%s' used as a value", x.sym.name)
		return nil
	}
	return x
}

func (c *checker) expr(e Expr) *exprInfo {
	n := len(c.errs.errs)
	x := c.expr1(e)
	if x == nil && len(c.errs.errs) == n {
		// Every failure must be reported: the emitter must never see an unchecked expression.
		c.errorSpan(e, "invalid expression")
	}
	return x
}

func (c *checker) expr1(e Expr) *exprInfo {
	switch e := e.(type) {
	case *Lit:
		return c.record(e, c.lit(e))
	case *Ident:
		return c.record(e, c.ident(e))
	case *Paren:
		x := c.expr(e.X)
		return c.record(e, x)
	case *Unary:
		return c.record(e, c.unary(e))
	case *Binary:
		return c.record(e, c.binary(e))
	case *Call:
		return c.record(e, c.call(e, false))
	case *Index:
		return c.record(e, c.index(e))
	case *Member:
		return c.record(e, c.member(e))
	}
	return nil
}

func (c *checker) lit(e *Lit) *exprInfo {
	switch e.Kind {
	case tKeyword:
		return &exprInfo{typ: c.ts.scalar(KBool), val: &value{b: e.Text == "true"}}
	case tInt:
		text, k := e.Text, KAbstractInt
		switch text[len(text)-1] {
		case 'i':
			text, k = text[:len(text)-1], KI32
		case 'u':
			text, k = text[:len(text)-1], KU32
		}
		if len(text) > 1 && text[0] == '0' && text[1] != 'x' && text[1] != 'X' {
			c.errorf(e.Pos, "integer literals may not have leading zeros")
			return nil
		}
		v, err := strconv.ParseInt(text, 0, 64)
		if err != nil {
			if strings.Contains(err.Error(), "range") {
				c.errorf(e.Pos, "integer literal %s is too large", e.Text)
			} else {
				c.errorf(e.Pos, "malformed integer literal '%s'", e.Text)
			}
			return nil
		}
		if !intFits(v, k) {
			c.errorf(e.Pos, "integer literal %s does not fit in %s", e.Text, c.ts.scalar(k))
			return nil
		}
		return &exprInfo{typ: c.ts.scalar(k), val: &value{i: v}}
	case tFloat:
		text, k := e.Text, KAbstractFloat
		hex := len(text) > 1 && (text[1] == 'x' || text[1] == 'X')
		switch text[len(text)-1] {
		case 'f':
			if !hex || strings.ContainsAny(text, "pP") {
				text, k = text[:len(text)-1], KF32
			}
		case 'h':
			text, k = text[:len(text)-1], KF16
			if !c.out.enables["f16"] {
				c.errorf(e.Pos, "f16 literals require 'enable f16;'")
				return nil
			}
		}
		if hex && !strings.ContainsAny(text, "pP") {
			text += "p0"
		}
		if !hex && strings.HasSuffix(text, ".") {
			text += "0"
		}
		v, err := strconv.ParseFloat(text, 64)
		if err != nil && !strings.Contains(err.Error(), "range") {
			c.errorf(e.Pos, "malformed float literal '%s'", e.Text)
			return nil
		}
		r, ok := roundFloat(v, k)
		if err != nil || !ok {
			c.errorf(e.Pos, "float literal %s is out of range for %s", e.Text, c.ts.scalar(k))
			return nil
		}
		return &exprInfo{typ: c.ts.scalar(k), val: &value{f: r}}
	}
	return nil
}

func (c *checker) ident(e *Ident) *exprInfo {
	s := c.lookup(e.Name)
	if s == nil {
		if c.builtinTypes[e.Name] != nil || templated[e.Name] {
			c.errorf(e.Pos, "type '%s' used as a value", e.Name)
		} else {
			c.errorf(e.Pos, "unknown identifier '%s'", e.Name)
		}
		return nil
	}
	if len(e.Args) > 0 {
		c.errorf(e.Pos, "'%s' takes no template arguments", e.Name)
		return nil
	}
	s.used = true
	switch s.kind {
	case symConst:
		if s.typ == nil {
			return nil
		}
		if s.missing != "" { // specializing: an override without a value
			switch {
			case c.inOverrideInit:
				c.missingSeen = s.missing
			case s.missing == s.name:
				c.errorf(e.Pos, "override '%s' has no initializer and the pipeline constants do not set it", s.name)
				return nil
			default:
				c.errorf(e.Pos, "override '%s' needs override '%s', which has no initializer and which the pipeline constants do not set", s.name, s.missing)
				return nil
			}
		}
		return &exprInfo{typ: s.typ, val: s.val, sym: s}
	case symOverride:
		if s.typ == nil {
			return nil
		}
		return &exprInfo{typ: s.typ, override: true, sym: s}
	case symGlobalVar, symLocalVar:
		if s.typ == nil || s.space == SpaceNone {
			return nil
		}
		if s.kind == symGlobalVar {
			if c.fn == nil {
				c.errorf(e.Pos, "module-scope variable '%s' cannot be used here", e.Name)
				return nil
			}
			c.fn.usesVars[s] = true
		}
		return &exprInfo{typ: s.typ, ref: true, space: s.space, access: s.access, sym: s}
	case symLet, symParam:
		if s.typ == nil {
			return nil
		}
		return &exprInfo{typ: s.typ, sym: s}
	case symFn:
		c.errorf(e.Pos, "function '%s' used as a value", e.Name)
		return nil
	case symType:
		c.errorf(e.Pos, "type '%s' used as a value", e.Name)
		return nil
	}
	return nil
}

// materialize converts an abstract expression to its default concrete type.
func (c *checker) materialize(e Expr) {
	x := c.out.info[e]
	if x == nil || !x.typ.isAbstract() {
		return
	}
	c.convertTo(e, c.concreteOf(x.typ))
}

func (c *checker) concreteOf(t *Type) *Type {
	switch t.Kind {
	case KAbstractInt:
		return c.ts.scalar(KI32)
	case KAbstractFloat:
		return c.ts.scalar(KF32)
	case KVec:
		return c.ts.vec(t.N, c.concreteOf(t.Elem))
	case KMat:
		return c.ts.get(Type{Kind: KMat, N: t.N, Elem: c.concreteOf(t.Elem)})
	case KArray:
		return c.ts.array(c.concreteOf(t.Elem), t.N)
	case KStruct:
		if t.Struct.concrete != nil {
			return t.Struct.concrete
		}
	}
	return t
}

// convertible reports whether an automatic conversion from abstract type a to t exists.
func convertible(a, t *Type) bool {
	if a == t {
		return true
	}
	switch a.Kind {
	case KAbstractInt:
		return t.isNumeric() && t.Kind != KVec
	case KAbstractFloat:
		return t.isFloat()
	case KVec, KMat:
		return t.Kind == a.Kind && t.N == a.N && convertible(a.Elem, t.Elem)
	case KArray:
		return t.Kind == KArray && t.N == a.N && a.N > 0 && convertible(a.Elem, t.Elem)
	case KStruct:
		return a.Struct.concrete == t
	}
	return false
}

// convertTo applies the automatic conversion of e to t, or reports a type mismatch.
func (c *checker) convertTo(e Expr, t *Type) bool {
	x := c.out.info[e]
	if x == nil || t == nil {
		return false
	}
	if x.typ == t {
		return true
	}
	if x.typ.isAbstract() && x.val != nil && convertible(x.typ, t) {
		v, err := convertValue(x.val, x.typ, t, false)
		if err != nil {
			c.errorSpan(e, "%v", err)
			return false
		}
		x.typ, x.val = t, v
		return true
	}
	c.errs.addSpan(c.out.file.Span(e), "cannot use a value of type '%s' as '%s'", x.typ, t)
	return false
}

// withScalar returns t's shape (scalar or vector) with scalar s.
func (c *checker) withScalar(t, s *Type) *Type {
	switch t.Kind {
	case KVec:
		return c.ts.vec(t.N, s)
	case KMat:
		return c.ts.mat(t.N, t.Elem.N, s)
	}
	return s
}

// unifyScalars converts abstract operands so both have the same scalar type; it
// returns that type or nil (after an error) when impossible.
func (c *checker) unifyScalars(pos int, es []Expr, xs []*exprInfo) *Type {
	var concrete *Type
	anyFloat := false
	for _, x := range xs {
		s := x.typ.scalarOf()
		if !s.isScalar() {
			c.errorf(pos, "expected scalars or vectors, got %s", typeListOf(xs))
			return nil
		}
		if s.isAbstract() {
			anyFloat = anyFloat || s.Kind == KAbstractFloat
			continue
		}
		if concrete != nil && concrete != s {
			c.errorf(pos, "mismatched types: %s", typeListOf(xs))
			return nil
		}
		concrete = s
	}
	target := concrete
	if target == nil {
		target = c.ts.scalar(KAbstractInt)
		if anyFloat {
			target = c.ts.scalar(KAbstractFloat)
		}
	}
	for i, x := range xs {
		if x.typ.scalarOf() != target {
			if es[i] == nil || !convertible(x.typ.scalarOf(), target) {
				c.errorf(pos, "mismatched types: %s", typeListOf(xs))
				return nil
			}
			if !c.convertTo(es[i], c.withScalar(x.typ, target)) {
				return nil
			}
		}
	}
	return target
}

func typeListOf(xs []*exprInfo) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = "'" + x.typ.String() + "'"
	}
	return strings.Join(s, " and ")
}

// classOf combines the expression classes of operands: const, override or runtime.
func classOf(xs ...*exprInfo) (isConst, isOverride bool) {
	isConst, isOverride = true, true
	for _, x := range xs {
		if x.val == nil {
			isConst = false
		}
		if x.val == nil && !x.override {
			isOverride = false
		}
	}
	return isConst, isOverride && !isConst
}

// runtimeOperands materializes abstract operands of a runtime expression.
func (c *checker) runtimeOperands(es []Expr, xs []*exprInfo) {
	if isConst, _ := classOf(xs...); isConst {
		return
	}
	for _, e := range es {
		if e != nil {
			c.materialize(e)
		}
	}
}

func (c *checker) unary(e *Unary) *exprInfo {
	switch e.Op {
	case OpAddrOf:
		x := c.expr(e.X)
		if x == nil {
			return nil
		}
		if !x.ref {
			c.errorf(e.Pos, "cannot take the address of a value that is not in memory")
			return nil
		}
		if m, ok := unparen(e.X).(*Member); ok && c.out.info[m].swizzle != nil {
			c.errorf(e.Pos, "cannot take the address of a vector component")
			return nil
		}
		if ix, ok := unparen(e.X).(*Index); ok && c.out.info[ix.X] != nil && c.out.info[ix.X].typ.Kind == KVec {
			c.errorf(e.Pos, "cannot take the address of a vector component")
			return nil
		}
		return &exprInfo{typ: c.ts.ptr(x.space, x.typ, x.access)}
	case OpDeref:
		x := c.expr(e.X)
		if x == nil {
			return nil
		}
		if x.ref || x.typ.Kind != KPtr {
			c.errorf(e.Pos, "cannot dereference a value of type '%s'", x.typ)
			return nil
		}
		return &exprInfo{typ: x.typ.Elem, ref: true, space: x.typ.Space, access: x.typ.Access}
	}
	x := c.rvalue(e.X)
	if x == nil {
		return nil
	}
	s := x.typ.scalarOf()
	ok := false
	switch e.Op {
	case OpNeg:
		ok = (s.Kind == KI32 || s.isFloat() || s.Kind == KAbstractInt) && x.typ.Kind != KMat
	case OpNot:
		ok = s.Kind == KBool
	case OpCompl:
		ok = s.isInt()
	}
	if !ok {
		c.errorf(e.Pos, "operator '%s' cannot be applied to '%s'", e.Op, x.typ)
		return nil
	}
	out := &exprInfo{typ: x.typ, override: x.override}
	if x.val != nil {
		v, err := evalUnary(e.Op, x.val, x.typ)
		if err != nil {
			c.errorf(e.Pos, "%v", err)
			return nil
		}
		out.val = v
	}
	return out
}

func unparen(e Expr) Expr {
	for {
		p, ok := e.(*Paren)
		if !ok {
			return e
		}
		e = p.X
	}
}

func (c *checker) binary(e *Binary) *exprInfo {
	l := c.rvalue(e.X)
	r := c.rvalue(e.Y)
	if l == nil || r == nil {
		return nil
	}
	t := c.binaryType(e.Pos, e.Op, l, r, e.Y, e.X)
	if t == nil {
		return nil
	}
	if !c.constRHS(e.Op, t, r, e.Y) {
		return nil
	}
	out := &exprInfo{typ: t}
	isConst, isOverride := classOf(l, r)
	out.override = isOverride
	if isConst {
		evalFn := evalBinary
		if isMatMul(e.Op, l.typ, r.typ) {
			evalFn = evalMatMul
		}
		v, err := evalFn(e.Op, l.val, r.val, l.typ, r.typ, t)
		if err != nil {
			c.errorf(e.Pos, "%v", err)
			return nil
		}
		out.val = v
	} else {
		c.runtimeOperands([]Expr{e.X, e.Y}, []*exprInfo{l, r})
		out.typ = c.concreteOf(t)
		if out.typ != t {
			// Re-derive after materializing operands (e.g. 1 + 2.0 in a runtime context cannot happen, but keep types exact).
			out.typ = c.binaryResult(e.Op, c.out.info[e.X].typ, c.out.info[e.Y].typ)
		}
	}
	return out
}

// binaryType checks a binary operator and returns the result type, after converting
// abstract operands (ex may be nil when the left side is an assignment target).
func (c *checker) binaryType(pos int, op Operator, l, r *exprInfo, ey, ex Expr) *Type {
	if l.typ.Kind == KMat || r.typ.Kind == KMat {
		return c.matBinary(pos, op, l, r, ey, ex)
	}
	ls, rs := l.typ.scalarOf(), r.typ.scalarOf()
	if !ls.isScalar() || !rs.isScalar() {
		c.errorf(pos, "operator '%s' cannot be applied to '%s' and '%s'", op, l.typ, r.typ)
		return nil
	}
	if l.typ.Kind == KVec && r.typ.Kind == KVec && l.typ.N != r.typ.N {
		c.errorf(pos, "operator '%s' needs vectors of the same size, got '%s' and '%s'", op, l.typ, r.typ)
		return nil
	}
	switch op {
	case OpShl, OpShr:
		if !ls.isInt() || !rs.isInt() {
			c.errorf(pos, "shift needs integer operands, got '%s' and '%s'", l.typ, r.typ)
			return nil
		}
		if (l.typ.Kind == KVec) != (r.typ.Kind == KVec) {
			c.errorf(pos, "shift operands must both be scalars or both vectors")
			return nil
		}
		if rs.Kind == KAbstractInt {
			if ls.isAbstract() && r.val != nil && l.val != nil {
				return l.typ
			}
			if !c.convertTo(ey, c.withScalar(r.typ, c.ts.scalar(KU32))) {
				return nil
			}
		} else if rs.Kind != KU32 {
			c.errorf(pos, "the shift amount must be u32, not '%s'", r.typ)
			return nil
		}
		if ls.isAbstract() && ex != nil && (l.val == nil || r.val == nil) {
			c.materialize(ex)
			return c.out.info[ex].typ
		}
		return l.typ
	}
	s := c.unifyScalars(pos, []Expr{ex, ey}, []*exprInfo{l, r})
	if s == nil {
		return nil
	}
	lt, rt := c.withScalar(l.typ, s), c.withScalar(r.typ, s)
	switch op {
	case OpAdd, OpSub, OpMul, OpDiv, OpRem:
		if !s.isNumeric() {
			c.errorf(pos, "operator '%s' cannot be applied to '%s' and '%s'", op, lt, rt)
			return nil
		}
		if lt.Kind == KVec {
			return lt
		}
		return rt
	case OpEq, OpNe, OpLt, OpGt, OpLe, OpGe:
		if lt != rt {
			c.errorf(pos, "cannot compare '%s' and '%s'", lt, rt)
			return nil
		}
		if s.Kind == KBool && op != OpEq && op != OpNe {
			c.errorf(pos, "operator '%s' cannot be applied to bool", op)
			return nil
		}
		return c.withScalar(lt, c.ts.scalar(KBool))
	case OpLogAnd, OpLogOr:
		if lt != rt || lt.Kind != KBool {
			c.errorf(pos, "operator '%s' needs bool operands, got '%s' and '%s'", op, lt, rt)
			return nil
		}
		return lt
	case OpAnd, OpOr, OpXor:
		if lt != rt || !(s.isInt() || s.Kind == KBool && op != OpXor) {
			c.errorf(pos, "operator '%s' cannot be applied to '%s' and '%s'", op, lt, rt)
			return nil
		}
		return lt
	}
	c.errorf(pos, "unknown operator '%s'", op)
	return nil
}

// binaryResult recomputes the result type from concrete operand types.
func (c *checker) binaryResult(op Operator, lt, rt *Type) *Type {
	switch op {
	case OpEq, OpNe, OpLt, OpGt, OpLe, OpGe:
		return c.withScalar(lt, c.ts.scalar(KBool))
	case OpShl, OpShr:
		return lt
	}
	if lt.Kind == KVec {
		return lt
	}
	return rt
}

func (c *checker) index(e *Index) *exprInfo {
	x := c.expr(e.X)
	i := c.rvalue(e.Index)
	if x == nil || i == nil {
		return nil
	}
	out := &exprInfo{ref: x.ref, space: x.space, access: x.access}
	t := x.typ
	if !x.ref && t.Kind == KPtr {
		t = t.Elem
		out.ref, out.space, out.access, out.autoDeref = true, x.typ.Space, x.typ.Access, true
	}
	if t.Kind != KVec && t.Kind != KArray && t.Kind != KMat {
		c.errorf(e.Pos, "cannot index a value of type '%s'", t)
		return nil
	}
	if !i.typ.isInt() || i.typ.Kind == KVec {
		c.errorSpan(e.Index, "index must be i32 or u32, not '%s'", i.typ)
		return nil
	}
	if i.typ.isAbstract() && !c.convertTo(e.Index, c.ts.scalar(KI32)) {
		return nil
	}
	if i.val == nil && x.typ.isAbstract() {
		// A run-time index into an abstract constant: concretize the constant first.
		c.materialize(e.X)
		t = c.out.info[e.X].typ
	}
	if i.val != nil {
		idx := i.val.i
		if i.typ.Kind == KI32 && idx < 0 || t.N > 0 && t.CountOverride == nil && idx >= int64(t.N) {
			c.errorSpan(e.Index, "index %d is out of bounds for '%s'", int32(idx), t)
			return nil
		}
	}
	out.typ = t.Elem
	if x.val != nil && i.val != nil {
		out.val = x.val.elems[i.val.i]
	}
	if !x.ref && x.val == nil && t.Kind == KArray && i.val == nil && x.override {
		c.errorf(e.Pos, "cannot index an override-expression")
		return nil
	}
	return out
}

func (c *checker) member(e *Member) *exprInfo {
	x := c.expr(e.X)
	if x == nil {
		return nil
	}
	out := &exprInfo{ref: x.ref, space: x.space, access: x.access, override: x.override}
	t := x.typ
	if !x.ref && t.Kind == KPtr {
		t = t.Elem
		out.ref, out.space, out.access, out.autoDeref = true, x.typ.Space, x.typ.Access, true
	}
	switch t.Kind {
	case KStruct:
		for i, m := range t.Struct.Members {
			if m.Name == e.Name {
				out.typ, out.field = m.Type, i
				if x.val != nil {
					out.val = x.val.elems[i]
				}
				return out
			}
		}
		c.errorf(e.Pos, "struct '%s' has no member '%s'", t, e.Name)
		return nil
	case KVec:
		sw := swizzle(e.Name, t.N)
		if sw == nil {
			c.errorf(e.Pos, "invalid vector swizzle '%s' on '%s'", e.Name, t)
			return nil
		}
		out.swizzle = sw
		if len(sw) == 1 {
			out.typ = t.Elem
		} else {
			out.typ = c.ts.vec(len(sw), t.Elem)
			out.swizzleOf = out.ref // assignable, but not a memory view
			out.ref = false         // a multi-component swizzle is a value
		}
		if x.val != nil {
			if len(sw) == 1 {
				out.val = x.val.elems[sw[0]]
			} else {
				out.val = &value{}
				for _, k := range sw {
					out.val.elems = append(out.val.elems, x.val.elems[k])
				}
			}
		}
		return out
	}
	c.errorf(e.Pos, "type '%s' has no members", t)
	return nil
}

func swizzle(name string, n int) []int {
	if len(name) < 1 || len(name) > 4 {
		return nil
	}
	var out []int
	set := ""
	for _, ch := range name {
		k := strings.IndexRune("xyzw", ch)
		s := "xyzw"
		if k < 0 {
			k = strings.IndexRune("rgba", ch)
			s = "rgba"
		}
		if k < 0 || k >= n || set != "" && set != s {
			return nil
		}
		set = s
		out = append(out, k)
	}
	return out
}

// hasZero reports a zero scalar or a vector with a zero component.
func hasZero(v *value) bool {
	if v.elems == nil {
		return v.i == 0
	}
	for _, e := range v.elems {
		if hasZero(e) {
			return true
		}
	}
	return false
}

// maxComponent is the largest integer component of a constant.
func maxComponent(v *value) int64 {
	if v.elems == nil {
		return v.i
	}
	m := int64(math.MinInt64)
	for _, e := range v.elems {
		m = max(m, maxComponent(e))
	}
	return m
}

// constRHS rejects constant right operands that are errors even with a
// run-time left side: shifts by the bit width or more, integer division by zero.
func (c *checker) constRHS(op Operator, t *Type, r *exprInfo, y Expr) bool {
	if r.val == nil {
		return true
	}
	if (op == OpShl || op == OpShr) && !t.scalarOf().isAbstract() && maxComponent(r.val) >= 32 {
		c.errorSpan(y, "the shift amount %d is not less than the bit width 32", maxComponent(r.val))
		return false
	}
	if (op == OpDiv || op == OpRem) && t.scalarOf().isInt() && hasZero(r.val) {
		c.errorSpan(y, "integer division by zero")
		return false
	}
	return true
}

// matBinary types the matrix operators: M+M, M-M, M*s, s*M, M*v, v*M, M*M.
func (c *checker) matBinary(pos int, op Operator, l, r *exprInfo, ey, ex Expr) *Type {
	bad := func() *Type {
		c.errorf(pos, "operator '%s' cannot be applied to '%s' and '%s'", op, l.typ, r.typ)
		return nil
	}
	if c.unifyScalars(pos, []Expr{ex, ey}, []*exprInfo{l, r}) == nil {
		return nil
	}
	lt, rt := l.typ, r.typ
	if !lt.scalarOf().isFloat() {
		return bad()
	}
	switch op {
	case OpAdd, OpSub:
		if lt == rt {
			return lt
		}
	case OpMul:
		switch {
		case lt.Kind == KMat && rt.isScalar():
			return lt
		case lt.isScalar() && rt.Kind == KMat:
			return rt
		case lt.Kind == KMat && rt.Kind == KVec && rt.N == lt.N:
			return lt.Elem
		case lt.Kind == KVec && rt.Kind == KMat && lt.N == rt.Elem.N:
			return c.ts.vec(rt.N, lt.Elem)
		case lt.Kind == KMat && rt.Kind == KMat && lt.N == rt.Elem.N:
			return c.ts.mat(rt.N, lt.Elem.N, lt.Elem.Elem)
		}
	}
	return bad()
}

// isMatMul reports the products that are not componentwise.
func isMatMul(op Operator, lt, rt *Type) bool {
	return op == OpMul && (lt.Kind == KMat && !rt.isScalar() || rt.Kind == KMat && !lt.isScalar())
}
