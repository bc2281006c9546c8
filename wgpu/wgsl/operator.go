package wgsl

// Operator is an operator of the syntax tree: binary, unary, assignment or
// increment. Its String is the WGSL spelling.
type Operator uint8

// The operators. A compound assignment (+=, ...) carries its binary operator;
// plain assignment is OpAssign.
const (
	OpNone Operator = iota
	OpAdd
	OpSub
	OpMul
	OpDiv
	OpRem
	OpShl
	OpShr
	OpAnd // &
	OpOr  // |
	OpXor
	OpLogAnd // &&
	OpLogOr  // ||
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpNeg    // unary -
	OpNot    // !
	OpCompl  // ~
	OpAddrOf // unary &
	OpDeref  // unary *
	OpAssign // =
	OpInc    // ++
	OpDec    // --
)

var opSpelling = [...]string{
	OpNone: "", OpAdd: "+", OpSub: "-", OpMul: "*", OpDiv: "/", OpRem: "%", OpShl: "<<", OpShr: ">>",
	OpAnd: "&", OpOr: "|", OpXor: "^", OpLogAnd: "&&", OpLogOr: "||",
	OpEq: "==", OpNe: "!=", OpLt: "<", OpLe: "<=", OpGt: ">", OpGe: ">=",
	OpNeg: "-", OpNot: "!", OpCompl: "~", OpAddrOf: "&", OpDeref: "*",
	OpAssign: "=", OpInc: "++", OpDec: "--",
}

func (o Operator) String() string {
	if int(o) < len(opSpelling) {
		return opSpelling[o]
	}
	return "?"
}

// binaryOps and unaryOps map token text to operators.
var binaryOps = map[string]Operator{
	"+": OpAdd, "-": OpSub, "*": OpMul, "/": OpDiv, "%": OpRem, "<<": OpShl, ">>": OpShr,
	"&": OpAnd, "|": OpOr, "^": OpXor, "&&": OpLogAnd, "||": OpLogOr,
	"==": OpEq, "!=": OpNe, "<": OpLt, "<=": OpLe, ">": OpGt, ">=": OpGe,
}

var unaryOps = map[string]Operator{"-": OpNeg, "!": OpNot, "~": OpCompl, "&": OpAddrOf, "*": OpDeref}

// assignOp is the operator of an assignment token: OpAssign for "=", the
// binary operator of a compound assignment ("+=" -> OpAdd).
func assignOp(text string) Operator {
	if text == "=" {
		return OpAssign
	}
	return binaryOps[text[:len(text)-1]]
}

// comparison reports the relational operators.
func (o Operator) comparison() bool { return o >= OpEq && o <= OpGe }
