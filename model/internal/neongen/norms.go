package main

import "fmt"

// The row kernels of the norms, the rotary embedding and the matmul
// epilogue (model's ops_rows.go documents them and holds their portable
// forms, which every set computes bit for bit): over the first n - n%8
// elements (of each row, for the bias kernels), eight a step in two 4-lane
// vectors; model's Go code does the rest.
//
//   - sumRowNEON, sumSqDevRowNEON: float64 sums in 8 float64 lanes (four
//     2-lane vectors, lane l taking i ≡ l mod 8), the floats widened by
//     FCVTL/FCVTL2 (exact), reduced as ops_rows.go's reduce8: y_j = l_j +
//     l_(j+4), then (y0 + y2) + (y1 + y3) (FADDP);
//   - scaleMulRowNEON, normAffineRowNEON, rotateRowNEON, addBiasRowsNEON,
//     accBiasRowsNEON: element-wise float32 arithmetic, one rounding per
//     operation in the portable code's order, never fused.

// normLoop emits a loop over R9 elements (a multiple of 8), eight a step:
// body, then R9 -= 8; its labels end in name.
func (g *gen) normLoop(name string, body func()) {
	g.label("loop_" + name)
	g.op("CBZ R9, done_" + name)
	body()
	g.op("SUB $8, R9, R9")
	g.op("B loop_" + name)
	g.label("done_" + name)
}

// ld8 loads the 8 floats at Rp into Vd, Vd+1 and advances Rp; st8 stores.
func (g *gen) ld8(p, d int) { g.op("VLD1.P 32(R%d), %s", p, vlist(d, 2, "S4")) }
func (g *gen) st8(p, d int) { g.op("VST1.P %s, 32(R%d)", vlist(d, 2, "S4"), p) }

// sumRow emits sumRowNEON(x *float32, n int) float64, or with dev
// sumSqDevRowNEON(x *float32, n int, m float64) float64.
func (g *gen) sumRow(dev bool) {
	name, sig, args, what := "sumRowNEON", "(x *float32, n int) float64", 24, "float64(x[i])"
	if dev {
		name, sig, args, what = "sumSqDevRowNEON", "(x *float32, n int, m float64) float64", 32, "(float64(x[i]) - m)² (the difference and the square each rounded)"
	}
	g.rowFunc(name, sig, fmt.Sprintf("%s returns Σ %s for i < n - n%%8, in 8 float64 lanes (lane l: i ≡ l mod 8) reduced in ops_rows.go's tree.", name, what), args)
	g.op("MOVD x+0(FP), R0")
	g.op("MOVD n+8(FP), R9")
	g.op("AND $-8, R9, R9")
	if dev {
		g.op("FMOVD m+16(FP), F30")
		g.word(dup64(30, 30))
	}
	for l := 16; l < 20; l++ { // lanes 0-1, 2-3, 4-5, 6-7
		g.op("VEOR V%d.B16, V%d.B16, V%d.B16", l, l, l)
	}
	g.normLoop(name, func() {
		g.ld8(0, 0)
		for q := range 4 {
			d := 2 + q
			g.word(fcvtl64(d, q/2, q%2 == 1))
			if dev {
				g.v3(opFSUB2D, d, d, 30)
				g.v3(opFMUL2D, d, d, d)
			}
			g.v3(opFADD2D, 16+q, 16+q, d)
		}
	})
	g.v3(opFADD2D, 0, 16, 18) // y0, y1
	g.v3(opFADD2D, 1, 17, 19) // y2, y3
	g.v3(opFADD2D, 0, 0, 1)   // y0 + y2, y1 + y3
	g.word(faddp64(0, 0))
	g.op("FMOVD F0, ret+%d(FP)", args-8)
	g.op("RET")
}

// scaleMulRow emits scaleMulRowNEON(o, x, w *float32, n int, s float32):
// o[i] = (x[i]·s)·w[i].
func (g *gen) scaleMulRow() {
	const name = "scaleMulRowNEON"
	g.rowFunc(name, "(o *float32, x *float32, w *float32, n int, s float32)", name+" sets o[i] = (x[i]·s)·w[i] for i < n - n%8.", 36)
	g.op("MOVD o+0(FP), R0")
	g.op("MOVD x+8(FP), R1")
	g.op("MOVD w+16(FP), R2")
	g.op("MOVD n+24(FP), R9")
	g.op("AND $-8, R9, R9")
	g.broadcastArg("s", 32)
	g.normLoop(name, func() {
		g.ld8(1, 0)
		g.ld8(2, 2)
		for h := range 2 {
			g.v3(opFMUL, h, h, vArg)
			g.v3(opFMUL, h, h, 2+h)
		}
		g.st8(0, 0)
	})
	g.op("RET")
}

// normAffineRow emits normAffineRowNEON(o, x, w, b *float32, n int, m, s
// float32): o[i] = ((x[i] - m)·s)·w[i] + b[i].
func (g *gen) normAffineRow() {
	const name = "normAffineRowNEON"
	g.rowFunc(name, "(o *float32, x *float32, w *float32, b *float32, n int, m float32, s float32)", name+" sets o[i] = ((x[i] - m)·s)·w[i] + b[i] for i < n - n%8, each operation rounded.", 48)
	g.op("MOVD o+0(FP), R0")
	g.op("MOVD x+8(FP), R1")
	g.op("MOVD w+16(FP), R2")
	g.op("MOVD b+24(FP), R3")
	g.op("MOVD n+32(FP), R9")
	g.op("AND $-8, R9, R9")
	g.broadcastArg("m", 40)
	g.op("FMOVS s+44(FP), F29")
	g.word(dupElem(29, 29, 0))
	g.normLoop(name, func() {
		g.ld8(1, 0)
		g.ld8(2, 2)
		g.ld8(3, 4)
		for h := range 2 {
			g.v3(opFSUB, h, h, vArg)
			g.v3(opFMUL, h, h, 29)
			g.v3(opFMUL, h, h, 2+h)
			g.v3(opFADD, h, h, 4+h)
		}
		g.st8(0, 0)
	})
	g.op("RET")
}

// rotateRow emits rotateRowNEON(x1, x2, c, s *float32, n int): x1[i],
// x2[i] = x1·c - x2·s, x2·c + x1·s, the products rounded before the sums.
func (g *gen) rotateRow() {
	const name = "rotateRowNEON"
	g.rowFunc(name, "(x1 *float32, x2 *float32, c *float32, s *float32, n int)", name+" sets x1[i], x2[i] = x1[i]·c[i] - x2[i]·s[i], x2[i]·c[i] + x1[i]·s[i] for i < n - n%8, products rounded before the sums.", 40)
	g.op("MOVD x1+0(FP), R0")
	g.op("MOVD x2+8(FP), R1")
	g.op("MOVD c+16(FP), R2")
	g.op("MOVD s+24(FP), R3")
	g.op("MOVD n+32(FP), R9")
	g.op("AND $-8, R9, R9")
	g.op("MOVD R0, R4") // the stores' cursors
	g.op("MOVD R1, R5")
	g.normLoop(name, func() {
		g.ld8(0, 0) // a
		g.ld8(1, 2) // b
		g.ld8(2, 4) // c
		g.ld8(3, 6) // s
		for h := range 2 {
			a, b, c, s := h, 2+h, 4+h, 6+h
			ac, bs, bc, as := 8+h, 10+h, 12+h, 14+h
			g.v3(opFMUL, ac, a, c)
			g.v3(opFMUL, bs, b, s)
			g.v3(opFMUL, bc, b, c)
			g.v3(opFMUL, as, a, s)
			g.v3(opFSUB, ac, ac, bs)
			g.v3(opFADD, bc, bc, as)
		}
		g.st8(4, 8)
		g.st8(5, 12)
	})
	g.op("RET")
}

// biasRows emits addBiasRowsNEON(o *float32, ldo int, v *float32, ldv int,
// b *float32, rows, n int): o[r*ldo+j] = v[r*ldv+j] + b[j], or with acc
// accBiasRowsNEON: o[r*ldo+j] = o[r*ldo+j] + (v[r*ldv+j] + b[j]), for r <
// rows, j < n - n%8.
func (g *gen) biasRows(acc bool) {
	name, what := "addBiasRowsNEON", "v[r*ldv+j] + b[j]"
	if acc {
		name, what = "accBiasRowsNEON", "o[r*ldo+j] + (v[r*ldv+j] + b[j])"
	}
	g.rowFunc(name, "(o *float32, ldo int, v *float32, ldv int, b *float32, rows int, n int)", fmt.Sprintf("%s sets o[r*ldo+j] = %s for r < rows, j < n - n%%8.", name, what), 56)
	g.op("MOVD o+0(FP), R0")
	g.op("MOVD ldo+8(FP), R1")
	g.op("LSL $2, R1, R1")
	g.op("MOVD v+16(FP), R2")
	g.op("MOVD ldv+24(FP), R3")
	g.op("LSL $2, R3, R3")
	g.op("MOVD rows+40(FP), R5")
	g.op("MOVD n+48(FP), R6")
	g.op("AND $-8, R6, R6")
	g.label("row_" + name)
	g.op("CMP $0, R5")
	g.op("BLE end_" + name)
	g.op("MOVD R0, R7")  // o's cursor (the loads)
	g.op("MOVD R0, R11") // o's cursor (the stores)
	g.op("MOVD R2, R8")
	g.op("MOVD b+32(FP), R10")
	g.op("MOVD R6, R9")
	g.normLoop(name, func() {
		g.ld8(8, 0)
		g.ld8(10, 2)
		if acc {
			g.ld8(7, 4)
		}
		for h := range 2 {
			g.v3(opFADD, h, h, 2+h)
			if acc {
				g.v3(opFADD, h, 4+h, h)
			}
		}
		g.st8(11, 0)
	})
	g.op("ADD R1, R0, R0")
	g.op("ADD R3, R2, R2")
	g.op("SUB $1, R5, R5")
	g.op("B row_" + name)
	g.label("end_" + name)
	g.op("RET")
}

// norms emits the norms', rotary embedding's and epilogue's kernels.
func (g *gen) norms() {
	g.sumRow(false)
	g.sumRow(true)
	g.scaleMulRow()
	g.normAffineRow()
	g.rotateRow()
	g.biasRows(false)
	g.biasRows(true)
}
