package wgsl

// span is a half-open range of byte offsets into the source.
type span struct{ Start, End int }

// Span returns the byte range of an expression of f. The parser stores both
// ends of every expression node.
func (f *file) Span(e expr) span {
	return span{e.exprPos(), max(e.exprEnd(), e.exprPos())}
}
