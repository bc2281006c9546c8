package x86emu

import (
	"errors"
	"fmt"
)

// AMX (Intel SDM vol. 2, LDTILECFG, TILELOADD, TILESTORED, TILEZERO,
// TILERELEASE, TDPBF16PS; and the AMX chapter of vol. 1): eight tile
// registers of up to 16 rows of 64 bytes, shaped by the 64-byte tile
// configuration that LDTILECFG loads (palette 1 only; palette 0 is the
// initial state, no tiles). A load or store moves the configured rows and
// bytes per row (the row stride is the SIB index register times its scale),
// zeroing the rest of the tile on a load; every instruction but LDTILECFG
// and TILERELEASE needs a configured palette. start_row (restarting an
// interrupted load) is required to be zero.

// amxState is the tile configuration and the tile registers.
type amxState struct {
	palette byte
	rows    [8]int // configured rows of each tile
	colsb   [8]int // configured bytes per row
	t       [8][16][64]byte
}

// tileNum is a tile register operand: 0-7.
func tileNum(r int) (int, error) {
	if r > 7 {
		return 0, fmt.Errorf("tile register %d", r)
	}
	return r, nil
}

func amxCheckVEX(in *Inst) error {
	if in.L != 16 {
		return errors.New("VEX.L must be 0")
	}
	return nil
}

// ldtilecfgOrRelease is 0F38 49 without a prefix: LDTILECFG m512 (ModRM.reg
// 0), or TILERELEASE (ModRM C0).
func (m *Machine) ldtilecfgOrRelease(in *Inst) error {
	if !in.IsMem {
		if in.Reg != 0 || in.RM != 0 {
			return errors.New("only C0 (TILERELEASE) supported in the register form")
		}
		m.amx = amxState{}
		return nil
	}
	if in.Reg != 0 {
		return errors.New("LDTILECFG needs ModRM.reg 0")
	}
	var c [64]byte
	if err := m.read(m.ea(in), c[:]); err != nil {
		return err
	}
	var s amxState
	switch {
	case c[0] == 0:
		m.amx = s // palette 0: the initial state
		return nil
	case c[0] != 1:
		return fmt.Errorf("LDTILECFG: palette %d not supported", c[0])
	case c[1] != 0:
		return errors.New("LDTILECFG: start_row != 0 not supported")
	}
	for i := 2; i < 16; i++ {
		if c[i] != 0 {
			return errors.New("LDTILECFG: reserved bytes 2-15 must be zero (#GP)")
		}
	}
	s.palette = 1
	for t := range 16 {
		colsb, rows := int(c[16+2*t])|int(c[17+2*t])<<8, int(c[48+t])
		if t >= 8 {
			if colsb != 0 || rows != 0 {
				return fmt.Errorf("LDTILECFG: tile %d configured, palette 1 has 8 (#GP)", t)
			}
			continue
		}
		if colsb > 64 || rows > 16 || (colsb == 0) != (rows == 0) {
			return fmt.Errorf("LDTILECFG: tile %d of %d rows of %d bytes (#GP)", t, rows, colsb)
		}
		s.rows[t], s.colsb[t] = rows, colsb
	}
	m.amx = s
	return nil
}

func (m *Machine) needTiles(ts ...int) error {
	if m.amx.palette == 0 {
		return errors.New("tiles not configured (#UD)")
	}
	for _, t := range ts {
		if m.amx.rows[t] == 0 {
			return fmt.Errorf("tile %d not configured (#UD)", t)
		}
	}
	return nil
}

// tileZero is TILEZERO tmm (F2 0F38 49, ModRM 11:tmm:000).
func (m *Machine) tileZero(in *Inst) error {
	t, err := tileNum(in.Reg)
	if err != nil {
		return err
	}
	if in.RM != 0 {
		return errors.New("TILEZERO needs ModRM.rm 0")
	}
	if err := m.needTiles(t); err != nil {
		return err
	}
	m.amx.t[t] = [16][64]byte{}
	return nil
}

// tileMem is the tile register and the memory operand of a TILELOADD or
// TILESTORED: the configured tile t, the base address (base +
// displacement) and the row stride (index·scale).
func (m *Machine) tileMem(in *Inst) (t int, base, stride uint64, err error) {
	if t, err = tileNum(in.Reg); err != nil {
		return 0, 0, 0, err
	}
	if err := m.needTiles(t); err != nil {
		return 0, 0, 0, err
	}
	if in.Mem.Base == ripBase {
		return 0, 0, 0, errors.New("RIP-relative tile memory operand (#UD)")
	}
	if in.Mem.Base != noReg {
		base = m.GPR[in.Mem.Base]
	}
	base += uint64(in.Mem.Disp)
	if in.Mem.Index != noReg {
		stride = m.GPR[in.Mem.Index] * uint64(in.Mem.Scale)
	}
	return t, base, stride, nil
}

// tileLoad is TILELOADD tmm, sibmem (F2 0F38 4B): the configured rows and
// bytes per row, the rest of the tile zeroed.
func (m *Machine) tileLoad(in *Inst) error {
	t, base, stride, err := m.tileMem(in)
	if err != nil {
		return err
	}
	var tile [16][64]byte
	for r := range m.amx.rows[t] {
		if err := m.read(base+uint64(r)*stride, tile[r][:m.amx.colsb[t]]); err != nil {
			return err
		}
	}
	m.amx.t[t] = tile
	return nil
}

// tileStore is TILESTORED sibmem, tmm (F3 0F38 4B): the configured rows and
// bytes per row.
func (m *Machine) tileStore(in *Inst) error {
	t, base, stride, err := m.tileMem(in)
	if err != nil {
		return err
	}
	for r := range m.amx.rows[t] {
		if err := m.write(base+uint64(r)*stride, m.amx.t[t][r][:m.amx.colsb[t]]); err != nil {
			return err
		}
	}
	return nil
}

// tdpbf16ps is TDPBF16PS tmm1, tmm2, tmm3 (F3 0F38 5C, ModRM 11:tmm1:tmm2,
// tmm3 in vvvv): tmm1 (M x N float32) += tmm2 (M x K pairs of BF16) · tmm3
// (K rows of N pairs). Per element, as the hardware computes it (measured
// on a Xeon with AMX-BF16 against random and adversarial inputs, bit for
// bit, as the SDM's current Operation section has it; the intrinsics
// guide's pseudocode accumulates pair after pair instead): the K
// even products summed in k order from +0, each step an FMA with DAZ in,
// FTZ out and RNE (fmaBF16Step); the odd products likewise; then their sum
// added to the element (DAZ), each add the same rounding. Only K = 16 (a
// first operand of 64-byte rows, the form measured) is supported.
func (m *Machine) tdpbf16ps(in *Inst) error {
	d, err := tileNum(in.Reg)
	if err != nil {
		return err
	}
	a, err := tileNum(in.RM)
	if err != nil {
		return err
	}
	b, err := tileNum(in.VVVV)
	if err != nil {
		return err
	}
	if d == a || d == b || a == b {
		return errors.New("TDPBF16PS with a tile named twice (#UD)")
	}
	if err := m.needTiles(d, a, b); err != nil {
		return err
	}
	s := &m.amx
	switch {
	case s.colsb[a] != 64:
		return fmt.Errorf("TDPBF16PS with %d-byte rows of the first operand: only 64 (16 pairs) supported", s.colsb[a])
	case s.rows[b] != s.colsb[a]/4 || s.colsb[d] != s.colsb[b] || s.rows[d] != s.rows[a] || s.colsb[d]%4 != 0:
		return errors.New("TDPBF16PS with mismatched tile shapes (#UD)")
	}
	const one = 0x3F800000
	le32 := func(p []byte) uint32 { return uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24 }
	le16 := func(p []byte) uint16 { return uint16(p[0]) | uint16(p[1])<<8 }
	var out [16][64]byte
	for i := range s.rows[d] {
		for j := range s.colsb[d] / 4 {
			var e, o uint32
			for k := range s.colsb[a] / 4 {
				ap, bp := s.t[a][i][4*k:], s.t[b][k][4*j:]
				e = fmaBF16Step(e, bf16ToF32(le16(ap)), bf16ToF32(le16(bp)))
				o = fmaBF16Step(o, bf16ToF32(le16(ap[2:])), bf16ToF32(le16(bp[2:])))
			}
			r := fmaBF16Step(le32(s.t[d][i][4*j:]), fmaBF16Step(e, o, one), one)
			out[i][4*j], out[i][4*j+1], out[i][4*j+2], out[i][4*j+3] = byte(r), byte(r>>8), byte(r>>16), byte(r>>24)
		}
	}
	s.t[d] = out
	return nil
}

func init() {
	amx := func(name string, f func(*Machine, *Inst) error, regOnly, memOnly bool) opInfo {
		return opInfo{name: name, encs: encVEX, modrm: true, w: 0, regOnly: regOnly, memOnly: memOnly, check: amxCheckVEX, exec: f}
	}
	tileOnly := func(o opInfo) opInfo { o.vvvvUnused = true; return o }
	vector(2, ppNone, 0x49, tileOnly(amx("LDTILECFG/TILERELEASE", (*Machine).ldtilecfgOrRelease, false, false)))
	vector(2, ppF2, 0x49, tileOnly(amx("TILEZERO", (*Machine).tileZero, true, false)))
	vector(2, ppF2, 0x4B, tileOnly(amx("TILELOADD", (*Machine).tileLoad, false, true)))
	vector(2, ppF3, 0x4B, tileOnly(amx("TILESTORED", (*Machine).tileStore, false, true)))
	vector(2, ppF3, 0x5C, amx("TDPBF16PS", (*Machine).tdpbf16ps, true, false))
}
