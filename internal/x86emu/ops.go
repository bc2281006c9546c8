package x86emu

import "errors"

// tuple is an EVEX instruction's memory-operand class, which sets N, the
// scale of a compressed 8-bit displacement (Intel SDM vol. 2, 2.7.5, tables
// 2-34 and 2-35).
type tuple uint8

const (
	tNone  tuple = iota // no EVEX form with memory
	tFV                 // full vector, 32-bit elements: N = VL bytes, 4 with broadcast
	tFVM                // full vector memory: N = VL bytes
	tHVM                // half vector memory: N = VL/2 bytes
	tT1S4               // one 32-bit scalar: N = 4
	tT1S8               // one 64-bit scalar: N = 8
	tT4x32              // four 32-bit elements: N = 16
	tT4x64              // four 64-bit elements: N = 32
)

func (t tuple) n(in *Inst) int {
	switch t {
	case tFV:
		if in.Bcast {
			return 4
		}
		return in.L
	case tFVM:
		return in.L
	case tHVM:
		return in.L / 2
	case tT1S4:
		return 4
	case tT1S8:
		return 8
	case tT4x32:
		return 16
	case tT4x64:
		return 32
	}
	return 1
}

// immOpSz in opInfo.imm: an immediate of the operand size (at most 4 bytes,
// but 8 for MOV r64, imm64).
const immOpSz = -1

// Encodings an opcode accepts (bits of opInfo.encs).
const (
	encLegacy = 1 << Legacy
	encVEX    = 1 << VEX
	encEVEX   = 1 << EVEX
	encVec    = encVEX | encEVEX
)

// opInfo describes one opcode: how to decode it and how to execute it.
type opInfo struct {
	name       string
	encs       uint8 // accepted encodings
	modrm      bool
	imm        int   // immediate bytes, or immOpSz
	w          int   // required VEX/EVEX.W (0 or 1), -1 for either
	tuple      tuple // EVEX disp8*N class
	vecRM      bool  // the r/m register is a vector register (EVEX.X extends it)
	bcast      bool  // accepts EVEX broadcast
	regOnly    bool  // the r/m operand must be a register
	memOnly    bool  // the r/m operand must be memory
	vvvvUnused bool  // vvvv must be 1111b
	check      func(*Inst) error
	exec       func(*Machine, *Inst) error
}

// opKey indexes the opcode table: the encoding class (0 legacy, 1 vector),
// map, mandatory prefix (vector and legacy 0F maps) and opcode.
func opKey(vector bool, m, pp int, op byte) uint32 {
	return uint32(b2i(vector))<<24 | uint32(m)<<16 | uint32(pp)<<8 | uint32(op)
}

var ops = map[uint32]*opInfo{}

func lookupOp(in *Inst) *opInfo {
	if in.Enc == Legacy && in.Map == 0 {
		return ops[opKey(false, 0, 0, in.Op)]
	}
	return ops[opKey(in.Enc != Legacy, in.Map, in.PP, in.Op)]
}

func legacy(op byte, o opInfo) {
	o.encs, o.w = encLegacy, -1
	ops[opKey(false, 0, 0, op)] = &o
}

func legacy0F(pp int, op byte, o opInfo) {
	o.encs, o.w = encLegacy, -1
	ops[opKey(false, 1, pp, op)] = &o
}

func vector(m, pp int, op byte, o opInfo) {
	if o.encs == 0 {
		o.encs = encVec
	}
	ops[opKey(true, m, pp, op)] = &o
}

// needL requires the vector lengths in bytes allowed by mask (bit 0: 16,
// bit 1: 32, bit 2: 64).
func needL(mask int) func(*Inst) error {
	return func(in *Inst) error {
		if mask&(in.L/16) == 0 {
			return errors.New("vector length not supported")
		}
		return nil
	}
}

func unsupported(*Machine, *Inst) error {
	return errors.New("decoded but not executed by this emulator")
}

func init() {
	// General-purpose instructions.
	for _, a := range []struct {
		op   byte
		name string
		alu  aluOp
	}{
		{0x01, "ADD", aluAdd}, {0x09, "OR", aluOr}, {0x21, "AND", aluAnd}, {0x29, "SUB", aluSub},
		{0x31, "XOR", aluXor}, {0x39, "CMP", aluCmp}, {0x85, "TEST", aluTest},
	} {
		alu := a.alu
		legacy(a.op, opInfo{name: a.name, modrm: true, exec: func(m *Machine, in *Inst) error { return m.aluRM(in, alu, false) }})
		if a.op != 0x85 {
			legacy(a.op+2, opInfo{name: a.name, modrm: true, exec: func(m *Machine, in *Inst) error { return m.aluRM(in, alu, true) }})
		}
	}
	legacy(0x81, opInfo{name: "ALU r/m, imm32", modrm: true, imm: immOpSz, exec: (*Machine).aluImm})
	legacy(0x83, opInfo{name: "ALU r/m, imm8", modrm: true, imm: 1, exec: (*Machine).aluImm})
	legacy(0x89, opInfo{name: "MOV r/m, r", modrm: true, exec: (*Machine).movStore})
	legacy(0x8B, opInfo{name: "MOV r, r/m", modrm: true, exec: (*Machine).movLoad})
	legacy(0x8D, opInfo{name: "LEA", modrm: true, memOnly: true, exec: (*Machine).lea})
	legacy(0xC7, opInfo{name: "MOV r/m, imm32", modrm: true, imm: immOpSz, exec: (*Machine).movImmRM})
	for r := byte(0); r < 8; r++ {
		legacy(0xB8+r, opInfo{name: "MOV r, imm", imm: immOpSz, exec: (*Machine).movImmReg})
	}
	legacy(0xFF, opInfo{name: "INC/DEC r/m", modrm: true, exec: (*Machine).incDec})
	legacy(0xC1, opInfo{name: "SHIFT r/m, imm8", modrm: true, imm: 1, exec: (*Machine).shift})
	legacy(0xD1, opInfo{name: "SHIFT r/m, 1", modrm: true, exec: (*Machine).shift})
	legacy(0xD3, opInfo{name: "SHIFT r/m, CL", modrm: true, exec: (*Machine).shift})
	for cc := byte(0); cc < 16; cc++ {
		legacy(0x70+cc, opInfo{name: "Jcc rel8", imm: 1, exec: (*Machine).jcc})
		legacy0F(ppNone, 0x80+cc, opInfo{name: "Jcc rel32", imm: 4, exec: (*Machine).jcc})
	}
	legacy(0xEB, opInfo{name: "JMP rel8", imm: 1, exec: (*Machine).jmp})
	legacy(0xE9, opInfo{name: "JMP rel32", imm: 4, exec: (*Machine).jmp})
	legacy(0xC3, opInfo{name: "RET", exec: (*Machine).ret})
	// Decoded (FuncOf walks Go's ABI wrappers) but not executed: the kernels
	// are leaf functions.
	legacy(0xE8, opInfo{name: "CALL rel32", imm: 4, exec: unsupported})
	for r := byte(0); r < 8; r++ {
		legacy(0x50+r, opInfo{name: "PUSH", exec: unsupported})
		legacy(0x58+r, opInfo{name: "POP", exec: unsupported})
	}
	legacy(0x90, opInfo{name: "NOP", exec: func(*Machine, *Inst) error { return nil }})
	legacy0F(ppNone, 0x1F, opInfo{name: "NOP r/m", modrm: true, exec: func(*Machine, *Inst) error { return nil }})
	legacy0F(ppNone, 0xB7, opInfo{name: "MOVZX r, r/m16", modrm: true, exec: (*Machine).movzx16})
	// Legacy SSE, as Go's ABI wrappers and the kernels' float32 results use it.
	legacy0F(ppF3, 0x10, opInfo{name: "MOVSS", modrm: true, exec: (*Machine).movssLoad})
	legacy0F(ppF3, 0x11, opInfo{name: "MOVSS", modrm: true, exec: (*Machine).movssStore})
	legacy0F(ppNone, 0x57, opInfo{name: "XORPS", modrm: true, exec: (*Machine).xorpsLegacy})
	legacy0F(ppF2, 0x11, opInfo{name: "MOVSD", modrm: true, exec: (*Machine).movsdStore})

	// Vector instructions: map 1 (0F).
	fv := func(name string, f func(*Machine, *Inst) error) opInfo {
		return opInfo{name: name, modrm: true, w: 0, tuple: tFV, vecRM: true, bcast: true, exec: f}
	}
	ss := func(name string, f func(*Machine, *Inst) error) opInfo {
		return opInfo{name: name, modrm: true, w: -1, tuple: tT1S4, vecRM: true, exec: f}
	}
	vector(1, ppNone, 0x58, fv("VADDPS", packed(addF32)))
	vector(1, ppNone, 0x59, fv("VMULPS", packed(mulF32)))
	vector(1, ppNone, 0x5C, fv("VSUBPS", packed(subF32)))
	vector(1, ppNone, 0x5D, fv("VMINPS", packed(minF32)))
	vector(1, ppNone, 0x5E, fv("VDIVPS", packed(divF32)))
	vector(1, ppNone, 0x5F, fv("VMAXPS", packed(maxF32)))
	vector(1, ppF3, 0x58, ss("VADDSS", scalar(addF32)))
	vector(1, ppF3, 0x59, ss("VMULSS", scalar(mulF32)))
	vector(1, ppF3, 0x5C, ss("VSUBSS", scalar(subF32)))
	vector(1, ppF3, 0x5D, ss("VMINSS", scalar(minF32)))
	vector(1, ppF3, 0x5E, ss("VDIVSS", scalar(divF32)))
	vector(1, ppF3, 0x5F, ss("VMAXSS", scalar(maxF32)))
	vector(1, ppNone, 0x57, fv("VXORPS", packed(xor32)))
	// Float64 lanes (vec64.go): no broadcast, no masks.
	pd := func(name string, f func(*Machine, *Inst) error) opInfo {
		return opInfo{name: name, modrm: true, w: -1, tuple: tFV, vecRM: true, check: pdCheck, exec: f}
	}
	vector(1, pp66, 0x58, pd("VADDPD", packed64(addF64)))
	vector(1, pp66, 0x59, pd("VMULPD", packed64(mulF64)))
	vector(1, pp66, 0x5C, pd("VSUBPD", packed64(subF64)))
	vector(1, ppF2, 0x58, opInfo{name: "VADDSD", modrm: true, w: -1, tuple: tT1S8, vecRM: true, check: pdCheck, exec: scalar64(addF64)})
	vector(1, ppNone, 0x5A, opInfo{name: "VCVTPS2PD", modrm: true, w: 0, tuple: tHVM, vecRM: true, vvvvUnused: true, exec: (*Machine).cvtps2pdExec,
		check: func(in *Inst) error {
			if in.Mask != 0 {
				return errors.New("masking of 64-bit elements not supported")
			}
			return nil
		}})
	vector(1, pp66, 0xEF, fv("VPXORD", packed(xor32)))
	vector(1, pp66, 0xFE, fv("VPADDD", packed(addI32)))
	vector(1, pp66, 0x5B, opInfo{name: "VCVTPS2DQ", modrm: true, w: 0, tuple: tFV, vecRM: true, bcast: true, vvvvUnused: true, exec: unary(cvtps2dq)})
	vector(1, pp66, 0x72, opInfo{name: "VPSLLD imm8", modrm: true, imm: 1, w: 0, tuple: tFV, vecRM: true, bcast: true, exec: (*Machine).pslldImm,
		check: func(in *Inst) error {
			if in.Reg&7 != 6 {
				return errors.New("only /6 (VPSLLD) supported")
			}
			return nil
		}})
	vector(1, ppNone, 0x10, opInfo{name: "VMOVUPS", modrm: true, w: 0, tuple: tFVM, vecRM: true, vvvvUnused: true, exec: (*Machine).movupsLoad})
	vector(1, ppNone, 0x11, opInfo{name: "VMOVUPS", modrm: true, w: 0, tuple: tFVM, vecRM: true, vvvvUnused: true, exec: (*Machine).movupsStore})
	vector(1, ppF3, 0x10, opInfo{name: "VMOVSS", modrm: true, w: 0, tuple: tT1S4, vecRM: true, exec: (*Machine).vmovssLoad})
	vector(1, ppF3, 0x11, opInfo{name: "VMOVSS", modrm: true, w: 0, tuple: tT1S4, vecRM: true, exec: (*Machine).vmovssStore})
	vector(1, ppNone, 0x12, opInfo{name: "VMOVHLPS", modrm: true, w: 0, vecRM: true, regOnly: true, check: needL(1), exec: (*Machine).movhlps})
	vector(1, ppF3, 0x16, opInfo{name: "VMOVSHDUP", modrm: true, w: 0, tuple: tFVM, vecRM: true, vvvvUnused: true, exec: (*Machine).movshdup})
	vector(1, pp66, 0x6E, opInfo{name: "VMOVD/VMOVQ xmm, r/m", modrm: true, w: -1, tuple: tT1S4, vvvvUnused: true, check: needL(1), exec: (*Machine).movdToVec})
	vector(1, ppF2, 0x6F, opInfo{name: "VMOVDQU16", encs: encEVEX, modrm: true, w: 1, tuple: tFVM, vecRM: true, vvvvUnused: true, exec: (*Machine).movdqu16Load})
	vector(1, ppF2, 0x7F, opInfo{name: "VMOVDQU16", encs: encEVEX, modrm: true, w: 1, tuple: tFVM, vecRM: true, vvvvUnused: true, check: noZeroingToMemory, exec: (*Machine).movdqu16Store})
	vector(1, ppNone, 0x92, opInfo{name: "KMOVW k, r32", encs: encVEX, modrm: true, w: 0, regOnly: true, vvvvUnused: true, check: kmovCheck, exec: (*Machine).kmovFromGPR})
	vector(1, ppF2, 0x92, opInfo{name: "KMOVD/KMOVQ k, r", encs: encVEX, modrm: true, w: -1, regOnly: true, vvvvUnused: true, check: kmovCheck, exec: (*Machine).kmovFromGPR})
	vector(1, ppNone, 0xC6, opInfo{name: "VSHUFPS", modrm: true, imm: 1, w: 0, tuple: tFV, vecRM: true, bcast: true, exec: (*Machine).shufps})
	vector(1, ppNone, 0x77, opInfo{name: "VZEROUPPER", encs: encVEX, w: -1, check: needL(1), exec: (*Machine).vzeroupper})

	// Map 2 (0F38).
	vector(2, pp66, 0x18, opInfo{name: "VBROADCASTSS", modrm: true, w: 0, tuple: tT1S4, vecRM: true, vvvvUnused: true, exec: (*Machine).broadcastss})
	vector(2, pp66, 0x19, opInfo{name: "VBROADCASTSD", modrm: true, w: -1, tuple: tT1S8, vecRM: true, vvvvUnused: true, check: broadcastsdCheck, exec: (*Machine).broadcastsd})
	vector(2, pp66, 0x13, opInfo{name: "VCVTPH2PS", modrm: true, w: 0, tuple: tHVM, vecRM: true, vvvvUnused: true, exec: widen16(f16ToF32)})
	vector(2, pp66, 0x33, opInfo{name: "VPMOVZXWD", modrm: true, w: -1, tuple: tHVM, vecRM: true, vvvvUnused: true, exec: widen16(func(h uint16) uint32 { return uint32(h) })})
	vector(2, pp66, 0x98, fv("VFMADD132PS", fmaPacked(132)))
	vector(2, pp66, 0xA8, fv("VFMADD213PS", fmaPacked(213)))
	vector(2, pp66, 0xB8, fv("VFMADD231PS", fmaPacked(231)))
	vector(2, pp66, 0x99, opInfo{name: "VFMADD132SS", modrm: true, w: 0, tuple: tT1S4, vecRM: true, exec: fmaScalar(132)})
	vector(2, pp66, 0xA9, opInfo{name: "VFMADD213SS", modrm: true, w: 0, tuple: tT1S4, vecRM: true, exec: fmaScalar(213)})
	vector(2, pp66, 0xB9, opInfo{name: "VFMADD231SS", modrm: true, w: 0, tuple: tT1S4, vecRM: true, exec: fmaScalar(231)})
	vector(2, ppF3, 0x52, opInfo{name: "VDPBF16PS", encs: encEVEX, modrm: true, w: 0, tuple: tFV, vecRM: true, bcast: true, exec: (*Machine).dpbf16ps})
	vector(2, ppF3, 0x72, opInfo{name: "VCVTNEPS2BF16", encs: encEVEX, modrm: true, w: 0, tuple: tFV, vecRM: true, bcast: true, vvvvUnused: true, exec: (*Machine).cvtneps2bf16})

	// Map 3 (0F3A).
	vector(3, pp66, 0x19, opInfo{name: "VEXTRACTF128/VEXTRACTF32X4", modrm: true, imm: 1, w: 0, tuple: tT4x32, vecRM: true, vvvvUnused: true, exec: (*Machine).extract128,
		check: func(in *Inst) error {
			if in.L == 16 {
				return errors.New("needs a 256- or 512-bit source")
			}
			return nil
		}})
	vector(3, pp66, 0x1B, opInfo{name: "VEXTRACTF64X4", encs: encEVEX, modrm: true, imm: 1, w: 1, tuple: tT4x64, vecRM: true, vvvvUnused: true, exec: (*Machine).extract256,
		check: func(in *Inst) error {
			if in.L != 64 {
				return errors.New("needs a 512-bit source")
			}
			if in.Mask != 0 {
				return errors.New("masking of 64-bit elements not supported")
			}
			return nil
		}})
	vector(3, pp66, 0x23, opInfo{name: "VSHUFF32X4", encs: encEVEX, modrm: true, imm: 1, w: 0, tuple: tFV, vecRM: true, bcast: true, exec: (*Machine).shuff32x4,
		check: func(in *Inst) error {
			if in.L != 64 {
				return errors.New("only the 512-bit form is supported")
			}
			return nil
		}})
	vector(3, pp66, 0x08, opInfo{name: "VROUNDPS/VRNDSCALEPS", modrm: true, imm: 1, w: 0, tuple: tFV, vecRM: true, bcast: true, vvvvUnused: true, exec: (*Machine).roundps})
}
