package main

import (
	"fmt"
	"strings"
)

// panelNR is the output channels of a panel (model's panelNR): eight
// 4-lane vectors.
const panelNR = 32

// panelShape is one outer-product kernel: R rows of a by V vectors (4
// channels each) a pass, the panel's 32 channels in 8/V passes, the
// panel's vectors of a pass loaded G at a time.
type panelShape struct{ R, V, G int }

// panelShapes are the kernels, the main register tile first, then the ones
// for the rows left over:
//
//   - 6 x 16: 24 accumulators (V0-V23), six vectors of a (V24-V29: rows
//     0-5, four values of k each), two panel vectors (V30, V31); the
//     panel's two halves one after the other, each over all of k. Per
//     four k: 6 loads of a and 8 of the panel pairs for 96 FMAs.
//   - 4 x 16: 16 accumulators, 4 of a, 4 panel vectors loaded at once.
//   - 2 x 32 and 1 x 32: the whole panel in one pass (16 and 8
//     accumulators), the panel's 8 vectors in two loads of 4.
var panelShapes = []panelShape{{6, 4, 2}, {4, 4, 4}, {2, 8, 4}, {1, 8, 4}}

// nnShapes are gemmNN's blocks (attention's scores, b row-major over k):
// 4 rows x 16 columns (16 accumulators, 4 of a, 4 of b), 1 x 16, then 4 x 4
// and 1 x 4 for the columns left over, then nnColNEON one column at a time.
var nnShapes = []panelShape{{4, 4, 4}, {1, 4, 4}, {4, 1, 1}, {1, 1, 1}}

// elem is a panel's element type: float32, or 16 bits that widen exactly
// to float32 as they load.
type elem struct {
	name  string // in the kernel's name: "", "F16", "BF16"
	gotyp string // of the panel argument
	size  int    // bytes
	// widen writes the encoding (and its GNU syntax) that widens the lower
	// (upper false) or upper four 16-bit lanes of Vn to float32 into Vd.
	widen func(d, n int, upper bool) (uint32, string)
}

var (
	elemF32  = elem{"", "*float32", 4, nil}
	elemF16  = elem{"F16", "*uint16", 2, func(d, n int, u bool) (uint32, string) { return fcvtl(d, n, u), gnuFCVTL(d, n, u) }}
	elemBF16 = elem{"BF16", "*uint16", 2, func(d, n int, u bool) (uint32, string) { return shll16(d, n, u), gnuSHLL(d, n, u) }}
	elems    = []elem{elemF32, elemF16, elemBF16}
)

// gen collects the assembly text and the Go declarations.
type gen struct {
	asm, decl strings.Builder
}

// op writes one instruction line.
func (g *gen) op(format string, args ...any) {
	fmt.Fprintf(&g.asm, "\t"+format+"\n", args...)
}

// word writes an instruction Go's assembler has no mnemonic for.
func (g *gen) word(enc uint32, gnu string) {
	g.op("WORD $0x%08x // %s", enc, gnu)
}

// label writes a label line.
func (g *gen) label(name string) { fmt.Fprintf(&g.asm, "%s:\n", name) }

// vlist is the register list [Vfirst.T, ..., Vfirst+n-1.T].
func vlist(first, n int, arr string) string {
	var s []string
	for r := first; r < first+n; r++ {
		s = append(s, fmt.Sprintf("V%d.%s", r, arr))
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// The general registers: R0 a, R1 lda in bytes, R2 the panel, R3 the k
// left, R4 c, R5 ldc in bytes, R6-R11 the rows of a, R12 acc, R13 the
// step of b after a k's last load, R14 and R15 c's rows. (Never R18,
// darwin's platform register, nor R26-R30, Go's.)
const (
	rA, rLda, rP, rK, rC, rLdc, rRow0, rAcc, rSkip, rCRow, rCBase = 0, 1, 2, 3, 4, 5, 6, 12, 13, 14, 15
)

// tileKind is what a register tile multiplies: a panel (the weights,
// k-major, 32 columns a k, from panel's arguments, adding to c where acc is
// set) or, for nn, a row-major b whose rows are ldb apart (from zero).
type tileKind struct {
	b, ldb, k, c, ldc string // the arguments' names and frame offsets: "p+16(FP)", ...
	acc               string // acc's, or "" where the tile always starts from zero
	panel             bool   // b is a panel (rows 32 elements apart), else ldb apart
}

var (
	panelArgs = tileKind{b: "p+16(FP)", k: "k+24(FP)", c: "c+32(FP)", ldc: "ldc+40(FP)", acc: "acc+48(FP)", panel: true}
	nnArgs    = tileKind{b: "b+16(FP)", ldb: "ldb+24(FP)", k: "k+32(FP)", c: "out+40(FP)", ldc: "ldo+48(FP)"}
)

// panel emits panel{R}x32{elem}NEON: c[i*ldc+j] (i < R, j < 32) = (acc !=
// 0 ? c[i*ldc+j] : 0) + Σ_k a[i*lda+k]·p[k*32+j], one FMA chain per
// element in increasing k; each pass of V vectors covers its columns over
// all of k.
func (g *gen) panel(s panelShape, e elem) {
	name := fmt.Sprintf("panel%dx%d%sNEON", s.R, panelNR, e.name)
	fmt.Fprintf(&g.decl, "\n// %s accumulates c[i*ldc+j] (from 0 where acc == 0) += Σ_k a[i*lda+k]·p[k*%d+j] for i < %d, j < %d, one FMA chain per element in increasing k.\n//\n//go:noescape\nfunc %s(a *float32, lda int, p %s, k int, c *float32, ldc int, acc int)\n",
		name, panelNR, s.R, panelNR, name, e.gotyp)
	fmt.Fprintf(&g.asm, "\n// func %s(a *float32, lda int, p %s, k int, c *float32, ldc int, acc int)\nTEXT ·%s(SB), NOSPLIT, $0-56\n", name, e.gotyp, name)
	for h := range panelNR / cols(s.V) {
		g.tilePass(panelArgs, s, e, h*cols(s.V), fmt.Sprintf("_%s_%d", strings.TrimPrefix(name, "panel"), h))
	}
	g.op("RET")
}

// nn emits nn{R}x{V}NEON, gemmNN's block: out[i*ldo+j] (i < R, j < 4V) =
// Σ_k a[i*lda+k]·b[k*ldb+j], one FMA chain per element in increasing k from
// zero, the tile of panel over a row-major b.
func (g *gen) nn(s panelShape) {
	name := fmt.Sprintf("nn%dx%dNEON", s.R, s.V)
	fmt.Fprintf(&g.decl, "\n// %s sets out[i*ldo+j] = Σ_k a[i*lda+k]·b[k*ldb+j] for i < %d, j < %d, one FMA chain per element in increasing k.\n//\n//go:noescape\nfunc %s(a *float32, lda int, b *float32, ldb int, k int, out *float32, ldo int)\n",
		name, s.R, 4*s.V, name)
	fmt.Fprintf(&g.asm, "\n// func %s(a *float32, lda int, b *float32, ldb int, k int, out *float32, ldo int)\nTEXT ·%s(SB), NOSPLIT, $0-56\n", name, name)
	g.tilePass(nnArgs, s, elemF32, 0, "_"+strings.TrimPrefix(name, "nn"))
	g.op("RET")
}

// nnCol emits nnColNEON: gemmNN for one row and one column, scalar FMAs in
// increasing k, for the columns the vector blocks leave over.
func (g *gen) nnCol() {
	const name = "nnColNEON"
	fmt.Fprintf(&g.decl, "\n// %s sets *out = Σ_k a[k]·b[k*ldb], one FMA chain in increasing k.\n//\n//go:noescape\nfunc %s(a *float32, b *float32, ldb int, k int, out *float32)\n", name, name)
	fmt.Fprintf(&g.asm, "\n// func %s(a *float32, b *float32, ldb int, k int, out *float32)\nTEXT ·%s(SB), NOSPLIT, $0-40\n", name, name)
	g.op("MOVD a+0(FP), R0")
	g.op("MOVD b+8(FP), R1")
	g.op("MOVD ldb+16(FP), R2")
	g.op("LSL $2, R2, R2")
	g.op("MOVD k+24(FP), R3")
	g.op("FMOVS ZR, F0")
	g.label("loop_nnCol")
	g.op("CBZ R3, store_nnCol")
	g.op("FMOVS.P 4(R0), F1")
	g.op("FMOVS (R1), F2")
	g.op("FMADDS F1, F0, F2, F0 // F0 = F2·F1 + F0, one rounding")
	g.op("ADD R2, R1, R1")
	g.op("SUB $1, R3, R3")
	g.op("B loop_nnCol")
	g.label("store_nnCol")
	g.op("MOVD out+32(FP), R4")
	g.op("FMOVS F0, (R4)")
	g.op("RET")
}

// tilePass emits a pass of a register tile over columns [col0, col0+4V) of
// b (a panel, or nn's rows) over all of k; its labels end in suffix.
func (g *gen) tilePass(kind tileKind, s panelShape, e elem, col0 int, suffix string) {
	R, V, G := s.R, s.V, s.G
	acc := func(i, v int) int { return i*V + v }
	aReg := func(i int) int { return R*V + i }
	pReg := R*V + R // the group's G panel vectors, then (16-bit) G/2 raw ones
	raw := pReg + G
	if e.size == 2 && G == 2 {
		raw = pReg + 1 // one raw vector, widened into pReg, then in place
	}
	if e.size == 2 && raw+G/2 > 32 || pReg+G > 32 {
		panic(fmt.Sprintf("neongen: %+v needs more than 32 vector registers", s))
	}
	g.op("MOVD a+0(FP), R%d", rA)
	g.op("MOVD lda+8(FP), R%d", rLda)
	g.op("LSL $2, R%d, R%d", rLda, rLda)
	g.op("MOVD %s, R%d", kind.b, rP)
	g.op("MOVD %s, R%d", kind.k, rK)
	g.op("MOVD %s, R%d", kind.c, rC)
	g.op("MOVD %s, R%d", kind.ldc, rLdc)
	g.op("LSL $2, R%d, R%d", rLdc, rLdc)
	if kind.acc != "" {
		g.op("MOVD %s, R%d", kind.acc, rAcc)
	}
	if col0 > 0 {
		g.op("ADD $%d, R%d, R%d", col0*e.size, rP, rP)
		g.op("ADD $%d, R%d, R%d", col0*4, rC, rC)
	}
	groupBytes := 4 * G * e.size
	// After the pass's last load of a k, the step to the next k: to the
	// panel's next row (32 elements), or b's (ldb floats).
	skip := groupBytes + (panelNR-cols(V))*e.size
	regSkip := skip != groupBytes
	if kind.panel && regSkip {
		g.op("MOVD $%d, R%d", skip, rSkip)
	}
	if !kind.panel {
		regSkip = true
		g.op("MOVD %s, R%d", kind.ldb, rSkip)
		g.op("LSL $2, R%d, R%d", rSkip, rSkip)
		if d := 16 * (V - G); d > 0 {
			g.op("SUB $%d, R%d, R%d", d, rSkip, rSkip)
		}
	}
	g.op("MOVD R%d, R%d", rA, rRow0)
	for i := 1; i < R; i++ {
		g.op("ADD R%d, R%d, R%d", rLda, rRow0+i-1, rRow0+i)
	}
	// The accumulators: zero, or c's values.
	if kind.acc != "" {
		g.op("CBNZ R%d, load%s", rAcc, suffix)
	}
	for i := range R {
		for v := range V {
			r := acc(i, v)
			g.op("VEOR V%d.B16, V%d.B16, V%d.B16", r, r, r)
		}
	}
	if kind.acc != "" {
		g.op("B loop4%s", suffix)
		g.label("load" + suffix)
		g.rowsOfC(R, V, acc, "VLD1", true)
	}

	// One k (lane u of the vectors of a), the vectors of b of the pass
	// loaded G at a time, each feeding R·G FMAs.
	step := func(u int) {
		for q := 0; q < V; q += G {
			post := fmt.Sprintf("%d(R%d)", groupBytes, rP)
			if q+G == V && regSkip {
				post = fmt.Sprintf("(R%d)(R%d)", rP, rSkip)
			}
			if e.size == 4 {
				g.op("VLD1.P %s, %s", post, vlist(pReg, G, "S4"))
			} else {
				g.op("VLD1.P %s, %s", post, vlist(raw, G/2, "H8"))
				// Lower halves first: with one raw vector, its upper half is
				// widened in place last.
				for x := range G / 2 {
					g.word(e.widen(pReg+2*x, raw+x, false))
					g.word(e.widen(pReg+2*x+1, raw+x, true))
				}
			}
			for i := range R {
				for v := range G {
					g.word(fmlaElem(acc(i, q+v), pReg+v, aReg(i), u), gnuFMLA(acc(i, q+v), pReg+v, aReg(i), u))
				}
			}
		}
	}
	g.label("loop4" + suffix)
	g.op("CMP $4, R%d", rK)
	g.op("BLT loop1%s", suffix)
	for i := range R {
		g.op("VLD1.P 16(R%d), [V%d.S4]", rRow0+i, aReg(i))
	}
	for u := range 4 {
		step(u)
	}
	g.op("SUB $4, R%d, R%d", rK, rK)
	g.op("B loop4%s", suffix)
	g.label("loop1" + suffix)
	g.op("CBZ R%d, store%s", rK, suffix)
	for i := range R {
		g.op("VLD1R.P 4(R%d), [V%d.S4]", rRow0+i, aReg(i))
	}
	step(0)
	g.op("SUB $1, R%d, R%d", rK, rK)
	g.op("B loop1%s", suffix)
	g.label("store" + suffix)
	g.rowsOfC(R, V, acc, "VST1", false)
}

// cols is the columns of a pass of V vectors.
func cols(V int) int { return 4 * V }

// rowsOfC loads (VLD1) or stores (VST1) the accumulators from or to c's R
// rows, four vectors an instruction.
func (g *gen) rowsOfC(R, V int, acc func(i, v int) int, op string, load bool) {
	g.op("MOVD R%d, R%d", rC, rCBase)
	for i := range R {
		g.op("MOVD R%d, R%d", rCBase, rCRow)
		for v := 0; v < V; v += 4 {
			n := min(4, V-v)
			list := vlist(acc(i, v), n, "S4")
			mem := fmt.Sprintf("(R%d)", rCRow)
			if v+n < V {
				mem = fmt.Sprintf("%d(R%d)", 16*n, rCRow)
			}
			suffix := ""
			if v+n < V {
				suffix = ".P"
			}
			if load {
				g.op("%s%s %s, %s", op, suffix, mem, list)
			} else {
				g.op("%s%s %s, %s", op, suffix, list, mem)
			}
		}
		if i < R-1 {
			g.op("ADD R%d, R%d, R%d", rLdc, rCBase, rCBase)
		}
	}
}
