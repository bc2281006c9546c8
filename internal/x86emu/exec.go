package x86emu

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"unsafe"
)

// vec is one vector register: 512 bits as sixteen 32-bit lanes.
type vec [16]uint32

// Region is a range of process memory the machine may access.
type Region struct {
	Addr, Size uint64
	Write      bool // writes allowed too
}

func (r Region) holds(addr, n uint64) bool {
	return addr >= r.Addr && n <= r.Size && addr-r.Addr <= r.Size-n
}

// Machine is the state of one emulated thread. The zero Machine is ready
// (registers zero, no opmask, unrestricted memory).
type Machine struct {
	GPR [16]uint64 // RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8-R15
	RIP uint64
	Z   [32]vec   // ZMM0-31 (XMM/YMM are their low halves)
	K   [8]uint64 // opmask registers; K0 as a mask operand means "no mask"

	amx amxState // tile configuration and tiles (amx.go)

	cf, zf, sf, of, pf bool

	// MaxSteps bounds the instructions one Call executes (0: DefaultMaxSteps).
	MaxSteps int
	// Steps counts the instructions executed, over all calls.
	Steps int
	// Memory, when not nil, lists the only memory the code may touch, but
	// for RIP-relative reads by functions of the executable (FuncOf): their
	// constants.
	Memory []Region

	code    Region // where instructions may be fetched
	next    uint64 // address of the instruction after the current one
	stopRSP uint64 // Run ends when a RET leaves RSP here
	cache   bool   // decoded instructions may be cached by address
	done    bool
	ripRel  bool // the current instruction's memory operand is RIP-relative
}

// DefaultMaxSteps is the step limit of a Machine whose MaxSteps is 0.
const DefaultMaxSteps = 200_000_000

const (
	rAX = 0
	rCX = 1
	rSP = 4
)

// decoded caches decoded instructions by address: code does not change.
var decoded sync.Map // uint64 -> *Inst

// ptr is the process address a as a pointer (a uintptr held in a variable,
// so the conversion is explicit about its lack of provenance).
func ptr(a uint64) unsafe.Pointer {
	p := uintptr(a)
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}

func (m *Machine) checkMem(addr, n uint64, write bool) error {
	if m.Memory == nil || m.ripRel && !write && m.cache {
		return nil
	}
	for _, r := range m.Memory {
		if r.holds(addr, n) && (r.Write || !write) {
			return nil
		}
	}
	what := "read"
	if write {
		what = "write"
	}
	return fmt.Errorf("%s of %d bytes at %#x outside the allowed memory", what, n, addr)
}

func (m *Machine) read(addr uint64, dst []byte) error {
	if err := m.checkMem(addr, uint64(len(dst)), false); err != nil {
		return err
	}
	copy(dst, unsafe.Slice((*byte)(ptr(addr)), len(dst)))
	return nil
}

func (m *Machine) write(addr uint64, src []byte) error {
	if err := m.checkMem(addr, uint64(len(src)), true); err != nil {
		return err
	}
	copy(unsafe.Slice((*byte)(ptr(addr)), len(src)), src)
	return nil
}

func (m *Machine) readU(addr uint64, n int) (uint64, error) {
	var b [8]byte
	if err := m.read(addr, b[:n]); err != nil {
		return 0, err
	}
	var v uint64
	for i := range n {
		v |= uint64(b[i]) << (8 * i)
	}
	return v, nil
}

func (m *Machine) writeU(addr uint64, v uint64, n int) error {
	var b [8]byte
	for i := range n {
		b[i] = byte(v >> (8 * i))
	}
	return m.write(addr, b[:n])
}

// ea is the effective address of in's memory operand.
func (m *Machine) ea(in *Inst) uint64 {
	var a uint64
	switch in.Mem.Base {
	case noReg:
	case ripBase:
		a = m.next
		m.ripRel = true
	default:
		a = m.GPR[in.Mem.Base]
	}
	if in.Mem.Index != noReg {
		a += m.GPR[in.Mem.Index] * uint64(in.Mem.Scale)
	}
	return a + uint64(in.Mem.Disp)
}

// ErrSteps is returned (wrapped) when a Run exceeds its step limit.
var ErrSteps = errors.New("step limit reached")

// run executes from m.RIP until a RET pops RSP to m's stop point (set by
// Call), within the code region.
func (m *Machine) run() error {
	limit := m.MaxSteps
	if limit <= 0 {
		limit = DefaultMaxSteps
	}
	m.done = false
	for step := 0; !m.done; step++ {
		if step >= limit {
			return fmt.Errorf("at offset %#x: %w (%d instructions)", m.RIP-m.code.Addr, ErrSteps, limit)
		}
		if err := m.step(); err != nil {
			return err
		}
		m.Steps++
	}
	return nil
}

// step executes one instruction.
func (m *Machine) step() error {
	off := m.RIP - m.code.Addr
	if m.RIP < m.code.Addr || off >= m.code.Size {
		return fmt.Errorf("jumped to %#x, outside the function [%#x, %#x)", m.RIP, m.code.Addr, m.code.Addr+m.code.Size)
	}
	var in *Inst
	if v, ok := decoded.Load(m.RIP); ok && m.cache {
		in = v.(*Inst)
	} else {
		n := min(uint64(maxInstLen), m.code.Size-off)
		b := unsafe.Slice((*byte)(ptr(m.RIP)), n)
		d, err := Decode(b)
		if err != nil {
			return fmt.Errorf("at offset %#x: %w", off, err)
		}
		in = &d
		if m.cache {
			decoded.Store(m.RIP, in)
		}
	}
	m.next = m.RIP + uint64(in.Len)
	m.ripRel = false
	if err := in.info.exec(m, in); err != nil {
		b := unsafe.Slice((*byte)(ptr(m.RIP)), in.Len)
		return fmt.Errorf("at offset %#x (% x, %s): %w", off, b, in.Name(), err)
	}
	m.RIP = m.next
	return nil
}

// Flags and general-purpose operations.

type aluOp uint8

const (
	aluAdd aluOp = iota
	aluOr
	aluAnd
	aluSub
	aluXor
	aluCmp
	aluTest
)

// groupALU maps the /digit of 81 and 83 to an operation.
var groupALU = [8]aluOp{aluAdd, aluOr, 255, 255, aluAnd, aluSub, aluXor, aluCmp}

func sizeMask(n int) uint64 {
	if n == 8 {
		return ^uint64(0)
	}
	return 1<<(8*uint(n)) - 1
}

// getRM reads the r/m operand as an integer of in.OpSz bytes.
func (m *Machine) getRM(in *Inst) (uint64, error) {
	if in.IsMem {
		return m.readU(m.ea(in), in.OpSz)
	}
	return m.GPR[in.RM] & sizeMask(in.OpSz), nil
}

// setReg writes a general register with x86's rules: a 32-bit write
// zero-extends, a 16-bit one merges.
func (m *Machine) setReg(r int, v uint64, n int) {
	switch n {
	case 2:
		m.GPR[r] = m.GPR[r]&^0xFFFF | v&0xFFFF
	default:
		m.GPR[r] = v & sizeMask(n)
	}
}

func (m *Machine) setRM(in *Inst, v uint64) error {
	if in.IsMem {
		return m.writeU(m.ea(in), v, in.OpSz)
	}
	m.setReg(in.RM, v, in.OpSz)
	return nil
}

func (m *Machine) setSZP(r uint64, n int) {
	r &= sizeMask(n)
	m.zf = r == 0
	m.sf = r>>(8*uint(n)-1)&1 != 0
	m.pf = bits.OnesCount8(uint8(r))%2 == 0
}

// alu computes a op b at n bytes and sets the flags as the SDM defines them
// for each instruction (logic ops clear CF and OF).
func (m *Machine) alu(op aluOp, a, b uint64, n int) uint64 {
	mask := sizeMask(n)
	sign := uint64(1) << (8*uint(n) - 1)
	var r uint64
	switch op {
	case aluAdd:
		r = (a + b) & mask
		m.cf = r < a&mask
		m.of = (a^r)&(b^r)&sign != 0
	case aluSub, aluCmp:
		r = (a - b) & mask
		m.cf = a&mask < b&mask
		m.of = (a^b)&(a^r)&sign != 0
	case aluAnd, aluTest:
		r = a & b & mask
		m.cf, m.of = false, false
	case aluOr:
		r = (a | b) & mask
		m.cf, m.of = false, false
	case aluXor:
		r = (a ^ b) & mask
		m.cf, m.of = false, false
	}
	m.setSZP(r, n)
	return r
}

func (m *Machine) aluRM(in *Inst, op aluOp, regIsDest bool) error {
	if in.OpSz == 2 {
		return errors.New("16-bit operand size not supported")
	}
	rm, err := m.getRM(in)
	if err != nil {
		return err
	}
	reg := m.GPR[in.Reg&15] & sizeMask(in.OpSz)
	if regIsDest {
		r := m.alu(op, reg, rm, in.OpSz)
		if op != aluCmp && op != aluTest {
			m.setReg(in.Reg&15, r, in.OpSz)
		}
		return nil
	}
	r := m.alu(op, rm, reg, in.OpSz)
	if op == aluCmp || op == aluTest {
		return nil
	}
	return m.setRM(in, r)
}

func (m *Machine) aluImm(in *Inst) error {
	op := groupALU[in.Reg&7]
	if op == 255 {
		return fmt.Errorf("/%d (ADC/SBB) not supported", in.Reg&7)
	}
	rm, err := m.getRM(in)
	if err != nil {
		return err
	}
	r := m.alu(op, rm, uint64(in.Imm), in.OpSz)
	if op == aluCmp {
		return nil
	}
	return m.setRM(in, r)
}

func (m *Machine) movStore(in *Inst) error {
	if in.OpSz == 2 {
		return errors.New("16-bit operand size not supported")
	}
	return m.setRM(in, m.GPR[in.Reg&15])
}

func (m *Machine) movLoad(in *Inst) error {
	if in.OpSz == 2 {
		return errors.New("16-bit operand size not supported")
	}
	v, err := m.getRM(in)
	if err != nil {
		return err
	}
	m.setReg(in.Reg&15, v, in.OpSz)
	return nil
}

func (m *Machine) movImmRM(in *Inst) error {
	if in.Reg&7 != 0 {
		return fmt.Errorf("C7 /%d not supported", in.Reg&7)
	}
	return m.setRM(in, uint64(in.Imm))
}

// movImmReg is B8+r: the register is in the opcode, extended by REX.B (which
// the decoder left in RM's bit 3 only for ModRM forms, so it is recomputed).
func (m *Machine) movImmReg(in *Inst) error {
	r := int(in.Op-0xB8) | in.rexB()<<3
	m.setReg(r, uint64(in.Imm), in.OpSz)
	return nil
}

func (m *Machine) lea(in *Inst) error {
	if in.OpSz == 2 {
		return errors.New("16-bit operand size not supported")
	}
	m.setReg(in.Reg&15, m.ea(in), in.OpSz)
	return nil
}

func (m *Machine) movzx16(in *Inst) error {
	var v uint64
	var err error
	if in.IsMem {
		v, err = m.readU(m.ea(in), 2)
		if err != nil {
			return err
		}
	} else {
		v = m.GPR[in.RM] & 0xFFFF
	}
	m.setReg(in.Reg&15, v, max(in.OpSz, 4))
	return nil
}

func (m *Machine) incDec(in *Inst) error {
	if in.Reg&7 > 1 {
		return fmt.Errorf("FF /%d not supported", in.Reg&7)
	}
	if in.OpSz == 2 {
		return errors.New("16-bit operand size not supported")
	}
	v, err := m.getRM(in)
	if err != nil {
		return err
	}
	cf := m.cf // INC and DEC leave CF alone
	op := aluAdd
	if in.Reg&7 == 1 {
		op = aluSub
	}
	r := m.alu(op, v, 1, in.OpSz)
	m.cf = cf
	return m.setRM(in, r)
}

// shift is SHL, SHR and SAR (C1, D1, D3 with /4, /5, /7). The count is masked
// to 5 bits (6 with REX.W); a zero count changes no flags; OF is defined for
// a count of 1 only and set here as the SDM gives it for that case.
func (m *Machine) shift(in *Inst) error {
	op := in.Reg & 7
	if op != 4 && op != 5 && op != 7 {
		return fmt.Errorf("shift /%d not supported", op)
	}
	if in.OpSz == 2 {
		return errors.New("16-bit operand size not supported")
	}
	var count uint64
	switch in.Op {
	case 0xC1:
		count = uint64(in.Imm)
	case 0xD1:
		count = 1
	default:
		count = m.GPR[rCX]
	}
	width := uint64(8 * in.OpSz)
	count &= width - 1
	v, err := m.getRM(in)
	if err != nil {
		return err
	}
	if count == 0 {
		return m.setRM(in, v)
	}
	mask := sizeMask(in.OpSz)
	var r uint64
	switch op {
	case 4:
		r = v << count & mask
		m.cf = v>>(width-count)&1 != 0
		m.of = (r>>(width-1)&1 != 0) != m.cf
	case 5:
		r = v >> count
		m.cf = v>>(count-1)&1 != 0
		m.of = v>>(width-1)&1 != 0
	case 7:
		sv := int64(v<<(64-width)) >> (64 - width)
		r = uint64(sv>>count) & mask
		m.cf = uint64(sv>>(count-1))&1 != 0
		m.of = false
	}
	m.setSZP(r, in.OpSz)
	return m.setRM(in, r)
}

// cond evaluates condition code cc (the low nibble of Jcc).
func (m *Machine) cond(cc byte) bool {
	var t bool
	switch cc >> 1 {
	case 0:
		t = m.of
	case 1:
		t = m.cf
	case 2:
		t = m.zf
	case 3:
		t = m.cf || m.zf
	case 4:
		t = m.sf
	case 5:
		t = m.pf
	case 6:
		t = m.sf != m.of
	case 7:
		t = m.zf || m.sf != m.of
	}
	return t != (cc&1 != 0)
}

func (m *Machine) jcc(in *Inst) error {
	if m.cond(in.Op & 15) {
		m.next += uint64(in.Imm)
	}
	return nil
}

func (m *Machine) jmp(in *Inst) error {
	m.next += uint64(in.Imm)
	return nil
}

func (m *Machine) ret(in *Inst) error {
	sp := m.GPR[rSP]
	target, err := m.readU(sp, 8)
	if err != nil {
		return fmt.Errorf("pop return address: %w", err)
	}
	m.GPR[rSP] = sp + 8
	if sp+8 == m.stopRSP {
		m.done = true
		return nil
	}
	m.next = target
	return nil
}
