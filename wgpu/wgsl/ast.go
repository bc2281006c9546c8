package wgsl

// File is a parsed WGSL source: the syntax tree of Parse. Nodes carry byte
// offsets; types and values are attached by Check, not here.
type File struct {
	Name     string
	Source   string
	Enables  []*Enable
	Requires []*Enable // `requires a, b;`: language features
	// Diagnostics are the module's `diagnostic(severity, rule);` directives.
	Diagnostics []*Diagnostic
	Decls       []Decl
	// StmtAttrs holds the attributes (only @diagnostic is valid) written
	// before a compound, if, switch, loop, for or while statement.
	StmtAttrs map[Stmt][]*Attr
}

// Diagnostic is a diagnostic filter: a directive, or the arguments of a
// @diagnostic attribute. Rule is "name" or "namespace.name".
type Diagnostic struct {
	Pos      int
	Severity string
	Rule     string
	RulePos  int
}

// Enable is an `enable a, b;` directive.
type Enable struct {
	Pos   int
	Names []string
	Poss  []int
}

// Attr is an attribute such as @group(0) or @compute.
type Attr struct {
	Pos  int
	Name string
	Args []Expr
}

// Decl is a module-scope declaration.
type Decl interface{ declPos() int }

// Stmt is a statement.
type Stmt interface{ stmtPos() int }

// Expr is an expression. Type expressions are expressions too: an *Ident with
// template arguments, as the WGSL grammar has it (template_elaborated_ident).
type Expr interface {
	exprPos() int
	exprEnd() int
}

// VarDecl is var, let, const or override, at module or function scope.
type VarDecl struct {
	Pos      int
	Kind     string // "var", "let", "const", "override"
	Name     string
	NamePos  int
	Space    string // var only: address space from var<...>, "" if absent
	Access   string // var only: access mode from var<space, access>
	SpacePos int
	Type     *Ident // nil if inferred
	Init     Expr   // nil if absent
	Attrs    []*Attr
}

// FnDecl is a function declaration.
type FnDecl struct {
	Pos         int
	Name        string
	NamePos     int
	Attrs       []*Attr
	Params      []*Param
	Result      *Ident // nil for no return value
	ResultAttrs []*Attr
	Body        *Block
}

// Param is a function parameter.
type Param struct {
	Pos   int
	Name  string
	Type  *Ident
	Attrs []*Attr
}

// StructDecl is a struct type declaration.
type StructDecl struct {
	Pos     int
	Name    string
	Members []*StructMember
}

// StructMember is one struct member.
type StructMember struct {
	Pos   int
	Name  string
	Type  *Ident
	Attrs []*Attr
}

// AliasDecl is `alias name = type;`.
type AliasDecl struct {
	Pos  int
	Name string
	Type *Ident
}

// ConstAssert is `const_assert expr;` at module or function scope.
type ConstAssert struct {
	Pos  int
	Cond Expr
}

func (d *VarDecl) declPos() int     { return d.Pos }
func (d *FnDecl) declPos() int      { return d.Pos }
func (d *StructDecl) declPos() int  { return d.Pos }
func (d *AliasDecl) declPos() int   { return d.Pos }
func (d *ConstAssert) declPos() int { return d.Pos }

// Statements.
type (
	Block struct {
		Pos   int
		Stmts []Stmt
	}
	DeclStmt struct{ Decl *VarDecl }
	// Assign is `lhs op rhs`: Op is OpAssign for "=", or the binary operator
	// of a compound assignment (OpAdd for "+="); LHS is nil for the phony `_ = rhs`.
	Assign struct {
		Pos int
		Op  Operator
		LHS Expr
		RHS Expr
	}
	IncDec struct {
		Pos int
		Op  Operator // OpInc or OpDec
		X   Expr
	}
	If struct {
		Pos  int
		Cond Expr
		Then *Block
		Else Stmt // *If, *Block or nil
	}
	For struct {
		Pos    int
		Init   Stmt // may be nil
		Cond   Expr // may be nil
		Update Stmt // may be nil
		Body   *Block
	}
	While struct {
		Pos  int
		Cond Expr
		Body *Block
	}
	Loop struct {
		Pos        int
		Body       *Block
		Continuing *Block // may be nil
		BreakIf    Expr   // `break if e;` at the end of continuing, may be nil
		BreakIfPos int
	}
	// Switch is `switch sel { case a, b: {...} default: {...} }`.
	Switch struct {
		Pos     int
		Sel     Expr
		Clauses []*CaseClause
	}
	Break    struct{ Pos int }
	Continue struct{ Pos int }
	Return   struct {
		Pos int
		X   Expr // may be nil
	}
	CallStmt struct{ Call *Call }
)

func (s *Block) stmtPos() int       { return s.Pos }
func (s *DeclStmt) stmtPos() int    { return s.Decl.Pos }
func (s *Assign) stmtPos() int      { return s.Pos }
func (s *IncDec) stmtPos() int      { return s.Pos }
func (s *If) stmtPos() int          { return s.Pos }
func (s *For) stmtPos() int         { return s.Pos }
func (s *While) stmtPos() int       { return s.Pos }
func (s *Loop) stmtPos() int        { return s.Pos }
func (s *Switch) stmtPos() int      { return s.Pos }
func (s *Break) stmtPos() int       { return s.Pos }
func (s *Continue) stmtPos() int    { return s.Pos }
func (s *Return) stmtPos() int      { return s.Pos }
func (s *CallStmt) stmtPos() int    { return s.Call.Pos }
func (s *ConstAssert) stmtPos() int { return s.Pos }

// CaseClause is one clause of a switch; a nil selector stands for `default`.
type CaseClause struct {
	Pos       int
	Selectors []Expr
	Body      *Block
}

// Expressions.
type (
	// Ident names a value, a type or a function, with optional template
	// arguments (vec3<f32>, array<f32, 4>, ptr<function, i32>).
	Ident struct {
		Pos  int
		End  int // just past the name or the closing '>'
		Name string
		Args []Expr // template arguments; nil without <...>
	}
	Lit struct {
		Pos  int
		End  int // just past the last token
		Kind tok // tInt, tFloat, or tKeyword for true/false
		Text string
	}
	Unary struct {
		Pos int
		End int      // just past the last token
		Op  Operator // OpNeg, OpNot, OpCompl, OpAddrOf, OpDeref
		X   Expr
	}
	Binary struct {
		Pos  int // position of the operator
		End  int // where Y ends
		Op   Operator
		X, Y Expr
	}
	// Call is a function call, a type constructor or a conversion.
	Call struct {
		Pos  int
		End  int // just past the last token
		Fn   *Ident
		Args []Expr
	}
	Index struct {
		Pos   int // position of '['
		End   int // just past the last token
		X     Expr
		Index Expr
	}
	Member struct {
		Pos  int // position of the member name
		End  int // just past the last token
		X    Expr
		Name string
	}
	Paren struct {
		Pos int
		End int // just past the last token
		X   Expr
	}
)

func (e *Ident) exprPos() int  { return e.Pos }
func (e *Lit) exprPos() int    { return e.Pos }
func (e *Unary) exprPos() int  { return e.Pos }
func (e *Binary) exprPos() int { return exprStart(e.X) }
func (e *Call) exprPos() int   { return e.Pos }
func (e *Index) exprPos() int  { return exprStart(e.X) }
func (e *Member) exprPos() int { return exprStart(e.X) }
func (e *Paren) exprPos() int  { return e.Pos }

func (e *Ident) exprEnd() int  { return e.End }
func (e *Lit) exprEnd() int    { return e.End }
func (e *Unary) exprEnd() int  { return e.End }
func (e *Binary) exprEnd() int { return e.End }
func (e *Call) exprEnd() int   { return e.End }
func (e *Index) exprEnd() int  { return e.End }
func (e *Member) exprEnd() int { return e.End }
func (e *Paren) exprEnd() int  { return e.End }

// exprStart is the offset where an expression's text begins.
func exprStart(e Expr) int { return e.exprPos() }
