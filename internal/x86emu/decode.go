package x86emu

import (
	"errors"
	"fmt"
)

// Encoding is how an instruction is encoded.
type Encoding uint8

// The encodings Decode knows.
const (
	Legacy Encoding = iota // optional prefixes and REX, then the opcode
	VEX                    // C4 or C5
	EVEX                   // 62
)

// Mandatory-prefix field values (VEX/EVEX pp, or the last 66/F3/F2 prefix).
const (
	ppNone = 0
	pp66   = 1
	ppF3   = 2
	ppF2   = 3
)

// ripBase is Mem.Base for RIP-relative addressing; noReg marks no base or no
// index.
const (
	ripBase = 16
	noReg   = -1
)

// Mem is a memory operand: Base + Index*Scale + Disp (Base ripBase: the
// address of the next instruction + Disp).
type Mem struct {
	Base, Index int // 0-15, ripBase, or noReg
	Scale       int // 1, 2, 4, 8
	Disp        int64
}

// Inst is one decoded instruction.
type Inst struct {
	Len  int      // bytes
	Enc  Encoding // Legacy, VEX or EVEX
	Map  int      // 0: one-byte opcodes; 1: 0F; 2: 0F38; 3: 0F3A
	Op   byte     // the opcode byte
	PP   int      // mandatory prefix: ppNone, pp66, ppF3, ppF2
	W    bool     // REX.W / VEX.W / EVEX.W
	L    int      // vector length in bytes: 16, 32 or 64
	OpSz int      // general operand size in bytes: 2, 4 or 8

	HasModRM bool
	Mod      int  // ModRM.mod
	Reg      int  // ModRM.reg, extended (0-31)
	RM       int  // ModRM.rm as a register when Mod == 3, extended (0-31)
	VVVV     int  // VEX/EVEX vvvv, extended (0-31); 0 when absent
	IsMem    bool // the r/m operand is memory (Mem)
	Mem      Mem

	Imm    int64 // immediate or branch displacement, sign-extended
	ImmLen int

	Mask  int  // EVEX.aaa: opmask register, 0 for none
	Zero  bool // EVEX.z: zeroing- (not merging-) masking
	Bcast bool // EVEX.b with a memory operand: broadcast one element

	bExt int // REX.B, for opcodes that name a register in their low bits
	info *opInfo
}

// Name is the instruction's mnemonic (Intel's).
func (in *Inst) Name() string {
	if in.info == nil {
		return "?"
	}
	return in.info.name
}

func (in *Inst) String() string {
	s := in.Name()
	switch in.Enc {
	case VEX:
		s = "vex." + s
	case EVEX:
		s = "evex." + s
	}
	if in.Enc != Legacy {
		s += fmt.Sprintf(".%d", in.L*8)
	}
	if in.HasModRM {
		s += fmt.Sprintf(" reg=%d", in.Reg)
		if in.Enc != Legacy {
			s += fmt.Sprintf(" vvvv=%d", in.VVVV)
		}
		if in.IsMem {
			s += fmt.Sprintf(" mem=[base=%d index=%d*%d disp=%#x]", in.Mem.Base, in.Mem.Index, in.Mem.Scale, in.Mem.Disp)
		} else {
			s += fmt.Sprintf(" rm=%d", in.RM)
		}
	}
	if in.ImmLen > 0 {
		s += fmt.Sprintf(" imm=%#x", in.Imm)
	}
	if in.Mask != 0 {
		s += fmt.Sprintf(" {k%d}", in.Mask)
	}
	if in.Zero {
		s += "{z}"
	}
	if in.Bcast {
		s += " {1to}"
	}
	return s
}

// ErrTruncated is returned (wrapped) by Decode when the bytes end inside an
// instruction.
var ErrTruncated = errors.New("instruction truncated")

// maxInstLen is the architectural limit on an instruction's length.
const maxInstLen = 15

// Decode decodes the instruction at the start of b. It returns an error for
// bytes that are truncated, invalid, or outside the subset this package
// executes.
func Decode(b []byte) (Inst, error) {
	d := decoder{b: b}
	in, err := d.decode()
	if err != nil {
		n := min(len(b), maxInstLen)
		return Inst{}, fmt.Errorf("decode % x: %w", b[:n], err)
	}
	return in, nil
}

type decoder struct {
	b   []byte
	pos int
}

func (d *decoder) next() (byte, error) {
	if d.pos >= len(d.b) || d.pos >= maxInstLen {
		if d.pos >= maxInstLen {
			return 0, errors.New("longer than 15 bytes")
		}
		return 0, ErrTruncated
	}
	c := d.b[d.pos]
	d.pos++
	return c, nil
}

func (d *decoder) decode() (Inst, error) {
	in := Inst{L: 16, OpSz: 4}
	var rex byte
	pp := ppNone
	sawPrefix := false
	var c byte
	var err error
	// Legacy prefixes (of which only 66, F2 and F3 matter here), then REX.
	for {
		if c, err = d.next(); err != nil {
			return in, err
		}
		switch c {
		case 0x66:
			pp = pp66
			in.OpSz = 2
			sawPrefix = true
			continue
		case 0xF2:
			pp = ppF2
			sawPrefix = true
			continue
		case 0xF3:
			pp = ppF3
			sawPrefix = true
			continue
		case 0x2E, 0x3E, 0x26, 0x36, 0x64, 0x65, 0x67, 0xF0:
			return in, fmt.Errorf("prefix %#02x not supported", c)
		}
		break
	}
	if c&0xF0 == 0x40 {
		rex = c
		if c, err = d.next(); err != nil {
			return in, err
		}
	}
	var rR, rX, rB, rR2, vV2 int // register-number extension bits
	switch c {
	case 0xC4, 0xC5, 0x62:
		if sawPrefix || rex != 0 {
			return in, fmt.Errorf("%#02x after a 66/F2/F3/REX prefix is invalid", c)
		}
		if err := d.vexPrefix(&in, c, &rR, &rX, &rB, &rR2, &vV2); err != nil {
			return in, err
		}
		if in.Op, err = d.next(); err != nil {
			return in, err
		}
	default:
		in.Enc = Legacy
		in.PP = pp
		if rex != 0 {
			in.W = rex&8 != 0
			rR, rX, rB = int(rex>>2&1), int(rex>>1&1), int(rex&1)
			in.bExt = rB
		}
		if in.W {
			in.OpSz = 8
		}
		in.Op = c
		if c == 0x0F {
			if c, err = d.next(); err != nil {
				return in, err
			}
			in.Map = 1
			in.Op = c
			switch c {
			case 0x38:
				in.Map = 2
			case 0x3A:
				in.Map = 3
			}
			if in.Map > 1 {
				if in.Op, err = d.next(); err != nil {
					return in, err
				}
			}
		}
	}

	info := lookupOp(&in)
	if info == nil {
		return in, errors.New("opcode not in the supported subset")
	}
	in.info = info
	if info.w >= 0 && in.Enc != Legacy && in.W != (info.w == 1) {
		return in, fmt.Errorf("%s with W%d not supported", info.name, b2i(in.W))
	}
	if info.encs&(1<<in.Enc) == 0 {
		return in, fmt.Errorf("%s not supported in this encoding", info.name)
	}
	if in.Enc == EVEX && in.Mask == 0 && in.Zero {
		return in, errors.New("EVEX.z without a mask is invalid")
	}
	if info.modrm {
		if err := d.modrm(&in, rR, rX, rB, rR2); err != nil {
			return in, err
		}
	}
	if in.Enc == EVEX && in.Bcast && !in.IsMem {
		return in, errors.New("EVEX.b on a register operand (embedded rounding) not supported")
	}
	if in.Bcast && !info.bcast {
		return in, fmt.Errorf("%s with broadcast not supported", info.name)
	}
	imm := info.imm
	if imm == immOpSz {
		imm = min(in.OpSz, 4)
		if in.OpSz == 2 {
			return in, errors.New("16-bit operand size not supported")
		}
		if in.Op >= 0xB8 && in.Op <= 0xBF && in.OpSz == 8 && in.Map == 0 {
			imm = 8
		}
	}
	if imm > 0 {
		var v uint64
		for i := range imm {
			c, err := d.next()
			if err != nil {
				return in, err
			}
			v |= uint64(c) << (8 * i)
		}
		shift := 64 - 8*uint(imm)
		in.Imm = int64(v<<shift) >> shift
		in.ImmLen = imm
	}
	if info.vvvvUnused && in.Enc != Legacy && in.VVVV != 0 {
		return in, fmt.Errorf("%s with vvvv != 1111b is invalid", info.name)
	}
	if info.regOnly && in.IsMem {
		return in, fmt.Errorf("%s with a memory operand not supported", info.name)
	}
	if info.memOnly && !in.IsMem {
		return in, fmt.Errorf("%s with a register operand not supported", info.name)
	}
	if info.check != nil {
		if err := info.check(&in); err != nil {
			return in, fmt.Errorf("%s: %w", info.name, err)
		}
	}
	in.Len = d.pos
	return in, nil
}

func (in *Inst) rexB() int { return in.bExt }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// vexPrefix decodes a VEX (C4, C5) or EVEX (62) prefix whose first byte is c.
func (d *decoder) vexPrefix(in *Inst, c byte, rR, rX, rB, rR2, vV2 *int) error {
	p0, err := d.next()
	if err != nil {
		return err
	}
	switch c {
	case 0xC5:
		in.Enc = VEX
		in.Map = 1
		*rR = int(^p0 >> 7 & 1)
		in.VVVV = int(^p0 >> 3 & 15)
		in.L = 16 << (p0 >> 2 & 1)
		in.PP = int(p0 & 3)
		return nil
	case 0xC4:
		p1, err := d.next()
		if err != nil {
			return err
		}
		in.Enc = VEX
		*rR, *rX, *rB = int(^p0>>7&1), int(^p0>>6&1), int(^p0>>5&1)
		in.Map = int(p0 & 31)
		in.W = p1&0x80 != 0
		in.VVVV = int(^p1 >> 3 & 15)
		in.L = 16 << (p1 >> 2 & 1)
		in.PP = int(p1 & 3)
	default: // 62: EVEX
		p1, err := d.next()
		if err != nil {
			return err
		}
		p2, err := d.next()
		if err != nil {
			return err
		}
		in.Enc = EVEX
		*rR, *rX, *rB, *rR2 = int(^p0>>7&1), int(^p0>>6&1), int(^p0>>5&1), int(^p0>>4&1)
		if p0&0x0C != 0 {
			return errors.New("EVEX P0 bits 3:2 must be zero")
		}
		in.Map = int(p0 & 3)
		in.W = p1&0x80 != 0
		in.VVVV = int(^p1 >> 3 & 15)
		if p1&4 == 0 {
			return errors.New("EVEX P1 bit 2 must be one")
		}
		in.PP = int(p1 & 3)
		in.Zero = p2&0x80 != 0
		ll := int(p2 >> 5 & 3)
		if ll == 3 {
			return errors.New("EVEX.L'L = 11b is reserved")
		}
		in.L = 16 << ll
		in.Bcast = p2&0x10 != 0
		*vV2 = int(^p2 >> 3 & 1)
		in.VVVV |= *vV2 << 4
		in.Mask = int(p2 & 7)
	}
	if in.Map < 1 || in.Map > 3 {
		return fmt.Errorf("opcode map %d not supported", in.Map)
	}
	if in.W {
		in.OpSz = 8
	}
	return nil
}

// modrm decodes ModRM, SIB and the displacement.
func (d *decoder) modrm(in *Inst, rR, rX, rB, rR2 int) error {
	m, err := d.next()
	if err != nil {
		return err
	}
	in.HasModRM = true
	in.Mod = int(m >> 6)
	in.Reg = int(m>>3&7) | rR<<3 | rR2<<4
	rm := int(m & 7)
	if in.Mod == 3 {
		in.RM = rm | rB<<3
		if in.Enc == EVEX && in.info.vecRM {
			in.RM |= rX << 4 // EVEX.X extends a vector r/m register
		}
		return nil
	}
	in.IsMem = true
	in.Mem = Mem{Base: rm | rB<<3, Index: noReg, Scale: 1}
	if rm == 4 {
		sib, err := d.next()
		if err != nil {
			return err
		}
		in.Mem.Scale = 1 << (sib >> 6)
		if idx := int(sib>>3&7) | rX<<3; idx != 4 {
			in.Mem.Index = idx
		}
		in.Mem.Base = int(sib&7) | rB<<3
		if sib&7 == 5 && in.Mod == 0 {
			in.Mem.Base = noReg
			return d.disp(in, 4)
		}
	} else if rm == 5 && in.Mod == 0 {
		in.Mem.Base = ripBase
		return d.disp(in, 4)
	}
	switch in.Mod {
	case 1:
		return d.disp(in, 1)
	case 2:
		return d.disp(in, 4)
	}
	return nil
}

// disp reads an n-byte displacement; an EVEX disp8 is scaled by the
// instruction's N (Intel SDM vol. 2, 2.7.5 "Compressed Displacement").
func (d *decoder) disp(in *Inst, n int) error {
	var v uint32
	for i := range n {
		c, err := d.next()
		if err != nil {
			return err
		}
		v |= uint32(c) << (8 * i)
	}
	if n == 1 {
		in.Mem.Disp = int64(int8(v))
		if in.Enc == EVEX {
			in.Mem.Disp *= int64(in.info.tuple.n(in))
		}
		return nil
	}
	in.Mem.Disp = int64(int32(v))
	return nil
}
