package wgsl

// Span is a half-open range of byte offsets into the source.
type Span struct{ Start, End int }

// Span returns the byte range of an expression of f. Nodes store only their
// start; the end follows from the tree and the source (closing brackets are
// found by skipping blanks and comments), so spans cost nothing until asked for.
func (f *File) Span(e Expr) Span {
	return Span{e.exprPos(), f.exprEnd(e)}
}

func (f *File) exprEnd(e Expr) int {
	switch e := e.(type) {
	case *Lit:
		return e.Pos + len(e.Text)
	case *Ident:
		end := e.Pos + len(e.Name)
		if len(e.Args) > 0 {
			end = f.closing(f.exprEnd(e.Args[len(e.Args)-1]), '>')
		}
		return end
	case *Unary:
		return f.exprEnd(e.X)
	case *Binary:
		return f.exprEnd(e.Y)
	case *Member:
		return e.Pos + len(e.Name)
	case *Index:
		return f.closing(f.exprEnd(e.Index), ']')
	case *Paren:
		return f.closing(f.exprEnd(e.X), ')')
	case *Call:
		if len(e.Args) == 0 {
			return f.closing(f.closing(f.exprEnd(e.Fn), '('), ')')
		}
		return f.closing(f.exprEnd(e.Args[len(e.Args)-1]), ')')
	}
	return e.exprPos()
}

// closing returns the offset just past the next c at or after off, skipping
// blanks, comments and one trailing comma.
func (f *File) closing(off int, c byte) int {
	src := f.Source
	comma := false
	for off < len(src) {
		switch {
		case src[off] == ' ' || src[off] == '\t' || src[off] == '\n' || src[off] == '\r':
			off++
		case off+1 < len(src) && src[off] == '/' && src[off+1] == '/':
			for off < len(src) && src[off] != '\n' {
				off++
			}
		case off+1 < len(src) && src[off] == '/' && src[off+1] == '*':
			depth := 0
			for off < len(src) {
				if off+1 < len(src) && src[off] == '/' && src[off+1] == '*' {
					depth++
					off += 2
				} else if off+1 < len(src) && src[off] == '*' && src[off+1] == '/' {
					depth--
					off += 2
					if depth == 0 {
						break
					}
				} else {
					off++
				}
			}
		case src[off] == ',' && !comma:
			comma = true
			off++
		case src[off] == c:
			return off + 1
		default:
			return off // malformed: stop where the expression seems to end
		}
	}
	return off
}
