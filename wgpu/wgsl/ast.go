package wgsl

// file is a parsed WGSL source: the syntax tree of parse. Nodes carry byte
// offsets; types and values are attached by check, not here.
type file struct {
	Name     string
	Source   string
	Enables  []*enable
	Requires []*enable // `requires a, b;`: language features
	// Diagnostics are the module's `diagnostic(severity, rule);` directives.
	Diagnostics []*diagnostic
	Decls       []decl
	// StmtAttrs holds the attributes (only @diagnostic is valid) written
	// before a compound, if, switch, loop, for or while statement.
	StmtAttrs map[stmt][]*attr
}

// diagnostic is a diagnostic filter: a directive, or the arguments of a
// @diagnostic attribute. Rule is "name" or "namespace.name".
type diagnostic struct {
	Pos      int
	Severity string
	Rule     string
	RulePos  int
}

// enable is an `enable a, b;` directive.
type enable struct {
	Pos   int
	Names []string
	Poss  []int
}

// attr is an attribute such as @group(0) or @compute.
type attr struct {
	Pos  int
	Name string
	Args []expr
}

// decl is a module-scope declaration.
type decl interface{ declPos() int }

// stmt is a statement.
type stmt interface{ stmtPos() int }

// expr is an expression. Type expressions are expressions too: an *ident with
// template arguments, as the WGSL grammar has it (template_elaborated_ident).
type expr interface {
	exprPos() int
	exprEnd() int
}

// varDecl is var, let, const or override, at module or function scope.
type varDecl struct {
	Pos      int
	Kind     string // "var", "let", "const", "override"
	Name     string
	NamePos  int
	Space    string // var only: address space from var<...>, "" if absent
	Access   string // var only: access mode from var<space, access>
	SpacePos int
	Type     *ident // nil if inferred
	Init     expr   // nil if absent
	Attrs    []*attr
}

// fnDecl is a function declaration.
type fnDecl struct {
	Pos         int
	Name        string
	NamePos     int
	Attrs       []*attr
	Params      []*param
	Result      *ident // nil for no return value
	ResultAttrs []*attr
	Body        *blockStmt
}

// param is a function parameter.
type param struct {
	Pos   int
	Name  string
	Type  *ident
	Attrs []*attr
}

// structDecl is a struct type declaration.
type structDecl struct {
	Pos     int
	Name    string
	Members []*structMember
}

// structMember is one struct member.
type structMember struct {
	Pos   int
	Name  string
	Type  *ident
	Attrs []*attr
}

// aliasDecl is `alias name = type;`.
type aliasDecl struct {
	Pos  int
	Name string
	Type *ident
}

// constAssert is `const_assert expr;` at module or function scope.
type constAssert struct {
	Pos  int
	Cond expr
}

func (d *varDecl) declPos() int     { return d.Pos }
func (d *fnDecl) declPos() int      { return d.Pos }
func (d *structDecl) declPos() int  { return d.Pos }
func (d *aliasDecl) declPos() int   { return d.Pos }
func (d *constAssert) declPos() int { return d.Pos }

// Statements.
type (
	blockStmt struct {
		Pos   int
		Stmts []stmt
	}
	declStmt struct{ Decl *varDecl }
	// assignStmt is `lhs op rhs`: Op is opAssign for "=", or the binary operator
	// of a compound assignment (opAdd for "+="); LHS is nil for the phony `_ = rhs`.
	assignStmt struct {
		Pos int
		Op  operator
		LHS expr
		RHS expr
	}
	incDecStmt struct {
		Pos int
		Op  operator // opInc or opDec
		X   expr
	}
	ifStmt struct {
		Pos  int
		Cond expr
		Then *blockStmt
		Else stmt // *ifStmt, *blockStmt or nil
	}
	forStmt struct {
		Pos    int
		Init   stmt // may be nil
		Cond   expr // may be nil
		Update stmt // may be nil
		Body   *blockStmt
	}
	whileStmt struct {
		Pos  int
		Cond expr
		Body *blockStmt
	}
	loopStmt struct {
		Pos        int
		Body       *blockStmt
		Continuing *blockStmt // may be nil
		BreakIf    expr       // `break if e;` at the end of continuing, may be nil
		BreakIfPos int
	}
	// switchStmt is `switch sel { case a, b: {...} default: {...} }`.
	switchStmt struct {
		Pos     int
		Sel     expr
		Clauses []*caseClause
	}
	breakStmt    struct{ Pos int }
	continueStmt struct{ Pos int }
	returnStmt   struct {
		Pos int
		X   expr // may be nil
	}
	callStmt struct{ Call *callExpr }
)

func (s *blockStmt) stmtPos() int    { return s.Pos }
func (s *declStmt) stmtPos() int     { return s.Decl.Pos }
func (s *assignStmt) stmtPos() int   { return s.Pos }
func (s *incDecStmt) stmtPos() int   { return s.Pos }
func (s *ifStmt) stmtPos() int       { return s.Pos }
func (s *forStmt) stmtPos() int      { return s.Pos }
func (s *whileStmt) stmtPos() int    { return s.Pos }
func (s *loopStmt) stmtPos() int     { return s.Pos }
func (s *switchStmt) stmtPos() int   { return s.Pos }
func (s *breakStmt) stmtPos() int    { return s.Pos }
func (s *continueStmt) stmtPos() int { return s.Pos }
func (s *returnStmt) stmtPos() int   { return s.Pos }
func (s *callStmt) stmtPos() int     { return s.Call.Pos }
func (s *constAssert) stmtPos() int  { return s.Pos }

// caseClause is one clause of a switch; a nil selector stands for `default`.
type caseClause struct {
	Pos       int
	Selectors []expr
	Body      *blockStmt
}

// Expressions.
type (
	// ident names a value, a type or a function, with optional template
	// arguments (vec3<f32>, array<f32, 4>, ptr<function, i32>).
	ident struct {
		Pos  int
		End  int // just past the name or the closing '>'
		Name string
		Args []expr // template arguments; nil without <...>
	}
	lit struct {
		Pos  int
		End  int // just past the last token
		Kind tok // tInt, tFloat, or tKeyword for true/false
		Text string
	}
	unaryExpr struct {
		Pos int
		End int      // just past the last token
		Op  operator // opNeg, opNot, opCompl, opAddrOf, opDeref
		X   expr
	}
	binaryExpr struct {
		Pos  int // position of the operator
		End  int // where Y ends
		Op   operator
		X, Y expr
	}
	// callExpr is a function call, a type constructor or a conversion.
	callExpr struct {
		Pos  int
		End  int // just past the last token
		Fn   *ident
		Args []expr
	}
	indexExpr struct {
		Pos   int // position of '['
		End   int // just past the last token
		X     expr
		Index expr
	}
	memberExpr struct {
		Pos  int // position of the member name
		End  int // just past the last token
		X    expr
		Name string
	}
	parenExpr struct {
		Pos int
		End int // just past the last token
		X   expr
	}
)

func (e *ident) exprPos() int      { return e.Pos }
func (e *lit) exprPos() int        { return e.Pos }
func (e *unaryExpr) exprPos() int  { return e.Pos }
func (e *binaryExpr) exprPos() int { return exprStart(e.X) }
func (e *callExpr) exprPos() int   { return e.Pos }
func (e *indexExpr) exprPos() int  { return exprStart(e.X) }
func (e *memberExpr) exprPos() int { return exprStart(e.X) }
func (e *parenExpr) exprPos() int  { return e.Pos }

func (e *ident) exprEnd() int      { return e.End }
func (e *lit) exprEnd() int        { return e.End }
func (e *unaryExpr) exprEnd() int  { return e.End }
func (e *binaryExpr) exprEnd() int { return e.End }
func (e *callExpr) exprEnd() int   { return e.End }
func (e *indexExpr) exprEnd() int  { return e.End }
func (e *memberExpr) exprEnd() int { return e.End }
func (e *parenExpr) exprEnd() int  { return e.End }

// exprStart is the offset where an expression's text begins.
func exprStart(e expr) int { return e.exprPos() }
