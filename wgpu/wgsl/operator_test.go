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
	for text, want := range map[string]Operator{"=": OpAssign, "+=": OpAdd, ">>=": OpShr, "&=": OpAnd} {
		if got := assignOp(text); got != want {
			t.Errorf("assignOp(%q) = %v, want %v", text, got, want)
		}
	}
	f, err := Parse("o.wgsl", "const a = -1 - ~2;\nfn f() { var x = 1; x <<= 2u; x--; }\n"+ep)
	if err != nil {
		t.Fatal(err)
	}
	b := f.Decls[0].(*VarDecl).Init.(*Binary)
	if b.Op != OpSub || b.X.(*Unary).Op != OpNeg || b.Y.(*Unary).Op != OpCompl {
		t.Errorf("parsed %v %v %v", b.X.(*Unary).Op, b.Op, b.Y.(*Unary).Op)
	}
	body := f.Decls[1].(*FnDecl).Body.Stmts
	if a := body[1].(*Assign); a.Op != OpShl {
		t.Errorf("<<= parsed as %v", a.Op)
	}
	if d := body[2].(*IncDec); d.Op != OpDec {
		t.Errorf("-- parsed as %v", d.Op)
	}
}
