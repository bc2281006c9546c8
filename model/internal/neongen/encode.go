package main

import "fmt"

// The AArch64 instructions the kernels need that Go's arm64 assembler has
// no mnemonic for, encoded here and written as WORD directives with the GNU
// syntax in a comment (TestEncodingsAssemble checks every form against GNU
// as where it is installed; TestEncoding holds a sample of its answers).

// fmlaElem is FMLA Vd.4S, Vn.4S, Vm.S[idx]: Vd[l] = fma(Vn[l], Vm[idx],
// Vd[l]) for the 4 lanes, one rounding each (the "by element" form, single
// precision: Q=1, sz=0, idx in H:L, m in M:Rm).
func fmlaElem(d, n, m, idx int) uint32 {
	checkV(d, n, m)
	if idx < 0 || idx > 3 {
		panic(fmt.Sprintf("fmlaElem: lane %d", idx))
	}
	return 0x4f801000 | uint32(idx&1)<<21 | uint32(m)<<16 | uint32(idx>>1)<<11 | uint32(n)<<5 | uint32(d)
}

// fcvtl is FCVTL Vd.4S, Vn.4H (upper false: the lower four halves) or
// FCVTL2 Vd.4S, Vn.8H (upper: the upper four): IEEE half precision widened
// to single, exactly.
func fcvtl(d, n int, upper bool) uint32 {
	checkV(d, n)
	return 0x0e217800 | q(upper) | uint32(n)<<5 | uint32(d)
}

// shll16 is SHLL Vd.4S, Vn.4H, #16 (or SHLL2 Vd.4S, Vn.8H, #16): each
// 16-bit lane moved into the upper half of a 32-bit lane, the lower half
// zero, which widens bfloat16 to float32 exactly.
func shll16(d, n int, upper bool) uint32 {
	checkV(d, n)
	return 0x2e613800 | q(upper) | uint32(n)<<5 | uint32(d)
}

// q is the Q bit (30) of the "2" (upper half) forms.
func q(upper bool) uint32 {
	if upper {
		return 1 << 30
	}
	return 0
}

// checkV panics on a register number outside V0-V31: a generator bug.
func checkV(rs ...int) {
	for _, r := range rs {
		if r < 0 || r > 31 {
			panic(fmt.Sprintf("neongen: register V%d", r))
		}
	}
}

// gnuFMLA, gnuFCVTL and gnuSHLL are the GNU syntax of the encodings above.
func gnuFMLA(d, n, m, idx int) string {
	return fmt.Sprintf("fmla v%d.4s, v%d.4s, v%d.s[%d]", d, n, m, idx)
}

func gnuFCVTL(d, n int, upper bool) string {
	if upper {
		return fmt.Sprintf("fcvtl2 v%d.4s, v%d.8h", d, n)
	}
	return fmt.Sprintf("fcvtl v%d.4s, v%d.4h", d, n)
}

func gnuSHLL(d, n int, upper bool) string {
	if upper {
		return fmt.Sprintf("shll2 v%d.4s, v%d.8h, #16", d, n)
	}
	return fmt.Sprintf("shll v%d.4s, v%d.4h, #16", d, n)
}
