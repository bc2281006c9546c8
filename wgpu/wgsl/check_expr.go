package wgsl

import (
	"math"
	"strconv"
	"strings"
)

func (c *checker) record(e expr, x *exprInfo) *exprInfo {
	if x != nil {
		c.out.info[e] = x
	}
	return x
}

// rvalue checks e where a value is needed; references are loaded by the emitter.
func (c *checker) rvalue(e expr) *exprInfo {
	x := c.expr(e)
	if x == nil {
		return nil
	}
	if x.ref && !x.typ.constructible() {
		if x.typ.Kind == kAtomic || x.typ.hasAtomic() {
			c.errorSpan(e, "atomics can only be accessed with atomic builtins such as atomicLoad(&x)")
		} else {
			c.errorSpan(e, "a value of type '%s' cannot be loaded", x.typ)
		}
		return nil
	}
	if _, isType := e.(*ident); isType && x.sym != nil && x.sym.kind == symType {
		c.errorSpan(e, "type '%s' used as a value", x.sym.name)
		return nil
	}
	return x
}

func (c *checker) expr(e expr) *exprInfo {
	n := len(c.errs.errs)
	x := c.expr1(e)
	if x == nil && len(c.errs.errs) == n {
		// Every failure must be reported: the emitter must never see an unchecked expression.
		c.errorSpan(e, "invalid expression")
	}
	return x
}

func (c *checker) expr1(e expr) *exprInfo {
	switch e := e.(type) {
	case *lit:
		return c.record(e, c.lit(e))
	case *ident:
		return c.record(e, c.ident(e))
	case *parenExpr:
		x := c.expr(e.X)
		return c.record(e, x)
	case *unaryExpr:
		return c.record(e, c.unary(e))
	case *binaryExpr:
		return c.record(e, c.binary(e))
	case *callExpr:
		return c.record(e, c.call(e, false))
	case *indexExpr:
		return c.record(e, c.index(e))
	case *memberExpr:
		return c.record(e, c.member(e))
	}
	return nil
}

func (c *checker) lit(e *lit) *exprInfo {
	switch e.Kind {
	case tKeyword:
		return &exprInfo{typ: c.ts.scalar(kBool), val: &value{b: e.Text == "true"}}
	case tInt:
		text, k := e.Text, kAbstractInt
		switch text[len(text)-1] {
		case 'i':
			text, k = text[:len(text)-1], kI32
		case 'u':
			text, k = text[:len(text)-1], kU32
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
		text, k := e.Text, kAbstractFloat
		hex := len(text) > 1 && (text[1] == 'x' || text[1] == 'X')
		switch text[len(text)-1] {
		case 'f':
			if !hex || strings.ContainsAny(text, "pP") {
				text, k = text[:len(text)-1], kF32
			}
		case 'h':
			text, k = text[:len(text)-1], kF16
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
		r, ok := convertFloat(v, k)
		if err != nil || !ok {
			c.errorf(e.Pos, "float literal %s is out of range for %s", e.Text, c.ts.scalar(k))
			return nil
		}
		return &exprInfo{typ: c.ts.scalar(k), val: &value{f: r}}
	}
	return nil
}

func (c *checker) ident(e *ident) *exprInfo {
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
		if s.typ == nil || s.space == spaceNone {
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
func (c *checker) materialize(e expr) {
	x := c.out.info[e]
	if x == nil || !x.typ.isAbstract() {
		return
	}
	c.convertTo(e, c.concreteOf(x.typ))
}

func (c *checker) concreteOf(t *wgslType) *wgslType {
	switch t.Kind {
	case kAbstractInt:
		return c.ts.scalar(kI32)
	case kAbstractFloat:
		return c.ts.scalar(kF32)
	case kVec:
		return c.ts.vec(t.N, c.concreteOf(t.Elem))
	case kMat:
		return c.ts.get(wgslType{Kind: kMat, N: t.N, Elem: c.concreteOf(t.Elem)})
	case kArray:
		return c.ts.array(c.concreteOf(t.Elem), t.N)
	case kStruct:
		if t.Struct.concrete != nil {
			return t.Struct.concrete
		}
	}
	return t
}

// convertible reports whether an automatic conversion from abstract type a to t exists.
func convertible(a, t *wgslType) bool {
	if a == t {
		return true
	}
	switch a.Kind {
	case kAbstractInt:
		return t.isNumeric() && t.Kind != kVec
	case kAbstractFloat:
		return t.isFloat()
	case kVec, kMat:
		return t.Kind == a.Kind && t.N == a.N && convertible(a.Elem, t.Elem)
	case kArray:
		return t.Kind == kArray && t.N == a.N && a.N > 0 && convertible(a.Elem, t.Elem)
	case kStruct:
		return a.Struct.concrete == t
	}
	return false
}

// convertTo applies the automatic conversion of e to t, or reports a type mismatch.
func (c *checker) convertTo(e expr, t *wgslType) bool {
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
func (c *checker) withScalar(t, s *wgslType) *wgslType {
	switch t.Kind {
	case kVec:
		return c.ts.vec(t.N, s)
	case kMat:
		return c.ts.mat(t.N, t.Elem.N, s)
	}
	return s
}

// unifyScalars converts abstract operands so both have the same scalar type; it
// returns that type or nil (after an error) when impossible.
func (c *checker) unifyScalars(pos int, es []expr, xs []*exprInfo) *wgslType {
	var concrete *wgslType
	anyFloat := false
	for _, x := range xs {
		s := x.typ.scalarOf()
		if !s.isScalar() {
			c.errorf(pos, "expected scalars or vectors, got %s", typeListOf(xs))
			return nil
		}
		if s.isAbstract() {
			anyFloat = anyFloat || s.Kind == kAbstractFloat
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
		target = c.ts.scalar(kAbstractInt)
		if anyFloat {
			target = c.ts.scalar(kAbstractFloat)
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
func (c *checker) runtimeOperands(es []expr, xs []*exprInfo) {
	if isConst, _ := classOf(xs...); isConst {
		return
	}
	for _, e := range es {
		if e != nil {
			c.materialize(e)
		}
	}
}

func (c *checker) unary(e *unaryExpr) *exprInfo {
	switch e.Op {
	case opAddrOf:
		x := c.expr(e.X)
		if x == nil {
			return nil
		}
		if !x.ref {
			c.errorf(e.Pos, "cannot take the address of a value that is not in memory")
			return nil
		}
		if m, ok := unparen(e.X).(*memberExpr); ok && c.out.info[m].swizzle != nil {
			c.errorf(e.Pos, "cannot take the address of a vector component")
			return nil
		}
		if ix, ok := unparen(e.X).(*indexExpr); ok && c.out.info[ix.X] != nil && c.out.info[ix.X].typ.Kind == kVec {
			c.errorf(e.Pos, "cannot take the address of a vector component")
			return nil
		}
		return &exprInfo{typ: c.ts.ptr(x.space, x.typ, x.access)}
	case opDeref:
		x := c.expr(e.X)
		if x == nil {
			return nil
		}
		if x.ref || x.typ.Kind != kPtr {
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
	case opNeg:
		ok = (s.Kind == kI32 || s.isFloat() || s.Kind == kAbstractInt) && x.typ.Kind != kMat
	case opNot:
		ok = s.Kind == kBool
	case opCompl:
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

func unparen(e expr) expr {
	for {
		p, ok := e.(*parenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

func (c *checker) binary(e *binaryExpr) *exprInfo {
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
		c.runtimeOperands([]expr{e.X, e.Y}, []*exprInfo{l, r})
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
func (c *checker) binaryType(pos int, op operator, l, r *exprInfo, ey, ex expr) *wgslType {
	if l.typ.Kind == kMat || r.typ.Kind == kMat {
		return c.matBinary(pos, op, l, r, ey, ex)
	}
	ls, rs := l.typ.scalarOf(), r.typ.scalarOf()
	if !ls.isScalar() || !rs.isScalar() {
		c.errorf(pos, "operator '%s' cannot be applied to '%s' and '%s'", op, l.typ, r.typ)
		return nil
	}
	if l.typ.Kind == kVec && r.typ.Kind == kVec && l.typ.N != r.typ.N {
		c.errorf(pos, "operator '%s' needs vectors of the same size, got '%s' and '%s'", op, l.typ, r.typ)
		return nil
	}
	switch op {
	case opShl, opShr:
		if !ls.isInt() || !rs.isInt() {
			c.errorf(pos, "shift needs integer operands, got '%s' and '%s'", l.typ, r.typ)
			return nil
		}
		if (l.typ.Kind == kVec) != (r.typ.Kind == kVec) {
			c.errorf(pos, "shift operands must both be scalars or both vectors")
			return nil
		}
		if rs.Kind == kAbstractInt {
			if ls.isAbstract() && r.val != nil && l.val != nil {
				return l.typ
			}
			if !c.convertTo(ey, c.withScalar(r.typ, c.ts.scalar(kU32))) {
				return nil
			}
		} else if rs.Kind != kU32 {
			c.errorf(pos, "the shift amount must be u32, not '%s'", r.typ)
			return nil
		}
		if ls.isAbstract() && ex != nil && (l.val == nil || r.val == nil) {
			c.materialize(ex)
			return c.out.info[ex].typ
		}
		return l.typ
	}
	s := c.unifyScalars(pos, []expr{ex, ey}, []*exprInfo{l, r})
	if s == nil {
		return nil
	}
	lt, rt := c.withScalar(l.typ, s), c.withScalar(r.typ, s)
	switch op {
	case opAdd, opSub, opMul, opDiv, opRem:
		if !s.isNumeric() {
			c.errorf(pos, "operator '%s' cannot be applied to '%s' and '%s'", op, lt, rt)
			return nil
		}
		if lt.Kind == kVec {
			return lt
		}
		return rt
	case opEq, opNe, opLt, opGt, opLe, opGe:
		if lt != rt {
			c.errorf(pos, "cannot compare '%s' and '%s'", lt, rt)
			return nil
		}
		if s.Kind == kBool && op != opEq && op != opNe {
			c.errorf(pos, "operator '%s' cannot be applied to bool", op)
			return nil
		}
		return c.withScalar(lt, c.ts.scalar(kBool))
	case opLogAnd, opLogOr:
		if lt != rt || lt.Kind != kBool {
			c.errorf(pos, "operator '%s' needs bool operands, got '%s' and '%s'", op, lt, rt)
			return nil
		}
		return lt
	case opAnd, opOr, opXor:
		if lt != rt || !(s.isInt() || s.Kind == kBool && op != opXor) {
			c.errorf(pos, "operator '%s' cannot be applied to '%s' and '%s'", op, lt, rt)
			return nil
		}
		return lt
	}
	c.errorf(pos, "unknown operator '%s'", op)
	return nil
}

// binaryResult recomputes the result type from concrete operand types.
func (c *checker) binaryResult(op operator, lt, rt *wgslType) *wgslType {
	switch op {
	case opEq, opNe, opLt, opGt, opLe, opGe:
		return c.withScalar(lt, c.ts.scalar(kBool))
	case opShl, opShr:
		return lt
	}
	if lt.Kind == kVec {
		return lt
	}
	return rt
}

func (c *checker) index(e *indexExpr) *exprInfo {
	x := c.expr(e.X)
	i := c.rvalue(e.Index)
	if x == nil || i == nil {
		return nil
	}
	out := &exprInfo{ref: x.ref, space: x.space, access: x.access}
	t := x.typ
	if !x.ref && t.Kind == kPtr {
		t = t.Elem
		out.ref, out.space, out.access, out.autoDeref = true, x.typ.Space, x.typ.Access, true
	}
	if t.Kind != kVec && t.Kind != kArray && t.Kind != kMat {
		c.errorf(e.Pos, "cannot index a value of type '%s'", t)
		return nil
	}
	if !i.typ.isInt() || i.typ.Kind == kVec {
		c.errorSpan(e.Index, "index must be i32 or u32, not '%s'", i.typ)
		return nil
	}
	if i.typ.isAbstract() && !c.convertTo(e.Index, c.ts.scalar(kI32)) {
		return nil
	}
	if i.val == nil && x.typ.isAbstract() {
		// A run-time index into an abstract constant: concretize the constant first.
		c.materialize(e.X)
		t = c.out.info[e.X].typ
	}
	if i.val != nil {
		idx := i.val.i
		if i.typ.Kind == kI32 && idx < 0 || t.N > 0 && t.CountOverride == nil && idx >= int64(t.N) {
			c.errorSpan(e.Index, "index %d is out of bounds for '%s'", int32(idx), t)
			return nil
		}
	}
	out.typ = t.Elem
	if x.val != nil && i.val != nil {
		out.val = x.val.elem(t, int(i.val.i))
	}
	if !x.ref && x.val == nil && t.Kind == kArray && i.val == nil && x.override {
		c.errorf(e.Pos, "cannot index an override-expression")
		return nil
	}
	return out
}

func (c *checker) member(e *memberExpr) *exprInfo {
	x := c.expr(e.X)
	if x == nil {
		return nil
	}
	out := &exprInfo{ref: x.ref, space: x.space, access: x.access, override: x.override}
	t := x.typ
	if !x.ref && t.Kind == kPtr {
		t = t.Elem
		out.ref, out.space, out.access, out.autoDeref = true, x.typ.Space, x.typ.Access, true
	}
	switch t.Kind {
	case kStruct:
		for i, m := range t.Struct.Members {
			if m.Name == e.Name {
				out.typ, out.field = m.Type, i
				if x.val != nil {
					out.val = x.val.elem(t, i)
				}
				return out
			}
		}
		c.errorf(e.Pos, "struct '%s' has no member '%s'", t, e.Name)
		return nil
	case kVec:
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
func (c *checker) constRHS(op operator, t *wgslType, r *exprInfo, y expr) bool {
	if r.val == nil {
		return true
	}
	if (op == opShl || op == opShr) && !t.scalarOf().isAbstract() && maxComponent(r.val) >= 32 {
		c.errorSpan(y, "the shift amount %d is not less than the bit width 32", maxComponent(r.val))
		return false
	}
	if (op == opDiv || op == opRem) && t.scalarOf().isInt() && hasZero(r.val) {
		c.errorSpan(y, "integer division by zero")
		return false
	}
	return true
}

// matBinary types the matrix operators: M+M, M-M, M*s, s*M, M*v, v*M, M*M.
func (c *checker) matBinary(pos int, op operator, l, r *exprInfo, ey, ex expr) *wgslType {
	bad := func() *wgslType {
		c.errorf(pos, "operator '%s' cannot be applied to '%s' and '%s'", op, l.typ, r.typ)
		return nil
	}
	if c.unifyScalars(pos, []expr{ex, ey}, []*exprInfo{l, r}) == nil {
		return nil
	}
	lt, rt := l.typ, r.typ
	if !lt.scalarOf().isFloat() {
		return bad()
	}
	switch op {
	case opAdd, opSub:
		if lt == rt {
			return lt
		}
	case opMul:
		switch {
		case lt.Kind == kMat && rt.isScalar():
			return lt
		case lt.isScalar() && rt.Kind == kMat:
			return rt
		case lt.Kind == kMat && rt.Kind == kVec && rt.N == lt.N:
			return lt.Elem
		case lt.Kind == kVec && rt.Kind == kMat && lt.N == rt.Elem.N:
			return c.ts.vec(rt.N, lt.Elem)
		case lt.Kind == kMat && rt.Kind == kMat && lt.N == rt.Elem.N:
			return c.ts.mat(rt.N, lt.Elem.N, lt.Elem.Elem)
		}
	}
	return bad()
}

// isMatMul reports the products that are not componentwise.
func isMatMul(op operator, lt, rt *wgslType) bool {
	return op == opMul && (lt.Kind == kMat && !rt.isScalar() || rt.Kind == kMat && !lt.isScalar())
}
