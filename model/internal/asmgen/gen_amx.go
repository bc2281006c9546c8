package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/ir"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The AMX bf16 product (model's "bf16-amx" kernels, model/bf16_amx.go):
// amxChunkBF16 computes 32 output features (rows of the weights) for 32
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
// TDPBF16PS. A call takes one chunk of k for all its blocks, the result
// tiles (features x tokens) kept in an accumulator buffer between chunks;
// amxStoreBF16 then transposes them there with AVX-512 shuffles into tokens
// x features and copies them into out under a mask of the valid features,
// for the valid tokens.
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

// regName is r's Intel-syntax name, for the comments GNU as reads back in
// TestGeneratedAMX.
func regName(r reg.Register) string {
	return map[int]string{0: "rax", 1: "rcx", 2: "rdx", 3: "rbx", 5: "rbp", 6: "rsi", 7: "rdi", 8: "r8", 9: "r9",
		10: "r10", 11: "r11", 12: "r12", 13: "r13", 14: "r14", 15: "r15"}[gpr[r]]
}

// tileLoad, tileStore and tdp emit TILELOADD, TILESTORED and TDPBF16PS.
func (g *gen) tileLoad(t int, base, stride reg.Register) {
	g.emitBytes("AMX_TILE", fmt.Sprintf("tileloadd tmm%d,[%s+%s*1]", t, regName(base), regName(stride)), tileloadd(t, gpr[base], gpr[stride]))
}

func (g *gen) tileStore(t int, base, stride reg.Register) {
	g.emitBytes("AMX_TILE", fmt.Sprintf("tilestored [%s+%s*1],tmm%d", regName(base), regName(stride), t), tilestored(t, gpr[base], gpr[stride]))
}

func (g *gen) tdp(dst, a, b int) {
	g.emitBytes("AMX_BF16", fmt.Sprintf("tdpbf16ps tmm%d,tmm%d,tmm%d", dst, a, b), tdpbf16ps(dst, a, b))
}

// amxGemm emits amxChunkBF16, amxChunk16BF16 and amxStoreBF16: one chunk
// of k for every 32-feature, 32-token block (or 16-token, the half
// kernel), and the transposed copy of the finished result tiles into out. The caller (gemmBF16AMX) runs the chunks in order of k,
// the result tiles kept in acc between them (stored and reloaded exactly), so
// that a chunk's weights and activations stay in L1 while every block uses
// them.
func (g *gen) amxGemm() {
	g.amxChunk(false)
	g.amxChunk(true)
	g.amxStore()
}

// amxChunk emits amxChunkBF16, or with half amxChunk16BF16: the same for
// the first 16 tokens of each block only (tiles 0 and 2; for products of
// at most 16 tokens, such as a generator's step, where the other 16 are
// padding).
func (g *gen) amxChunk(half bool) {
	name := "amxChunkBF16"
	if half {
		name = "amxChunk16BF16"
	}
	g.Function(name)
	g.Attributes(attr.NOSPLIT)
	g.Pragma("noescape")
	g.SignatureExpr("func(cfg *byte, w *uint16, ldw int, x *uint16, xg int, steps int, nfb int, ntb int, acc *float32, first int)")
	if half {
		g.Doc(name + " is amxChunkBF16 for the first 16 tokens of each block only: it reads and writes tiles 0 and 2 of each block (features 0-15 and 16-31 by tokens 0-15), and neither reads the other 16 tokens of the panel nor touches tiles 1 and 3.")
	} else {
		g.Doc(name + " adds, for nfb blocks of 32 features (rows of w, ldw elements apart) and ntb blocks of 32 tokens (of the activation panel x in VNNI pairs, a 16-token group every xg bytes), steps blocks of 32 elements of k to the block's four 16x16 result tiles in acc (features x tokens, 4 KiB a block, feature block major), as TDPBF16PS computes it (model/bf16_amx.go); the tiles start from zero when first is not 0. cfg is the tile configuration: 8 tiles of 16 rows of 64 bytes.")
	}
	tiles := []int{0, 1, 2, 3}
	if half {
		tiles = []int{0, 2}
	}

	ldwB, s64 := reg.R8, reg.R9
	wfb, fbLeft, tbLeft := reg.R12, reg.R13, reg.RBX
	w0, w1, x0, x1 := reg.RSI, reg.RDI, reg.R10, reg.R11
	kc, xtb, accP := reg.RAX, reg.RCX, reg.RDX

	g.Load(g.Param("cfg"), accP)
	g.emitBytes("AMX_TILE", "ldtilecfg [rdx]", ldtilecfg(gpr[accP]))
	g.Load(g.Param("ldw"), ldwB)
	g.SHLQ(operand.U8(1), ldwB)
	g.MOVQ(operand.U32(64), s64)
	g.Load(g.Param("acc"), accP)
	g.Load(g.Param("w"), wfb)
	g.Load(g.Param("nfb"), fbLeft)

	g.Label("fb")
	g.Load(g.Param("x"), xtb)
	g.Load(g.Param("ntb"), tbLeft)
	g.Label("tb")
	// The block's tiles: from zero, or from acc.
	tileAt := func(t int, p reg.Register) {
		if t == 0 {
			g.MOVQ(accP, p)
		} else {
			g.LEAQ(operand.Mem{Base: accP, Disp: 1024 * t}, p)
		}
	}
	g.CMPQ(g.paramMem("first"), operand.U8(0))
	g.JE(operand.LabelRef("load"))
	for _, t := range tiles {
		g.emitBytes("AMX_TILE", fmt.Sprintf("tilezero tmm%d", t), tilezero(t))
	}
	g.JMP(operand.LabelRef("k0"))
	g.Label("load")
	for _, t := range tiles {
		tileAt(t, w0)
		g.tileLoad(t, w0, s64)
	}
	g.Label("k0")
	g.MOVQ(wfb, w0)
	g.MOVQ(ldwB, w1)
	g.SHLQ(operand.U8(4), w1)
	g.ADDQ(wfb, w1)
	g.MOVQ(xtb, x0)
	if !half {
		g.MOVQ(xtb, x1)
		g.ADDQ(g.paramMem("xg"), x1)
	}
	g.Load(g.Param("steps"), kc)
	g.Label("k")
	g.tileLoad(4, w0, ldwB)
	g.tileLoad(5, w1, ldwB)
	g.tileLoad(6, x0, s64)
	if half {
		g.tdp(0, 4, 6)
		g.tdp(2, 5, 6)
	} else {
		g.tileLoad(7, x1, s64)
		g.tdp(0, 4, 6)
		g.tdp(1, 4, 7)
		g.tdp(2, 5, 6)
		g.tdp(3, 5, 7)
	}
	g.ADDQ(operand.U32(64), w0)
	g.ADDQ(operand.U32(64), w1)
	g.ADDQ(operand.U32(1024), x0)
	if !half {
		g.ADDQ(operand.U32(1024), x1)
	}
	g.DECQ(kc)
	g.JNZ(operand.LabelRef("k"))
	for _, t := range tiles {
		tileAt(t, w0)
		g.tileStore(t, w0, s64)
	}
	g.ADDQ(operand.U32(4096), accP)
	g.ADDQ(g.paramMem("xg"), xtb)
	g.ADDQ(g.paramMem("xg"), xtb)
	g.DECQ(tbLeft)
	g.JNZ(operand.LabelRef("tb"))
	g.MOVQ(ldwB, kc)
	g.SHLQ(operand.U8(5), kc) // 32 rows
	g.ADDQ(kc, wfb)
	g.DECQ(fbLeft)
	g.JNZ(operand.LabelRef("fb"))

	g.emitBytes("AMX_TILE", "tilerelease", tilerelease())
	g.RET()
}

func (g *gen) amxStore() {
	name := "amxStoreBF16"
	g.Function(name)
	g.Attributes(attr.NOSPLIT)
	g.Pragma("noescape")
	g.SignatureExpr("func(acc *float32, nfb int, ntb int, m int, n int, out *float32, ldo int)")
	g.Doc(name + " transposes the result tiles in acc (amxChunkBF16's: nfb x ntb blocks of four 16x16 tiles, features x tokens) and writes them into out (tokens x features, row stride ldo): the tokens t < m and features f < n <= 32 nfb of the blocks, out[t*ldo+f]; acc is overwritten.")

	accP, fbLeft, nLeft, outFB := reg.RSI, reg.R8, reg.R12, reg.R13
	mLeft, outTB, tbLeft := reg.R10, reg.R11, reg.RBX
	rows, p, q, cx := reg.RAX, reg.RDI, reg.RDX, reg.RCX

	g.Load(g.Param("acc"), accP)
	g.Load(g.Param("nfb"), fbLeft)
	g.Load(g.Param("n"), nLeft)
	g.Load(g.Param("out"), outFB)
	g.Label("fb")
	// The feature masks: K1 the valid ones of features 0-15 of the block, K2
	// of 16-31.
	g.MOVQ(nLeft, cx)
	g.CMPQ(cx, operand.U32(32))
	g.JLE(operand.LabelRef("mask"))
	g.MOVQ(operand.U32(32), cx)
	g.Label("mask")
	g.MOVQ(operand.U32(1), q)
	g.SHLQ(reg.CL, q)
	g.DECQ(q)
	g.KMOVW(q.As32(), reg.K1)
	g.SHRQ(operand.U8(16), q)
	g.KMOVW(q.As32(), reg.K2)
	g.Load(g.Param("m"), mLeft)
	g.MOVQ(outFB, outTB)
	g.Load(g.Param("ntb"), tbLeft)

	g.Label("tb")
	for t := range 4 {
		g.transpose16(accP, 1024*t)
	}
	// Token t of the block: features 0-15 at 64t(acc), 16-31 at 2048+64t.
	g.Comment("Copy min(32, m left) token rows into out.")
	g.MOVQ(mLeft, rows)
	g.CMPQ(rows, operand.U32(32))
	g.JLE(operand.LabelRef("rows"))
	g.MOVQ(operand.U32(32), rows)
	g.Label("rows")
	g.MOVQ(accP, p)
	g.MOVQ(outTB, q)
	g.Load(g.Param("ldo"), cx)
	g.SHLQ(operand.U8(2), cx)
	g.Label("row")
	g.VMOVUPS(operand.Mem{Base: p}, zmm(0))
	g.VMOVUPS(operand.Mem{Base: p, Disp: 2048}, zmm(1))
	g.VMOVUPS(zmm(0), reg.K1, operand.Mem{Base: q})
	g.VMOVUPS(zmm(1), reg.K2, operand.Mem{Base: q, Disp: 64})
	g.ADDQ(operand.U32(64), p)
	g.ADDQ(cx, q)
	g.DECQ(rows)
	g.JNZ(operand.LabelRef("row"))
	g.SHLQ(operand.U8(5), cx) // 32 rows
	g.ADDQ(cx, outTB)
	g.ADDQ(operand.U32(4096), accP)
	g.SUBQ(operand.U32(32), mLeft)
	g.DECQ(tbLeft)
	g.JNZ(operand.LabelRef("tb"))
	g.ADDQ(operand.U32(128), outFB) // 32 features
	g.SUBQ(operand.U32(32), nLeft)
	g.DECQ(fbLeft)
	g.JNZ(operand.LabelRef("fb"))
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
	// transpose4 transposes the 4x4 blocks of four registers (elements for
	// VSHUFPS, 128-bit lanes for VSHUFF32X4), through t.
	transpose4 := func(shuf func(...operand.Op), r func(int) reg.VecPhysical) {
		shuf(operand.U8(0x44), r(1), r(0), t[0])
		shuf(operand.U8(0xee), r(1), r(0), t[1])
		shuf(operand.U8(0x44), r(3), r(2), t[2])
		shuf(operand.U8(0xee), r(3), r(2), t[3])
		shuf(operand.U8(0x88), t[2], t[0], r(0))
		shuf(operand.U8(0xdd), t[2], t[0], r(1))
		shuf(operand.U8(0x88), t[3], t[1], r(2))
		shuf(operand.U8(0xdd), t[3], t[1], r(3))
	}
	for q := range 4 {
		transpose4(g.VSHUFPS, func(i int) reg.VecPhysical { return zmm(4*q + i) })
	}
	// Z(4q+i), lane L, now holds rows 4q..4q+3 of column 4L+i.
	for i := range 4 {
		c := func(q int) reg.VecPhysical { return zmm(4*q + i) }
		transpose4(g.VSHUFF32X4, c)
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
