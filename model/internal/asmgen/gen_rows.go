package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/ir"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The row kernels of the norms, the rotary embedding and the matmul
// epilogue (model/ops_rows.go documents them and holds their portable
// forms), and, at 16 lanes, the bf16 mode's rounding of activations:
//
//   - sumRow, sumSqDevRow: float64 sums of a row in 8 float64 lanes at
//     either width (AVX2: two YMM registers of 4, AVX-512: one ZMM of 8),
//     lane l summing the elements i ≡ l (mod 8), reduced by reduce8;
//   - scaleMulRow, normAffineRow, rotateRow, addBiasRows, accBiasRows:
//     element-wise float32 arithmetic, one rounding per operation in a
//     fixed order, never fused;
//   - roundBF16RowAVX512: VCVTNEPS2BF16 (AVX512_BF16), written as its bytes.
//
// Like the other row kernels they cover the first n - n%8 (sums) or
// n - n%lanes elements (of each row, for the bias kernels, which take a
// matmul tile's rows with their strides); model's Go code does the rest.

// rows emits the row kernels of g's isa.
func (g *gen) rows() {
	g.sumRow(false)
	g.sumRow(true)
	g.scaleMulRow()
	g.normAffineRow()
	g.rotateRow()
	g.biasRows(false)
	g.biasRows(true)
	if g.lanes == 16 {
		g.roundBF16()
	}
}

// rowFunc starts kernel name with signature sig and doc, and returns its
// element counter i (zero) and the whole-vector bound: n rounded down to a
// multiple of step.
func (g *gen) rowFunc(name, sig, doc string, step int) (i, n reg.GPVirtual) {
	g.Function(name)
	g.Attributes(attr.NOSPLIT)
	g.Pragma("noescape")
	g.SignatureExpr(sig)
	g.Doc(doc)
	i, n = g.GP64(), g.GP64()
	g.Load(g.Param("n"), n)
	g.ANDQ(operand.I32(-step), n)
	g.XORQ(i, i)
	return i, n
}

// pointer loads pointer param p into a new register.
func (g *gen) pointer(p string) reg.GPVirtual {
	r := g.GP64()
	g.Load(g.Param(p), r)
	return r
}

// broadcast returns float param p in every lane of a new vector register
// (float32 lanes, or with f64 float64 lanes).
func (g *gen) broadcast(p string, f64 bool) reg.VecVirtual {
	m, err := g.Param(p).Resolve()
	if err != nil {
		panic(err)
	}
	v := g.vec()
	if f64 {
		g.VBROADCASTSD(m.Addr, v)
	} else {
		g.VBROADCASTSS(m.Addr, v)
	}
	return v
}

// loop emits the loop of a row kernel: body(i) for i = 0, step, ... while
// i < n, then the label "done".
func (g *gen) loop(i, n reg.GPVirtual, step int, body func()) {
	g.Label("loop")
	g.CMPQ(i, n)
	g.JAE(operand.LabelRef("done"))
	body()
	g.ADDQ(operand.U32(step), i)
	g.JMP(operand.LabelRef("loop"))
	g.Label("done")
}

// sumRow emits sumRow{isa}(x *float32, n int) float64, or with dev
// sumSqDevRow{isa}(x *float32, n int, m float64) float64: over the first
// n - n%8 floats of x, the sum of float64(x[i]), or of d·d with d =
// float64(x[i]) - m (the difference and the square each rounded to float64,
// then added), in 8 float64 lanes, lane l taking i ≡ l (mod 8) in
// increasing i, reduced by reduce8.
func (g *gen) sumRow(dev bool) {
	name, sig, what := "sumRow"+g.name, "func(x *float32, n int) float64", "float64(x[i])"
	if dev {
		name, sig, what = "sumSqDevRow"+g.name, "func(x *float32, n int, m float64) float64", "(float64(x[i]) - m)²"
	}
	i, n := g.rowFunc(name, sig, fmt.Sprintf("%s returns Σ %s for i < n - n%%8, in 8 float64 lanes (lane l: i ≡ l mod 8) reduced in a fixed tree.", name, what), 8)
	x := g.pointer("x")
	var m reg.VecVirtual
	if dev {
		m = g.broadcast("m", true)
	}
	// AVX2: lanes 0-3 and 4-7 in two YMM registers; AVX-512: one ZMM.
	parts := 16 / g.lanes
	acc := make([]reg.VecVirtual, parts)
	for p := range acc {
		acc[p] = g.vec()
		g.zero(acc[p])
	}
	g.loop(i, n, 8, func() {
		for p := range acc {
			t := g.vec()
			g.VCVTPS2PD(operand.Mem{Base: x, Index: i, Scale: 4, Disp: 4 * 8 / parts * p}, t)
			if dev {
				g.VSUBPD(m, t, t) // t = x - m
				g.VMULPD(t, t, t)
			}
			g.VADDPD(t, acc[p], acc[p])
		}
	})
	s := g.reduce8(acc)
	g.VZEROUPPER() // before the SSE store of the result; keeps the low 128 bits
	g.Store(s, g.ReturnIndex(0))
	g.RET()
}

// reduce8 returns, in lane 0 of a new XMM register, the sum of the 8
// float64 lanes l0..l7 in acc (two YMM registers holding l0-3 and l4-7, or
// one ZMM) in a fixed tree: y_j = l_j + l_(j+4), then (y0 + y2) + (y1 + y3).
func (g *gen) reduce8(acc []reg.VecVirtual) reg.VecVirtual {
	y := g.YMM()
	if len(acc) == 2 {
		g.VADDPD(acc[1], acc[0], y)
	} else {
		g.VEXTRACTF64X4(operand.U8(1), acc[0], y)
		g.VADDPD(y, acc[0].AsY(), y)
	}
	x := g.XMM()
	if g.lanes == 16 {
		g.VEXTRACTF32X4(operand.U8(1), y, x)
	} else {
		g.VEXTRACTF128(operand.U8(1), y, x)
	}
	g.VADDPD(x, y.AsX(), x) // x0, x1 = y0+y2, y1+y3
	h := g.XMM()
	g.VMOVHLPS(x, x, h) // h0 = x1
	s := g.XMM()
	g.VADDSD(h, x, s) // s0 = x0+x1
	return s
}

// at4 is float32 element i of the row at p.
func at4(p, i reg.GPVirtual) operand.Mem { return operand.Mem{Base: p, Index: i, Scale: 4} }

// scaleMulRow emits scaleMulRow{isa}(o, x, w *float32, n int, s float32):
// o[i] = (x[i]·s)·w[i] (RMSNorm's output).
func (g *gen) scaleMulRow() {
	name := "scaleMulRow" + g.name
	i, n := g.rowFunc(name, "func(o *float32, x *float32, w *float32, n int, s float32)",
		fmt.Sprintf("%s sets o[i] = (x[i]·s)·w[i] for i < n - n%%%d.", name, g.lanes), g.lanes)
	o, x, w := g.pointer("o"), g.pointer("x"), g.pointer("w")
	s := g.broadcast("s", false)
	g.loop(i, n, g.lanes, func() {
		t := g.vec()
		g.VMULPS(at4(x, i), s, t)
		g.VMULPS(at4(w, i), t, t)
		g.VMOVUPS(t, at4(o, i))
	})
	g.VZEROUPPER()
	g.RET()
}

// normAffineRow emits normAffineRow{isa}(o, x, w, b *float32, n int, m, s
// float32): o[i] = ((x[i] - m)·s)·w[i] + b[i] (LayerNorm's output).
func (g *gen) normAffineRow() {
	name := "normAffineRow" + g.name
	i, n := g.rowFunc(name, "func(o *float32, x *float32, w *float32, b *float32, n int, m float32, s float32)",
		fmt.Sprintf("%s sets o[i] = ((x[i] - m)·s)·w[i] + b[i] for i < n - n%%%d, each operation rounded.", name, g.lanes), g.lanes)
	o, x, w, b := g.pointer("o"), g.pointer("x"), g.pointer("w"), g.pointer("b")
	m, s := g.broadcast("m", false), g.broadcast("s", false)
	g.loop(i, n, g.lanes, func() {
		t := g.vec()
		g.VMOVUPS(at4(x, i), t)
		g.VSUBPS(m, t, t) // t = x - m
		g.VMULPS(s, t, t)
		g.VMULPS(at4(w, i), t, t)
		g.VADDPS(at4(b, i), t, t)
		g.VMOVUPS(t, at4(o, i))
	})
	g.VZEROUPPER()
	g.RET()
}

// rotateRow emits rotateRow{isa}(x1, x2, c, s *float32, n int): the rotary
// embedding's rotate-half form, (x1[i], x2[i]) = (x1·c - x2·s, x2·c + x1·s)
// with every product rounded before the sum (no FMA).
func (g *gen) rotateRow() {
	name := "rotateRow" + g.name
	i, n := g.rowFunc(name, "func(x1 *float32, x2 *float32, c *float32, s *float32, n int)",
		fmt.Sprintf("%s sets x1[i], x2[i] = x1[i]·c[i] - x2[i]·s[i], x2[i]·c[i] + x1[i]·s[i] for i < n - n%%%d, products rounded before the sums.", name, g.lanes), g.lanes)
	x1, x2, c, s := g.pointer("x1"), g.pointer("x2"), g.pointer("c"), g.pointer("s")
	g.loop(i, n, g.lanes, func() {
		a, b, cv, sv := g.vec(), g.vec(), g.vec(), g.vec()
		g.VMOVUPS(at4(x1, i), a)
		g.VMOVUPS(at4(x2, i), b)
		g.VMOVUPS(at4(c, i), cv)
		g.VMOVUPS(at4(s, i), sv)
		ac, bs, bc, as := g.vec(), g.vec(), g.vec(), g.vec()
		g.VMULPS(cv, a, ac)
		g.VMULPS(sv, b, bs)
		g.VMULPS(cv, b, bc)
		g.VMULPS(sv, a, as)
		g.VSUBPS(bs, ac, ac) // a·c - b·s
		g.VADDPS(as, bc, bc) // b·c + a·s
		g.VMOVUPS(ac, at4(x1, i))
		g.VMOVUPS(bc, at4(x2, i))
	})
	g.VZEROUPPER()
	g.RET()
}

// biasRows emits addBiasRows{isa}(o *float32, ldo int, v *float32, ldv int,
// b *float32, rows, n int): o[r*ldo+j] = v[r*ldv+j] + b[j], or with acc
// accBiasRows{isa}: o[r*ldo+j] = o[r*ldo+j] + (v[r*ldv+j] + b[j]), for r <
// rows and j < n - n%lanes (the epilogue of a matmul tile with a bias,
// without and with the residual add).
func (g *gen) biasRows(acc bool) {
	name, what := "addBiasRows"+g.name, "v[r*ldv+j] + b[j]"
	if acc {
		name, what = "accBiasRows"+g.name, "o[r*ldo+j] + (v[r*ldv+j] + b[j])"
	}
	j, n := g.rowFunc(name, "func(o *float32, ldo int, v *float32, ldv int, b *float32, rows int, n int)",
		fmt.Sprintf("%s sets o[r*ldo+j] = %s for r < rows, j < n - n%%%d.", name, what, g.lanes), g.lanes)
	o, v, b := g.pointer("o"), g.pointer("v"), g.pointer("b")
	ldo, ldv, rows := g.GP64(), g.GP64(), g.GP64()
	for _, p := range []struct {
		name string
		r    reg.GPVirtual
	}{{"ldo", ldo}, {"ldv", ldv}} {
		g.Load(g.Param(p.name), p.r)
		g.SHLQ(operand.U8(2), p.r)
	}
	g.Load(g.Param("rows"), rows)
	g.Label("row")
	g.CMPQ(rows, operand.U32(0))
	g.JLE(operand.LabelRef("end"))
	g.XORQ(j, j)
	g.loop(j, n, g.lanes, func() {
		t := g.vec()
		g.VMOVUPS(at4(v, j), t)
		g.VADDPS(at4(b, j), t, t)
		if acc {
			g.VADDPS(at4(o, j), t, t)
		}
		g.VMOVUPS(t, at4(o, j))
	})
	g.ADDQ(ldo, o)
	g.ADDQ(ldv, v)
	g.DECQ(rows)
	g.JMP(operand.LabelRef("row"))
	g.Label("end")
	g.VZEROUPPER()
	g.RET()
}

// vcvtneps2bf16 returns the encoding of VCVTNEPS2BF16 ymm(dst), zmm(src)
// (Intel syntax; sixteen float32 of src rounded to bf16 into dst):
// EVEX.512.F3.0F38.W0 72 /r, no mask, registers 0-31.
func vcvtneps2bf16(dst, src int) []byte {
	p0 := byte(0x02) // R̄ X̄ B̄ R̄' 0 0 m m; mm = 10: map 0F38
	if dst&8 == 0 {
		p0 |= 0x80
	}
	if src&16 == 0 { // X̄ extends ModRM.rm to 32 registers
		p0 |= 0x40
	}
	if src&8 == 0 {
		p0 |= 0x20
	}
	if dst&16 == 0 {
		p0 |= 0x10
	}
	const p1 = 0x7e // W=0, v̄vvv = 1111 (no second source), 1, pp = 10: F3
	const p2 = 0x48 // z=0, L'L = 10: 512 bits, b=0, V̄' = 1, aaa = 000
	modrm := 0xc0 | byte(dst&7)<<3 | byte(src&7)
	return []byte{0x62, p0, p1, p2, 0x72, modrm}
}

// roundBF16 emits roundBF16RowAVX512(dst *uint16, x *float32, n int): dst[i]
// = x[i] rounded to bf16 by VCVTNEPS2BF16 for i < n - n%16. Go's assembler
// has no mnemonic for VCVTNEPS2BF16, so it is written as its bytes, on
// physical registers (Z0 in, Y1 out).
func (g *gen) roundBF16() {
	const name = "roundBF16RowAVX512"
	g.Function(name)
	g.Attributes(attr.NOSPLIT)
	g.Pragma("noescape")
	g.SignatureExpr("func(dst *uint16, x *float32, n int)")
	g.Doc(name + " sets dst[i] to x[i] rounded to bf16 (VCVTNEPS2BF16: nearest even, denormals to zero, NaNs quieted) for i < n - n%16.")
	dst, x, n, i := reg.RDI, reg.RSI, reg.RCX, reg.RAX
	g.Load(g.Param("dst"), dst)
	g.Load(g.Param("x"), x)
	g.Load(g.Param("n"), n)
	g.ANDQ(operand.I32(-16), n)
	g.XORQ(i, i)
	g.Label("loop")
	g.CMPQ(i, n)
	g.JAE(operand.LabelRef("done"))
	g.VMOVUPS(operand.Mem{Base: x, Index: i, Scale: 4}, reg.Z0)
	g.Comment("VCVTNEPS2BF16 Z0, Y1 (Y1 = Z0 rounded to bf16)")
	for k, b := range vcvtneps2bf16(1, 0) {
		in := &ir.Instruction{Opcode: "BYTE", Operands: []operand.Op{operand.U8(b)}}
		if k == 0 {
			in.ISA = []string{"AVX512_BF16"}
		}
		g.Instruction(in)
	}
	g.VMOVUPS(reg.Y1, operand.Mem{Base: dst, Index: i, Scale: 2})
	g.ADDQ(operand.U32(16), i)
	g.JMP(operand.LabelRef("loop"))
	g.Label("done")
	g.VZEROUPPER()
	g.RET()
}
