package wgsl

import (
	"fmt"
	"sort"
)

// checked is the result of check: the syntax tree with every name resolved,
// every expression typed and every constant evaluated. Only check makes one,
// so the emitter (emit) and reflectModule only ever see checked modules.
type checked struct {
	file      *file
	enables   map[string]bool
	globals   []*symbol // module-scope variables, in declaration order
	overrides []*symbol // override declarations, in declaration order
	funcs     []*function
	entries   []*function

	types     *types
	info      map[expr]*exprInfo
	localSyms map[*varDecl]*symbol

	// noSPIRV says why the module has no whole-module SPIR-V with
	// specialization constants ("" when it has one); its pipelines are
	// compiled one entry point at a time (Module.Specialize).
	noSPIRV string
}

// File is the syntax tree the module was checked from.
func (m *checked) File() *file { return m.file }

// EntryPoints names the module's entry points, in declaration order.
func (m *checked) EntryPoints() []string {
	var out []string
	for _, f := range m.entries {
		out = append(out, f.decl.Name)
	}
	return out
}

// symKind says what a name denotes.
type symKind int

const (
	symConst symKind = iota
	symOverride
	symGlobalVar
	symLocalVar
	symLet
	symParam
	symFn
	symType
)

// symbol is a declared name.
type symbol struct {
	kind   symKind
	name   string
	pos    int
	typ    *wgslType // value type; store type for variables; the type for type names
	val    *value
	space  addrSpace
	access access
	decl   *varDecl
	fn     *function

	// resources and overrides
	group, binding int
	overrideID     int
	derived        expr // an override computed from other overrides (no id)
	computed       bool // derived, but not a specialization constant: computed in the shader
	initRuntime    bool // a private variable whose initializer is computed in the shader
	hasDefault     bool
	init           expr // initializer of a global var, override or let/var

	state   int // module-scope resolution: 0 new, 1 in progress, 2 done
	used    bool
	missing string // specializing: the override without a value (no pipeline constant, no initializer) this one needs
}

// function is a checked function.
type function struct {
	sym      *symbol
	decl     *fnDecl
	params   []*symbol
	builtins []string    // entry points: the @builtin of each parameter
	diag     diagFilters // @diagnostic attributes
	result   *wgslType   // nil for none
	compute  bool
	wgSize   [3]wgDim
	calls    []*function
	usesVars map[*symbol]bool // module-scope variables used directly
}

// wgDim is one workgroup_size dimension: a constant or an override-expression.
type wgDim struct {
	val      int64
	override expr // non-nil: the dimension is an override-expression
	name     string
}

// exprInfo is what the checker knows about one expression.
type exprInfo struct {
	typ       *wgslType // the value type, or the store type of a reference
	val       *value
	override  bool // an override-expression (fixed at pipeline creation)
	ref       bool // a reference (memory view) into space with access
	space     addrSpace
	access    access
	sym       *symbol   // identifiers
	call      callKind  // calls
	fn        *function // calls of user functions
	builtin   string    // calls of builtin functions
	swizzle   []int     // member access on vectors
	swizzleOf bool      // a multi-component swizzle of a reference: assignable (swizzle_assignment)
	field     int       // member access on structs
	autoDeref bool      // member/index through a pointer value
}

type callKind int

const (
	callFn callKind = iota + 1
	callBuiltin
	callConstruct // T(...) with matching component count
	callConvert   // T(x) conversion between scalar kinds
	callBitcast
	callZero
)

// checker holds the state of one check.
type checker struct {
	stdUniform   bool // uniform buffers take the storage layout (Options.UniformStandardLayout)
	errs         *errorList
	out          *checked
	ts           *types
	module       map[string]*symbol
	decls        map[*symbol]decl
	scopes       []map[string]*symbol
	fn           *function
	loops        int // enclosing loops
	inCont       int // inside a continuing block
	switches     int // enclosing switch statements (a break may target them)
	nextID       map[int]bool
	builtinTypes map[string]*wgslType
	diag         diagFilters          // the module's diagnostic directives
	stmtDiag     map[stmt]diagFilters // @diagnostic on statements

	// spec, when not nil, specializes the module for one pipeline: every
	// override becomes a constant with its pipeline value (see specialize.go).
	spec           map[string]pipelineValue
	inOverrideInit bool   // checking an override's initializer while specializing
	missingSeen    string // ... and it used an override that has no value: its name
}

// checkDefault resolves names, types every expression and evaluates
// constants. It returns every error found, sorted by position. It applies the
// rules of the zero Options (the uniform address space keeps its 16-byte
// layout rules).
func checkDefault(f *file) (*checked, error) { return check(f, Options{}) }

// check is checkDefault under the layout rules opt selects.
func check(f *file, opt Options) (*checked, error) { return checkSpec(f, opt, nil) }

// checkSpec is check; with spec not nil, every override is a constant with
// its pipeline value (see Module.Specialize).
func checkSpec(f *file, opt Options, spec map[string]pipelineValue) (_ *checked, err error) {
	if f == nil {
		return nil, &InternalError{Msg: "check needs the result of parse"}
	}
	defer internalPanic(f.Name, &err)
	errs := &errorList{file: f.Name, src: f.Source}
	ts := &types{m: map[string]*wgslType{}}
	c := &checker{
		errs:       errs,
		ts:         ts,
		stdUniform: opt.UniformStandardLayout,
		spec:       spec,
		module:     map[string]*symbol{},
		decls:      map[*symbol]decl{},
		out:        &checked{file: f, enables: map[string]bool{}, types: ts, info: map[expr]*exprInfo{}, localSyms: map[*varDecl]*symbol{}},
	}
	c.predeclare()
	if c.stagesFirst(f) {
		return nil, errs.err()
	}
	c.directives(f)
	c.stmtFilters(f)
	for _, e := range f.Enables {
		for i, n := range e.Names {
			switch n {
			case "f16", "subgroups":
				c.out.enables[n] = true
			case matrixExtension: // implies subgroups, as Tint takes it (the proposal: no subgroups enable needed)
				c.out.enables[n], c.out.enables["subgroups"] = true, true
			default:
				c.errorf(e.Poss[i], "extension '%s' is not supported (supported: f16, subgroups, %s)", n, matrixExtension)
			}
		}
	}
	// Collect module-scope names; declarations are order independent.
	symOf := map[decl]*symbol{}
	for _, d := range f.Decls {
		var s *symbol
		switch d := d.(type) {
		case *varDecl:
			k := map[string]symKind{"var": symGlobalVar, "const": symConst, "override": symOverride}[d.Kind]
			s = &symbol{kind: k, name: d.Name, pos: d.NamePos, decl: d}
		case *fnDecl:
			s = &symbol{kind: symFn, name: d.Name, pos: d.NamePos}
		case *structDecl:
			s = &symbol{kind: symType, name: d.Name, pos: d.Pos}
		case *aliasDecl:
			s = &symbol{kind: symType, name: d.Name, pos: d.Pos}
		case *constAssert:
			continue
		}
		if old := c.module[s.name]; old != nil {
			c.errorNote(s.pos, old.pos, "previous declaration here", "redeclaration of '%s'", s.name)
			continue
		}
		c.module[s.name] = s
		c.decls[s] = d
		symOf[d] = s
	}
	for _, d := range f.Decls {
		if ca, ok := d.(*constAssert); ok {
			c.constAssert(ca)
		} else if s := symOf[d]; s != nil {
			c.resolve(s)
		}
	}
	// Function bodies, after every signature is known.
	for _, d := range f.Decls {
		if s := symOf[d]; s != nil && s.fn != nil {
			c.fnBody(s.fn)
		}
	}
	c.checkRecursion()
	if len(errs.errs) == 0 {
		c.checkUniformity()
		c.checkAliasing()
	}
	if len(c.out.entries) > 1 {
		for _, f := range c.out.entries {
			for _, d := range f.wgSize {
				if d.override != nil {
					c.noSPIRVBecause("entry point '%s' has an override-sized @workgroup_size and is not the only entry point (one WorkgroupSize per SPIR-V module)", f.decl.Name)
					break
				}
			}
		}
	}
	c.checkBindings()
	c.assignOverrideIDs()
	if len(c.out.entries) == 0 {
		c.noSPIRVBecause("the module has no entry point (a SPIR-V module needs one)")
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	return c.out, nil
}

// noSPIRVBecause records the first reason the module has no whole-module
// SPIR-V: valid WGSL that specialization constants cannot express.
func (c *checker) noSPIRVBecause(format string, args ...any) {
	if c.out.noSPIRV == "" {
		c.out.noSPIRV = fmt.Sprintf(format, args...)
	}
}

func (c *checker) errorf(pos int, format string, args ...any) {
	c.errs.add(pos, format, args...)
}

func (c *checker) predeclare() {
	c.builtinTypes = map[string]*wgslType{
		"bool": c.ts.scalar(kBool), "i32": c.ts.scalar(kI32), "u32": c.ts.scalar(kU32),
		"f32": c.ts.scalar(kF32), "f16": c.ts.scalar(kF16),
	}
	for n := 2; n <= 4; n++ {
		for suf, k := range map[string]kind{"f": kF32, "h": kF16, "i": kI32, "u": kU32} {
			c.builtinTypes[fmt.Sprintf("vec%d%s", n, suf)] = c.ts.vec(n, c.ts.scalar(k))
		}
		for r := 2; r <= 4; r++ {
			c.builtinTypes[fmt.Sprintf("mat%dx%df", n, r)] = c.ts.mat(n, r, c.ts.scalar(kF32))
			c.builtinTypes[fmt.Sprintf("mat%dx%dh", n, r)] = c.ts.mat(n, r, c.ts.scalar(kF16))
		}
	}
}

// resolve checks a module-scope declaration on first use (cycles are errors).
func (c *checker) resolve(s *symbol) {
	switch s.state {
	case 2:
		return
	case 1:
		c.errorf(s.pos, "'%s' depends on itself", s.name)
		return
	}
	s.state = 1
	saveScopes, saveFn := c.scopes, c.fn
	c.scopes, c.fn = nil, nil
	defer func() { c.scopes, c.fn = saveScopes, saveFn; s.state = 2 }()
	switch d := c.decls[s].(type) {
	case *varDecl:
		switch d.Kind {
		case "const":
			c.constDecl(s, d)
		case "override":
			c.overrideDecl(s, d)
		case "var":
			c.globalVar(s, d)
		}
	case *fnDecl:
		c.fnSignature(s, d)
	case *structDecl:
		c.structDecl(s, d)
	case *aliasDecl:
		s.typ = c.typeOf(d.Type)
	}
}

// lookup finds a name in the local scopes, then at module scope.
func (c *checker) lookup(name string) *symbol {
	for i := len(c.scopes) - 1; i >= 0; i-- {
		if s := c.scopes[i][name]; s != nil {
			return s
		}
	}
	if s := c.module[name]; s != nil {
		c.resolve(s)
		return s
	}
	return nil
}

func (c *checker) declare(s *symbol) {
	top := c.scopes[len(c.scopes)-1]
	if old := top[s.name]; old != nil {
		c.errorNote(s.pos, old.pos, "previous declaration here", "redeclaration of '%s' in the same scope", s.name)
		return
	}
	top[s.name] = s
}

func (c *checker) push() { c.scopes = append(c.scopes, map[string]*symbol{}) }
func (c *checker) pop()  { c.scopes = c.scopes[:len(c.scopes)-1] }

func (c *checker) constAssert(d *constAssert) {
	x := c.constExpr(d.Cond)
	if x == nil {
		return
	}
	if x.typ.Kind != kBool {
		c.errorSpan(d.Cond, "const_assert needs a bool, got '%s'", x.typ)
		return
	}
	if !x.val.b {
		c.errorf(d.Pos, "const_assert failed")
	}
}

func (c *checker) constDecl(s *symbol, d *varDecl) {
	x := c.constExpr(d.Init)
	if x == nil {
		return
	}
	if d.Type != nil {
		t := c.typeOf(d.Type)
		if t == nil || !c.convertTo(d.Init, t) {
			return
		}
	}
	if !x.typ.constructible() {
		c.errorSpan(d.Init, "a const must have a constructible type, not '%s'", x.typ)
		return
	}
	if !c.valueArrays(x.typ, d.NamePos, "const '"+d.Name+"'") {
		return
	}
	s.typ, s.val = x.typ, x.val
}

// constExpr checks an expression that must be a const-expression.
func (c *checker) constExpr(e expr) *exprInfo {
	x := c.rvalue(e)
	if x == nil {
		return nil
	}
	if x.val == nil {
		if x.override {
			c.errorSpan(e, "expected a const-expression; override values are not known until pipeline creation")
		} else {
			c.errorSpan(e, "expected a const-expression")
		}
		return nil
	}
	return x
}

func (c *checker) overrideDecl(s *symbol, d *varDecl) {
	var t *wgslType
	if d.Type != nil {
		t = c.typeOf(d.Type)
		if t == nil {
			return
		}
	}
	s.overrideID = -1
	for _, a := range d.Attrs {
		if a.Name != "id" {
			c.errorf(a.Pos, "attribute '@%s' is not valid on an override", a.Name)
			continue
		}
		if id, ok := c.attrInt(a, 0, 65535); ok {
			s.overrideID = int(id)
		}
	}
	if c.spec != nil {
		c.specializeOverride(s, d, t)
		return
	}
	if d.Init != nil {
		x := c.rvalue(d.Init)
		if x == nil {
			return
		}
		if t == nil {
			c.materialize(d.Init)
			t = x.typ
		} else if !c.convertTo(d.Init, t) {
			return
		}
		if x.val == nil {
			// A derived override: computed from other overrides, so it
			// cannot be set itself. Integer arithmetic becomes a
			// specialization constant (OpSpecConstantOp); anything else
			// (float arithmetic, builtin calls, conversions) is computed in
			// the shader, so it cannot size arrays or workgroups.
			if !x.override {
				c.errorSpan(d.Init, "an override's initializer must be a const- or override-expression")
				return
			}
			s.computed = !c.specConstInt(d.Init)
			if s.overrideID >= 0 {
				c.noSPIRVBecause("override '%s' has an @id and an initializer computed from other overrides (a specialization constant cannot be both)", s.name)
			}
			s.derived = d.Init
			s.val = c.overrideDefault(d.Init)
			s.hasDefault = s.val != nil
		} else {
			s.val, s.hasDefault = x.val, true
		}
	}
	if t == nil {
		c.errorf(d.NamePos, "override '%s' needs a type or an initializer", d.Name)
		return
	}
	if !t.isScalar() || t.isAbstract() {
		c.errorf(d.NamePos, "an override must have a concrete scalar type, not '%s'", t)
		return
	}
	s.typ = t
	c.out.overrides = append(c.out.overrides, s)
}

// assignOverrideIDs gives overrides without @id the lowest free ids, in declaration order.
func (c *checker) assignOverrideIDs() {
	used := map[int]*symbol{}
	for _, s := range c.out.overrides {
		if s.overrideID >= 0 {
			if o := used[s.overrideID]; o != nil {
				c.errorf(s.pos, "override id %d is already used by '%s'", s.overrideID, o.name)
			}
			used[s.overrideID] = s
		}
	}
	next := 0
	for _, s := range c.out.overrides {
		if s.overrideID < 0 && s.derived == nil {
			for used[next] != nil {
				next++
			}
			s.overrideID = next
			used[next] = s
		}
	}
}

// attrInt evaluates attribute argument i as a const integer in [lo, hi].
func (c *checker) attrInt(a *attr, lo, hi int64) (int64, bool) {
	if len(a.Args) != 1 {
		c.errorf(a.Pos, "@%s takes one argument", a.Name)
		return 0, false
	}
	x := c.constExpr(a.Args[0])
	if x == nil {
		return 0, false
	}
	if !x.typ.isInt() || x.typ.Kind == kVec {
		c.errorSpan(a.Args[0], "@%s needs an integer, got '%s'", a.Name, x.typ)
		return 0, false
	}
	if x.typ.isAbstract() && !c.convertTo(a.Args[0], c.ts.scalar(kI32)) {
		return 0, false // attribute values are i32 or u32
	}
	if x.val.i < lo || x.val.i > hi {
		c.errorSpan(a.Args[0], "@%s value %d is out of range [%d, %d]", a.Name, x.val.i, lo, hi)
		return 0, false
	}
	return x.val.i, true
}

func (c *checker) checkRecursion() {
	state := map[*function]int{}
	var visit func(f *function) bool
	visit = func(f *function) bool {
		switch state[f] {
		case 1:
			c.errorf(f.decl.NamePos, "recursion is not allowed: '%s' calls itself", f.decl.Name)
			return false
		case 2:
			return true
		}
		state[f] = 1
		for _, g := range f.calls {
			if !visit(g) {
				state[f] = 2
				return false
			}
		}
		state[f] = 2
		return true
	}
	for _, f := range c.out.funcs {
		visit(f)
	}
}

// sortedGlobals returns module variables ordered by group and binding (reflection order).
func sortedGlobals(gs []*symbol) []*symbol {
	out := append([]*symbol(nil), gs...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].group != out[j].group {
			return out[i].group < out[j].group
		}
		return out[i].binding < out[j].binding
	})
	return out
}

// overrideDefault evaluates an integer override-expression with the default
// values of the overrides it uses (nil if one has no default).
func (c *checker) overrideDefault(e expr) *value {
	x := c.out.info[e]
	if x == nil {
		return nil
	}
	if x.val != nil {
		return x.val
	}
	switch e := e.(type) {
	case *ident:
		if x.sym != nil {
			return x.sym.val
		}
	case *parenExpr:
		return c.overrideDefault(e.X)
	case *binaryExpr:
		a, b := c.overrideDefault(e.X), c.overrideDefault(e.Y)
		if a == nil || b == nil {
			return nil
		}
		v, err := evalBinary(e.Op, a, b, c.out.info[e.X].typ, c.out.info[e.Y].typ, x.typ)
		if err != nil {
			return nil
		}
		return v
	}
	return nil
}

// specConst reports an expression the emitter can give as a constant or a
// specialization constant: a const-expression, an override that is not
// computed in the shader, or integer arithmetic on them.
func (c *checker) specConst(e expr) bool {
	x := c.out.info[e]
	if x == nil {
		return false
	}
	switch {
	case x.val != nil || c.specConstInt(e):
		return true
	case x.sym != nil:
		_, ok := e.(*ident)
		return ok && x.sym.kind == symOverride && !x.sym.computed
	}
	if p, ok := e.(*parenExpr); ok {
		return c.specConst(p.X)
	}
	return false
}

// errorSpanNote is errorSpan with a secondary label at expression at.
func (c *checker) errorSpanNote(e, at expr, note, format string, args ...any) {
	c.errorSpan(e, format, args...)
	c.errs.note(c.out.file.Span(e).Start, at.exprPos(), note)
}

// errorNote is errorf with a secondary label at offset at.
func (c *checker) errorNote(pos, at int, note, format string, args ...any) {
	c.errorf(pos, format, args...)
	c.errs.note(pos, at, note)
}

// errorSpan reports an error at expression e, underlining all of it.
func (c *checker) errorSpan(e expr, format string, args ...any) {
	c.errs.addSpan(c.out.file.Span(e), format, args...)
}

// checkBindings rejects two resource variables with the same @group and
// @binding used by one entry point.
func (c *checker) checkBindings() {
	for _, f := range c.out.entries {
		seen := map[[2]int]*symbol{}
		for _, s := range usedVars(f, spaceNone, c.out.globals) {
			if s.space != spaceStorage && s.space != spaceUniform {
				continue
			}
			k := [2]int{s.group, s.binding}
			if o := seen[k]; o != nil {
				c.errorf(s.pos, "entry point '%s' uses both '%s' and '%s' at @group(%d) @binding(%d)", f.decl.Name, o.name, s.name, s.group, s.binding)
				continue
			}
			seen[k] = s
		}
	}
}
