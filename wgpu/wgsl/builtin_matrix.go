package wgsl

import "fmt"

// Subgroup matrices: the types and builtins of Chromium's
// chromium_experimental_subgroup_matrix extension, as its proposal
// (dawn/docs/dawn/features/subgroup_matrix.md) specifies them:
//
//	subgroup_matrix_left<T, K, M>    M rows, K columns (the left operand)
//	subgroup_matrix_right<T, N, K>   K rows, N columns (the right operand)
//	subgroup_matrix_result<T, N, M>  M rows, N columns (the product)
//
// so the template arguments are always <component, columns, rows>. T is f32,
// f16 (with 'enable f16;'), i32 or u32; the proposal's i8 and u8 are not
// supported here. The counts are positive const-expressions (the proposal
// allows override-expressions later; Chromium's prototype and this compiler
// take const-expressions only), at most maxMatrixDim.
//
//	subgroupMatrixLoad<T>(p, offset: u32, col_major: bool, stride: u32) -> T
//	subgroupMatrixStore(p, offset: u32, value: T, col_major: bool, stride: u32)
//	subgroupMatrixMultiply<TR>(left, right) -> subgroup_matrix_result<TR, N, M>
//	subgroupMatrixMultiplyAccumulate(left, right, acc) -> type of acc
//
// p points to an array of T's component type in the storage or workgroup
// address space (read access for loads, write for stores); element [r, c]
// of the matrix is p[offset + r*stride + c] (row-major) or
// p[offset + c*stride + r] (column-major), with col_major a const-expression.
// left and right share their component type and K; TR may differ from it,
// but float operands need a float result and integer operands an integer one
// (the proposal also allows the mixed forms; this compiler does not).
// T() is the zero matrix and T(s) the matrix filled with s.
//
// The types are plain but not host-shareable: they live only in function
// and private memory and in values. Every call (and every construction)
// must be in uniform control flow and its matrix, pointer, offset and stride
// arguments uniform values: the uniformity analysis checks that in the
// workgroup scope, as Chromium does, under the diagnostic rule
// chromium_experimental.subgroup_matrix_uniformity (error by default).
//
// Code generation (Options.CooperativeMatrix) is in lower_matrix.go and
// emit_matrix.go.

// matrixExtension is the enable name of subgroup matrices.
const matrixExtension = "chromium_experimental_subgroup_matrix"

// matrixUniformityRule is the diagnostic rule of their uniformity checks.
const matrixUniformityRule = "chromium_experimental.subgroup_matrix_uniformity"

// maxMatrixDim bounds each dimension of a subgroup matrix: the lowered
// code holds whole matrices in every invocation.
const maxMatrixDim = 64

// matrixRole says which operand of a multiplication a subgroup matrix type is.
type matrixRole uint8

const (
	roleLeft matrixRole = iota
	roleRight
	roleResult
)

var roleNames = [...]string{roleLeft: "subgroup_matrix_left", roleRight: "subgroup_matrix_right", roleResult: "subgroup_matrix_result"}

// String returns the WGSL name of the matrix type of role r.
func (r matrixRole) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("matrixRole(%d)", uint8(r))
}

// matrixRoleNamed is the role of the type named n, or false.
func matrixRoleNamed(n string) (matrixRole, bool) {
	for r, name := range roleNames {
		if name == n {
			return matrixRole(r), true
		}
	}
	return 0, false
}

// matrixBuiltins are the subgroup matrix builtins: the arguments that must
// be uniform values, and how the pointer argument is used.
var matrixBuiltins = map[string]struct {
	uniform []int
	use     ptrUse
}{
	"subgroupMatrixLoad":               {uniform: []int{0, 1, 3}, use: ptrRead},
	"subgroupMatrixStore":              {uniform: []int{0, 1, 2, 4}, use: ptrWrite},
	"subgroupMatrixMultiply":           {uniform: []int{0, 1}},
	"subgroupMatrixMultiplyAccumulate": {uniform: []int{0, 1}},
}

// addMatrix registers the subgroup matrix builtins in the builtin table,
// for the uniformity and alias analyses and the emitter; the checker takes
// them before the table (matrixCall), since two take template arguments.
func addMatrix(b map[string]*tableBuiltin) {
	for name, m := range matrixBuiltins {
		b[name] = &tableBuiltin{matrix: true, runtime: true, ptrUse: m.use,
			emitCall: func(e *emitter, c *callExpr, res *wgslType) uint32 { return e.matrixCall(c, res) }}
	}
}

// matrixType resolves subgroup_matrix_left/right/result<T, cols, rows>.
func (c *checker) matrixType(id *ident, role matrixRole) *wgslType {
	if !c.out.enables[matrixExtension] {
		c.errorf(id.Pos, "'%s' requires 'enable %s;'", id.Name, matrixExtension)
		return nil
	}
	if len(id.Args) != 3 {
		c.errorf(id.Pos, "'%s' takes 3 template arguments (component type, columns, rows), got %d", id.Name, len(id.Args))
		return nil
	}
	if n, ok := id.Args[0].(*ident); ok && (n.Name == "i8" || n.Name == "u8") && c.lookup(n.Name) == nil {
		c.errorSpan(id.Args[0], "subgroup matrix component type '%s' is not supported by this compiler (supported: f32, f16, i32, u32)", n.Name)
		return nil
	}
	el := c.typeOf(id.Args[0])
	if el == nil {
		return nil
	}
	switch el.Kind {
	case kF32, kF16, kI32, kU32:
	default:
		c.errorSpan(id.Args[0], "subgroup matrix components must be f32, f16, i32 or u32, not '%s'", el)
		return nil
	}
	var dims [2]int
	for i, what := range []string{"column", "row"} {
		a := id.Args[1+i]
		x := c.rvalue(a)
		if x == nil {
			return nil
		}
		if !x.typ.isInt() || x.typ.Kind == kVec {
			c.errorSpan(a, "subgroup matrix %s count must be an integer, not '%s'", what, x.typ)
			return nil
		}
		if x.val == nil {
			c.errorSpan(a, "subgroup matrix %s count must be a const-expression", what)
			return nil
		}
		if x.typ.isAbstract() && !c.convertTo(a, c.ts.scalar(kI32)) {
			return nil
		}
		if n := x.val.i; n <= 0 || n > maxMatrixDim {
			c.errorSpan(a, "subgroup matrix %s count must be in 1..%d, got %d", what, maxMatrixDim, n)
			return nil
		}
		dims[i] = int(x.val.i)
	}
	return c.ts.get(wgslType{Kind: kSubgroupMatrix, Elem: el, N: dims[0], Rows: dims[1], Role: role})
}

// matrixSpaceError is the error for a subgroup matrix in address space s,
// or "" where it may live.
func matrixSpaceError(t *wgslType, s addrSpace) string {
	if s == spaceFunction || s == spacePrivate || !t.hasSubgroupMatrix() {
		return ""
	}
	return fmt.Sprintf("type '%s' cannot be used in the %s address space: subgroup matrices live only in function and private variables", t, s)
}

// matrixConstruct checks T() and T(s) for a subgroup matrix type T, and the
// zero value of an array or struct holding subgroup matrices (other
// constructors of those are checked as usual, never as const-expressions).
func (c *checker) matrixConstruct(e *callExpr, t *wgslType, xs []*exprInfo) *exprInfo {
	if c.fn == nil {
		c.errorf(e.Pos, "'%s' cannot be used in a const-expression", t)
		return nil
	}
	if len(xs) == 0 {
		return &exprInfo{typ: t, call: callZero}
	}
	if t.Kind != kSubgroupMatrix {
		return nil // the caller checks it as usual
	}
	if len(xs) != 1 {
		c.errorf(e.Pos, "'%s' takes at most one argument (the fill value), got %d", t, len(xs))
		return nil
	}
	if !c.convertTo(e.Args[0], t.Elem) {
		return nil
	}
	c.runtimeOperands(e.Args, xs)
	return &exprInfo{typ: t, call: callConstruct}
}

// matrixCall checks a call of a subgroup matrix builtin.
func (c *checker) matrixCall(e *callExpr, stmt bool) *exprInfo {
	name := e.Fn.Name
	if !c.out.enables[matrixExtension] {
		c.errorf(e.Pos, "'%s' requires 'enable %s;'", name, matrixExtension)
		return nil
	}
	if c.fn == nil {
		c.errorf(e.Pos, "'%s' cannot be used in a const-expression", name)
		return nil
	}
	store := name == "subgroupMatrixStore"
	if store {
		if !stmt {
			c.errorf(e.Pos, "'%s' does not return a value", name)
			return nil
		}
	} else if !c.mustUse(e, stmt) {
		return nil
	}
	templ := 0
	if name == "subgroupMatrixLoad" || name == "subgroupMatrixMultiply" {
		templ = 1
	}
	if len(e.Fn.Args) != templ {
		switch name {
		case "subgroupMatrixLoad":
			c.errorf(e.Pos, "'%s' needs the matrix type as its template argument: %s<subgroup_matrix_left<f32, 8, 8>>(...)", name, name)
		case "subgroupMatrixMultiply":
			c.errorf(e.Pos, "'%s' needs the result component type as its template argument: %s<f32>(left, right)", name, name)
		default:
			c.errorf(e.Pos, "'%s' takes no template arguments", name)
		}
		return nil
	}
	nargs := map[string]int{"subgroupMatrixLoad": 4, "subgroupMatrixStore": 5, "subgroupMatrixMultiply": 2, "subgroupMatrixMultiplyAccumulate": 3}[name]
	if len(e.Args) != nargs {
		c.errorf(e.Pos, "'%s' takes %d arguments, got %d", name, nargs, len(e.Args))
		return nil
	}
	var templT *wgslType
	if templ == 1 {
		if templT = c.typeOf(e.Fn.Args[0]); templT == nil {
			return nil
		}
	}
	xs, ok := c.args(e)
	if !ok {
		return nil
	}
	out := &exprInfo{call: callBuiltin, builtin: name}
	switch name {
	case "subgroupMatrixLoad", "subgroupMatrixStore":
		mi := 2 // the matrix value of a store
		t := templT
		if store {
			t = xs[mi].typ
		}
		if t.Kind != kSubgroupMatrix {
			if store {
				c.errorSpan(e.Args[mi], "'%s' needs a subgroup matrix to store, got '%s'", name, t)
			} else {
				c.errorSpan(e.Fn.Args[0], "the template argument of '%s' must be a subgroup matrix type, not '%s'", name, t)
			}
			return nil
		}
		if !c.matrixPointer(e, xs[0].typ, t, store) {
			return nil
		}
		cm, stride := 2, 3
		if store {
			cm, stride = 3, 4
		}
		for _, i := range []int{1, stride} {
			if !c.convertTo(e.Args[i], c.ts.scalar(kU32)) {
				return nil
			}
		}
		if xs[cm].typ.Kind != kBool || xs[cm].val == nil {
			c.errorSpan(e.Args[cm], "the col_major argument of '%s' must be a bool const-expression, got '%s'", name, xs[cm].typ)
			return nil
		}
		out.typ = t
		if store {
			out.typ = c.ts.scalar(kBool) // placeholder for a statement call; never read
		}
	default:
		l, r := xs[0].typ, xs[1].typ
		if l.Kind != kSubgroupMatrix || l.Role != roleLeft {
			c.errorSpan(e.Args[0], "the first argument of '%s' must be a subgroup_matrix_left, got '%s'", name, l)
			return nil
		}
		if r.Kind != kSubgroupMatrix || r.Role != roleRight {
			c.errorSpan(e.Args[1], "the second argument of '%s' must be a subgroup_matrix_right, got '%s'", name, r)
			return nil
		}
		if l.Elem != r.Elem {
			c.errorf(e.Pos, "the operands of '%s' must have the same component type, got '%s' and '%s'", name, l.Elem, r.Elem)
			return nil
		}
		if l.N != r.Rows {
			c.errorf(e.Pos, "the operands of '%s' do not match: '%s' has %d columns (K) but '%s' has %d rows", name, l, l.N, r, r.Rows)
			return nil
		}
		res := templT
		if name == "subgroupMatrixMultiplyAccumulate" {
			acc := xs[2].typ
			if acc.Kind != kSubgroupMatrix || acc.Role != roleResult {
				c.errorSpan(e.Args[2], "the third argument of '%s' must be a subgroup_matrix_result, got '%s'", name, acc)
				return nil
			}
			if acc.Rows != l.Rows || acc.N != r.N {
				c.errorSpan(e.Args[2], "the accumulator of '%s' must have %d rows and %d columns (those of the product), got '%s'", name, l.Rows, r.N, acc)
				return nil
			}
			res = acc.Elem
		}
		switch res.Kind {
		case kF32, kF16, kI32, kU32:
		default:
			c.errorSpan(e.Fn.Args[0], "the result component type of '%s' must be f32, f16, i32 or u32, not '%s'", name, res)
			return nil
		}
		if res.isFloat() != l.Elem.isFloat() {
			c.errorf(e.Pos, "'%s' of %s operands into a %s result is not supported by this compiler (float operands need a float result, integer operands an integer one)", name, l.Elem, res)
			return nil
		}
		out.typ = c.ts.get(wgslType{Kind: kSubgroupMatrix, Elem: res, N: r.N, Rows: l.Rows, Role: roleResult})
	}
	c.runtimeOperands(e.Args, xs)
	return out
}

// matrixPointer checks the pointer argument of subgroupMatrixLoad (store
// false) or subgroupMatrixStore of matrix type t.
func (c *checker) matrixPointer(e *callExpr, pt, t *wgslType, store bool) bool {
	name := e.Fn.Name
	ok := pt.Kind == kPtr && (pt.Space == spaceStorage || pt.Space == spaceWorkgroup) &&
		pt.Elem.Kind == kArray && pt.Elem.Elem == t.Elem
	if !ok {
		c.errorSpan(e.Args[0], "'%s' needs a pointer to an array<%s> in the storage or workgroup address space, got '%s'", name, t.Elem, pt)
		return false
	}
	if store && pt.Access == accessRead {
		c.errorSpan(e.Args[0], "'%s' needs a writable pointer, got '%s'", name, pt)
		return false
	}
	if !store && pt.Access == accessWrite {
		c.errorSpan(e.Args[0], "'%s' needs a readable pointer, got '%s'", name, pt)
		return false
	}
	return true
}

// ---- uniformity ----

// matrixCall is the uniformity rule of a subgroup matrix builtin or
// constructor, in the workgroup scope: uniform control flow and uniform
// matrix, pointer, offset and stride arguments. A pointer's uniformity is
// that of its root and indices (ptrTaint), not of the memory it points to.
// The result is as uniform as those arguments.
func (u *uniformity) matrixCall(c *callExpr, uniformArgs []int, cf taint) taint {
	var all taint
	ts := make([]taint, len(c.Args))
	for i, a := range c.Args {
		if info := u.c.out.info[a]; info != nil && info.typ != nil && info.typ.Kind == kPtr {
			ts[i] = u.ptrTaint(a, cf)
			u.sum.matrixPtrParams |= ts[i] &^ nonUniform
		} else {
			ts[i] = u.expr(a, cf)
		}
		all |= ts[i]
	}
	if u.scope != scopeWorkgroup || !u.diag.on(matrixUniformityRule) {
		return all
	}
	name := c.Fn.Name
	u.sum.matrixCF = true
	u.requireUniformCF(c, cf, "'"+name+"'")
	for _, i := range uniformArgs {
		if i < len(c.Args) {
			u.requireUniform(c.Args[i], ts[i], name)
		}
	}
	return all
}

// ptrTaint is the uniformity of pointer expression x itself: its indices
// and, for a pointer parameter or let, the pointer it was given.
func (u *uniformity) ptrTaint(x expr, cf taint) taint {
	switch y := x.(type) {
	case *parenExpr:
		return u.ptrTaint(y.X, cf)
	case *unaryExpr:
		if y.Op == opAddrOf {
			return u.refTaint(y.X, cf)
		}
	}
	return u.expr(x, cf)
}

// refTaint is the uniformity of the location that reference x names.
func (u *uniformity) refTaint(x expr, cf taint) taint {
	info := u.c.out.info[x]
	switch y := x.(type) {
	case *parenExpr:
		return u.refTaint(y.X, cf)
	case *indexExpr:
		t := u.expr(y.Index, cf)
		if info != nil && info.autoDeref {
			return t | u.ptrTaint(y.X, cf)
		}
		return t | u.refTaint(y.X, cf)
	case *memberExpr:
		if info != nil && info.autoDeref {
			return u.ptrTaint(y.X, cf)
		}
		return u.refTaint(y.X, cf)
	case *unaryExpr:
		if y.Op == opDeref {
			return u.ptrTaint(y.X, cf)
		}
	case *ident:
		return 0 // a variable: the same one in every invocation
	}
	return nonUniform
}
