package wgsl

// templated lists the predeclared names that take template arguments; after
// one of them '<' opens a template list rather than comparing.
var templated = map[string]bool{
	"vec2": true, "vec3": true, "vec4": true, "array": true, "atomic": true, "ptr": true, "bitcast": true,
	"mat2x2": true, "mat2x3": true, "mat2x4": true, "mat3x2": true, "mat3x3": true, "mat3x4": true,
	"mat4x2": true, "mat4x3": true, "mat4x4": true,
	"subgroup_matrix_left": true, "subgroup_matrix_right": true, "subgroup_matrix_result": true,
	"subgroupMatrixLoad": true, "subgroupMatrixStore": true, "subgroupMatrixMultiply": true,
	// They take none, but a template list after them is checked as one (a
	// clearer error than a chain of comparisons).
	"subgroupMatrixMultiplyAccumulate": true, "subgroupMatrixScalarAdd": true, "subgroupMatrixScalarSubtract": true,
	"subgroupMatrixScalarMultiply": true,
}

type parser struct {
	toks  []token
	i     int
	errs  *errorList
	noGT  int // > 0 while parsing template arguments: '>' closes the list
	end   int // byte offset just past the last token consumed
	depth int // expression/statement nesting, bounded to keep the stack small
	// stmtAttrs collects statement attributes into the file.
	stmtAttrs map[stmt][]*attr
}

// bail unwinds the parser after the first error in a declaration.
type bail struct{}

const maxDepth = 200

// parse parses one WGSL source file. Syntax errors are returned as an
// ErrorList; the file holds every declaration that parsed.
func parse(filename, src string) (f *file, err error) {
	defer internalPanic(filename, &err)
	errs := &errorList{file: filename, src: src}
	p := &parser{toks: lex(src, errs), errs: errs}
	f = &file{Name: filename, Source: src, StmtAttrs: map[stmt][]*attr{}}
	p.stmtAttrs = f.StmtAttrs
	if len(errs.errs) == 0 {
		p.file(f)
	}
	return f, errs.err()
}

func (p *parser) tok() token { return p.toks[p.i] }
func (p *parser) peek(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}
func (p *parser) next() token {
	t := p.toks[p.i]
	if p.i < len(p.toks)-1 {
		p.i++
	}
	p.end = t.pos + len(t.text)
	return t
}
func (p *parser) is(text string) bool {
	t := p.tok()
	return (t.kind == tPunct || t.kind == tKeyword) && t.text == text
}
func (p *parser) got(text string) bool {
	if p.is(text) {
		p.next()
		return true
	}
	return false
}

func (p *parser) fail(pos int, format string, args ...any) {
	p.errs.add(pos, format, args...)
	panic(bail{})
}

func (p *parser) expect(text string) int {
	t := p.tok()
	if !p.is(text) {
		p.fail(t.pos, "expected '%s', found %s", text, describe(t))
	}
	p.next()
	return t.pos
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of file"
	case tIdent:
		return "'" + t.text + "'"
	}
	return "'" + t.text + "'"
}

func (p *parser) ident() (string, int) {
	t := p.tok()
	if t.kind != tIdent {
		if t.kind == tKeyword {
			p.fail(t.pos, "expected identifier, found keyword '%s'", t.text)
		}
		p.fail(t.pos, "expected identifier, found %s", describe(t))
	}
	if reserved[t.text] {
		p.fail(t.pos, "'%s' is a reserved word", t.text)
	}
	if len(t.text) >= 2 && t.text[:2] == "__" {
		p.fail(t.pos, "identifiers must not start with two underscores")
	}
	p.next()
	return t.text, t.pos
}

// closeTemplate consumes a '>' that ends a template list, splitting '>>', '>=' and '>>='.
func (p *parser) closeTemplate() {
	t := p.tok()
	if t.kind == tPunct {
		switch t.text {
		case ">":
			p.next()
			return
		case ">>", ">=", ">>=":
			p.toks[p.i] = token{tPunct, t.text[1:], t.pos + 1}
			p.end = t.pos + 1
			return
		}
	}
	p.fail(t.pos, "expected '>' to close the template list, found %s", describe(t))
}

func (p *parser) file(f *file) {
	// Directives come first.
	for p.is("enable") || p.is("requires") || p.is("diagnostic") {
		p.directive(f)
	}
	for p.tok().kind != tEOF {
		start := p.i
		p.depth = 0
		func() {
			defer func() {
				if r := recover(); r != nil {
					if _, ok := r.(bail); !ok {
						panic(r)
					}
					p.skipDecl(start)
				}
			}()
			if d := p.globalDecl(); d != nil {
				f.Decls = append(f.Decls, d)
			}
		}()
	}
}

// skipDecl resynchronizes after a syntax error: it skips the whole failed
// declaration from its start, matching braces.
func (p *parser) skipDecl(start int) {
	p.i = start
	depth := 0
	for p.tok().kind != tEOF {
		t := p.next()
		if t.kind != tPunct {
			continue
		}
		switch t.text {
		case "{":
			depth++
		case "}":
			depth--
			if depth <= 0 {
				return
			}
		case ";":
			if depth <= 0 {
				return
			}
		}
	}
}

func (p *parser) directive(f *file) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bail); !ok {
				panic(r)
			}
			for p.tok().kind != tEOF && !p.got(";") {
				p.next()
			}
		}
	}()
	t := p.next()
	if t.text == "diagnostic" {
		d := p.diagnosticArgs(t.pos)
		p.expect(";")
		f.Diagnostics = append(f.Diagnostics, d)
		return
	}
	e := &enable{Pos: t.pos}
	for {
		name, pos := p.ident()
		e.Names = append(e.Names, name)
		e.Poss = append(e.Poss, pos)
		if !p.got(",") || p.is(";") {
			break
		}
	}
	p.expect(";")
	if t.text == "requires" {
		f.Requires = append(f.Requires, e)
		return
	}
	f.Enables = append(f.Enables, e)
}

// diagnosticArgs parses `(severity, rule)` with an optional trailing comma.
func (p *parser) diagnosticArgs(pos int) *diagnostic {
	p.expect("(")
	d := &diagnostic{Pos: pos}
	d.Severity, _ = p.ident()
	p.expect(",")
	d.Rule, d.RulePos = p.ident()
	if p.got(".") {
		name, _ := p.ident()
		d.Rule += "." + name
	}
	p.got(",")
	p.expect(")")
	return d
}

func (p *parser) attrs() []*attr {
	var as []*attr
	for p.is("@") {
		at := p.next().pos
		t := p.tok()
		if t.kind != tIdent && !(t.kind == tKeyword && (t.text == "const" || t.text == "diagnostic")) {
			p.fail(t.pos, "expected attribute name, found %s", describe(t))
		}
		p.next()
		a := &attr{Pos: at, Name: t.text}
		if p.got("(") {
			for !p.is(")") {
				a.Args = append(a.Args, p.expr())
				if !p.got(",") {
					break
				}
			}
			p.expect(")")
		}
		as = append(as, a)
	}
	return as
}

func (p *parser) globalDecl() decl {
	if p.got(";") {
		return nil
	}
	attrs := p.attrs()
	t := p.tok()
	switch {
	case p.is("enable") || p.is("requires") || p.is("diagnostic"):
		p.fail(t.pos, "directives must come before any declaration")
	case p.is("var"):
		d := p.varDecl(attrs)
		p.expect(";")
		return d
	case p.is("override") || p.is("const"):
		d := p.valueDecl(attrs)
		p.expect(";")
		return d
	case p.is("fn"):
		return p.fnDecl(attrs)
	case p.is("struct"):
		p.noAttrs(attrs)
		return p.structDecl()
	case p.is("alias"):
		p.noAttrs(attrs)
		p.next()
		name, _ := p.ident()
		p.expect("=")
		ty := p.typeExpr()
		p.expect(";")
		return &aliasDecl{Pos: t.pos, Name: name, Type: ty}
	case p.is("const_assert"):
		p.noAttrs(attrs)
		p.next()
		c := &constAssert{Pos: t.pos, Cond: p.expr()}
		p.expect(";")
		return c
	case p.is("let"):
		p.fail(t.pos, "'let' declarations are only allowed inside functions; use 'const' at module scope")
	}
	p.fail(t.pos, "expected a declaration, found %s", describe(t))
	return nil
}

func (p *parser) noAttrs(attrs []*attr) {
	if len(attrs) > 0 {
		p.fail(attrs[0].Pos, "attribute '%s' is not valid here", attrs[0].Name)
	}
}

// varDecl parses `var<space, access> name: type = init` (no semicolon).
func (p *parser) varDecl(attrs []*attr) *varDecl {
	d := &varDecl{Pos: p.expect("var"), Kind: "var", Attrs: attrs}
	if p.is("<") {
		d.SpacePos = p.next().pos
		d.Space, _ = p.ident()
		if p.got(",") && !p.is(">") {
			d.Access, _ = p.ident()
			p.got(",")
		}
		p.closeTemplate()
	}
	d.Name, d.NamePos = p.ident()
	if p.got(":") {
		d.Type = p.typeExpr()
	}
	if p.got("=") {
		d.Init = p.expr()
	}
	return d
}

// valueDecl parses const, let and override declarations (no semicolon).
func (p *parser) valueDecl(attrs []*attr) *varDecl {
	t := p.next()
	d := &varDecl{Pos: t.pos, Kind: t.text, Attrs: attrs}
	if t.text != "override" {
		p.noAttrs(attrs)
	}
	d.Name, d.NamePos = p.ident()
	if p.got(":") {
		d.Type = p.typeExpr()
	}
	if t.text == "override" {
		if p.got("=") {
			d.Init = p.expr()
		}
	} else {
		p.expect("=")
		d.Init = p.expr()
	}
	return d
}

func (p *parser) fnDecl(attrs []*attr) *fnDecl {
	d := &fnDecl{Pos: p.expect("fn"), Attrs: attrs}
	d.Name, d.NamePos = p.ident()
	p.expect("(")
	for !p.is(")") {
		pa := &param{Attrs: p.attrs()}
		pa.Name, pa.Pos = p.ident()
		p.expect(":")
		pa.Type = p.typeExpr()
		d.Params = append(d.Params, pa)
		if !p.got(",") {
			break
		}
	}
	p.expect(")")
	if p.got("->") {
		d.ResultAttrs = p.attrs()
		d.Result = p.typeExpr()
	}
	d.Body = p.block()
	return d
}

func (p *parser) structDecl() *structDecl {
	d := &structDecl{Pos: p.expect("struct")}
	d.Name, _ = p.ident()
	p.expect("{")
	for !p.is("}") {
		m := &structMember{Attrs: p.attrs()}
		m.Name, m.Pos = p.ident()
		p.expect(":")
		m.Type = p.typeExpr()
		d.Members = append(d.Members, m)
		if !p.got(",") {
			if !p.is("}") {
				p.fail(p.tok().pos, "expected ',' or '}' after struct member '%s', found %s", m.Name, describe(p.tok()))
			}
			break
		}
	}
	p.expect("}")
	p.got(";")
	if len(d.Members) == 0 {
		p.errs.add(d.Pos, "struct '%s' must have at least one member", d.Name)
	}
	return d
}

// typeExpr parses a type specifier: an identifier with optional template arguments.
func (p *parser) typeExpr() *ident {
	name, pos := p.ident()
	id := &ident{Pos: pos, Name: name}
	if p.is("<") {
		id.Args = p.templateArgs()
	}
	id.End = p.end
	return id
}

func (p *parser) templateArgs() []expr {
	open := p.expect("<")
	p.noGT++
	defer func() { p.noGT-- }()
	var args []expr
	for {
		args = append(args, p.expr())
		if !p.got(",") {
			break
		}
		if p.is(">") || p.is(">>") || p.is(">=") || p.is(">>=") {
			break
		}
	}
	p.closeTemplate()
	if len(args) == 0 {
		p.fail(open, "empty template list")
	}
	return args
}

func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.fail(p.tok().pos, "nesting too deep")
	}
}
