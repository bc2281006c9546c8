package main

import "fmt"

// gemmNT's blocks (model's gemmBlocks: out[i*ldo+j] = a_i · b_j, both rows
// k long; attention's values and the products of matrices in rows): each
// element as the AVX2 kernels compute it, so that their bits are AVX2's.
// Lane l (of AVX2's 8: two 4-lane vectors here) sums a[k]·b[k] for k ≡ l
// (mod 8), k < K - K%8, in one FMA chain from zero in increasing k; the
// lanes are reduced by sum8's tree; then the K%8 tail is added in
// increasing k, each product rounded before the add. Every block shape
// does exactly this per element, as the amd64 sets' do, so an element does
// not depend on the tiling or on the split between goroutines.

// dotShapes are the blocks: 3 x 4 (24 accumulators, V0-V23, two per
// element; six vectors of a, V24-V29; one column of b at a time, V30-V31),
// 1 x 4 for the rows left over and 1 x 1 for the columns left over.
var dotShapes = [][2]int{{3, 4}, {1, 4}, {1, 1}}

// The general registers of dot: a's rows from R1, b's from R4 (R8 ldb in
// bytes), R9 the 8-steps left, R10 the tail, R11 out's row, R12 ldo in
// bytes, R13 lda in bytes.
const dotA, dotB, dotSteps, dotTail, dotOut, dotLdo, dotLda, dotLdb = 1, 4, 9, 10, 11, 12, 13, 8

// dot emits dot{R}x{C}{elem}NEON(a *float32, lda int, b *float32 (or
// *uint16), ldb int, k int, out *float32, ldo int); a 16-bit b is widened
// exactly as it loads (8 elements: FCVTL/SHLL of the lower four, then the
// upper four in place; a tail element: LD1R, then its lane 0), so the
// result is the float32 kernel's on the widened b.
func (g *gen) dot(R, C int, e elem) {
	name := fmt.Sprintf("dot%dx%d%sNEON", R, C, e.name)
	sig := fmt.Sprintf("(a *float32, lda int, b %s, ldb int, k int, out *float32, ldo int)", e.gotyp)
	what := ""
	if e.size == 2 {
		what = ", b in " + e.name + " widened to float32"
	}
	g.rowFunc(name, sig, fmt.Sprintf("%s sets out[i*ldo+j] = Σ_k a[i*lda+k]·b[j*ldb+k] for i < %d, j < %d, as AVX2's dot kernels do (8 lanes of FMAs, reduced in AVX2's tree, then the k%%8 tail%s).", name, R, C, what), 56)
	acc := func(i, j, h int) int { return 2*(i*C+j) + h }
	aReg := func(i, h int) int { return 24 + 2*i + h }
	g.op("MOVD lda+8(FP), R%d", dotLda)
	g.op("LSL $2, R%d, R%d", dotLda, dotLda)
	g.op("MOVD a+0(FP), R%d", dotA)
	for i := 1; i < R; i++ {
		g.op("ADD R%d, R%d, R%d", dotLda, dotA+i-1, dotA+i)
	}
	g.op("MOVD ldb+24(FP), R%d", dotLdb)
	g.op("LSL $%d, R%d, R%d", e.size/2, dotLdb, dotLdb)
	g.op("MOVD b+16(FP), R%d", dotB)
	for j := 1; j < C; j++ {
		g.op("ADD R%d, R%d, R%d", dotLdb, dotB+j-1, dotB+j)
	}
	g.op("MOVD k+32(FP), R%d", dotSteps)
	g.op("AND $7, R%d, R%d", dotSteps, dotTail)
	g.op("LSR $3, R%d, R%d", dotSteps, dotSteps)
	for i := range R {
		for j := range C {
			for h := range 2 {
				r := acc(i, j, h)
				g.op("VEOR V%d.B16, V%d.B16, V%d.B16", r, r, r)
			}
		}
	}
	g.label("vec_" + name)
	g.op("CBZ R%d, reduce_%s", dotSteps, name)
	for i := range R {
		g.op("VLD1.P 32(R%d), %s", dotA+i, vlist(aReg(i, 0), 2, "S4"))
	}
	for j := range C {
		b0, b1 := 30, 31
		if e.size == 4 {
			g.op("VLD1.P 32(R%d), %s", dotB+j, vlist(30, 2, "S4"))
		} else {
			b0, b1 = 31, 30
			g.op("VLD1.P 16(R%d), [V30.H8]", dotB+j)
			g.word(e.widen(31, 30, false))
			g.word(e.widen(30, 30, true))
		}
		for i := range R {
			g.v3(opFMLA, acc(i, j, 0), aReg(i, 0), b0)
			g.v3(opFMLA, acc(i, j, 1), aReg(i, 1), b1)
		}
	}
	g.op("SUB $1, R%d, R%d", dotSteps, dotSteps)
	g.op("B vec_" + name)
	g.label("reduce_" + name)
	// Each element's sum in lane 0 of its first accumulator (S view F).
	for i := range R {
		for j := range C {
			lo, hi := acc(i, j, 0), acc(i, j, 1)
			g.v3(opFADD, 24, lo, hi)
			g.word(ext8(25, 24, 24))
			g.v3(opFADD, 25, 24, 25)
			g.word(faddp(lo, 25))
		}
	}
	g.label("tail_" + name)
	g.op("CBZ R%d, store_%s", dotTail, name)
	for i := range R {
		g.op("FMOVS.P 4(R%d), F%d", dotA+i, 24+i)
	}
	for j := range C {
		if e.size == 4 {
			g.op("FMOVS.P 4(R%d), F30", dotB+j)
		} else {
			g.op("VLD1R.P 2(R%d), [V30.H8]", dotB+j)
			g.word(e.widen(30, 30, false))
		}
		for i := range R {
			g.op("FMULS F30, F%d, F31", 24+i)
			g.op("FADDS F31, F%d, F%d", acc(i, j, 0), acc(i, j, 0))
		}
	}
	g.op("SUB $1, R%d, R%d", dotTail, dotTail)
	g.op("B tail_" + name)
	g.label("store_" + name)
	g.op("MOVD out+40(FP), R%d", dotOut)
	if R > 1 {
		g.op("MOVD ldo+48(FP), R%d", dotLdo)
		g.op("LSL $2, R%d, R%d", dotLdo, dotLdo)
	}
	for i := range R {
		if i > 0 {
			g.op("ADD R%d, R%d, R%d", dotLdo, dotOut, dotOut)
		}
		for j := range C {
			g.op("FMOVS F%d, %d(R%d)", acc(i, j, 0), 4*j, dotOut)
		}
	}
	g.op("RET")
}
