package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/ir"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The AMX bf16 product (model's "bf16-amx" kernels, model/bf16_amx.go):
// amxGemm32BF16 computes 32 output features (rows of the weights) for 32
// tokens at a time with TDPBF16PS on four 16x16 float32 result tiles:
//
//	tmm0 = features 0-15 x tokens 0-15   tmm1 = features 0-15 x tokens 16-31
//	tmm2 = features 16-31 x tokens 0-15  tmm3 = features 16-31 x tokens 16-31
//	tmm4, tmm5: 16 rows of the weights each (32 bf16 of k per row)
//	tmm6, tmm7: 16 tokens each of the activation panel, in VNNI pairs
//
// The weights are TDPBF16PS's first operand as they are stored (a row is an
// output feature, k contiguous); the activations are its second, which
// wants k in pairs: the panel (model's bf16 rounding for this set) holds
// each 16-token group as K32/2 rows of 64 bytes, row p holding tokens 0-15's
// elements 2p and 2p+1. Each k step of 32 loads four tiles and issues four
// TDPBF16PS; the result tiles (features x tokens) are stored to a scratch
// buffer, transposed there with AVX-512 shuffles into tokens x features,
// and copied into out under a mask of the valid features, for the valid
// tokens.
//
// Go's assembler has no AMX mnemonics: the instructions are written as
// their encoded bytes (VEX, map 0F38), naming fixed tile registers and
// general registers; the function uses physical registers only.

// vex3 returns the three-byte VEX prefix for map 0F38, W0, L0, with the
// register extensions for ModRM.reg (r), SIB.index (x) and ModRM.rm or
// SIB.base (b), vvvv (inverted in the encoding; 0 when unused) and pp.
func vex3(r, x, b, vvvv, pp int) []byte {
	p0 := byte(0x02) // map 0F38
	if r&8 == 0 {
		p0 |= 0x80
	}
	if x&8 == 0 {
		p0 |= 0x40
	}
	if b&8 == 0 {
		p0 |= 0x20
	}
	p1 := byte(^vvvv&15)<<3 | byte(pp) // W0, L0
	return []byte{0xc4, p0, p1}
}

// The VEX pp field's values.
const (
	ppNP = 0
	pp66 = 1
	ppF3 = 2
	ppF2 = 3
)

// ldtilecfg is LDTILECFG [base] (VEX.128.NP.0F38.W0 49 /0), base a general
// register other than RSP, RBP, R12 and R13 (no SIB or displacement).
func ldtilecfg(base int) []byte {
	if base&7 == 4 || base&7 == 5 {
		panic("ldtilecfg: base needs a SIB byte or a displacement")
	}
	return append(vex3(0, 0, base, 0, ppNP), 0x49, byte(base&7))
}

// tilerelease is TILERELEASE (VEX.128.NP.0F38.W0 49 C0).
func tilerelease() []byte { return append(vex3(0, 0, 0, 0, ppNP), 0x49, 0xc0) }

// tilezero is TILEZERO tmm(t) (VEX.128.F2.0F38.W0 49 11:rrr:000).
func tilezero(t int) []byte { return append(vex3(0, 0, 0, 0, ppF2), 0x49, 0xc0|byte(t)<<3) }

// tileMem is TILELOADD's and TILESTORED's memory form: tmm(t) and [base +
// index*1], the index register being the row stride in bytes; base is not
// RBP or R13 (which would need a displacement), index not RSP.
func tileMem(pp, t, base, index int) []byte {
	if base&7 == 5 || index == 4 {
		panic("tileMem: base RBP/R13 or index RSP")
	}
	modrm := byte(t)<<3 | 0x04 // mod 00, rm 100: SIB
	sib := byte(index&7)<<3 | byte(base&7)
	return append(vex3(0, index, base, 0, pp), 0x4b, modrm, sib)
}

// tileloadd is TILELOADD tmm(t), [base + stride*1] (VEX.128.F2.0F38.W0 4B).
func tileloadd(t, base, stride int) []byte { return tileMem(ppF2, t, base, stride) }

// tilestored is TILESTORED [base + stride*1], tmm(t) (VEX.128.F3.0F38.W0 4B).
func tilestored(t, base, stride int) []byte { return tileMem(ppF3, t, base, stride) }

// tdpbf16ps is TDPBF16PS tmm(dst), tmm(a), tmm(b) (VEX.128.F3.0F38.W0 5C
// 11:dst:a, b in vvvv): dst += a · b in bf16 pairs.
func tdpbf16ps(dst, a, b int) []byte {
	return append(vex3(0, 0, 0, b, ppF3), 0x5c, 0xc0|byte(dst)<<3|byte(a))
}

// gpr numbers the general registers as the encodings do.
var gpr = map[reg.Register]int{
	reg.RAX: 0, reg.RCX: 1, reg.RDX: 2, reg.RBX: 3, reg.RSP: 4, reg.RBP: 5, reg.RSI: 6, reg.RDI: 7,
	reg.R8: 8, reg.R9: 9, reg.R10: 10, reg.R11: 11, reg.R12: 12, reg.R13: 13, reg.R14: 14, reg.R15: 15,
}

// emitBytes writes an instruction's encoding as BYTE directives after a
// comment naming it (Intel syntax, as binutils prints it).
func (g *gen) emitBytes(isa, intel string, b []byte) {
	g.Comment(intel)
	for i, c := range b {
		in := &ir.Instruction{Opcode: "BYTE", Operands: []operand.Op{operand.U8(c)}}
		if i == 0 {
			in.ISA = []string{isa}
		}
		g.Instruction(in)
	}
}

func regName(r reg.Register) string {
	return map[int]string{0: "rax", 1: "rcx", 2: "rdx", 3: "rbx", 5: "rbp", 6: "rsi", 7: "rdi", 8: "r8", 9: "r9",
		10: "r10", 11: "r11", 12: "r12", 13: "r13", 14: "r14", 15: "r15"}[gpr[r]]
}

func (g *gen) tileLoad(t int, base, stride reg.Register) {
	g.emitBytes("AMX_TILE", fmt.Sprintf("tileloadd tmm%d,[%s+%s*1]", t, regName(base), regName(stride)), tileloadd(t, gpr[base], gpr[stride]))
}

func (g *gen) tileStore(t int, base, stride reg.Register) {
	g.emitBytes("AMX_TILE", fmt.Sprintf("tilestored [%s+%s*1],tmm%d", regName(base), regName(stride), t), tilestored(t, gpr[base], gpr[stride]))
}

func (g *gen) tdp(dst, a, b int) {
	g.emitBytes("AMX_BF16", fmt.Sprintf("tdpbf16ps tmm%d,tmm%d,tmm%d", dst, a, b), tdpbf16ps(dst, a, b))
}

// amxGemm emits amxGemm32BF16.
func (g *gen) amxGemm() {
	name := "amxGemm32BF16"
	g.Function(name)
	g.Attributes(attr.NOSPLIT)
	g.Pragma("noescape")
	g.SignatureExpr("func(cfg *byte, w *uint16, ldw int, wt *uint16, x *uint16, xg int, kb int, ntb int, m int, n int, out *float32, ldo int, buf *float32)")
	g.Doc(name + " sets out[t*ldo+f] = Σ_k x_t[k]·w[f*ldw+k] for tokens t < m and features f < n <= 32, as TDPBF16PS computes it (model/bf16_amx.go): cfg is the tile configuration (8 tiles of 16 rows of 64 bytes); the weights' first kb blocks of 32 elements of k are read from w, and when wt is not nil one more block from wt (32 rows of 32 elements, the tail of k zero-padded); x is the activation panel in VNNI pairs, a 16-token group every xg bytes, taken 32 tokens (ntb times); buf is 4 KiB of scratch.")

	ldwB, s64 := reg.R8, reg.R9
	xtb, mLeft, outTB, tbLeft := reg.R12, reg.R13, reg.RBX, reg.RAX
	w0, w1, x0, x1 := reg.RSI, reg.RDI, reg.R10, reg.R11
	kc, tmp := reg.RCX, reg.RDX

	g.Load(g.Param("cfg"), tmp)
	g.emitBytes("AMX_TILE", "ldtilecfg [rdx]", ldtilecfg(gpr[tmp]))
	// The feature masks: K1 the valid ones of features 0-15, K2 of 16-31.
	g.Load(g.Param("n"), kc)
	g.MOVQ(operand.U32(1), tmp)
	g.SHLQ(reg.CL, tmp)
	g.DECQ(tmp)
	g.KMOVW(tmp.As32(), reg.K1)
	g.SHRQ(operand.U8(16), tmp)
	g.KMOVW(tmp.As32(), reg.K2)

	g.Load(g.Param("ldw"), ldwB)
	g.SHLQ(operand.U8(1), ldwB)
	g.MOVQ(operand.U32(64), s64)
	g.Load(g.Param("x"), xtb)
	g.Load(g.Param("m"), mLeft)
	g.Load(g.Param("out"), outTB)
	g.Load(g.Param("ntb"), tbLeft)

	g.Label("tb")
	for t := range 4 {
		g.emitBytes("AMX_TILE", fmt.Sprintf("tilezero tmm%d", t), tilezero(t))
	}
	step := func() {
		g.tileLoad(4, w0, ldwB)
		g.tileLoad(5, w1, ldwB)
		g.tileLoad(6, x0, s64)
		g.tileLoad(7, x1, s64)
		g.tdp(0, 4, 6)
		g.tdp(1, 4, 7)
		g.tdp(2, 5, 6)
		g.tdp(3, 5, 7)
	}
	g.Load(g.Param("w"), w0)
	g.MOVQ(ldwB, w1)
	g.SHLQ(operand.U8(4), w1)
	g.ADDQ(w0, w1)
	g.MOVQ(xtb, x0)
	g.MOVQ(xtb, x1)
	g.ADDQ(g.paramMem("xg"), x1)
	g.Load(g.Param("kb"), kc)
	g.TESTQ(kc, kc)
	g.JZ(operand.LabelRef("tail"))
	g.Label("k")
	step()
	g.ADDQ(operand.U32(64), w0)
	g.ADDQ(operand.U32(64), w1)
	g.ADDQ(operand.U32(1024), x0)
	g.ADDQ(operand.U32(1024), x1)
	g.DECQ(kc)
	g.JNZ(operand.LabelRef("k"))

	g.Label("tail")
	g.Load(g.Param("wt"), w0)
	g.TESTQ(w0, w0)
	g.JZ(operand.LabelRef("store"))
	g.LEAQ(operand.Mem{Base: w0, Disp: 1024}, w1)
	// The tail block's rows are 64 bytes apart, as the panel's.
	g.tileLoad(4, w0, s64)
	g.tileLoad(5, w1, s64)
	g.tileLoad(6, x0, s64)
	g.tileLoad(7, x1, s64)
	g.tdp(0, 4, 6)
	g.tdp(1, 4, 7)
	g.tdp(2, 5, 6)
	g.tdp(3, 5, 7)

	g.Label("store")
	buf := reg.RSI
	g.Load(g.Param("buf"), buf)
	for t := range 4 {
		p := reg.RDI
		g.LEAQ(operand.Mem{Base: buf, Disp: 1024 * t}, p)
		g.tileStore(t, p, s64)
	}
	for t := range 4 {
		g.transpose16(buf, 1024*t)
	}
	// Rows: min(32, mLeft) tokens, each the 32 features of buf's rows t and
	// 32+t (64 bytes each), masked.
	g.Comment("Copy min(32, m left) token rows into out.")
	g.MOVQ(mLeft, kc)
	g.CMPQ(kc, operand.U32(32))
	g.JLE(operand.LabelRef("rows"))
	g.MOVQ(operand.U32(32), kc)
	g.Label("rows")
	g.MOVQ(outTB, tmp)
	g.Label("row")
	g.VMOVUPS(operand.Mem{Base: buf}, zmm(0))
	g.VMOVUPS(operand.Mem{Base: buf, Disp: 2048}, zmm(1))
	g.VMOVUPS(zmm(0), reg.K1, operand.Mem{Base: tmp})
	g.VMOVUPS(zmm(1), reg.K2, operand.Mem{Base: tmp, Disp: 64})
	g.ADDQ(operand.U32(64), buf)
	g.Load(g.Param("ldo"), w1)
	g.SHLQ(operand.U8(2), w1)
	g.ADDQ(w1, tmp)
	g.DECQ(kc)
	g.JNZ(operand.LabelRef("row"))

	g.Comment("Next 32 tokens.")
	g.Load(g.Param("ldo"), w1)
	g.SHLQ(operand.U8(7), w1) // 32 rows of 4-byte elements
	g.ADDQ(w1, outTB)
	g.ADDQ(g.paramMem("xg"), xtb)
	g.ADDQ(g.paramMem("xg"), xtb)
	g.SUBQ(operand.U32(32), mLeft)
	g.DECQ(tbLeft)
	g.JNZ(operand.LabelRef("tb"))

	g.emitBytes("AMX_TILE", "tilerelease", tilerelease())
	g.VZEROUPPER()
	g.RET()
}

// transpose16 transposes in place the 16x16 float32 matrix at off(base)
// (rows of 64 bytes): four 4x4 transposes inside each 128-bit lane with
// VSHUFPS, then the 4x4 matrix of 128-bit lanes of each group of four
// registers with VSHUFF32X4. Z0-Z19 are clobbered.
func (g *gen) transpose16(base reg.Register, off int) {
	g.Comment(fmt.Sprintf("Transpose the 16x16 tile at %d(%s).", off, regName(base)))
	row := func(r int) operand.Mem { return operand.Mem{Base: base, Disp: off + 64*r} }
	for r := range 16 {
		g.VMOVUPS(row(r), zmm(r))
	}
	// VSHUFPS imm, src2, src1, dst: dst's 128-bit lane = src1[imm 1:0],
	// src1[imm 3:2], src2[imm 5:4], src2[imm 7:6] of that lane.
	t := [4]reg.VecPhysical{zmm(16), zmm(17), zmm(18), zmm(19)}
	for q := range 4 {
		r := func(i int) reg.VecPhysical { return zmm(4*q + i) }
		g.VSHUFPS(operand.U8(0x44), r(1), r(0), t[0])
		g.VSHUFPS(operand.U8(0xee), r(1), r(0), t[1])
		g.VSHUFPS(operand.U8(0x44), r(3), r(2), t[2])
		g.VSHUFPS(operand.U8(0xee), r(3), r(2), t[3])
		g.VSHUFPS(operand.U8(0x88), t[2], t[0], r(0))
		g.VSHUFPS(operand.U8(0xdd), t[2], t[0], r(1))
		g.VSHUFPS(operand.U8(0x88), t[3], t[1], r(2))
		g.VSHUFPS(operand.U8(0xdd), t[3], t[1], r(3))
	}
	// Z(4q+i), lane L, now holds rows 4q..4q+3 of column 4L+i.
	for i := range 4 {
		c := func(q int) reg.VecPhysical { return zmm(4*q + i) }
		g.VSHUFF32X4(operand.U8(0x44), c(1), c(0), t[0])
		g.VSHUFF32X4(operand.U8(0xee), c(1), c(0), t[1])
		g.VSHUFF32X4(operand.U8(0x44), c(3), c(2), t[2])
		g.VSHUFF32X4(operand.U8(0xee), c(3), c(2), t[3])
		g.VSHUFF32X4(operand.U8(0x88), t[2], t[0], c(0))
		g.VSHUFF32X4(operand.U8(0xdd), t[2], t[0], c(1))
		g.VSHUFF32X4(operand.U8(0x88), t[3], t[1], c(2))
		g.VSHUFF32X4(operand.U8(0xdd), t[3], t[1], c(3))
		// c(0) is column i, c(1) column 4+i, c(2) 8+i, c(3) 12+i.
		for q := range 4 {
			g.VMOVUPS(c(q), row(4*q+i))
		}
	}
}

// paramMem is the argument frame slot of the parameter name.
func (g *gen) paramMem(name string) operand.Mem {
	b, err := g.Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// xgetbv emits xgetbvLow, XGETBV with ECX = 0: the low half of XCR0.
func (g *gen) xgetbv() {
	g.Function("xgetbvLow")
	g.Attributes(attr.NOSPLIT)
	g.SignatureExpr("func() uint32")
	g.Doc("xgetbvLow returns the low 32 bits of XCR0 (XGETBV with ECX = 0); call it only where CPUID reports OSXSAVE.")
	g.XORL(reg.ECX, reg.ECX)
	g.XGETBV()
	g.Store(reg.EAX, g.ReturnIndex(0))
	g.RET()
}
