package wgsl

import (
	"fmt"
	"sort"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"
)

// Subgroup matrices: the types and builtins of Chromium's
// chromium_experimental_subgroup_matrix extension, as its proposal
// (dawn/docs/dawn/features/subgroup_matrix.md, and gpuweb's
// proposals/subgroup-matrix.md copied from it) specifies them:
//
//	subgroup_matrix_left<T, K, M>    M rows, K columns (the left operand)
//	subgroup_matrix_right<T, N, K>   K rows, N columns (the right operand)
//	subgroup_matrix_result<T, N, M>  M rows, N columns (the product)
//
// so the template arguments are always <component, columns, rows>. T is f32,
// f16 (with 'enable f16;'), i32, u32, or the 8-bit i8 and u8, which WGSL has
// only here: their shader scalar type S (of fill values, scalar operands and
// the arrays they are loaded from and stored to) is i32 or u32, and a value
// given for one is clamped to -128..127 or 0..255; T's shader scalar type is
// T itself otherwise. The counts are positive const-expressions (the
// proposal allows override-expressions later; Chromium's prototype and this
// compiler take const-expressions only), at most maxMatrixDim.
//
//	subgroupMatrixLoad<T, L>(p, offset, stride) -> T
//	subgroupMatrixStore<L>(p, offset, value: T, stride)
//	subgroupMatrixLoad<T>(p, offset, col_major: bool, stride) -> T
//	subgroupMatrixStore(p, offset, value: T, col_major: bool, stride)
//	subgroupMatrixMultiply<TR>(left, right) -> subgroup_matrix_result<TR, N, M>
//	subgroupMatrixMultiplyAccumulate(left, right, acc) -> type of acc
//	subgroupMatrixScalarAdd(m: T, s: S) -> T         every element plus s
//	subgroupMatrixScalarSubtract(m: T, s: S) -> T    every element minus s
//	subgroupMatrixScalarMultiply(m: T, s: S) -> T    every element times s
//
// The layout L is row_major or col_major; the older form (which Tint now
// calls deprecated) takes a col_major bool instead, a const-expression here.
// p points to an array in the storage or workgroup address space (read
// access for loads, write for stores): in the bool form an array of T's
// shader scalar type, in the layout-template form an array of any f32, f16,
// i32 or u32 scalar or vector (Tint's any_array), whose bytes the call
// reads or writes as T's components: row (column) j of the matrix starts at
// array element offset + j*stride, and its components follow one another
// from there, sizeof(T) bytes each (1 for i8 and u8, 2 for f16, else 4),
// as SPIR-V's cooperative matrix load and store read memory through a
// pointer to that element (see lower_matrix_bytes.go). Where the
// array holds T's shader scalar type, that is: offset and stride are i32 or
// u32; element [r, c] of the matrix is
// component offset + r*stride + c (row-major) or offset + c*stride + r
// (column-major) of the array. For i8 and u8, 4 components to an array
// element (the first in its low byte), a row (column) starts at a whole
// element, as SPIR-V's load and store through the array's 32-bit elements
// read them: with the layout as a template argument, offset and stride
// count array elements (component j of row r is component j%4 of element
// offset + r*stride + j/4), as Chromium's Tint takes them since 2026-06;
// in the bool form they count components and are taken down to multiples
// of 4, as Tint took them there (the proposal's text counts components).
// left and right share their component type and K; the result's component
// type TR is f32 for f32 operands (or f16), f32 or f16 for f16 operands,
// i32 or u32 for i32 and u32 operands, and i32, u32, i8 or u8 for i8 and u8
// operands (Tint's overloads; the proposal also allows integer operands
// with a float result and the reverse, which this compiler does not).
// Arithmetic on 8-bit components wraps modulo 256, as on i32 and u32 it
// wraps modulo 2^32. T() is the zero matrix and T(s) the matrix filled
// with s.
//
// The types are plain but not host-shareable: they live only in function
// variables (Tint rejects the private address space too, though the
// proposal allows it), values, and arrays and structs of those. Every call
// (and every construction) must be in subgroup-uniform control flow and its
// matrix, pointer, offset, stride and scalar arguments subgroup-uniform
// values: the uniformity analysis checks that in the subgroup scope
// (subgroup_id is uniform there), as Tint does, under the diagnostic rule
// chromium_experimental.subgroup_matrix_uniformity (error by default; the
// proposal's rule, which Tint 0.6.2 does not let switch the check off), or
// chromium.subgroup_matrix_uniformity as current Tint names it.
//
// Code generation (Options.CooperativeMatrix) is in lower_matrix.go and
// emit_matrix.go.

// matrixExtension is the enable name of subgroup matrices.
const matrixExtension = "chromium_experimental_subgroup_matrix"

// matrixUniformityRules name the diagnostic rule of their uniformity checks:
// as the proposal spells it, and as Tint now does (Dawn's tests switch it
// off under the second name). Either name set to off, info or warning
// silences the checks.
var matrixUniformityRules = [...]string{"chromium_experimental.subgroup_matrix_uniformity", "chromium.subgroup_matrix_uniformity"}

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

// matrixBuiltins are the subgroup matrix builtins and how each uses the
// memory its pointer argument designates.
var matrixBuiltins = map[string]ptrUse{
	"subgroupMatrixLoad":               ptrRead,
	"subgroupMatrixStore":              ptrWrite,
	"subgroupMatrixMultiply":           ptrNone,
	"subgroupMatrixMultiplyAccumulate": ptrNone,
	"subgroupMatrixScalarAdd":          ptrNone,
	"subgroupMatrixScalarSubtract":     ptrNone,
	"subgroupMatrixScalarMultiply":     ptrNone,
}

// matrixScalarOps are the builtins that take a matrix and a scalar, with the
// SPIR-V operation of each for float and for integer components.
var matrixScalarOps = map[string][2]spirv.Op{
	"subgroupMatrixScalarAdd":      {spirv.OpFAdd, spirv.OpIAdd},
	"subgroupMatrixScalarSubtract": {spirv.OpFSub, spirv.OpISub},
	"subgroupMatrixScalarMultiply": {spirv.OpFMul, spirv.OpIMul},
}

// matrixComponent is subgroup matrix t's component type as WGSL spells it.
func (t *wgslType) matrixComponent() string {
	if t.Narrow {
		return pick(t.Elem.Kind == kI32, "i8", "u8")
	}
	return t.Elem.String()
}

// narrowRange is the range of the 8-bit components of a matrix whose shader
// scalar type is el (i32: i8, u32: u8).
func narrowRange(el *wgslType) (lo, hi int64) {
	if el.Kind == kI32 {
		return -128, 127
	}
	return 0, 255
}

// matrixComponentArg resolves template argument a, the component type of a
// subgroup matrix (what names the argument in errors): its shader scalar
// type, and whether it is i8 or u8 (predeclared here only, unless the
// module declares those names).
func (c *checker) matrixComponentArg(a expr, what string) (el *wgslType, narrow, ok bool) {
	if n, isID := a.(*ident); isID && len(n.Args) == 0 && (n.Name == "i8" || n.Name == "u8") && c.lookup(n.Name) == nil {
		return c.ts.scalar(pick(n.Name == "i8", kI32, kU32)), true, true
	}
	if el = c.typeOf(a); el == nil {
		return nil, false, false
	}
	switch el.Kind {
	case kF32, kF16, kI32, kU32:
		return el, false, true
	}
	c.errorSpan(a, "%s must be f32, f16, i32, u32, i8 or u8, not '%s'", what, el)
	return nil, false, false
}

// addMatrix registers the subgroup matrix builtins in the builtin table,
// for the uniformity and alias analyses and the emitter; the checker takes
// them before the table (matrixCall), since two take template arguments.
func addMatrix(b map[string]*tableBuiltin) {
	for name, use := range matrixBuiltins {
		b[name] = &tableBuiltin{matrix: true, runtime: true, ptrUse: use,
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
	el, narrow, ok := c.matrixComponentArg(id.Args[0], "subgroup matrix components")
	if !ok {
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
	return c.ts.get(wgslType{Kind: kSubgroupMatrix, Elem: el, N: dims[0], Rows: dims[1], Role: role, Narrow: narrow})
}

// matrixSpaceError is the error for a subgroup matrix in address space s,
// or "" where it may live.
func matrixSpaceError(t *wgslType, s addrSpace) string {
	if s == spaceFunction || !t.hasSubgroupMatrix() {
		return ""
	}
	return fmt.Sprintf("type '%s' cannot be used in the %s address space: subgroup matrices live only in function variables", t, s)
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

// matrixOps locates the operands of a subgroupMatrixLoad or Store call in
// either of its forms: the argument indices of the pointer, offset, stored
// value (-1 for a load), col_major flag (-1 where the layout is a template
// argument: then layout) and stride, and the layout template argument (nil in the bool
// form).
type matrixOps struct {
	ptr, offset, value, flag, stride int
	layout                           expr
}

// matrixOperands gives the operand layout of load or store call c, or false
// when its template and argument counts fit neither form.
func matrixOperands(c *callExpr) (matrixOps, bool) {
	nt, na := len(c.Fn.Args), len(c.Args)
	switch c.Fn.Name {
	case "subgroupMatrixLoad":
		switch {
		case nt == 1 && na == 4:
			return matrixOps{0, 1, -1, 2, 3, nil}, true
		case nt == 2 && na == 3:
			return matrixOps{0, 1, -1, -1, 2, c.Fn.Args[1]}, true
		}
	case "subgroupMatrixStore":
		switch {
		case nt == 0 && na == 5:
			return matrixOps{0, 1, 2, 3, 4, nil}, true
		case nt == 1 && na == 4:
			return matrixOps{0, 1, 2, -1, 3, c.Fn.Args[0]}, true
		}
	}
	return matrixOps{}, false
}

// colMajor reports the layout of a checked load or store with operands ops.
func (ops matrixOps) colMajor(info map[expr]*exprInfo, c *callExpr) bool {
	if ops.layout != nil {
		return ops.layout.(*ident).Name == "col_major"
	}
	return info[c.Args[ops.flag]].val.b
}

// uniformArgs are the arguments of a matrix builtin call that must be
// uniform values.
func matrixUniformArgs(c *callExpr) []int {
	if ops, ok := matrixOperands(c); ok {
		u := []int{ops.ptr, ops.offset, ops.stride}
		if ops.value >= 0 {
			u = append(u, ops.value)
		}
		return u
	}
	return []int{0, 1} // the multiplications: left and right; the scalar ones: the matrix and the scalar
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
	if name == "subgroupMatrixStore" {
		if !stmt {
			c.errorf(e.Pos, "'%s' does not return a value", name)
			return nil
		}
	} else if !c.mustUse(e, stmt) {
		return nil
	}
	switch name {
	case "subgroupMatrixLoad", "subgroupMatrixStore":
		return c.matrixMemoryCall(e)
	}
	if _, ok := matrixScalarOps[name]; ok {
		return c.matrixScalarCall(e)
	}
	templ, nargs := 0, 3
	if name == "subgroupMatrixMultiply" {
		templ, nargs = 1, 2
	}
	if len(e.Fn.Args) != templ {
		if templ == 1 {
			c.errorf(e.Pos, "'%s' needs the result component type as its template argument: %s<f32>(left, right)", name, name)
		} else {
			c.errorf(e.Pos, "'%s' takes no template arguments", name)
		}
		return nil
	}
	if len(e.Args) != nargs {
		c.errorf(e.Pos, "'%s' takes %d arguments, got %d", name, nargs, len(e.Args))
		return nil
	}
	var res *wgslType
	resNarrow := false
	if templ == 1 {
		var ok bool
		if res, resNarrow, ok = c.matrixComponentArg(e.Fn.Args[0], fmt.Sprintf("the result component type of '%s'", name)); !ok {
			return nil
		}
	}
	xs, ok := c.args(e)
	if !ok {
		return nil
	}
	l, r := xs[0].typ, xs[1].typ
	if l.Kind != kSubgroupMatrix || l.Role != roleLeft {
		c.errorSpan(e.Args[0], "the first argument of '%s' must be a subgroup_matrix_left, got '%s'", name, l)
		return nil
	}
	if r.Kind != kSubgroupMatrix || r.Role != roleRight {
		c.errorSpan(e.Args[1], "the second argument of '%s' must be a subgroup_matrix_right, got '%s'", name, r)
		return nil
	}
	if l.Elem != r.Elem || l.Narrow != r.Narrow {
		c.errorf(e.Pos, "the operands of '%s' must have the same component type, got '%s' and '%s'", name, l.matrixComponent(), r.matrixComponent())
		return nil
	}
	if l.N != r.Rows {
		c.errorf(e.Pos, "the operands of '%s' do not match: '%s' has %d columns (K) but '%s' has %d rows", name, l, l.N, r, r.Rows)
		return nil
	}
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
		res, resNarrow = acc.Elem, acc.Narrow
	}
	out := c.ts.get(wgslType{Kind: kSubgroupMatrix, Elem: res, N: r.N, Rows: l.Rows, Role: roleResult, Narrow: resNarrow})
	if why := matrixResultError(l, out); why != "" {
		c.errorf(e.Pos, "'%s' of %s operands into a %s result: %s", name, l.matrixComponent(), out.matrixComponent(), why)
		return nil
	}
	return &exprInfo{call: callBuiltin, builtin: name, typ: out}
}

// matrixResultError says why a product of operands like left cannot have
// result type res ("" where it can): Tint's overloads, plus f16 results of
// f32 operands (the proposal allows any pairing; a float product into an
// f16 result is what the matrix units of f16 offer).
func matrixResultError(left, res *wgslType) string {
	switch {
	case left.Elem.isFloat() != res.Elem.isFloat():
		return "float operands need a float result, integer operands an integer one (the mixed forms are not supported by this compiler)"
	case res.Narrow && !left.Narrow:
		return "an i8 or u8 result needs i8 or u8 operands"
	}
	return ""
}

// matrixScalarCall checks subgroupMatrixScalarAdd, Subtract or Multiply:
// a subgroup matrix of any role and a value of its shader scalar type.
func (c *checker) matrixScalarCall(e *callExpr) *exprInfo {
	name := e.Fn.Name
	if len(e.Fn.Args) != 0 {
		c.errorf(e.Pos, "'%s' takes no template arguments", name)
		return nil
	}
	if len(e.Args) != 2 {
		c.errorf(e.Pos, "'%s' takes 2 arguments (a subgroup matrix and a scalar), got %d", name, len(e.Args))
		return nil
	}
	xs, ok := c.args(e)
	if !ok {
		return nil
	}
	m := xs[0].typ
	if m.Kind != kSubgroupMatrix {
		c.errorSpan(e.Args[0], "the first argument of '%s' must be a subgroup matrix, got '%s'", name, m)
		return nil
	}
	if !c.convertTo(e.Args[1], m.Elem) {
		return nil
	}
	c.runtimeOperands(e.Args, xs)
	return &exprInfo{call: callBuiltin, builtin: name, typ: m}
}

// matrixMemoryCall checks subgroupMatrixLoad or subgroupMatrixStore, in the
// form with the layout as a template argument (row_major or col_major) or
// in the older one with a col_major bool argument (Tint calls it
// deprecated).
func (c *checker) matrixMemoryCall(e *callExpr) *exprInfo {
	name := e.Fn.Name
	load := name == "subgroupMatrixLoad"
	ops, ok := matrixOperands(e)
	if !ok {
		if load && len(e.Fn.Args) == 0 {
			c.errorf(e.Pos, "'%s' needs the matrix type as its template argument: %s<subgroup_matrix_left<f32, 8, 8>, row_major>(p, offset, stride)", name, name)
		} else if load {
			c.errorf(e.Pos, "'%s' takes %s<T, row_major or col_major>(p, offset, stride) or %s<T>(p, offset, col_major, stride), got %d template arguments and %d arguments",
				name, name, name, len(e.Fn.Args), len(e.Args))
		} else {
			c.errorf(e.Pos, "'%s' takes %s<row_major or col_major>(p, offset, value, stride) or %s(p, offset, value, col_major, stride), got %d template arguments and %d arguments",
				name, name, name, len(e.Fn.Args), len(e.Args))
		}
		return nil
	}
	var t *wgslType
	if load {
		if t = c.typeOf(e.Fn.Args[0]); t == nil {
			return nil
		}
		if t.Kind != kSubgroupMatrix {
			c.errorSpan(e.Fn.Args[0], "the template argument of '%s' must be a subgroup matrix type, not '%s'", name, t)
			return nil
		}
	}
	if ops.layout != nil {
		if id, ok := ops.layout.(*ident); !ok || len(id.Args) > 0 || id.Name != "row_major" && id.Name != "col_major" || c.lookup(id.Name) != nil {
			c.errorSpan(ops.layout, "the layout of '%s' must be row_major or col_major", name)
			return nil
		}
	}
	xs, ok := c.args(e)
	if !ok {
		return nil
	}
	if !load {
		if t = xs[ops.value].typ; t.Kind != kSubgroupMatrix {
			c.errorSpan(e.Args[ops.value], "'%s' needs a subgroup matrix to store, got '%s'", name, t)
			return nil
		}
	}
	if !c.matrixPointer(e, xs[ops.ptr].typ, t, !load, ops.layout != nil) {
		return nil
	}
	for _, i := range []int{ops.offset, ops.stride} {
		it := xs[i].typ
		if it.Kind == kAbstractInt {
			it = c.ts.scalar(pick(xs[i].val.i < 0, kI32, kU32))
		}
		if it.Kind != kI32 && it.Kind != kU32 {
			c.errorSpan(e.Args[i], "the %s of '%s' must be an i32 or u32, got '%s'", map[bool]string{true: "offset", false: "stride"}[i == ops.offset], name, xs[i].typ)
			return nil
		}
		if !c.convertTo(e.Args[i], it) {
			return nil
		}
		if v := c.out.info[e.Args[i]].val; v != nil && it.Kind == kI32 && v.i < 0 {
			c.errorSpan(e.Args[i], "the %s of '%s' must not be negative, got %d", map[bool]string{true: "offset", false: "stride"}[i == ops.offset], name, v.i)
			return nil
		}
	}
	if ops.flag >= 0 && (xs[ops.flag].typ.Kind != kBool || xs[ops.flag].val == nil) {
		c.errorSpan(e.Args[ops.flag], "the col_major argument of '%s' must be a bool const-expression, got '%s'", name, xs[ops.flag].typ)
		return nil
	}
	if ops.layout != nil && !c.matrixExtent(e, ops, xs[ops.ptr].typ.Elem, t) {
		return nil
	}
	c.runtimeOperands(e.Args, xs)
	out := &exprInfo{call: callBuiltin, builtin: name, typ: t}
	if !load {
		out.typ = c.ts.scalar(kBool) // placeholder for a statement call; never read
	}
	return out
}

// matrixExtent checks, as Tint does for the layout-template form of load
// or store e of matrix t through array at (the older form goes
// unchecked), that the array's elements are at least as long as t's
// components, that a constant stride spans a whole row (column) of t, and
// that a matrix at a constant offset (0 where it is not) with that stride
// (else the least) fits an array of constant length. Tint counts offset and
// stride in bytes of the array's element type's size here (12 for a
// vec3<f32>, not its stride of 16); so does this check, and nothing else.
func (c *checker) matrixExtent(e *callExpr, ops matrixOps, at, t *wgslType) bool {
	name := e.Fn.Name
	comp := uint64(componentBytes(t))
	if uint64(at.Stride()) < comp {
		c.errorf(e.Pos, "'%s' of %s components through an array of %d-byte elements: its elements must be at least as long as a component (%d bytes)", name, t.matrixComponent(), at.Stride(), comp)
		return false
	}
	major, minor, line := uint64(t.Rows), uint64(t.N), "row"
	if ops.layout.(*ident).Name == "col_major" {
		major, minor, line = minor, major, "column"
	}
	size := uint64(at.Elem.Size())
	least := comp * minor // bytes of a row (column)
	stride, offset := least, uint64(0)
	if v := c.out.info[e.Args[ops.stride]].val; v != nil && v.i >= 0 {
		if stride = uint64(v.i) * size; stride < least {
			c.errorSpan(e.Args[ops.stride], "the stride of '%s' (%d, %d bytes) is less than a %s of the matrix (%d bytes)", name, v.i, stride, line, least)
			return false
		}
	}
	if v := c.out.info[e.Args[ops.offset]].val; v != nil && v.i >= 0 {
		offset = uint64(v.i) * size
	}
	if at.N == 0 || at.CountOverride != nil {
		return true
	}
	if need := offset + stride*(major-1) + least; need > uint64(at.Size()) {
		c.errorf(e.Pos, "'%s' reaches %d bytes into an array of %d", name, need, at.Size())
		return false
	}
	return true
}

// matrixPointer checks the pointer argument of subgroupMatrixLoad (store
// false) or subgroupMatrixStore of matrix type t: to an array of t's shader
// scalar type in the bool form, and in the layout-template form (templated)
// to an array of any f32, f16, i32 or u32 scalar or vector, whose bytes the
// call reinterprets (reinterprets).
func (c *checker) matrixPointer(e *callExpr, pt, t *wgslType, store, templated bool) bool {
	name := e.Fn.Name
	ok := pt.Kind == kPtr && (pt.Space == spaceStorage || pt.Space == spaceWorkgroup) && pt.Elem.Kind == kArray
	if ok && templated {
		switch el := pt.Elem.Elem; el.Kind {
		case kF32, kF16, kI32, kU32:
		case kVec:
			ok = el.Elem.Kind == kF32 || el.Elem.Kind == kF16 || el.Elem.Kind == kI32 || el.Elem.Kind == kU32
		default:
			ok = false
		}
	} else if ok {
		ok = pt.Elem.Elem == t.Elem
	}
	if !ok && templated {
		c.errorSpan(e.Args[0], "'%s' needs a pointer to an array of f32, f16, i32 or u32 scalars or vectors in the storage or workgroup address space, got '%s'", name, pt)
		return false
	}
	if !ok {
		c.errorSpan(e.Args[0], "'%s' needs a pointer to an array<%s> in the storage or workgroup address space, got '%s' (the form with the layout as a template argument also takes arrays of other scalars and vectors)", name, t.Elem, pt)
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
// constructor, in the subgroup scope (as Tint checks it): subgroup-uniform
// control flow and subgroup-uniform matrix, pointer, offset and stride
// arguments. A pointer's uniformity is
// that of its root and indices (ptrTaint), not of the memory it points to.
// The result is as uniform as those arguments.
func (u *uniformity) matrixCall(c *callExpr, uniformArgs []int, cf taint) taint {
	var all taint
	ts := make([]taint, len(c.Args))
	for i, a := range c.Args {
		if info := u.c.out.info[a]; info != nil && info.typ != nil && info.typ.Kind == kPtr {
			ts[i] = u.ptrTaint(a, cf)
			u.sum.uniformPtrParams |= ts[i] &^ nonUniform
		} else {
			ts[i] = u.expr(a, cf)
		}
		all |= ts[i]
	}
	if u.scope != scopeSubgroup || !u.diag.on(matrixUniformityRules[0]) || !u.diag.on(matrixUniformityRules[1]) {
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

// matrixConfigs lists the multiplications of checked module m (see
// Reflection.MatrixConfigs), each once, sorted.
func matrixConfigs(m *checked) []MatrixConfig {
	seen := map[MatrixConfig]bool{}
	var out []MatrixConfig
	for x, info := range m.info {
		c, ok := x.(*callExpr)
		if !ok || info.call != callBuiltin || (info.builtin != "subgroupMatrixMultiply" && info.builtin != "subgroupMatrixMultiplyAccumulate") {
			continue
		}
		l := m.info[c.Args[0]].typ
		mc := MatrixConfig{M: info.typ.Rows, N: info.typ.N, K: l.N, Component: l.matrixComponent(), Result: info.typ.matrixComponent()}
		if !seen[mc] {
			seen[mc] = true
			out = append(out, mc)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.M != b.M || a.N != b.N || a.K != b.K {
			return a.M < b.M || a.M == b.M && (a.N < b.N || a.N == b.N && a.K < b.K)
		}
		return a.Component+" "+a.Result < b.Component+" "+b.Result
	})
	return out
}
