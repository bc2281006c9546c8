package wgsl

import "fmt"

// kind classifies a wgslType.
type kind int

const (
	kBool kind = iota
	kI32
	kU32
	kF32
	kF16
	kAbstractInt
	kAbstractFloat
	kVec
	kMat // N columns, each an Elem (a vector of the row count)
	kArray
	kStruct
	kAtomic
	kPtr
	kSubgroupMatrix // chromium_experimental_subgroup_matrix: Elem components, N columns, Rows rows, Role
)

// addrSpace is a WGSL address space. The zero value, spaceNone, stands for
// none (a value, or a declaration that names no address space).
type addrSpace uint8

// The address spaces; spacePushConstant is wgpu's var<push_constant>, which
// WGSL spells immediate.
const (
	spaceNone addrSpace = iota
	spaceFunction
	spacePrivate
	spaceWorkgroup
	spaceUniform
	spaceStorage
	spacePushConstant
)

var spaceNames = [...]string{
	spaceNone:         "",
	spaceFunction:     "function",
	spacePrivate:      "private",
	spaceWorkgroup:    "workgroup",
	spaceUniform:      "uniform",
	spaceStorage:      "storage",
	spacePushConstant: "push_constant",
}

// String returns the WGSL spelling of s ("" for spaceNone).
func (s addrSpace) String() string {
	if int(s) < len(spaceNames) {
		return spaceNames[s]
	}
	return fmt.Sprintf("addrSpace(%d)", uint8(s))
}

// spaceNamed is the address space spelled n, spaceNone for "", and false
// for a name that is no address space. WGSL's immediate (push constants) is
// wgpu's push_constant.
func spaceNamed(n string) (addrSpace, bool) {
	if n == "immediate" {
		return spacePushConstant, true
	}
	for s, name := range spaceNames {
		if name == n {
			return addrSpace(s), true
		}
	}
	return spaceNone, false
}

// access is a WGSL access mode. The zero value, accessNone, is that of types
// other than pointers.
type access uint8

// The access modes.
const (
	accessNone access = iota
	accessRead
	accessWrite
	accessReadWrite
)

var accessNames = [...]string{accessNone: "", accessRead: "read", accessWrite: "write", accessReadWrite: "read_write"}

// String returns the WGSL spelling of a ("" for accessNone).
func (a access) String() string {
	if int(a) < len(accessNames) {
		return accessNames[a]
	}
	return fmt.Sprintf("access(%d)", uint8(a))
}

// accessNamed is the access mode spelled n, or false for a name that is
// none ("" included).
func accessNamed(n string) (access, bool) {
	for a, name := range accessNames {
		if name == n && a != int(accessNone) {
			return access(a), true
		}
	}
	return accessNone, false
}

// wgslType is a checked WGSL type. Types are interned per module, so two types
// are identical exactly when their pointers are equal.
type wgslType struct {
	Kind   kind
	N      int       // vector size; array element count (0: runtime-sized or override-sized)
	Elem   *wgslType // vector, array, atomic and pointer element
	Struct *structType
	Space  addrSpace // pointer
	Access access    // pointer
	// CountOverride is set for a workgroup array whose element count is an override-expression.
	CountOverride *overrideCount
	// Rows and Role complete a subgroup matrix (kSubgroupMatrix), whose
	// column count is N and component type Elem; Narrow marks the 8-bit
	// components i8 and u8, whose shader scalar type (Elem) is i32 or u32.
	Rows   int
	Role   matrixRole
	Narrow bool
}

// overrideCount is an array element count given by an override-expression.
type overrideCount struct {
	expr expr
	text string
}

// structType is a declared struct with its host-shareable layout.
type structType struct {
	Name    string
	Members []field
	Align   int
	Size    int
	// concrete is set on the abstract result structs of frexp and modf:
	// the struct they materialize to (f32 members).
	concrete *wgslType
	// Builtins holds each member's @builtin value ("" for none); a struct
	// whose members all have one can be an entry point input.
	Builtins []string
}

// ioBuiltins reports a struct whose members all carry a valid @builtin.
func (s *structType) ioBuiltins() bool {
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

// field is one struct member with its offset in the host-shareable layout.
type field struct {
	Name   string    `json:"name"`
	Type   *wgslType `json:"-"`
	Offset int       `json:"offset"`
	Align  int       `json:"align"`
	Size   int       `json:"size"`
}

func (t *wgslType) String() string {
	switch t.Kind {
	case kBool:
		return "bool"
	case kI32:
		return "i32"
	case kU32:
		return "u32"
	case kF32:
		return "f32"
	case kF16:
		return "f16"
	case kAbstractInt:
		return "abstract-int"
	case kAbstractFloat:
		return "abstract-float"
	case kVec:
		return fmt.Sprintf("vec%d<%s>", t.N, t.Elem)
	case kMat:
		return fmt.Sprintf("mat%dx%d<%s>", t.N, t.Elem.N, t.Elem.Elem)
	case kArray:
		if t.CountOverride != nil {
			return fmt.Sprintf("array<%s, %s>", t.Elem, t.CountOverride.text)
		}
		if t.N == 0 {
			return fmt.Sprintf("array<%s>", t.Elem)
		}
		return fmt.Sprintf("array<%s, %d>", t.Elem, t.N)
	case kStruct:
		return t.Struct.Name
	case kAtomic:
		return fmt.Sprintf("atomic<%s>", t.Elem)
	case kPtr:
		return fmt.Sprintf("ptr<%s, %s, %s>", t.Space, t.Elem, t.Access)
	case kSubgroupMatrix:
		return fmt.Sprintf("%s<%s, %d, %d>", t.Role, t.matrixComponent(), t.N, t.Rows)
	}
	return "?"
}

// types interns the types of one module.
type types struct {
	m map[string]*wgslType
}

func (ts *types) get(t wgslType) *wgslType {
	key := t.String()
	if t.Kind == kArray && t.CountOverride != nil {
		key = fmt.Sprintf("%s#%p", key, t.CountOverride.expr)
	}
	if t.Kind == kStruct {
		key = "struct " + key
	}
	if old, ok := ts.m[key]; ok {
		return old
	}
	nt := t
	ts.m[key] = &nt
	return &nt
}

func (ts *types) vec(n int, elem *wgslType) *wgslType {
	return ts.get(wgslType{Kind: kVec, N: n, Elem: elem})
}

// mat is the matrix type with cols columns of rows elements of scalar s.
func (ts *types) mat(cols, rows int, s *wgslType) *wgslType {
	return ts.get(wgslType{Kind: kMat, N: cols, Elem: ts.vec(rows, s)})
}
func (ts *types) array(elem *wgslType, n int) *wgslType {
	return ts.get(wgslType{Kind: kArray, N: n, Elem: elem})
}
func (ts *types) ptr(space addrSpace, elem *wgslType, access access) *wgslType {
	return ts.get(wgslType{Kind: kPtr, Space: space, Elem: elem, Access: access})
}

func (ts *types) scalar(k kind) *wgslType { return ts.get(wgslType{Kind: k}) }

// Predicates.
func (t *wgslType) isScalar() bool { return t.Kind <= kAbstractFloat }
func (t *wgslType) isAbstract() bool {
	return t.Kind == kAbstractInt || t.Kind == kAbstractFloat || t.Elem != nil && t.Kind != kPtr && t.Kind != kAtomic && t.Kind != kSubgroupMatrix && t.Elem.isAbstract() ||
		t.Kind == kStruct && t.Struct.concrete != nil
}
func (t *wgslType) isFloat() bool {
	return t.Kind == kF32 || t.Kind == kF16 || t.Kind == kAbstractFloat
}
func (t *wgslType) isInt() bool     { return t.Kind == kI32 || t.Kind == kU32 || t.Kind == kAbstractInt }
func (t *wgslType) isSigned() bool  { return t.Kind == kI32 || t.Kind == kAbstractInt }
func (t *wgslType) isNumeric() bool { return t.isInt() || t.isFloat() }

// scalarOf is the element scalar of a scalar or vector.
func (t *wgslType) scalarOf() *wgslType {
	switch t.Kind {
	case kVec:
		return t.Elem
	case kMat:
		return t.Elem.Elem
	}
	return t
}

// constructible reports whether values of the type can be constructed, copied and loaded.
func (t *wgslType) constructible() bool {
	switch t.Kind {
	case kAtomic, kPtr:
		return false
	case kArray:
		return t.N > 0 && t.CountOverride == nil && t.Elem.constructible()
	case kStruct:
		for _, m := range t.Struct.Members {
			if !m.Type.constructible() {
				return false
			}
		}
	}
	return true
}

// hostShareable reports whether the type may live in uniform or storage buffers.
func (t *wgslType) hostShareable() bool {
	switch t.Kind {
	case kBool, kAbstractInt, kAbstractFloat, kPtr, kSubgroupMatrix:
		return false
	case kVec, kMat, kArray, kAtomic:
		return t.Elem.hostShareable()
	case kStruct:
		for _, m := range t.Struct.Members {
			if !m.Type.hostShareable() {
				return false
			}
		}
	}
	return true
}

// hasF16 reports whether f16 appears anywhere in the type.
func (t *wgslType) hasF16() bool {
	switch t.Kind {
	case kF16:
		return true
	case kVec, kMat, kArray, kAtomic, kPtr, kSubgroupMatrix:
		return t.Elem.hasF16()
	case kStruct:
		for _, m := range t.Struct.Members {
			if m.Type.hasF16() {
				return true
			}
		}
	}
	return false
}

// hasSubgroupMatrix reports whether a subgroup matrix appears in the type.
func (t *wgslType) hasSubgroupMatrix() bool {
	switch t.Kind {
	case kSubgroupMatrix:
		return true
	case kArray:
		return t.Elem.hasSubgroupMatrix()
	case kStruct:
		for _, m := range t.Struct.Members {
			if m.Type.hasSubgroupMatrix() {
				return true
			}
		}
	}
	return false
}

// hasAtomic reports whether an atomic appears in the type.
func (t *wgslType) hasAtomic() bool {
	switch t.Kind {
	case kAtomic:
		return true
	case kArray:
		return t.Elem.hasAtomic()
	case kStruct:
		for _, m := range t.Struct.Members {
			if m.Type.hasAtomic() {
				return true
			}
		}
	}
	return false
}

// runtimeSized reports a runtime-sized array or a struct ending in one.
func (t *wgslType) runtimeSized() bool {
	switch t.Kind {
	case kArray:
		return t.N == 0 && t.CountOverride == nil
	case kStruct:
		ms := t.Struct.Members
		return len(ms) > 0 && ms[len(ms)-1].Type.runtimeSized()
	}
	return false
}

// Align and Size give the WGSL host-shareable layout (the spec's AlignOf and
// SizeOf); a runtime-sized array counts one element.
func (t *wgslType) Align() int {
	switch t.Kind {
	case kF16:
		return 2
	case kVec:
		n := t.N
		if n == 3 {
			n = 4
		}
		return n * t.Elem.Size()
	case kArray, kAtomic, kMat:
		return t.Elem.Align()
	case kStruct:
		return t.Struct.Align
	}
	return 4
}

func (t *wgslType) Size() int {
	switch t.Kind {
	case kF16:
		return 2
	case kVec:
		return t.N * t.Elem.Size()
	case kArray, kMat:
		return max(t.N, 1) * t.Stride()
	case kAtomic:
		return 4
	case kStruct:
		return t.Struct.Size
	}
	return 4
}

// Stride is the array element stride, or a matrix's column stride.
func (t *wgslType) Stride() int { return roundUp(t.Elem.Align(), t.Elem.Size()) }

func roundUp(k, n int) int { return (n + k - 1) / k * k }
