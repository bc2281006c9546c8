package model

import "testing"

// BenchmarkGELURow times the MLP's activation over one row block of GPT-2
// 124M's c_fc output (3072 values, of order 1): the kernel set's gelu_new
// against the exact GELU (float64 erf, portable Go).
func BenchmarkGELURow(b *testing.B) {
	x := make([]float32, 3072)
	fill := func() {
		for i := range x {
			x[i] = float32(i%97)/24 - 2
		}
	}
	for _, c := range []struct {
		name string
		row  func([]float32)
	}{{"gelu_new", geluRow}, {"exact", geluErfRow}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for b.Loop() {
				fill()
				c.row(x)
			}
		})
	}
}
