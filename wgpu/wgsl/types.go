package wgsl

import "fmt"

// Kind classifies a Type.
type Kind int

const (
	KBool Kind = iota
	KI32
	KU32
	KF32
	KF16
	KAbstractInt
	KAbstractFloat
	KVec
	KMat // N columns, each an Elem (a vector of the row count)
	KArray
	KStruct
	KAtomic
	KPtr
)

// AddrSpace is a WGSL address space. The zero value, SpaceNone, stands for
// none (a value, or a declaration that names no address space).
type AddrSpace uint8

// The address spaces; SpacePushConstant is wgpu's var<push_constant>, which
// WGSL spells immediate.
const (
	SpaceNone AddrSpace = iota
	SpaceFunction
	SpacePrivate
	SpaceWorkgroup
	SpaceUniform
	SpaceStorage
	SpacePushConstant
)

var spaceNames = [...]string{
	SpaceNone:         "",
	SpaceFunction:     "function",
	SpacePrivate:      "private",
	SpaceWorkgroup:    "workgroup",
	SpaceUniform:      "uniform",
	SpaceStorage:      "storage",
	SpacePushConstant: "push_constant",
}

// String returns the WGSL spelling of s ("" for SpaceNone).
func (s AddrSpace) String() string {
	if int(s) < len(spaceNames) {
		return spaceNames[s]
	}
	return fmt.Sprintf("AddrSpace(%d)", uint8(s))
}

// spaceNamed is the address space spelled n, SpaceNone for "", and false
// for a name that is no address space. WGSL's immediate (push constants) is
// wgpu's push_constant.
func spaceNamed(n string) (AddrSpace, bool) {
	if n == "immediate" {
		return SpacePushConstant, true
	}
	for s, name := range spaceNames {
		if name == n {
			return AddrSpace(s), true
		}
	}
	return SpaceNone, false
}

// Access is a WGSL access mode. The zero value, AccessNone, is that of types
// other than pointers.
type Access uint8

// The access modes.
const (
	AccessNone Access = iota
	AccessRead
	AccessWrite
	AccessReadWrite
)

var accessNames = [...]string{AccessNone: "", AccessRead: "read", AccessWrite: "write", AccessReadWrite: "read_write"}

// String returns the WGSL spelling of a ("" for AccessNone).
func (a Access) String() string {
	if int(a) < len(accessNames) {
		return accessNames[a]
	}
	return fmt.Sprintf("Access(%d)", uint8(a))
}

// accessNamed is the access mode spelled n, or false for a name that is
// none ("" included).
func accessNamed(n string) (Access, bool) {
	for a, name := range accessNames {
		if name == n && a != int(AccessNone) {
			return Access(a), true
		}
	}
	return AccessNone, false
}

// Type is a checked WGSL type. Types are interned per module, so two types
// are identical exactly when their pointers are equal.
type Type struct {
	Kind   Kind
	N      int   // vector size; array element count (0: runtime-sized or override-sized)
	Elem   *Type // vector, array, atomic and pointer element
	Struct *StructType
	Space  AddrSpace // pointer
	Access Access    // pointer
	// CountOverride is set for a workgroup array whose element count is an override-expression.
	CountOverride *overrideCount
}

// overrideCount is an array element count given by an override-expression.
type overrideCount struct {
	expr Expr
	text string
}

// StructType is a declared struct with its host-shareable layout.
type StructType struct {
	Name    string
	Members []Field
	Align   int
	Size    int
	// concrete is set on the abstract result structs of frexp and modf:
	// the struct they materialize to (f32 members).
	concrete *Type
	// Builtins holds each member's @builtin value ("" for none); a struct
	// whose members all have one can be an entry point input.
	Builtins []string
}

// ioBuiltins reports a struct whose members all carry a valid @builtin.
func (s *StructType) ioBuiltins() bool {
	if len(s.Builtins) != len(s.Members) {
		return false
	}
	for _, b := range s.Builtins {
		if b == "" || b == "?" {
			return false
		}
	}
	return true
}

// Field is one struct member with its offset in the host-shareable layout.
type Field struct {
	Name   string `json:"name"`
	Type   *Type  `json:"-"`
	Offset int    `json:"offset"`
	Align  int    `json:"align"`
	Size   int    `json:"size"`
}

func (t *Type) String() string {
	switch t.Kind {
	case KBool:
		return "bool"
	case KI32:
		return "i32"
	case KU32:
		return "u32"
	case KF32:
		return "f32"
	case KF16:
		return "f16"
	case KAbstractInt:
		return "abstract-int"
	case KAbstractFloat:
		return "abstract-float"
	case KVec:
		return fmt.Sprintf("vec%d<%s>", t.N, t.Elem)
	case KMat:
		return fmt.Sprintf("mat%dx%d<%s>", t.N, t.Elem.N, t.Elem.Elem)
	case KArray:
		if t.CountOverride != nil {
			return fmt.Sprintf("array<%s, %s>", t.Elem, t.CountOverride.text)
		}
		if t.N == 0 {
			return fmt.Sprintf("array<%s>", t.Elem)
		}
		return fmt.Sprintf("array<%s, %d>", t.Elem, t.N)
	case KStruct:
		return t.Struct.Name
	case KAtomic:
		return fmt.Sprintf("atomic<%s>", t.Elem)
	case KPtr:
		return fmt.Sprintf("ptr<%s, %s, %s>", t.Space, t.Elem, t.Access)
	}
	return "?"
}

// types interns the types of one module.
type types struct {
	m map[string]*Type
}

func (ts *types) get(t Type) *Type {
	key := t.String()
	if t.Kind == KArray && t.CountOverride != nil {
		key = fmt.Sprintf("%s#%p", key, t.CountOverride.expr)
	}
	if t.Kind == KStruct {
		key = "struct " + key
	}
	if old, ok := ts.m[key]; ok {
		return old
	}
	nt := t
	ts.m[key] = &nt
	return &nt
}

func (ts *types) vec(n int, elem *Type) *Type { return ts.get(Type{Kind: KVec, N: n, Elem: elem}) }

// mat is the matrix type with cols columns of rows elements of scalar s.
func (ts *types) mat(cols, rows int, s *Type) *Type {
	return ts.get(Type{Kind: KMat, N: cols, Elem: ts.vec(rows, s)})
}
func (ts *types) array(elem *Type, n int) *Type {
	return ts.get(Type{Kind: KArray, N: n, Elem: elem})
}
func (ts *types) ptr(space AddrSpace, elem *Type, access Access) *Type {
	return ts.get(Type{Kind: KPtr, Space: space, Elem: elem, Access: access})
}

func (ts *types) scalar(k Kind) *Type { return ts.get(Type{Kind: k}) }

// Predicates.
func (t *Type) isScalar() bool { return t.Kind <= KAbstractFloat }
func (t *Type) isAbstract() bool {
	return t.Kind == KAbstractInt || t.Kind == KAbstractFloat || t.Elem != nil && t.Kind != KPtr && t.Kind != KAtomic && t.Elem.isAbstract() ||
		t.Kind == KStruct && t.Struct.concrete != nil
}
func (t *Type) isFloat() bool   { return t.Kind == KF32 || t.Kind == KF16 || t.Kind == KAbstractFloat }
func (t *Type) isInt() bool     { return t.Kind == KI32 || t.Kind == KU32 || t.Kind == KAbstractInt }
func (t *Type) isSigned() bool  { return t.Kind == KI32 || t.Kind == KAbstractInt }
func (t *Type) isNumeric() bool { return t.isInt() || t.isFloat() }

// scalarOf is the element scalar of a scalar or vector.
func (t *Type) scalarOf() *Type {
	switch t.Kind {
	case KVec:
		return t.Elem
	case KMat:
		return t.Elem.Elem
	}
	return t
}

// constructible reports whether values of the type can be constructed, copied and loaded.
func (t *Type) constructible() bool {
	switch t.Kind {
	case KAtomic, KPtr:
		return false
	case KArray:
		return t.N > 0 && t.CountOverride == nil && t.Elem.constructible()
	case KStruct:
		for _, m := range t.Struct.Members {
			if !m.Type.constructible() {
				return false
			}
		}
	}
	return true
}

// hostShareable reports whether the type may live in uniform or storage buffers.
func (t *Type) hostShareable() bool {
	switch t.Kind {
	case KBool, KAbstractInt, KAbstractFloat, KPtr:
		return false
	case KVec, KMat, KArray, KAtomic:
		return t.Elem.hostShareable()
	case KStruct:
		for _, m := range t.Struct.Members {
			if !m.Type.hostShareable() {
				return false
			}
		}
	}
	return true
}

// hasF16 reports whether f16 appears anywhere in the type.
func (t *Type) hasF16() bool {
	switch t.Kind {
	case KF16:
		return true
	case KVec, KMat, KArray, KAtomic, KPtr:
		return t.Elem.hasF16()
	case KStruct:
		for _, m := range t.Struct.Members {
			if m.Type.hasF16() {
				return true
			}
		}
	}
	return false
}

// hasAtomic reports whether an atomic appears in the type.
func (t *Type) hasAtomic() bool {
	switch t.Kind {
	case KAtomic:
		return true
	case KArray:
		return t.Elem.hasAtomic()
	case KStruct:
		for _, m := range t.Struct.Members {
			if m.Type.hasAtomic() {
				return true
			}
		}
	}
	return false
}

// runtimeSized reports a runtime-sized array or a struct ending in one.
func (t *Type) runtimeSized() bool {
	switch t.Kind {
	case KArray:
		return t.N == 0 && t.CountOverride == nil
	case KStruct:
		ms := t.Struct.Members
		return len(ms) > 0 && ms[len(ms)-1].Type.runtimeSized()
	}
	return false
}

// Align and Size give the WGSL host-shareable layout (the spec's AlignOf and
// SizeOf); a runtime-sized array counts one element.
func (t *Type) Align() int {
	switch t.Kind {
	case KF16:
		return 2
	case KVec:
		n := t.N
		if n == 3 {
			n = 4
		}
		return n * t.Elem.Size()
	case KArray, KAtomic, KMat:
		return t.Elem.Align()
	case KStruct:
		return t.Struct.Align
	}
	return 4
}

func (t *Type) Size() int {
	switch t.Kind {
	case KF16:
		return 2
	case KVec:
		return t.N * t.Elem.Size()
	case KArray, KMat:
		return max(t.N, 1) * t.Stride()
	case KAtomic:
		return 4
	case KStruct:
		return t.Struct.Size
	}
	return 4
}

// Stride is the array element stride, or a matrix's column stride.
func (t *Type) Stride() int { return roundUp(t.Elem.Align(), t.Elem.Size()) }

func roundUp(k, n int) int { return (n + k - 1) / k * k }
