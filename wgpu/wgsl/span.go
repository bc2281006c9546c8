package wgsl

// Span is a half-open range of byte offsets into the source.
type Span struct{ Start, End int }

// Span returns the byte range of an expression of f. The parser stores both
// ends of every expression node.
func (f *File) Span(e Expr) Span {
	return Span{e.exprPos(), max(e.exprEnd(), e.exprPos())}
}
