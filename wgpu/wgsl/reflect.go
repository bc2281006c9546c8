package wgsl

// Reflection describes a module's interface to the host.
type Reflection struct {
	Bindings         []Binding    `json:"bindings"`
	EntryPoints      []EntryPoint `json:"entry_points"`
	Overrides        []Override   `json:"overrides"`
	PushConstantSize int          `json:"push_constant_size"`
	// PushConstant describes the push-constant block, if any.
	PushConstant *Binding `json:"push_constant,omitempty"`
	// MatrixConfigs are the subgroup matrix multiplications the module
	// makes (chromium_experimental_subgroup_matrix), each once, sorted: a
	// device running it with Options.CooperativeMatrix must support every
	// one (Vulkan's VkCooperativeMatrixPropertiesKHR, Subgroup scope).
	MatrixConfigs []MatrixConfig `json:"matrix_configs,omitempty"`
}

// MatrixConfig is one shape and component typing of subgroup matrix
// multiplication: an M x K left operand times a K x N right one, of
// component type Component, into an M x N result of type Result (WGSL
// spellings: f32, f16, i32, u32).
type MatrixConfig struct {
	M         int    `json:"m"`
	N         int    `json:"n"`
	K         int    `json:"k"`
	Component string `json:"component"`
	Result    string `json:"result"`
}

// Binding is one resource variable (or the push-constant block).
type Binding struct {
	Name    string `json:"name"`
	Group   int    `json:"group"`
	Binding int    `json:"binding"`
	// Kind is "storage", "read-only-storage", "uniform" or "push-constant".
	Kind   string `json:"kind"`
	Type   string `json:"type"`   // WGSL spelling of the store type
	Access string `json:"access"` // "read" or "read_write"
	// Size is the minimum binding size in bytes (runtime-sized arrays count
	// one element); ElementStride is the stride of a runtime-sized array, 0 if none.
	Size          int            `json:"size"`
	ElementStride int            `json:"element_stride,omitempty"`
	Members       []MemberLayout `json:"members,omitempty"` // struct store types: the host layout
}

// MemberLayout is one struct member in host-shareable layout.
type MemberLayout struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Offset int    `json:"offset"`
	Size   int    `json:"size"`
	Align  int    `json:"align"`
}

// EntryPoint is one compute entry point.
type EntryPoint struct {
	Name          string    `json:"name"`
	WorkgroupSize [3]uint32 `json:"workgroup_size"` // defaults where overrides are used
	// WorkgroupSizeOverrides names, per dimension, the override-expression
	// that sets it ("" for a constant).
	WorkgroupSizeOverrides [3]string `json:"workgroup_size_overrides"`
	Bindings               []int     `json:"bindings"` // indices into Reflection.Bindings used by this entry point
}

// Override is an override declaration: a specialization constant.
type Override struct {
	Name       string  `json:"name"`
	ID         int     `json:"id"`
	Type       string  `json:"type"`
	HasDefault bool    `json:"has_default"`
	Default    float64 `json:"default"` // bool as 0/1
	// Derived is the initializer of an override computed from other
	// overrides; such an override has no ID (-1) unless it declares an @id.
	// Module.SPIRV computes it; Specialize also lets a pipeline set it.
	Derived string `json:"derived,omitempty"`
}

// reflectModule describes a checked module.
func reflectModule(m *checked) Reflection {
	r := Reflection{Bindings: []Binding{}, EntryPoints: []EntryPoint{}, Overrides: []Override{}}
	if m == nil || m.file == nil {
		return r // not from check: nothing to describe
	}
	index := map[*symbol]int{}
	for _, s := range sortedGlobals(m.globals) {
		if s.space != spaceStorage && s.space != spaceUniform && s.space != spacePushConstant {
			continue
		}
		b := Binding{Name: s.name, Group: s.group, Binding: s.binding, Type: s.typ.String(), Access: s.access.String(), Size: s.typ.Size()}
		switch {
		case s.space == spaceUniform:
			b.Kind = "uniform"
		case s.space == spacePushConstant:
			b.Kind = "push-constant"
			b.Group, b.Binding = -1, -1
		case s.access == accessRead:
			b.Kind = "read-only-storage"
		default:
			b.Kind = "storage"
		}
		t := s.typ
		if t.Kind == kStruct {
			for _, f := range t.Struct.Members {
				b.Members = append(b.Members, MemberLayout{Name: f.Name, Type: f.Type.String(), Offset: f.Offset, Size: f.Size, Align: f.Align})
			}
			t = t.Struct.Members[len(t.Struct.Members)-1].Type
		}
		if t.Kind == kArray && t.N == 0 {
			b.ElementStride = t.Stride()
		}
		if s.space == spacePushConstant {
			bb := b
			r.PushConstant = &bb
			r.PushConstantSize = b.Size
			continue
		}
		index[s] = len(r.Bindings)
		r.Bindings = append(r.Bindings, b)
	}
	for _, f := range m.entries {
		ep := EntryPoint{Name: f.decl.Name, Bindings: []int{}}
		for i, d := range f.wgSize {
			ep.WorkgroupSize[i] = uint32(max(d.val, 1))
			if d.override != nil {
				ep.WorkgroupSizeOverrides[i] = d.name
			}
		}
		for _, s := range usedVars(f, spaceNone, sortedGlobals(m.globals)) {
			if i, ok := index[s]; ok {
				ep.Bindings = append(ep.Bindings, i)
			}
		}
		r.EntryPoints = append(r.EntryPoints, ep)
	}
	for _, s := range m.overrides {
		o := Override{Name: s.name, ID: s.overrideID, Type: s.typ.String(), HasDefault: s.hasDefault}
		if s.derived != nil {
			sp := m.file.Span(s.derived)
			o.Derived = m.file.Source[sp.Start:sp.End]
		}
		if s.val != nil {
			switch {
			case s.typ.Kind == kBool:
				o.Default = b2f(s.val.b)
			case s.typ.isFloat():
				o.Default = s.val.f
			default:
				o.Default = float64(s.val.i)
			}
		}
		r.Overrides = append(r.Overrides, o)
	}
	r.MatrixConfigs = matrixConfigs(m)
	return r
}
