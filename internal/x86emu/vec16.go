package x86emu

import (
	"encoding/binary"
	"errors"
)

// 16-bit elements and opmask moves: VMOVDQU16 (one mask bit per 16-bit
// element) and KMOVW/KMOVD/KMOVQ from a general register, as the bf16
// kernels' masked tail loads use them.
//
// Fault suppression (Intel SDM vol. 1, 15.6.1 "Memory Fault Suppression",
// and the "Exceptions" of VMOVDQU8/16/32/64 and VMOVUPS): under an opmask, a
// masked-off element of a memory operand is neither read nor written and
// raises no fault. The masked loads here (VMOVDQU16, VMOVUPS) and the masked
// stores therefore access the active elements only, each on its own, so a
// Machine's Memory confines what the hardware would touch and nothing more.
// Other instructions read their whole memory operand even under a mask:
// stricter than the hardware (the kernels mask only these loads).

// loadElems reads n elements of size bytes (2 or 4) at addr into the low
// elements of a vec: all of them in one read when in has no mask, else only
// the active ones (mask bit i for element i), the others left zero.
func (m *Machine) loadElems(in *Inst, addr uint64, size, n int) (vec, error) {
	if in.Mask == 0 {
		return m.loadVec(addr, size*n)
	}
	var b [64]byte
	for i := range n {
		if m.active(in, i) {
			if err := m.read(addr+uint64(i*size), b[i*size:(i+1)*size]); err != nil {
				return vec{}, err
			}
		}
	}
	var v vec
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v, nil
}

// storeElems writes the active ones of the first n elements of size bytes
// of v at addr (unmasked: one write of size·n bytes).
func (m *Machine) storeElems(in *Inst, addr uint64, v *vec, size, n int) error {
	var b [64]byte
	for i := range v {
		binary.LittleEndian.PutUint32(b[4*i:], v[i])
	}
	if in.Mask == 0 {
		return m.write(addr, b[:size*n])
	}
	for i := range n {
		if m.active(in, i) {
			if err := m.write(addr+uint64(i*size), b[i*size:(i+1)*size]); err != nil {
				return err
			}
		}
	}
	return nil
}

// setVec16 writes n 16-bit elements of v to register r with masking (mask
// bit i for element i), zeroing everything above them.
func (m *Machine) setVec16(in *Inst, r int, v *vec, n int) {
	old := m.Z[r]
	var out vec
	for i := range n {
		sh := 16 * uint(i&1)
		var h uint32
		switch {
		case m.active(in, i):
			h = v[i/2] >> sh & 0xFFFF
		case in.Zero:
		default:
			h = old[i/2] >> sh & 0xFFFF
		}
		out[i/2] |= h << sh
	}
	m.Z[r] = out
}

// movdqu16Load is VMOVDQU16 reg, r/m (EVEX.F2.0F.W1 6F).
func (m *Machine) movdqu16Load(in *Inst) error {
	n := in.L / 2
	s := m.Z[in.RM]
	if in.IsMem {
		var err error
		if s, err = m.loadElems(in, m.ea(in), 2, n); err != nil {
			return err
		}
	}
	m.setVec16(in, in.Reg, &s, n)
	return nil
}

// movdqu16Store is VMOVDQU16 r/m, reg (EVEX.F2.0F.W1 7F): to memory, the
// active elements only (zeroing-masking is invalid there, see the decoder).
func (m *Machine) movdqu16Store(in *Inst) error {
	n := in.L / 2
	v := m.Z[in.Reg]
	if in.IsMem {
		return m.storeElems(in, m.ea(in), &v, 2, n)
	}
	m.setVec16(in, in.RM, &v, n)
	return nil
}

// noZeroingToMemory rejects EVEX.z with a memory destination (#UD).
func noZeroingToMemory(in *Inst) error {
	if in.IsMem && in.Zero {
		return errors.New("zeroing-masking with a memory destination is invalid")
	}
	return nil
}

// kmovFromGPR is KMOVW (0F 92, W0), KMOVD (F2 0F 92, W0) and KMOVQ (F2 0F
// 92, W1) k, r: the low 16, 32 or 64 bits of the register, zero-extended.
func (m *Machine) kmovFromGPR(in *Inst) error {
	n := 2
	if in.PP == ppF2 {
		n = 4
		if in.W {
			n = 8
		}
	}
	m.K[in.Reg] = m.GPR[in.RM&15] & sizeMask(n)
	return nil
}

// kmovCheck: VEX.L0, a k register (0-7) in ModRM.reg (VEX.R̄ must be 1).
func kmovCheck(in *Inst) error {
	if in.L != 16 {
		return errors.New("vector length not supported")
	}
	if in.Reg > 7 {
		return errors.New("opmask register above k7 is invalid")
	}
	return nil
}
