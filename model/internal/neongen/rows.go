package main

import (
	"fmt"
	"math"
)

// The row kernels of the softmax, the loss and the MLPs (model's
// expSubRow, sumExpSub, maxRow, divMaxRow, mulRow, geluRow, geluErfRow,
// swigluRow): each the AVX2 kernel's operation sequence per lane, so that
// their bits are the AVX2 set's. They cover n - n%8 elements, eight a step
// in two 4-lane vectors (lanes 0-3 and 4-7 of AVX2's register), and
// model's Go code does the rest as it does after the AVX2 kernels; sums and
// maxima keep AVX2's 8 lanes (two vectors) and reduce them in its tree:
// lanes l and l+4 first, then (0+2)+(1+3).
//
// The x86 forms' semantics where NEON differs:
//
//   - MAXPS/MINPS return their second operand where the comparison is false
//     (a NaN, or equal zeros): written FCMGT then BIF (xmax), bit for bit,
//     for the maxima and GELU's |x| and max(x, 0);
//   - the exponential's clamp, max(x, lo) then min(x, hi), is FMAXNM and
//     FMINNM: the same on numbers, and lo where x is a NaN, as MAXPS gives;
//     its x is always an arithmetic result, never a signalling NaN;
//   - ROUNDPS (nearest even) is FRINTN, CVTPS2DQ of those integers FCVTNS;
//   - every FMA (VFMADD231/213/132PS) is an FMLA with the same three
//     values, one rounding; a constant operand is a lane of a constant
//     vector (FMLA and FMUL by element), or DUP'd into the accumulator.

// rowConsts are the constants' values as 4-lane vectors, in the order of
// the table neonrowc<> (V20-V29 after loadConsts): the exponential's clamp
// and 1 and the exponent bias (127, an integer) whole, then the scalars
// four a vector.
var rowConsts = [10][4]uint32{
	splat(-87.33654), splat(88.72283), splat(1), {127, 127, 127, 127},
	f4(1.44269504088896341, -0.693359375, 2.12194440e-4, 1.9875691500e-4),           // log2 e, -c1, c2, p0
	f4(1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1),          // p1-p4
	f4(5.0000001201e-1, 0.044715, -2*0.7978845608028654, 0.5),                       // p5, gelu_new's 0.044715 and -2·sqrt(2/π), 0.5
	f4(1/math.Sqrt2, erfcCoefficients[9], erfcCoefficients[8], erfcCoefficients[7]), // 1/√2, erfc c9-c7
	f4(erfcCoefficients[6], erfcCoefficients[5], erfcCoefficients[4], erfcCoefficients[3]),
	f4(erfcCoefficients[2], erfcCoefficients[1], erfcCoefficients[0], math.MaxFloat32), // erfc c2-c0, the largest float32
}

// erfcCoefficients are Numerical Recipes' erfcc (as internal/asmgen's):
// erfc(z) = t·exp(-z² + c0 + t·(c1 + t·(c2 + ...))), t = 1/(1 + z/2).
var erfcCoefficients = [10]float32{-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
	0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277}

func splat(v float32) [4]uint32 { return f4(v, v, v, v) }

func f4(a, b, c, d float32) [4]uint32 {
	return [4]uint32{math.Float32bits(a), math.Float32bits(b), math.Float32bits(c), math.Float32bits(d)}
}

// The constant registers, and the lanes of the scalar constants.
const (
	cLo, cHi, cOne, cBias = 20, 21, 22, 23
	vZero                 = 31 // zeroed where a kernel needs it
	vArg                  = 30 // m or d broadcast
)

// lane is a scalar constant: lane l of constant register r.
type lane struct{ r, l int }

var (
	kLog2e, kNegC1, kC2, kP0 = lane{24, 0}, lane{24, 1}, lane{24, 2}, lane{24, 3}
	kP                       = [6]lane{kP0, {25, 0}, {25, 1}, {25, 2}, {25, 3}, {26, 0}} // p0-p5
	kGeluC, kGeluM2S, kHalf  = lane{26, 1}, lane{26, 2}, lane{26, 3}
	kRsqrt2                  = lane{27, 0}
	kErfc                    = [10]lane{{29, 2}, {29, 1}, {29, 0}, {28, 3}, {28, 2}, {28, 1}, {28, 0}, {27, 3}, {27, 2}, {27, 1}} // c0-c9
	kMaxFloat                = lane{29, 3}
)

// rowConstTable emits the constants' table.
func (g *gen) rowConstTable() {
	fmt.Fprintf(&g.asm, "\n// The row kernels' constants (rows.go's rowConsts), 16 bytes a vector.\n")
	for v, c := range rowConsts {
		for l, bits := range c {
			g.asm.WriteString(fmt.Sprintf("DATA neonrowc<>+%d(SB)/4, $0x%08x\n", 16*v+4*l, bits))
		}
	}
	fmt.Fprintf(&g.asm, "GLOBL neonrowc<>(SB), RODATA|NOPTR, $%d\n", 16*len(rowConsts))
}

// loadConsts loads the table into V20-V29 (R9 the cursor).
func (g *gen) loadConsts() {
	g.op("MOVD $neonrowc<>(SB), R9")
	g.op("VLD1.P 64(R9), %s", vlist(20, 4, "S4"))
	g.op("VLD1.P 64(R9), %s", vlist(24, 4, "S4"))
	g.op("VLD1 (R9), %s", vlist(28, 2, "S4"))
}

// Emitters of one instruction each.
func (g *gen) v3(o op3, d, n, m int) { g.word(o.enc(d, n, m)) }
func (g *gen) v2(o op2, d, n int)    { g.word(o.enc(d, n)) }
func (g *gen) mulLane(d, n int, k lane) {
	g.word(fmulElem(d, n, k.r, k.l))
}
func (g *gen) fmaLane(d, n int, k lane) { // Vd += Vn·k
	g.word(fmlaElem(d, n, k.r, k.l), gnuFMLA(d, n, k.r, k.l))
}
func (g *gen) dup(d int, k lane) { g.word(dupElem(d, k.r, k.l)) }

// xmax sets Vd = Vd > Vs ? Vd : Vs (x86's MAXPS with Vd its first
// operand: Vs where either is a NaN or both are zeros), mask a scratch.
func (g *gen) xmax(d, s, mask int) {
	g.v3(opFCMGT, mask, d, s)
	g.v3(opBIF, d, s, mask)
}

// xmin sets Vd = Vd < Vs ? Vd : Vs (x86's MINPS with Vd its first
// operand: Vs where either is a NaN or both are zeros), mask a scratch.
func (g *gen) xmin(d, s, mask int) {
	g.v3(opFCMGT, mask, s, d)
	g.v3(opBIF, d, s, mask)
}

// exp replaces Vx by e^x lane-wise, internal/asmgen's exp (Cephes' expf):
// x clamped to [lo, hi], n = round-to-even(x·log2 e), r = x - n·c1 + n·c2
// (FMAs), p = ((((p0·r + p1)·r + p2)·r + p3)·r + p4)·r + p5 (FMAs), then
// p·r² + (r + 1) (an FMA) times 2^n made in the exponent bits. t holds
// four scratch registers.
func (g *gen) exp(x int, t [4]int) {
	n, p, q, s := t[0], t[1], t[2], t[3]
	g.v3(opFMAXNM, x, x, cLo)
	g.v3(opFMINNM, x, x, cHi)
	g.mulLane(n, x, kLog2e)
	g.v2(opFRINTN, n, n)
	g.fmaLane(x, n, kNegC1) // r = x - n·c1
	g.fmaLane(x, n, kC2)    // r += n·c2
	g.dup(p, kP[0])
	for _, c := range kP[1:] {
		g.dup(q, c)
		g.v3(opFMLA, q, p, x) // p·r + c
		p, q = q, p
	}
	g.v3(opFMUL, s, x, x)    // r²
	g.v3(opFADD, q, x, cOne) // r + 1
	g.v3(opFMLA, q, p, s)    // p·r² + (r + 1)
	g.v2(opFCVTNS, n, n)     // n, an integer in [-127, 128]
	g.v3(opADD, n, n, cBias) // + 127
	g.word(shl32(n, n, 23))  // 2^n (+Inf for n = 128)
	g.v3(opFMUL, x, q, n)
}

// rowFunc writes kernel name's declaration (doc, Go signature) and its
// TEXT line with the frame of args bytes.
func (g *gen) rowFunc(name, sig, doc string, args int) {
	fmt.Fprintf(&g.decl, "\n// %s\n//\n//go:noescape\nfunc %s%s\n", doc, name, sig)
	fmt.Fprintf(&g.asm, "\n// func %s%s\nTEXT ·%s(SB), NOSPLIT, $0-%d\n", name, sig, name, args)
}

// rowLoop emits the loop over n - n%8 floats of the row at param p (R0
// the cursor, R3 its end; R1 the cursor of param p2 if not ""): body, then
// the cursors advanced by 32 bytes.
func (g *gen) rowLoop(name, p, p2 string, body func()) {
	g.op("MOVD %s+0(FP), R0", p)
	if p2 != "" {
		g.op("MOVD %s+8(FP), R1", p2)
		g.op("MOVD n+16(FP), R2")
	} else {
		g.op("MOVD n+8(FP), R2")
	}
	g.op("AND $-8, R2, R2")
	g.op("ADD R2<<2, R0, R3")
	g.label("loop_" + name)
	g.op("CMP R3, R0")
	g.op("BHS done_" + name)
	body()
	g.op("ADD $32, R0, R0")
	if p2 != "" {
		g.op("ADD $32, R1, R1")
	}
	g.op("B loop_" + name)
	g.label("done_" + name)
}

// load8 and store8 move the 8 floats at R0 (or R1) to or from Vd, Vd+1.
func (g *gen) load8(r, d int)  { g.op("VLD1 (R%d), %s", r, vlist(d, 2, "S4")) }
func (g *gen) store8(r, d int) { g.op("VST1 %s, (R%d)", vlist(d, 2, "S4"), r) }

// broadcastArg sets every lane of V30 to the float32 param at off.
func (g *gen) broadcastArg(name string, off int) {
	g.op("FMOVS %s+%d(FP), F%d", name, off, vArg)
	g.word(dupElem(vArg, vArg, 0))
}

// sum8 returns in lane 0 of V0 the sum of the 8 lanes in Va (0-3) and Vb
// (4-7), AVX2's reduce: y_l = a_l + b_l, then (y0 + y2) + (y1 + y3).
func (g *gen) sum8(a, b int) {
	g.v3(opFADD, 1, a, b)
	g.word(ext8(2, 1, 1))
	g.v3(opFADD, 2, 1, 2)
	g.word(faddp(0, 2))
}

// expRow emits name(row *float32, n int, m float32) float32: the sum of
// e^(row[i]-m) for i < n - n%8 in 8 lanes (lane l: i ≡ l mod 8, in
// increasing i) reduced by sum8; with store, row[i] = e^(row[i]-m).
func (g *gen) expRow(name string, store bool) {
	doc := fmt.Sprintf("%s returns Σ e^(row[i]-m) for i < n - n%%8, AVX2's exponential and sum.", name)
	if store {
		doc = fmt.Sprintf("%s sets row[i] = e^(row[i]-m) for i < n - n%%8 and returns their sum, AVX2's exponential and sum.", name)
	}
	g.rowFunc(name, "(row *float32, n int, m float32) float32", doc, 28)
	g.loadConsts()
	g.broadcastArg("m", 16)
	g.op("VEOR V16.B16, V16.B16, V16.B16")
	g.op("VEOR V17.B16, V17.B16, V17.B16")
	g.rowLoop(name, "row", "", func() {
		g.load8(0, 0)
		for h := range 2 {
			x := h
			g.v3(opFSUB, x, x, vArg)
			g.exp(x, [4]int{2 + 4*h, 3 + 4*h, 4 + 4*h, 5 + 4*h})
		}
		if store {
			g.store8(0, 0)
		}
		g.v3(opFADD, 16, 16, 0)
		g.v3(opFADD, 17, 17, 1)
	})
	g.sum8(16, 17)
	g.op("FMOVS F0, ret+24(FP)")
	g.op("RET")
}

// maxRow emits maxRowNEON(row *float32, n int) float32, or with div
// divMaxRowNEON(row *float32, n int, d float32) float32 (row[i] /= d
// first): the largest of row[i], i < n - n%8, as AVX2 finds it: 8 running
// maxima from -Inf (m = m > x ? m : x), then the lanes folded as sum8 adds
// them (lo > hi ? lo : hi, and so on).
func (g *gen) maxRow(div bool) {
	name, sig, args := "maxRowNEON", "(row *float32, n int) float32", 20
	doc := name + " returns the largest row[i] for i < n - n%8 (-Inf if none), AVX2's maximum bit for bit."
	if div {
		name, sig, args = "divMaxRowNEON", "(row *float32, n int, d float32) float32", 28
		doc = name + " sets row[i] /= d for i < n - n%8 and returns the largest quotient (-Inf if none), AVX2's maximum bit for bit."
	}
	g.rowFunc(name, sig, doc, args)
	if div {
		g.broadcastArg("d", 16)
	}
	g.op("MOVW $0x%08x, R4", math.Float32bits(float32(math.Inf(-1))))
	g.op("VDUP R4, V16.S4")
	g.op("VDUP R4, V17.S4")
	g.rowLoop(name, "row", "", func() {
		g.load8(0, 0)
		if div {
			g.v3(opFDIV, 0, 0, vArg)
			g.v3(opFDIV, 1, 1, vArg)
			g.store8(0, 0)
		}
		g.xmax(16, 0, 2)
		g.xmax(17, 1, 3)
	})
	g.xmax(16, 17, 2)
	g.word(ext8(1, 16, 16))
	g.xmax(16, 1, 2)
	g.word(dupElem(1, 16, 1))
	g.xmax(16, 1, 2)
	ret := "ret+16(FP)"
	if div {
		ret = "ret+24(FP)"
	}
	g.op("FMOVS F16, %s", ret)
	g.op("RET")
}

// mulRow emits mulRowNEON(row *float32, n int, m float32): row[i] *= m for
// i < n - n%8.
func (g *gen) mulRow() {
	const name = "mulRowNEON"
	g.rowFunc(name, "(row *float32, n int, m float32)", name+" sets row[i] *= m for i < n - n%8.", 20)
	g.broadcastArg("m", 16)
	g.rowLoop(name, "row", "", func() {
		g.load8(0, 0)
		g.v3(opFMUL, 0, vArg, 0)
		g.v3(opFMUL, 1, vArg, 1)
		g.store8(0, 0)
	})
	g.op("RET")
}

// elementwise emits name(x *float32, n int) (or with up, name(gate, up
// *float32, n int)): body(v, t, h) on the two halves of 8 floats, h the
// half (0: lanes 0-3, 1: lanes 4-7), v its values' register (V0, V1), t
// its nine scratch registers; with zero V31 is zero.
func (g *gen) elementwise(name, doc string, up bool, zero bool, body func(v int, t []int, h int)) {
	if up {
		g.rowFunc(name, "(gate *float32, up *float32, n int)", doc, 24)
	} else {
		g.rowFunc(name, "(x *float32, n int)", doc, 16)
	}
	g.loadConsts()
	if zero {
		g.op("VEOR V%d.B16, V%d.B16, V%d.B16", vZero, vZero, vZero)
	}
	p, p2 := "x", ""
	if up {
		p, p2 = "gate", "up"
	}
	g.rowLoop(name, p, p2, func() {
		g.load8(0, 0)
		if up {
			g.load8(1, upReg)
		}
		for h := range 2 {
			body(h, scratch[h], h) // V0, V1 are the halves' values
		}
		g.store8(0, 0)
	})
	g.op("RET")
}

// scratch are the two halves' scratch registers (V20-V29 hold the
// constants, V31 zero). swigluRow's up is in V8 and V9, past the five its
// halves use.
var scratch = [2][]int{{2, 3, 4, 5, 6, 7, 8, 9, 10}, {11, 12, 13, 14, 15, 16, 17, 18, 19}}

// upReg is the first of swigluRow's two vectors of up.
const upReg = 8

// gelu emits geluRowNEON: gelu_new as x / (1 + e^(-2u)), u = sqrt(2/π)·(x +
// 0.044715·x³), AVX2's operations: u = x·x·x, u = fma(u, 0.044715, x),
// u·(-2·sqrt(2/π)), e^, + 1, x / that.
func (g *gen) gelu() {
	const name = "geluRowNEON"
	g.elementwise(name, name+" applies gelu_new to x[i] for i < n - n%8, AVX2's operations.", false, false, func(v int, t []int, _ int) {
		u, w := t[0], t[1]
		g.v3(opFMUL, u, v, v)
		g.v3(opFMUL, u, u, v)
		g.v3(opORR, w, v, v)
		g.fmaLane(w, u, kGeluC) // x + x³·0.044715
		g.mulLane(u, w, kGeluM2S)
		g.exp(u, [4]int{t[2], t[3], t[4], t[5]})
		g.v3(opFADD, u, u, cOne)
		g.v3(opFDIV, v, v, u)
	})
}

// geluErf emits geluErfRowNEON: the exact GELU as AVX2's geluErfRow
// computes it: a = |x| = xmax(0 - x, xmin(MaxFloat32, x)) (MaxFloat32 for
// +Inf, whose GELU is then +Inf), z = a/√2·(by 1/√2), t = 1/fma(z,
// 0.5, 1), q = erfcc's polynomial in t (FMAs from c9), q - z², e^, ·t,
// ·(a·0.5), then xmax(x, 0) - that.
func (g *gen) geluErf() {
	const name = "geluErfRowNEON"
	g.elementwise(name, name+" applies the exact GELU x·Φ(x) to x[i] for i < n - n%8, AVX2's operations.", false, true, func(v int, t []int, _ int) {
		a, z, tt, q, q2, mask := t[0], t[1], t[2], t[3], t[4], t[8]
		g.v3(opFSUB, a, vZero, v)
		g.dup(z, kMaxFloat)
		g.xmin(z, v, mask)
		g.xmax(a, z, mask)
		g.mulLane(z, a, kRsqrt2)
		g.v3(opORR, tt, cOne, cOne)
		g.fmaLane(tt, z, kHalf) // z/2 + 1
		g.v3(opFDIV, tt, cOne, tt)
		g.dup(q, kErfc[9])
		for j := 8; j >= 0; j-- {
			g.dup(q2, kErfc[j])
			g.v3(opFMLA, q2, q, tt) // q·t + c_j
			q, q2 = q2, q
		}
		g.v3(opFMUL, z, z, z)
		g.v3(opFSUB, q, q, z)
		g.exp(q, [4]int{q2, t[5], t[6], t[7]})
		g.v3(opFMUL, q, q, tt)
		g.mulLane(a, a, kHalf)
		g.v3(opFMUL, q, q, a)
		g.xmax(v, vZero, mask)
		g.v3(opFSUB, v, v, q)
	})
}

// swiglu emits swigluRowNEON: gate[i] = gate[i] / (1 + e^(-gate[i])) ·
// up[i], AVX2's operations (e^(0 - x), + 1, x / that, · up).
func (g *gen) swiglu() {
	const name = "swigluRowNEON"
	g.elementwise(name, name+" sets gate[i] = gate[i] / (1 + e^(-gate[i])) · up[i] for i < n - n%8, AVX2's operations.", true, true, func(v int, t []int, h int) {
		e := t[0]
		g.v3(opFSUB, e, vZero, v)
		g.exp(e, [4]int{t[1], t[2], t[3], t[4]})
		g.v3(opFADD, e, e, cOne)
		g.v3(opFDIV, v, v, e)
		g.v3(opFMUL, v, v, upReg+h)
	})
}

// rows emits the row kernels and their constants.
func (g *gen) rows() {
	g.rowConstTable()
	g.expRow("expSubRowNEON", true)
	g.expRow("sumExpSubNEON", false)
	g.maxRow(false)
	g.maxRow(true)
	g.mulRow()
	g.gelu()
	g.geluErf()
	g.swiglu()
}
