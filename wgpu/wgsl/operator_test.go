package wgsl

import "testing"

// TestOperatorSpelling checks that every operator token maps to an operator
// that prints as that token, and that the parser records the operators.
func TestOperatorSpelling(t *testing.T) {
	for text, op := range binaryOps {
		if op.String() != text || op.comparison() != (text == "==" || text == "!=" || text == "<" || text == "<=" || text == ">" || text == ">=") {
			t.Errorf("binary %q -> %d prints %q", text, op, op.String())
		}
	}
	for text, op := range unaryOps {
		if op.String() != text || binaryOps[text] == op {
			t.Errorf("unary %q -> %d prints %q", text, op, op.String())
		}
	}
	for text, want := range map[string]operator{"=": opAssign, "+=": opAdd, ">>=": opShr, "&=": opAnd} {
		if got := assignOp(text); got != want {
			t.Errorf("assignOp(%q) = %v, want %v", text, got, want)
		}
	}
	f, err := parse("o.wgsl", "const a = -1 - ~2;\nfn f() { var x = 1; x <<= 2u; x--; }\n"+ep)
	if err != nil {
		t.Fatal(err)
	}
	b := f.Decls[0].(*varDecl).Init.(*binaryExpr)
	if b.Op != opSub || b.X.(*unaryExpr).Op != opNeg || b.Y.(*unaryExpr).Op != opCompl {
		t.Errorf("parsed %v %v %v", b.X.(*unaryExpr).Op, b.Op, b.Y.(*unaryExpr).Op)
	}
	body := f.Decls[1].(*fnDecl).Body.Stmts
	if a := body[1].(*assignStmt); a.Op != opShl {
		t.Errorf("<<= parsed as %v", a.Op)
	}
	if d := body[2].(*incDecStmt); d.Op != opDec {
		t.Errorf("-- parsed as %v", d.Op)
	}
}
