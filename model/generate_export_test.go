package model

// SetChunk makes g prefill chunk rows at a time (tests of chunked prefill).
func (g *Generator) SetChunk(n int) {
	g.chunk = n
	g.alloc()
}
