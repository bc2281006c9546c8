package x86emu

import (
	"encoding/binary"
	"errors"
)

// Vector register writes (Intel SDM vol. 1, 15.5 and vol. 2, 2.3.10): a VEX
// or EVEX instruction writing VL bits of a register zeroes the bits above
// them up to bit 511; under an EVEX opmask (Mask != 0) an element whose mask
// bit is clear keeps its old value (merging) or becomes zero (Zero). A legacy
// SSE instruction leaves bits 511:128 alone.

// lanes is the 32-bit element count of in's vector length.
func lanes(in *Inst) int { return in.L / 4 }

// active reports whether element i is written (mask bit set, or no mask).
func (m *Machine) active(in *Inst, i int) bool {
	return in.Mask == 0 || m.K[in.Mask]>>uint(i)&1 != 0
}

// setVec writes n 32-bit elements of v to register r with masking, zeroing
// everything above them.
func (m *Machine) setVec(in *Inst, r int, v *vec, n int) {
	old := m.Z[r]
	var out vec
	for i := range n {
		switch {
		case m.active(in, i):
			out[i] = v[i]
		case in.Zero:
		default:
			out[i] = old[i]
		}
	}
	m.Z[r] = out
}

// loadVec reads n bytes (a multiple of 4) at addr into the low elements of a
// vec.
func (m *Machine) loadVec(addr uint64, n int) (vec, error) {
	var b [64]byte
	var v vec
	if err := m.read(addr, b[:n]); err != nil {
		return v, err
	}
	for i := range n / 4 {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v, nil
}

// storeVec writes the active ones of the first n elements of v at addr (a
// masked store writes only those; unmasked, one write of 4n bytes).
func (m *Machine) storeVec(in *Inst, addr uint64, v *vec, n int) error {
	if in.Mask == 0 {
		var b [64]byte
		for i := range n {
			binary.LittleEndian.PutUint32(b[4*i:], v[i])
		}
		return m.write(addr, b[:4*n])
	}
	for i := range n {
		if m.active(in, i) {
			if err := m.writeU(addr+4*uint64(i), uint64(v[i]), 4); err != nil {
				return err
			}
		}
	}
	return nil
}

// src is the r/m vector operand: the register, or VL bytes of memory, or one
// broadcast 32-bit element.
func (m *Machine) src(in *Inst) (vec, error) {
	if !in.IsMem {
		return m.Z[in.RM], nil
	}
	if in.Bcast {
		x, err := m.readU(m.ea(in), 4)
		var v vec
		for i := range v {
			v[i] = uint32(x)
		}
		return v, err
	}
	return m.loadVec(m.ea(in), in.L)
}

// src32 is the r/m scalar operand: element 0 of the register or 4 bytes.
func (m *Machine) src32(in *Inst) (uint32, error) {
	if !in.IsMem {
		return m.Z[in.RM][0], nil
	}
	x, err := m.readU(m.ea(in), 4)
	return uint32(x), err
}

// packed is dest = f(vvvv, r/m) element by element.
func packed(f func(a, b uint32) uint32) func(*Machine, *Inst) error {
	return func(m *Machine, in *Inst) error {
		b, err := m.src(in)
		if err != nil {
			return err
		}
		a := &m.Z[in.VVVV]
		var r vec
		n := lanes(in)
		for i := range n {
			r[i] = f(a[i], b[i])
		}
		m.setVec(in, in.Reg, &r, n)
		return nil
	}
}

// unary is dest = f(r/m) element by element.
func unary(f func(a uint32) uint32) func(*Machine, *Inst) error {
	return func(m *Machine, in *Inst) error {
		b, err := m.src(in)
		if err != nil {
			return err
		}
		var r vec
		n := lanes(in)
		for i := range n {
			r[i] = f(b[i])
		}
		m.setVec(in, in.Reg, &r, n)
		return nil
	}
}

// setScalar writes element 0 (masked by bit 0) and elements 1-3 from
// upper, zeroing the rest: the VEX/EVEX scalar form.
func (m *Machine) setScalar(in *Inst, r int, x uint32, upper *vec) {
	v := *upper
	v[0] = x
	if !m.active(in, 0) {
		v[0] = 0
		if !in.Zero {
			v[0] = m.Z[r][0]
		}
	}
	var out vec
	copy(out[:4], v[:4])
	m.Z[r] = out
}

// scalar is dest[0] = f(vvvv[0], r/m[0]), dest[1:4] = vvvv[1:4].
func scalar(f func(a, b uint32) uint32) func(*Machine, *Inst) error {
	return func(m *Machine, in *Inst) error {
		b, err := m.src32(in)
		if err != nil {
			return err
		}
		a := m.Z[in.VVVV]
		m.setScalar(in, in.Reg, f(a[0], b), &a)
		return nil
	}
}

// fmaOperands orders (dest, vvvv, r/m) as the a, b, c of a·b + c for the
// forms 132 (dest·r/m + vvvv), 213 (vvvv·dest + r/m) and 231 (vvvv·r/m + dest).
func fmaOperands(form int, d, v, s uint32) (a, b, c uint32) {
	switch form {
	case 132:
		return d, s, v
	case 213:
		return v, d, s
	}
	return v, s, d
}

func fmaPacked(form int) func(*Machine, *Inst) error {
	return func(m *Machine, in *Inst) error {
		s, err := m.src(in)
		if err != nil {
			return err
		}
		d, v := &m.Z[in.Reg], &m.Z[in.VVVV]
		var r vec
		n := lanes(in)
		for i := range n {
			r[i] = fmaF32(fmaOperands(form, d[i], v[i], s[i]))
		}
		m.setVec(in, in.Reg, &r, n)
		return nil
	}
}

// fmaScalar is the SS form: element 0 computed, 1-3 kept from dest.
func fmaScalar(form int) func(*Machine, *Inst) error {
	return func(m *Machine, in *Inst) error {
		s, err := m.src32(in)
		if err != nil {
			return err
		}
		d := m.Z[in.Reg]
		m.setScalar(in, in.Reg, fmaF32(fmaOperands(form, d[0], m.Z[in.VVVV][0], s)), &d)
		return nil
	}
}

// movupsLoad is VMOVUPS reg, r/m: a masked load from memory reads the active
// elements only (fault suppression, see vec16.go).
func (m *Machine) movupsLoad(in *Inst) error {
	v := m.Z[in.RM]
	if in.IsMem {
		var err error
		if v, err = m.loadElems(in, m.ea(in), 4, lanes(in)); err != nil {
			return err
		}
	}
	m.setVec(in, in.Reg, &v, lanes(in))
	return nil
}

func (m *Machine) movupsStore(in *Inst) error {
	v := m.Z[in.Reg]
	if in.IsMem {
		if in.Zero {
			return errors.New("zeroing-masking with a memory destination is invalid")
		}
		return m.storeVec(in, m.ea(in), &v, lanes(in))
	}
	m.setVec(in, in.RM, &v, lanes(in))
	return nil
}

// vmovssLoad: from memory, element 0 and zeros; between registers, element 0
// of r/m and 1-3 of vvvv.
func (m *Machine) vmovssLoad(in *Inst) error {
	if in.IsMem {
		x, err := m.src32(in)
		if err != nil {
			return err
		}
		m.setScalar(in, in.Reg, x, &vec{})
		return nil
	}
	up := m.Z[in.VVVV]
	m.setScalar(in, in.Reg, m.Z[in.RM][0], &up)
	return nil
}

func (m *Machine) vmovssStore(in *Inst) error {
	if in.IsMem {
		if !m.active(in, 0) {
			return nil
		}
		return m.writeU(m.ea(in), uint64(m.Z[in.Reg][0]), 4)
	}
	up := m.Z[in.VVVV]
	m.setScalar(in, in.RM, m.Z[in.Reg][0], &up)
	return nil
}

// movhlps: dest[63:0] = r/m[127:64], dest[127:64] = vvvv[127:64].
func (m *Machine) movhlps(in *Inst) error {
	s, v := m.Z[in.RM], m.Z[in.VVVV]
	r := vec{s[2], s[3], v[2], v[3]}
	m.setVec(in, in.Reg, &r, 4)
	return nil
}

// movshdup: both elements of each pair take the odd one.
func (m *Machine) movshdup(in *Inst) error {
	s, err := m.src(in)
	if err != nil {
		return err
	}
	var r vec
	n := lanes(in)
	for i := 0; i < n; i += 2 {
		r[i], r[i+1] = s[i+1], s[i+1]
	}
	m.setVec(in, in.Reg, &r, n)
	return nil
}

// movdToVec is VMOVD/VMOVQ xmm, r/m32/64: the value zero-extended to the
// whole register.
func (m *Machine) movdToVec(in *Inst) error {
	n := 4
	if in.W {
		n = 8
	}
	var x uint64
	if in.IsMem {
		var err error
		if x, err = m.readU(m.ea(in), n); err != nil {
			return err
		}
	} else {
		x = m.GPR[in.RM&15] & sizeMask(n)
	}
	m.Z[in.Reg] = vec{uint32(x), uint32(x >> 32)}
	return nil
}

// vzeroupper zeroes bits 511:128 of ZMM0-15 (ZMM16-31 are untouched in
// 64-bit mode).
func (m *Machine) vzeroupper(*Inst) error {
	for r := range 16 {
		m.Z[r] = vec{m.Z[r][0], m.Z[r][1], m.Z[r][2], m.Z[r][3]}
	}
	return nil
}

func (m *Machine) broadcastss(in *Inst) error {
	x, err := m.src32(in)
	if err != nil {
		return err
	}
	var r vec
	n := lanes(in)
	for i := range n {
		r[i] = x
	}
	m.setVec(in, in.Reg, &r, n)
	return nil
}

// widen16 is VCVTPH2PS and VPMOVZXWD: VL/4 16-bit elements (VL/2 bytes of
// memory, or the low half of the r/m register) widened by f.
func widen16(f func(uint16) uint32) func(*Machine, *Inst) error {
	return func(m *Machine, in *Inst) error {
		n := lanes(in)
		var s vec
		if in.IsMem {
			var err error
			if s, err = m.loadVec(m.ea(in), 2*n); err != nil {
				return err
			}
		} else {
			s = m.Z[in.RM]
		}
		var r vec
		for i := range n {
			r[i] = f(uint16(s[i/2] >> (16 * uint(i&1))))
		}
		m.setVec(in, in.Reg, &r, n)
		return nil
	}
}

// extract128 is VEXTRACTF128 (VEX.256) and VEXTRACTF32X4 (EVEX): 128 bits
// of reg selected by imm8 to r/m (xmm or m128).
func (m *Machine) extract128(in *Inst) error {
	sel := int(in.Imm) & (in.L/16 - 1)
	s := m.Z[in.Reg]
	var r vec
	copy(r[:4], s[4*sel:4*sel+4])
	if in.IsMem {
		return m.storeVec(in, m.ea(in), &r, 4)
	}
	m.setVec(in, in.RM, &r, 4)
	return nil
}

// shufps is VSHUFPS dest, vvvv, r/m, imm8 (SDM: SHUFPS): in each 128-bit
// lane, elements 0 and 1 are taken from vvvv's lane and 2 and 3 from r/m's,
// each picked by two bits of imm8 (bits 1:0 for element 0, up to 7:6).
func (m *Machine) shufps(in *Inst) error {
	s2, err := m.src(in)
	if err != nil {
		return err
	}
	s1 := m.Z[in.VVVV]
	var r vec
	n := lanes(in)
	for l := 0; l < n; l += 4 {
		for i := range 4 {
			from := &s1
			if i >= 2 {
				from = &s2
			}
			r[l+i] = from[l+int(in.Imm>>(2*i))&3]
		}
	}
	m.setVec(in, in.Reg, &r, n)
	return nil
}

// shuff32x4 is VSHUFF32X4 zmm, vvvv, r/m, imm8 (512 bits; SDM: VSHUFF32x4):
// 128-bit lanes 0 and 1 of the result are lanes of vvvv, 2 and 3 lanes of
// r/m, each picked by two bits of imm8 (bits 1:0 for lane 0, up to 7:6).
func (m *Machine) shuff32x4(in *Inst) error {
	s2, err := m.src(in)
	if err != nil {
		return err
	}
	s1 := m.Z[in.VVVV]
	var r vec
	for l := range 4 {
		from := &s1
		if l >= 2 {
			from = &s2
		}
		sel := int(in.Imm>>(2*l)) & 3
		copy(r[4*l:4*l+4], from[4*sel:4*sel+4])
	}
	m.setVec(in, in.Reg, &r, 16)
	return nil
}

// extract256 is VEXTRACTF64X4 (unmasked): 256 bits of a zmm by imm8 bit 0.
func (m *Machine) extract256(in *Inst) error {
	sel := int(in.Imm) & 1
	s := m.Z[in.Reg]
	var r vec
	copy(r[:8], s[8*sel:8*sel+8])
	if in.IsMem {
		return m.storeVec(in, m.ea(in), &r, 8)
	}
	m.setVec(in, in.RM, &r, 8)
	return nil
}

// roundps is VROUNDPS (VEX; imm8 3:0) and VRNDSCALEPS (EVEX; imm8 7:4 the
// fraction bits kept). imm8 bit 2 (use MXCSR.RC) means nearest even here,
// MXCSR's default; bit 3 only suppresses the precision exception.
func (m *Machine) roundps(in *Inst) error {
	s, err := m.src(in)
	if err != nil {
		return err
	}
	mode := int(in.Imm) & 3
	if in.Imm&4 != 0 {
		mode = 0
	}
	scale := 0
	if in.Enc == EVEX {
		scale = int(in.Imm) >> 4 & 15
	}
	var r vec
	n := lanes(in)
	for i := range n {
		r[i] = roundScale(s[i], scale, mode)
	}
	m.setVec(in, in.Reg, &r, n)
	return nil
}

// pslldImm is VPSLLD vvvv, r/m, imm8: counts above 31 give zero.
func (m *Machine) pslldImm(in *Inst) error {
	s, err := m.src(in)
	if err != nil {
		return err
	}
	c := uint64(in.Imm) & 0xFF
	var r vec
	n := lanes(in)
	for i := range n {
		if c < 32 {
			r[i] = s[i] << c
		}
	}
	m.setVec(in, in.VVVV, &r, n)
	return nil
}

// dpbf16ps is VDPBF16PS dest, vvvv, r/m (SDM pseudocode): for each float32
// element j, dest[j] += vvvv.bf16[2j+1]·src.bf16[2j+1], then
// dest[j] += vvvv.bf16[2j]·src.bf16[2j], each an FMA step of fmaBF16Step.
func (m *Machine) dpbf16ps(in *Inst) error {
	s, err := m.src(in)
	if err != nil {
		return err
	}
	d, a := m.Z[in.Reg], m.Z[in.VVVV]
	var r vec
	n := lanes(in)
	for j := range n {
		acc := fmaBF16Step(d[j], bf16ToF32(uint16(a[j]>>16)), bf16ToF32(uint16(s[j]>>16)))
		r[j] = fmaBF16Step(acc, bf16ToF32(uint16(a[j])), bf16ToF32(uint16(s[j])))
	}
	m.setVec(in, in.Reg, &r, n)
	return nil
}

// cvtneps2bf16 is VCVTNEPS2BF16 dest, r/m: VL/32 float32 elements to BF16 in
// the low VL/2 bits of dest (masked per 16-bit element), zeros above.
func (m *Machine) cvtneps2bf16(in *Inst) error {
	s, err := m.src(in)
	if err != nil {
		return err
	}
	n := lanes(in)
	old := m.Z[in.Reg]
	var out vec
	for i := range n {
		h := uint32(f32ToBF16(s[i]))
		if in.Mask != 0 && m.K[in.Mask]>>uint(i)&1 == 0 {
			h = 0
			if !in.Zero {
				h = old[i/2] >> (16 * uint(i&1)) & 0xFFFF
			}
		}
		out[i/2] |= h << (16 * uint(i&1))
	}
	m.Z[in.Reg] = out
	return nil
}

// Legacy SSE forms (upper bits 511:128 kept).

func (m *Machine) movssLoad(in *Inst) error {
	if in.IsMem {
		x, err := m.src32(in)
		if err != nil {
			return err
		}
		m.Z[in.Reg][0], m.Z[in.Reg][1], m.Z[in.Reg][2], m.Z[in.Reg][3] = x, 0, 0, 0
		return nil
	}
	m.Z[in.Reg][0] = m.Z[in.RM][0]
	return nil
}

func (m *Machine) movssStore(in *Inst) error {
	if in.IsMem {
		return m.writeU(m.ea(in), uint64(m.Z[in.Reg][0]), 4)
	}
	m.Z[in.RM][0] = m.Z[in.Reg][0]
	return nil
}

func (m *Machine) xorpsLegacy(in *Inst) error {
	var s vec
	if in.IsMem {
		var err error
		if s, err = m.loadVec(m.ea(in), 16); err != nil {
			return err
		}
	} else {
		s = m.Z[in.RM]
	}
	for i := range 4 {
		m.Z[in.Reg][i] ^= s[i]
	}
	return nil
}
