package wgsl

import (
	"fmt"
	"strings"
)

// typeOf resolves a type specifier.
func (c *checker) typeOf(e expr) *wgslType {
	id, ok := e.(*ident)
	if !ok {
		c.errorSpan(e, "expected a type")
		return nil
	}
	nargs := func(lo, hi int) bool {
		if len(id.Args) < lo || len(id.Args) > hi {
			if lo == hi {
				c.errorf(id.Pos, "'%s' takes %d template arguments, got %d", id.Name, lo, len(id.Args))
			} else {
				c.errorf(id.Pos, "'%s' takes %d to %d template arguments, got %d", id.Name, lo, hi, len(id.Args))
			}
			return false
		}
		return true
	}
	if s := c.lookup(id.Name); s != nil {
		// User declarations shadow predeclared types and generators.
		if s.kind != symType {
			c.errorf(id.Pos, "'%s' is not a type", id.Name)
			return nil
		}
		if len(id.Args) > 0 {
			c.errorf(id.Pos, "'%s' takes no template arguments", id.Name)
			return nil
		}
		return s.typ
	}
	if t := c.builtinTypes[id.Name]; t != nil {
		if !nargs(0, 0) {
			return nil
		}
		if t.hasF16() && !c.out.enables["f16"] {
			c.errorf(id.Pos, "f16 requires 'enable f16;'")
			return nil
		}
		return t
	}
	switch id.Name {
	case "vec2", "vec3", "vec4":
		if len(id.Args) == 0 {
			c.errorf(id.Pos, "'%s' needs a component type: %s<f32>", id.Name, id.Name)
			return nil
		}
		if !nargs(1, 1) {
			return nil
		}
		el := c.typeOf(id.Args[0])
		if el == nil {
			return nil
		}
		if !el.isScalar() || el.isAbstract() {
			c.errorSpan(id.Args[0], "vector components must be scalars, not '%s'", el)
			return nil
		}
		return c.ts.vec(int(id.Name[3]-'0'), el)
	case "array":
		if len(id.Args) == 0 {
			c.errorf(id.Pos, "'array' needs an element type")
			return nil
		}
		if !nargs(1, 2) {
			return nil
		}
		el := c.typeOf(id.Args[0])
		if el == nil {
			return nil
		}
		if !el.constructible() && !(el.hasAtomic() && !el.runtimeSized()) {
			c.errorSpan(id.Args[0], "array elements must have a fixed size, not '%s'", el)
			return nil
		}
		if len(id.Args) == 1 {
			return c.ts.array(el, 0)
		}
		n := c.rvalue(id.Args[1])
		if n == nil {
			return nil
		}
		if !n.typ.isInt() || n.typ.Kind == kVec {
			c.errorSpan(id.Args[1], "array element count must be an integer, not '%s'", n.typ)
			return nil
		}
		if n.val == nil {
			if !n.override {
				c.errorSpan(id.Args[1], "array element count must be a const-expression or an integer override-expression")
				return nil
			}
			if !c.specConstInt(id.Args[1]) {
				c.noSPIRVBecause("%s", notSpecConst("an array element count"))
			}
			c.materialize(id.Args[1])
			sp := c.out.file.Span(id.Args[1])
			return c.ts.get(wgslType{Kind: kArray, Elem: el, CountOverride: &overrideCount{expr: id.Args[1], text: c.out.file.Source[sp.Start:sp.End]}})
		}
		if n.typ.isAbstract() && !c.convertTo(id.Args[1], c.ts.scalar(kI32)) {
			return nil // an abstract count is an i32
		}
		if n.val.i <= 0 {
			c.errorSpan(id.Args[1], "array element count must be positive, got %d", n.val.i)
			return nil
		}
		// The count is at most 0xffffffff (u32) and so is the stride
		// (every type is bounded so), so the product fits a uint64.
		if size := uint64(n.val.i) * uint64(roundUp(el.Align(), el.Size())); size > maxByteSize {
			c.errorSpan(id.Args[1], "array byte size (0x%x) must not exceed 0x%x bytes", size, maxByteSize)
			return nil
		}
		return c.ts.array(el, int(n.val.i))
	case "atomic":
		if !nargs(1, 1) {
			return nil
		}
		el := c.typeOf(id.Args[0])
		if el == nil {
			return nil
		}
		if el.Kind != kI32 && el.Kind != kU32 {
			c.errorSpan(id.Args[0], "atomic needs i32 or u32, not '%s'", el)
			return nil
		}
		return c.ts.get(wgslType{Kind: kAtomic, Elem: el})
	case "ptr":
		if !nargs(2, 3) {
			return nil
		}
		sp, ok := id.Args[0].(*ident)
		space := spaceNone
		if ok {
			space, _ = spaceNamed(sp.Name)
		}
		switch space {
		case spaceFunction, spacePrivate, spaceWorkgroup, spaceStorage, spaceUniform:
		default:
			c.errorSpan(id.Args[0], "expected an address space (function, private, workgroup, storage, uniform)")
			return nil
		}
		el := c.typeOf(id.Args[1])
		if el == nil {
			return nil
		}
		acc := defaultAccess(space)
		if len(id.Args) == 3 {
			a, ok := id.Args[2].(*ident)
			var named access
			if ok {
				named, ok = accessNamed(a.Name)
			}
			if !ok {
				c.errorSpan(id.Args[2], "expected an access mode (read, write, read_write)")
				return nil
			}
			if space != spaceStorage {
				c.errorSpan(id.Args[2], "an access mode may only be given for the storage address space")
				return nil
			}
			acc = named
		}
		return c.ts.ptr(space, el, acc)
	}
	if role, ok := matrixRoleNamed(id.Name); ok {
		return c.matrixType(id, role)
	}
	if cols, rows, ok := matName(id.Name); ok {
		if len(id.Args) == 0 {
			c.errorf(id.Pos, "'%s' needs a component type: %s<f32>", id.Name, id.Name)
			return nil
		}
		if !nargs(1, 1) {
			return nil
		}
		el := c.typeOf(id.Args[0])
		if el == nil {
			return nil
		}
		if el.Kind != kF32 && el.Kind != kF16 {
			c.errorSpan(id.Args[0], "matrix components must be f32 or f16, not '%s'", el)
			return nil
		}
		return c.ts.mat(cols, rows, el)
	}
	s := c.lookup(id.Name)
	if s == nil && isTextureName(id.Name) {
		c.errorf(id.Pos, "textures are not supported ('%s'): this compiler handles buffers only", id.Name)
		return nil
	}
	if s == nil {
		c.errorf(id.Pos, "unknown type '%s'", id.Name)
		return nil
	}
	if s.kind != symType {
		c.errorf(id.Pos, "'%s' is not a type", id.Name)
		return nil
	}
	if len(id.Args) > 0 {
		c.errorf(id.Pos, "'%s' takes no template arguments", id.Name)
		return nil
	}
	return s.typ
}

// matName parses "matCxR" (C, R in 2..4).
func matName(n string) (cols, rows int, ok bool) {
	if len(n) != 6 || n[:3] != "mat" || n[4] != 'x' || n[3] < '2' || n[3] > '4' || n[5] < '2' || n[5] > '4' {
		return 0, 0, false
	}
	return int(n[3] - '0'), int(n[5] - '0'), true
}

func defaultAccess(s addrSpace) access {
	switch s {
	case spaceStorage, spaceUniform, spacePushConstant:
		return accessRead
	}
	return accessReadWrite
}

func (c *checker) structDecl(s *symbol, d *structDecl) {
	st := &structType{Name: d.Name}
	names := map[string]bool{}
	failed := false
	offset, align := 0, 1
	for i, m := range d.Members {
		if names[m.Name] {
			c.errorf(m.Pos, "duplicate member '%s'", m.Name)
		}
		names[m.Name] = true
		t := c.typeOf(m.Type)
		if t == nil {
			failed = true
			continue
		}
		if t.runtimeSized() && (i != len(d.Members)-1 || t.Kind == kStruct) {
			c.errorf(m.Pos, "a runtime-sized array may only be the last member of a struct")
			continue
		}
		if t.Kind == kPtr || t.CountOverride != nil {
			c.errorf(m.Pos, "member type '%s' is not allowed in a struct", t)
			continue
		}
		fa, fs := t.Align(), t.Size()
		bi := ""
		for _, a := range m.Attrs {
			switch a.Name {
			case "align":
				if v, ok := c.attrInt(a, 1, 1<<31); ok {
					if v&(v-1) != 0 {
						c.errorSpan(a.Args[0], "@align must be a power of two")
					} else {
						fa = int(v)
					}
				}
			case "size":
				if v, ok := c.attrInt(a, 1, maxByteSize); ok {
					if int(v) < t.Size() {
						c.errorSpan(a.Args[0], "@size(%d) is smaller than the member's size %d", v, t.Size())
					} else {
						fs = int(v)
					}
				}
			case "builtin":
				bi = c.builtinAttr(a, t, m.Type.Pos, true)
				if bi == "" {
					bi = "?"
				}
			case "location": // vertex/fragment IO: harmless until the struct is a compute input
				c.attrInt(a, 0, 1<<30)
			default:
				c.errorf(a.Pos, "attribute '@%s' is not valid on a struct member", a.Name)
			}
		}
		st.Builtins = append(st.Builtins, bi)
		offset = roundUp(fa, offset)
		if offset > maxByteSize {
			c.errorf(m.Pos, "struct member offset (0x%x) must not exceed 0x%x bytes", offset, maxByteSize)
			failed = true
		}
		st.Members = append(st.Members, field{Name: m.Name, Type: t, Offset: offset, Align: fa, Size: fs})
		offset += fs
		align = max(align, fa)
	}
	st.Align = align
	st.Size = roundUp(align, max(offset, 1))
	if st.Size > maxByteSize && !failed {
		c.errorf(d.Pos, "struct size (0x%x) must not exceed 0x%x bytes", st.Size, maxByteSize)
		failed = true
	}
	if failed || len(st.Members) != len(d.Members) || len(st.Members) == 0 {
		return // errors reported; uses of the struct stay silent
	}
	s.typ = c.ts.get(wgslType{Kind: kStruct, Struct: st})
}

func (c *checker) globalVar(s *symbol, d *varDecl) {
	// Address space and access mode names are predeclared enumerants that a
	// module-scope declaration can shadow.
	for _, n := range []string{d.Space, d.Access} {
		if n != "" && c.module[n] != nil {
			c.errorf(d.SpacePos+1, "'%s' is declared in this module, so it cannot name an address space or access mode here", n)
			return
		}
	}
	space, known := spaceNamed(d.Space)
	switch {
	case !known:
		c.errorf(d.SpacePos+1, "unknown address space '%s'", d.Space)
		return
	case space == spaceNone:
		if d.Type != nil && isTextureName(d.Type.Name) {
			c.errorf(d.Type.Pos, "textures are not supported ('%s'): this compiler handles buffers only", d.Type.Name)
			return
		}
		c.errorf(d.Pos, "module-scope 'var' needs an address space: var<private>, var<workgroup>, var<storage> or var<uniform>")
		return
	case space == spaceFunction:
		c.errorf(d.SpacePos, "'function' variables must be declared inside a function")
		return
	}
	access := defaultAccess(space)
	if d.Access != "" {
		if space != spaceStorage {
			c.errorf(d.SpacePos+1, "only storage variables take an access mode")
			return
		}
		switch a, _ := accessNamed(d.Access); a {
		case accessRead, accessReadWrite:
			access = a
		case accessWrite:
			c.errorf(d.SpacePos+1, "write-only storage buffers are not allowed; use read_write")
			return
		default:
			c.errorf(d.SpacePos+1, "unknown access mode '%s'", d.Access)
			return
		}
	}
	s.space, s.access = space, access
	var t *wgslType
	var init *exprInfo // the initializer of a private variable of inferred type
	switch {
	case d.Type != nil:
		if t = c.typeOf(d.Type); t == nil {
			return
		}
	case space == spacePrivate && d.Init != nil:
		if init = c.rvalue(d.Init); init == nil {
			return
		}
		c.materialize(d.Init)
		t = init.typ
	default:
		c.errorf(d.NamePos, "module-scope variable '%s' needs a type", d.Name)
		return
	}
	s.typ = t
	s.group, s.binding = -1, -1
	for _, a := range d.Attrs {
		switch a.Name {
		case "group":
			if v, ok := c.attrInt(a, 0, 1<<20); ok {
				s.group = int(v)
			}
		case "binding":
			if v, ok := c.attrInt(a, 0, 1<<20); ok {
				s.binding = int(v)
			}
		default:
			c.errorf(a.Pos, "attribute '@%s' is not valid on a variable", a.Name)
		}
	}
	resource := space == spaceStorage || space == spaceUniform
	if resource && (s.group < 0 || s.binding < 0) {
		c.errorf(d.NamePos, "%s variable '%s' needs @group and @binding", space, d.Name)
		return
	}
	if !resource && len(d.Attrs) > 0 {
		c.errorf(d.Attrs[0].Pos, "@group and @binding are only valid on uniform and storage variables")
		return
	}
	if space != spaceStorage && !c.valueArrays(t, d.NamePos, "variable '"+d.Name+"'") {
		return
	}
	if t.CountOverride != nil && space != spaceWorkgroup {
		c.errorf(d.Type.Pos, "arrays sized by an override are only allowed in the workgroup address space")
		return
	}
	if msg := matrixSpaceError(t, space); msg != "" {
		c.errorf(d.Type.Pos, "%s", msg)
		return
	}
	switch space {
	case spaceStorage, spaceUniform, spacePushConstant:
		if !t.hostShareable() {
			c.errorf(d.Type.Pos, "type '%s' cannot be used in the %s address space (not host-shareable)", t, space)
			return
		}
		if t.hasF16() && !c.out.enables["f16"] {
			c.errorf(d.Type.Pos, "f16 requires 'enable f16;'")
			return
		}
		if space != spaceStorage && t.runtimeSized() {
			c.errorf(d.Type.Pos, "runtime-sized arrays are only allowed in storage buffers")
			return
		}
		if t.hasAtomic() && (space != spaceStorage || access != accessReadWrite) {
			c.errorf(d.Type.Pos, "atomics need storage, read_write or workgroup variables")
			return
		}
		if space == spaceUniform && !c.stdUniform {
			if msg := uniformLayoutError(t); msg != "" {
				c.errorf(d.Type.Pos, "%s", msg)
				return
			}
		}
		if d.Init != nil {
			c.errorSpan(d.Init, "%s variables cannot have an initializer", space)
			return
		}
	case spaceWorkgroup:
		if d.Init != nil {
			c.errorSpan(d.Init, "workgroup variables cannot have an initializer")
			return
		}
		if t.runtimeSized() || !t.constructible() && !t.hasAtomic() && t.CountOverride == nil {
			c.errorf(d.Type.Pos, "type '%s' cannot be used in the workgroup address space", t)
			return
		}
	case spacePrivate:
		if !t.constructible() {
			pos := d.NamePos
			if d.Type != nil {
				pos = d.Type.Pos
			}
			c.errorf(pos, "type '%s' cannot be used in the private address space", t)
			return
		}
		if d.Init != nil {
			x := init
			if x == nil {
				x = c.rvalue(d.Init)
			}
			if x == nil {
				return
			}
			if x.val == nil && !x.override {
				c.errorSpan(d.Init, "a private variable's initializer must be a const- or override-expression")
				return
			}
			if !c.convertTo(d.Init, t) {
				return
			}
			s.init = d.Init
			s.initRuntime = !c.specConst(d.Init)
		}
	}
	c.out.globals = append(c.out.globals, s)
}

// uniformLayoutError checks the extra layout rules of the uniform address space.
func uniformLayoutError(t *wgslType) string {
	switch t.Kind {
	case kArray:
		if t.Stride()%16 != 0 {
			return fmt.Sprintf("uniform arrays need an element stride that is a multiple of 16, but '%s' has stride %d (use vec4 or @size(16) on a struct)", t, t.Stride())
		}
		return uniformLayoutError(t.Elem)
	case kStruct:
		ms := t.Struct.Members
		for i, m := range ms {
			if m.Type.Kind == kStruct && m.Offset%16 != 0 {
				return fmt.Sprintf("uniform struct member '%s' of struct type must be at a multiple of 16 (offset %d)", m.Name, m.Offset)
			}
			if m.Type.Kind == kArray && m.Offset%16 != 0 {
				return fmt.Sprintf("uniform struct member '%s' of array type must be at a multiple of 16 (offset %d; use @align(16))", m.Name, m.Offset)
			}
			if i > 0 && ms[i-1].Type.Kind == kStruct && m.Offset < ms[i-1].Offset+roundUp(16, ms[i-1].Size) {
				return fmt.Sprintf("uniform struct member '%s' must start 16-byte aligned after struct member '%s'", m.Name, ms[i-1].Name)
			}
			if msg := uniformLayoutError(m.Type); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// stageBuiltins are the builtin values of the vertex and fragment stages.
var stageBuiltins = map[string]bool{"position": true, "vertex_index": true, "instance_index": true, "front_facing": true,
	"frag_depth": true, "sample_index": true, "sample_mask": true, "clip_distances": true, "primitive_index": true}

// builtinAttr checks @builtin(name) on a value of type t (nil after an
// error) declared at typePos, and returns name, or "" after an error. A
// struct member may name a vertex or fragment builtin: the struct is only
// wrong once it is a compute input.
func (c *checker) builtinAttr(a *attr, t *wgslType, typePos int, member bool) string {
	if len(a.Args) != 1 {
		c.errorf(a.Pos, "@builtin takes one argument")
		return ""
	}
	id, ok := a.Args[0].(*ident)
	if !ok {
		c.errorSpan(a.Args[0], "@builtin needs a builtin value name")
		return ""
	}
	bi := id.Name
	switch {
	case stageBuiltins[bi] && member:
		return bi
	case stageBuiltins[bi]:
		c.errorf(id.Pos, "builtin value '%s' is not available in compute shaders", bi)
		return ""
	}
	v, ok := builtinValues[bi]
	switch {
	case !ok:
		c.errorf(id.Pos, "unknown builtin value '%s'", bi)
		return ""
	case v.subgroup && !c.out.enables["subgroups"]:
		c.errorf(id.Pos, "'%s' requires 'enable subgroups;'", bi)
	}
	if want := v.typ(c.ts); t != nil && t != want {
		c.errorf(typePos, "@builtin(%s) must have type %s, not '%s'", bi, want, t)
	}
	return bi
}

func (c *checker) fnSignature(s *symbol, d *fnDecl) {
	f := &function{sym: s, decl: d, usesVars: map[*symbol]bool{}}
	s.fn = f
	c.out.funcs = append(c.out.funcs, f)
	var wg *attr
	for _, a := range d.Attrs {
		switch a.Name {
		case "compute":
			f.compute = true
		case "workgroup_size":
			wg = a
		case "must_use", "diagnostic":
		case "vertex", "fragment":
			c.errorf(a.Pos, "only compute shaders are supported")
		default:
			c.errorf(a.Pos, "attribute '@%s' is not valid on a function", a.Name)
		}
	}
	f.diag = c.attrFilters(d.Attrs)
	names := map[string]bool{}
	seen := map[string]bool{}
	useBuiltin := func(bi string, pos int) {
		if seen[bi] && bi != "?" {
			c.errorf(pos, "builtin value '%s' appears twice in the inputs of '%s'", bi, d.Name)
		}
		seen[bi] = true
	}
	for _, p := range d.Params {
		t := c.typeOf(p.Type)
		ps := &symbol{kind: symParam, name: p.Name, pos: p.Pos, typ: t}
		if names[p.Name] {
			c.errorf(p.Pos, "duplicate parameter '%s'", p.Name)
		}
		names[p.Name] = true
		f.params = append(f.params, ps)
		bi := ""
		for _, a := range p.Attrs {
			if a.Name != "builtin" {
				c.errorf(a.Pos, "attribute '@%s' is not valid on a parameter", a.Name)
				continue
			}
			bi = c.builtinAttr(a, t, p.Type.Pos, false)
			if bi == "" {
				bi = "?" // reported
			}
		}
		f.builtins = append(f.builtins, bi)
		if t == nil {
			continue
		}
		switch {
		case f.compute && bi == "" && t.Kind == kStruct && t.Struct.ioBuiltins():
			for k, m := range t.Struct.Builtins {
				if stageBuiltins[m] {
					c.errorf(p.Pos, "builtin value '%s' (member '%s' of '%s') is not available in compute shaders", m, t.Struct.Members[k].Name, t)
				}
				useBuiltin(m, p.Pos)
			}
		case f.compute && bi == "":
			c.errorf(p.Pos, "entry point parameter '%s' needs a @builtin attribute, or a struct type whose members all have one", p.Name)
		case f.compute:
			useBuiltin(bi, p.Pos)
		case bi != "":
			c.errorf(p.Pos, "@builtin is only valid on entry point parameters")
		}
		if t.Kind == kPtr {
			// unrestricted_pointer_parameters: storage, uniform and workgroup too.
			if t.Space == spacePushConstant {
				c.errorf(p.Type.Pos, "pointer parameters must point into the function, private, workgroup, storage or uniform address space")
			}
		} else if !t.constructible() {
			c.errorf(p.Type.Pos, "parameter type '%s' is not constructible", t)
		}
		c.valueArrays(t, p.Type.Pos, "parameter '"+p.Name+"'")
	}
	if d.Result != nil {
		f.result = c.typeOf(d.Result)
		if len(d.ResultAttrs) > 0 {
			c.errorf(d.ResultAttrs[0].Pos, "return value attributes are not supported")
		}
		if f.result != nil && !f.result.constructible() {
			c.errorf(d.Result.Pos, "return type '%s' is not constructible", f.result)
		}
		c.valueArrays(f.result, d.Result.Pos, "the result of '"+d.Name+"'")
		if f.compute {
			c.errorf(d.Result.Pos, "a compute entry point cannot return a value")
		}
	}
	if wg != nil && !f.compute {
		c.errorf(wg.Pos, "@workgroup_size is only valid on @compute functions")
	}
	if f.compute {
		if wg == nil {
			c.errorf(d.NamePos, "compute entry point '%s' needs @workgroup_size", d.Name)
			return
		}
		c.workgroupSize(f, wg)
		c.out.entries = append(c.out.entries, f)
	}
}

// workgroupSize checks @workgroup_size: one to three i32 or u32 const- or
// override-expressions (abstract integers take the others' type, or i32),
// each at least 1. The constant dimensions must multiply to a u32
// (maxWorkgroupInvocations); the device's limits are checked when package
// wgpu makes the pipeline, and override dimensions when Specialize does.
func (c *checker) workgroupSize(f *function, a *attr) {
	if len(a.Args) < 1 || len(a.Args) > 3 {
		c.errorf(a.Pos, "@workgroup_size takes 1 to 3 arguments")
		return
	}
	f.wgSize = [3]wgDim{{val: 1}, {val: 1}, {val: 1}}
	kind := c.ts.scalar(kI32)
	concrete := false
	xs := make([]*exprInfo, len(a.Args))
	for i, e := range a.Args {
		x := c.rvalue(e)
		if x == nil {
			return
		}
		if !x.typ.isInt() || x.typ.Kind == kVec {
			c.errorSpan(e, "@workgroup_size arguments must be integers, not '%s'", x.typ)
			return
		}
		if !x.typ.isAbstract() {
			if concrete && kind != x.typ {
				c.errorSpan(e, "@workgroup_size arguments must all have the same type")
				return
			}
			kind, concrete = x.typ, true
		}
		xs[i] = x
	}
	invocations := uint64(1)
	for i, e := range a.Args {
		x := xs[i]
		if x.typ.isAbstract() && !c.convertTo(e, kind) {
			return
		}
		switch {
		case x.val != nil:
			if x.val.i < 1 {
				c.errorSpan(e, "@workgroup_size values must be at least 1, got %d", x.val.i)
				return
			}
			// Each factor is at most 0xffffffff and so is invocations
			// before it, so the product fits a uint64.
			if invocations *= uint64(x.val.i); invocations > maxWorkgroupInvocations {
				c.errorSpan(e, "@workgroup_size gives more than %d invocations per workgroup", uint64(maxWorkgroupInvocations))
				return
			}
			f.wgSize[i] = wgDim{val: x.val.i}
		case x.override:
			if !c.specConstInt(e) {
				c.noSPIRVBecause("%s", notSpecConst("a @workgroup_size argument"))
			}
			sp := c.out.file.Span(e)
			dim := wgDim{override: e, name: c.out.file.Source[sp.Start:sp.End]}
			if v := c.overrideDefault(e); v != nil {
				dim.val = v.i
			}
			f.wgSize[i] = dim
		default:
			c.errorSpan(e, "@workgroup_size arguments must be const- or override-expressions")
			return
		}
	}
}

// notSpecConst explains why an override-expression that sizes something
// cannot be a specialization constant.
func notSpecConst(what string) string {
	return what + " uses overrides with more than integer arithmetic (+ - * / % << >> & | ^), " +
		"which a specialization constant cannot compute"
}

// isTextureName reports the predeclared texture and sampler type names.
func isTextureName(n string) bool {
	return strings.HasPrefix(n, "texture_") || n == "sampler" || n == "sampler_comparison"
}

// stagesFirst reports vertex and fragment entry points, if any, as the one
// reason the module cannot compile: their attributes and IO would otherwise
// give errors of their own, each beside the point.
func (c *checker) stagesFirst(f *file) bool {
	found := false
	for _, d := range f.Decls {
		fd, ok := d.(*fnDecl)
		if !ok {
			continue
		}
		for _, a := range fd.Attrs {
			if a.Name == "vertex" || a.Name == "fragment" {
				c.errorf(a.Pos, "only compute shaders are supported: '%s' is a @%s entry point", fd.Name, a.Name)
				found = true
			}
		}
	}
	return found
}
