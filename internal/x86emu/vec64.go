package x86emu

import (
	"errors"
	"math"
)

// Float64 lanes (the packed-double and scalar-double instructions, and the
// float32 -> float64 conversion): element i of a vector is its 32-bit
// elements 2i (low half) and 2i+1. Masking of 64-bit elements is not
// supported (the kernels use none): an EVEX form with a mask is a decoding
// error (pdCheck).
//
// Arithmetic is IEEE 754 binary64 with one rounding to nearest even,
// subnormals kept (Go's float64 operations), with the NaN rules of fp.go at
// 64 bits: the first source's NaN quieted (bit 51 set), else the second's;
// an invalid operation on non-NaNs gives the default NaN 0xFFF8000000000000
// (Intel SDM vol. 1, 4.8.3.5 and table 4-7).

const (
	defaultNaN64 = 0xFFF8000000000000
	quietBit64   = 1 << 51
)

func isNaN64(b uint64) bool { return b&0x7FF0000000000000 == 0x7FF0000000000000 && b&(1<<52-1) != 0 }

// arith64 is a float64 operation with the NaN rules.
func arith64(a, b uint64, f func(x, y float64) float64) uint64 {
	switch {
	case isNaN64(a):
		return a | quietBit64
	case isNaN64(b):
		return b | quietBit64
	}
	r := f(math.Float64frombits(a), math.Float64frombits(b))
	if r != r {
		return defaultNaN64
	}
	return math.Float64bits(r)
}

func addF64(a, b uint64) uint64 {
	return arith64(a, b, func(x, y float64) float64 { return x + y })
}
func subF64(a, b uint64) uint64 {
	return arith64(a, b, func(x, y float64) float64 { return x - y })
}
func mulF64(a, b uint64) uint64 {
	return arith64(a, b, func(x, y float64) float64 { return x * y })
}

// cvtps2pd widens float32 bits to float64 bits exactly (CVTPS2PD; DAZ off,
// so subnormals are kept): a NaN keeps its sign and payload (shifted to the
// top of the wider fraction), quieted.
func cvtps2pd(a uint32) uint64 {
	if isNaN32(a) {
		return uint64(a>>31)<<63 | 0x7FF0000000000000 | uint64(a&0x7FFFFF)<<29 | quietBit64
	}
	return math.Float64bits(float64(math.Float32frombits(a)))
}

func (v *vec) f64(i int) uint64 { return uint64(v[2*i]) | uint64(v[2*i+1])<<32 }

func (v *vec) setF64(i int, x uint64) { v[2*i], v[2*i+1] = uint32(x), uint32(x>>32) }

// pdCheck accepts an EVEX form only with W1 and no mask (the VEX forms
// ignore W).
func pdCheck(in *Inst) error {
	if in.Enc != EVEX {
		return nil
	}
	if !in.W {
		return errors.New("EVEX.W0 is not this instruction")
	}
	if in.Mask != 0 {
		return errors.New("masking of 64-bit elements not supported")
	}
	return nil
}

// packed64 is dest = f(vvvv, r/m) on float64 elements.
func packed64(f func(a, b uint64) uint64) func(*Machine, *Inst) error {
	return func(m *Machine, in *Inst) error {
		b, err := m.src(in)
		if err != nil {
			return err
		}
		a := &m.Z[in.VVVV]
		var r vec
		n := in.L / 8
		for i := range n {
			r.setF64(i, f(a.f64(i), b.f64(i)))
		}
		m.setVec(in, in.Reg, &r, 2*n)
		return nil
	}
}

// scalar64 is the SD form: dest[63:0] = f(vvvv[63:0], r/m[63:0]),
// dest[127:64] = vvvv[127:64], zeros above.
func scalar64(f func(a, b uint64) uint64) func(*Machine, *Inst) error {
	return func(m *Machine, in *Inst) error {
		var b uint64
		if in.IsMem {
			var err error
			if b, err = m.readU(m.ea(in), 8); err != nil {
				return err
			}
		} else {
			b = m.Z[in.RM].f64(0)
		}
		a := m.Z[in.VVVV]
		r := vec{2: a[2], 3: a[3]}
		r.setF64(0, f(a.f64(0), b))
		m.Z[in.Reg] = r
		return nil
	}
}

// cvtps2pdExec is VCVTPS2PD dest, r/m: VL/8 float32 elements (the low half
// of the register, or VL/2 bytes of memory) widened to float64.
func (m *Machine) cvtps2pdExec(in *Inst) error {
	n := in.L / 8
	var s vec
	if in.IsMem {
		var err error
		if s, err = m.loadVec(m.ea(in), 4*n); err != nil {
			return err
		}
	} else {
		s = m.Z[in.RM]
	}
	var r vec
	for i := range n {
		r.setF64(i, cvtps2pd(s[i]))
	}
	m.setVec(in, in.Reg, &r, 2*n)
	return nil
}

// broadcastsd is VBROADCASTSD dest, r/m: one float64 (element 0 of an xmm,
// or 8 bytes of memory) in every element of dest. Its EVEX form is W1 (W0
// is VBROADCASTF32X2); its VEX form W0; neither exists at 128 bits.
func (m *Machine) broadcastsd(in *Inst) error {
	var x uint64
	if in.IsMem {
		var err error
		if x, err = m.readU(m.ea(in), 8); err != nil {
			return err
		}
	} else {
		x = m.Z[in.RM].f64(0)
	}
	var r vec
	n := in.L / 8
	for i := range n {
		r.setF64(i, x)
	}
	m.setVec(in, in.Reg, &r, 2*n)
	return nil
}

func broadcastsdCheck(in *Inst) error {
	switch {
	case in.L == 16:
		return errors.New("no 128-bit form")
	case in.W != (in.Enc == EVEX):
		return errors.New("W must be 1 (EVEX) or 0 (VEX)")
	case in.Mask != 0:
		return errors.New("masking of 64-bit elements not supported")
	}
	return nil
}

// movsdStore is legacy MOVSD r/m64, xmm (F2 0F 11): 8 bytes to memory, or
// the low 64 bits into a register, keeping its other bits.
func (m *Machine) movsdStore(in *Inst) error {
	x := m.Z[in.Reg].f64(0)
	if in.IsMem {
		return m.writeU(m.ea(in), x, 8)
	}
	m.Z[in.RM].setF64(0, x)
	return nil
}
