package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/ir"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The bf16 dot products (model's bf16 mode): dpbf{R}x{C}AVX512, a and b both
// bf16, one VDPBF16PS per 32 elements of k per output, which lane j of the
// accumulator takes pairs (2j, 2j+1) of; the K%32 tail is loaded with a
// zeroing mask (so both operands are zero-padded and nothing past k is
// touched) and taken as one more VDPBF16PS; the lanes are reduced in the
// same fixed tree as the float32 kernels. model/bf16.go documents the
// arithmetic and holds its scalar model.
//
// Go's assembler has no mnemonic for VDPBF16PS, so it is written as its
// encoded bytes (vdpbf16ps), which name fixed registers: these functions use
// physical registers only, laid out by hand (accumulator of row i, column j
// in Z(4i+j), row i of a in Z(16+i), the current row of b in Z20), and avo's
// register allocator has nothing to do in them.

// zmm is vector register n at 512 bits.
func zmm(n int) reg.VecPhysical { return reg.Vector.Lookup(reg.Index(n), reg.S512).(reg.VecPhysical) }

// vdpbf16ps returns the encoding of VDPBF16PS zmm(dst), zmm(src1), zmm(src2)
// (Intel syntax: dst += pairs of src1·src2): EVEX.512.F3.0F38.W0 52 /r, no
// mask, registers 0-31.
func vdpbf16ps(dst, src1, src2 int) []byte {
	p0 := byte(0x02) // R̄ X̄ B̄ R̄' 0 0 m m; mm = 10: map 0F38
	if dst&8 == 0 {
		p0 |= 0x80
	}
	if src2&16 == 0 { // X̄ extends ModRM.rm to 32 registers
		p0 |= 0x40
	}
	if src2&8 == 0 {
		p0 |= 0x20
	}
	if dst&16 == 0 {
		p0 |= 0x10
	}
	// W=0, v̄vvv (src1's low 4 bits, inverted), 1, pp = 10: F3.
	p1 := byte(^src1&15)<<3 | 0x04 | 0x02
	p2 := byte(0x40) // z=0, L'L = 10: 512 bits, b=0, V̄', aaa = 000
	if src1&16 == 0 {
		p2 |= 0x08
	}
	modrm := 0xc0 | byte(dst&7)<<3 | byte(src2&7)
	return []byte{0x62, p0, p1, p2, 0x52, modrm}
}

// emitVDPBF16PS writes VDPBF16PS zmm(dst), zmm(src1), zmm(src2) as BYTE
// directives, with its meaning in a comment.
func (g *gen) emitVDPBF16PS(dst, src1, src2 int) {
	g.Commentf("VDPBF16PS Z%d, Z%d, Z%d (Z%d += pairs of Z%d·Z%d)", src2, src1, dst, dst, src1, src2)
	for i, b := range vdpbf16ps(dst, src1, src2) {
		in := &ir.Instruction{Opcode: "BYTE", Operands: []operand.Op{operand.U8(b)}}
		if i == 0 {
			in.ISA = []string{"AVX512_BF16"}
		}
		g.Instruction(in)
	}
}

// chunkMode is what a dot-product kernel (dpbf, and the AVX-512 dot) does
// with its R x C accumulators before and after its k elements: the whole
// product (zeroed, then reduced into out), or one chunk of a product split
// along k (chunkModes): the first chunk starts from zero, later ones from
// the lane sums a chunk left in acc, and every chunk but the last leaves its
// lane sums there. A product split into chunks of whole vectors of k is
// therefore the same sequence of steps in every lane as the whole one, bit
// for bit.
type chunkMode struct {
	suffix string // in the kernel's name: dpbf{R}x{C}{suffix}AVX512, dot{R}x{C}{elem}{suffix}AVX512
	load   bool   // start from the lane sums in acc, else from zero
	store  bool   // leave the lane sums in acc, else reduce them into out
}

var (
	wholeProduct = chunkMode{"", false, false}
	// chunkModes are the modes of a product split along k, in order.
	chunkModes = []chunkMode{{"Start", false, true}, {"Mid", true, true}, {"End", true, false}}
)

// dpbf emits dpbf{R}x{C}{mode.suffix}AVX512 (R x C accumulators: R <= 4,
// C <= 4).
func (g *gen) dpbf(R, C int, mode chunkMode) {
	name := fmt.Sprintf("dpbf%dx%d%sAVX512", R, C, mode.suffix)
	g.Function(name)
	g.Attributes(attr.NOSPLIT)
	g.Pragma("noescape")
	if mode == wholeProduct {
		g.SignatureExpr("func(a *uint16, lda int, b *uint16, ldb int, k int, out *float32, ldo int)")
		g.Doc(fmt.Sprintf("%s sets out[i*ldo+j] = Σ_k a[i*lda+k]·b[j*ldb+k] for i < %d, j < %d, a and b bf16, as VDPBF16PS computes it (16 lanes of pairs, the tail zero-padded, lanes reduced in a fixed tree).", name, R, C))
	} else {
		g.SignatureExpr("func(a *uint16, lda int, b *uint16, ldb int, k int, acc *float32, out *float32, ldo int)")
		from, to := "zero", "reduces them into out[i*ldo+j] as dpbf%[2]dx%[3]dAVX512 does"
		if mode.load {
			from = "the lane sums in acc"
		}
		if mode.store {
			to = "stores the lane sums in acc (%[1]d floats: block i*%[3]d+j at 16*(i*%[3]d+j))"
		}
		g.Doc(fmt.Sprintf("%s is one chunk of dpbf%dx%dAVX512's product along k: it starts from %s, adds the k elements of a and b as dpbf%dx%dAVX512 does, and %s.",
			name, R, C, from, R, C, fmt.Sprintf(to, 16*R*C, R, C)))
	}
	aRows := []reg.Register{reg.R8, reg.R9, reg.R10, reg.R11}[:R]
	bRows := []reg.Register{reg.RSI, reg.RDI, reg.RBX, reg.R12}[:C]
	K, n, kk, cx := reg.RAX, reg.RDX, reg.R13, reg.RCX
	rows := func(p, ld string, regs []reg.Register) {
		g.Load(g.Param(p), regs[0])
		if len(regs) == 1 {
			return
		}
		g.Load(g.Param(ld), cx)
		g.SHLQ(operand.U8(1), cx)
		for i := 1; i < len(regs); i++ {
			g.LEAQ(operand.Mem{Base: regs[i-1], Index: cx, Scale: 1}, regs[i])
		}
	}
	rows("a", "lda", aRows)
	rows("b", "ldb", bRows)
	g.Load(g.Param("k"), K)
	g.MOVQ(K, n)
	g.ANDQ(operand.I32(-32), n)
	acc := func(i, j int) int { return 4*i + j }
	// accMem is where acc holds the lane sums of accumulator (i, j).
	accMem := func(p reg.Register, i, j int) operand.Mem { return operand.Mem{Base: p, Disp: 64 * (i*C + j)} }
	if mode.load {
		g.Load(g.Param("acc"), kk)
		for i := range R {
			for j := range C {
				g.VMOVUPS(accMem(kk, i, j), zmm(acc(i, j)))
			}
		}
	} else {
		for i := range R {
			for j := range C {
				z := zmm(acc(i, j))
				g.VPXORD(z, z, z)
			}
		}
	}
	g.XORQ(kk, kk)
	elems := func(row reg.Register) operand.Mem { return operand.Mem{Base: row, Index: kk, Scale: 2} }
	block := func(masked bool) {
		load := func(m operand.Mem, z reg.VecPhysical) {
			if masked {
				g.VMOVDQU16_Z(m, reg.K1, z)
			} else {
				g.VMOVDQU16(m, z)
			}
		}
		for i := range R {
			load(elems(aRows[i]), zmm(16+i))
		}
		for j := range C {
			load(elems(bRows[j]), zmm(20))
			for i := range R {
				g.emitVDPBF16PS(acc(i, j), 16+i, 20)
			}
		}
	}
	g.Label("vec")
	g.CMPQ(kk, n)
	g.JAE(operand.LabelRef("tail"))
	block(false)
	g.ADDQ(operand.U32(32), kk)
	g.JMP(operand.LabelRef("vec"))

	g.Label("tail")
	g.CMPQ(kk, K)
	g.JAE(operand.LabelRef("reduce"))
	// K1 = the low K-kk (1..31) word lanes.
	g.MOVQ(K, cx)
	g.SUBQ(kk, cx)
	g.MOVL(operand.U32(1), reg.EDX)
	g.SHLL(reg.CL, reg.EDX)
	g.DECL(reg.EDX)
	g.KMOVD(reg.EDX, reg.K1)
	block(true)

	g.Label("reduce")
	if mode.store {
		p := reg.RSI // b's rows are no longer needed
		g.Load(g.Param("acc"), p)
		for i := range R {
			for j := range C {
				g.VMOVUPS(zmm(acc(i, j)), accMem(p, i, j))
			}
		}
		g.VZEROUPPER()
		g.RET()
		return
	}
	out, ldo := reg.RSI, reg.RDI // b's rows are no longer needed
	g.Load(g.Param("out"), out)
	if R > 1 {
		g.Load(g.Param("ldo"), ldo)
		g.SHLQ(operand.U8(2), ldo)
	}
	if R == 4 && C == 4 {
		var a [4][4]operand.Op
		for i := range 4 {
			for j := range 4 {
				a[i][j] = zmm(acc(i, j))
			}
		}
		g.store4x4(g.reduce4x4(a, zmm(16), zmm(17)), out, ldo)
		g.VZEROUPPER()
		g.RET()
		return
	}
	for i := range R {
		if i > 0 {
			g.ADDQ(ldo, out)
		}
		for j := range C {
			s := g.reduce16(zmm(acc(i, j)))
			g.VMOVSS(s, operand.Mem{Base: out, Disp: 4 * j})
		}
	}
	g.VZEROUPPER()
	g.RET()
}

// reduce4x4 reduces the sixteen accumulators of a 4x4 block of 16 lanes
// (row i, column j in acc[i][j]) together, using x and y as scratch, and
// returns the register (acc[0][0]) whose 128-bit lane i holds the four sums
// of row i. The adds are reduce's tree, in its order and with the same
// operand first (lane l plus lane l+8, then l plus l+4, then l plus l+2,
// then 0 plus 1), so each sum has reduce's bits; but the partial sums of
// four accumulators share a register at each level and the shuffles that
// gather them replace reduce's extracts: 45 instructions instead of 128.
func (g *gen) reduce4x4(acc [4][4]operand.Op, x, y operand.Op) operand.Op {
	// pair sets dst to the add of two shuffles of p and q (by lo, then
	// hi): lo's picks are the first operand of every add.
	pair := func(shuf func(imm, src2, src1, dst operand.Op), lo, hi uint8, p, q, dst operand.Op) {
		shuf(operand.U8(lo), q, p, x)
		shuf(operand.U8(hi), q, p, y)
		g.VADDPS(y, x, dst)
	}
	f32x4 := func(imm, src2, src1, dst operand.Op) { g.VSHUFF32X4(imm, src2, src1, dst) }
	ps := func(imm, src2, src1, dst operand.Op) { g.VSHUFPS(imm, src2, src1, dst) }
	g.Comment("Lanes l+8 onto l: rows 0|1 of column j in acc[0][j], rows 2|3 in acc[2][j].")
	for j := range 4 {
		pair(f32x4, 0x44, 0xee, acc[0][j], acc[1][j], acc[0][j])
		pair(f32x4, 0x44, 0xee, acc[2][j], acc[3][j], acc[2][j])
	}
	g.Comment("Lanes l+4 onto l: column j, row i in 128-bit lane i of acc[0][j].")
	for j := range 4 {
		pair(f32x4, 0x88, 0xdd, acc[0][j], acc[2][j], acc[0][j])
	}
	g.Comment("Lanes l+2 onto l: columns 0|1 in acc[0][0], 2|3 in acc[0][2].")
	pair(ps, 0x44, 0xee, acc[0][0], acc[0][1], acc[0][0])
	pair(ps, 0x44, 0xee, acc[0][2], acc[0][3], acc[0][2])
	g.Comment("Lane 1 onto 0: row i's four sums in 128-bit lane i of acc[0][0].")
	pair(ps, 0x88, 0xdd, acc[0][0], acc[0][2], acc[0][0])
	return acc[0][0]
}

// store4x4 writes the four 128-bit lanes of v (reduce4x4's) to out, out +
// ldo, out + 2 ldo and out + 3 ldo (bytes), advancing out.
func (g *gen) store4x4(v operand.Op, out, ldo reg.Register) {
	g.VMOVUPS(v.(reg.Vec).AsX(), operand.Mem{Base: out})
	for i := 1; i < 4; i++ {
		g.ADDQ(ldo, out)
		g.VEXTRACTF32X4(operand.U8(i), v, operand.Mem{Base: out})
	}
}

// reduce16 is reduce on physical registers (v's lanes summed into lane 0 of
// X23, through Y20, X21, X22), for the functions written without virtual
// registers: the same instructions in the same order.
func (g *gen) reduce16(v reg.VecPhysical) reg.VecPhysical {
	y, x, h, s := zmm(20).AsY(), zmm(21).AsX(), zmm(22).AsX(), zmm(23).AsX()
	yx := zmm(20).AsX()
	g.VEXTRACTF64X4(operand.U8(1), v, y)
	g.VADDPS(y, v.AsY(), y)
	g.VEXTRACTF32X4(operand.U8(1), y, x)
	g.VADDPS(x, yx, x)
	g.VMOVHLPS(x, x, h)
	g.VADDPS(h, x, h)
	g.VMOVSHDUP(h, s)
	g.VADDSS(s, h, s)
	return s.(reg.VecPhysical)
}
