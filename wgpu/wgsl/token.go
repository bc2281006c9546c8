package wgsl

// tok is a token kind.
type tok int

const (
	tEOF tok = iota
	tIdent
	tInt   // integer literal, text kept
	tFloat // float literal, text kept
	tKeyword
	tPunct
)

// token is one lexed token: its kind, its text and its byte offset.
type token struct {
	kind tok
	text string
	pos  int
}

var keywords = map[string]bool{
	"alias": true, "break": true, "case": true, "const": true, "const_assert": true, "continue": true,
	"continuing": true, "default": true, "diagnostic": true, "discard": true, "else": true, "enable": true,
	"false": true, "fn": true, "for": true, "if": true, "let": true, "loop": true, "override": true,
	"requires": true, "return": true, "struct": true, "switch": true, "true": true, "var": true, "while": true,
}

// reserved words may not be used as identifiers (a subset of the spec's list).
var reserved = map[string]bool{
	"NULL": true, "Self": true, "abstract": true, "active": true, "alignas": true, "alignof": true, "as": true,
	"asm": true, "async": true, "attribute": true, "auto": true, "await": true, "become": true, "cast": true,
	"catch": true, "class": true, "co_await": true, "co_return": true, "co_yield": true, "coherent": true,
	"compile_fragment": true, "concept": true, "const_cast": true, "consteval": true, "constexpr": true,
	"constinit": true, "crate": true, "debugger": true, "decltype": true, "delete": true, "demote": true,
	"do": true, "dynamic_cast": true, "enum": true, "explicit": true, "export": true, "extends": true,
	"extern": true, "external": true, "fallthrough": true, "filter": true, "final": true, "finally": true,
	"friend": true, "from": true, "fxgroup": true, "get": true, "goto": true, "groupshared": true,
	"highp": true, "impl": true, "implements": true, "import": true, "inline": true, "instanceof": true,
	"interface": true, "layout": true, "lowp": true, "macro": true, "match": true, "mediump": true,
	"meta": true, "mod": true, "module": true, "move": true, "mut": true, "mutable": true, "namespace": true,
	"new": true, "nil": true, "noexcept": true, "noinline": true, "null": true, "of": true, "operator": true,
	"package": true, "packoffset": true, "partition": true, "pass": true, "precision": true, "precise": true,
	"premerge": true, "priv": true, "protected": true, "pub": true, "public": true, "readonly": true,
	"ref": true, "regardless": true, "register": true, "reinterpret_cast": true, "require": true,
	"resource": true, "restrict": true, "self": true, "set": true, "shared": true, "sizeof": true,
	"smooth": true, "snorm": true, "static": true, "static_assert": true, "static_cast": true, "std": true,
	"subroutine": true, "super": true, "target": true, "template": true, "this": true, "thread_local": true,
	"throw": true, "trait": true, "try": true, "type": true, "typedef": true, "typeid": true,
	"typename": true, "typeof": true, "union": true, "unless": true, "unorm": true, "unsafe": true,
	"unsized": true, "use": true, "using": true, "varying": true, "virtual": true, "volatile": true,
	"wgsl": true, "where": true, "with": true, "writeonly": true, "yield": true,
}

// puncts lists the punctuation tokens, longest first so the lexer can match greedily.
var puncts = []string{
	">>=", "<<=",
	"&&", "||", "==", "!=", "<=", ">=", "<<", ">>", "->", "++", "--",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
	"&", "|", "^", "~", "!", "+", "-", "*", "/", "%", "<", ">", "=",
	"(", ")", "[", "]", "{", "}", ",", ".", ":", ";", "@", "_",
}
