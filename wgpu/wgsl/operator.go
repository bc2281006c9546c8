package wgsl

// operator is an operator of the syntax tree: binary, unary, assignment or
// increment. Its String is the WGSL spelling.
type operator uint8

// The operators. A compound assignment (+=, ...) carries its binary operator;
// plain assignment is opAssign.
const (
	opNone operator = iota
	opAdd
	opSub
	opMul
	opDiv
	opRem
	opShl
	opShr
	opAnd // &
	opOr  // |
	opXor
	opLogAnd // &&
	opLogOr  // ||
	opEq
	opNe
	opLt
	opLe
	opGt
	opGe
	opNeg    // unary -
	opNot    // !
	opCompl  // ~
	opAddrOf // unary &
	opDeref  // unary *
	opAssign // =
	opInc    // ++
	opDec    // --
)

var opSpelling = [...]string{
	opNone: "", opAdd: "+", opSub: "-", opMul: "*", opDiv: "/", opRem: "%", opShl: "<<", opShr: ">>",
	opAnd: "&", opOr: "|", opXor: "^", opLogAnd: "&&", opLogOr: "||",
	opEq: "==", opNe: "!=", opLt: "<", opLe: "<=", opGt: ">", opGe: ">=",
	opNeg: "-", opNot: "!", opCompl: "~", opAddrOf: "&", opDeref: "*",
	opAssign: "=", opInc: "++", opDec: "--",
}

func (o operator) String() string {
	if int(o) < len(opSpelling) {
		return opSpelling[o]
	}
	return "?"
}

// binaryOps and unaryOps map token text to operators.
var binaryOps = map[string]operator{
	"+": opAdd, "-": opSub, "*": opMul, "/": opDiv, "%": opRem, "<<": opShl, ">>": opShr,
	"&": opAnd, "|": opOr, "^": opXor, "&&": opLogAnd, "||": opLogOr,
	"==": opEq, "!=": opNe, "<": opLt, "<=": opLe, ">": opGt, ">=": opGe,
}

var unaryOps = map[string]operator{"-": opNeg, "!": opNot, "~": opCompl, "&": opAddrOf, "*": opDeref}

// assignOp is the operator of an assignment token: opAssign for "=", the
// binary operator of a compound assignment ("+=" -> opAdd).
func assignOp(text string) operator {
	if text == "=" {
		return opAssign
	}
	return binaryOps[text[:len(text)-1]]
}

// comparison reports the relational operators.
func (o operator) comparison() bool { return o >= opEq && o <= opGe }
