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

// The single-precision vector forms of the row kernels (rows.go), all on
// 4 lanes (.4S) or the whole 128 bits (.16B). op3 is the three-register
// "same" group: Vd = Vn op Vm.
type op3 struct {
	base uint32
	gnu  string // the mnemonic; arr the arrangement
	arr  string
}

var (
	opFADD   = op3{0x4e20d400, "fadd", "4s"}
	opFSUB   = op3{0x4ea0d400, "fsub", "4s"}
	opFMUL   = op3{0x6e20dc00, "fmul", "4s"}
	opFDIV   = op3{0x6e20fc00, "fdiv", "4s"}
	opFMLA   = op3{0x4e20cc00, "fmla", "4s"}   // Vd += Vn·Vm, one rounding
	opFMAXNM = op3{0x4e20c400, "fmaxnm", "4s"} // the number where one operand is a quiet NaN
	opFMINNM = op3{0x4ea0c400, "fminnm", "4s"}
	opFCMGT  = op3{0x6ea0e400, "fcmgt", "4s"} // all ones where Vn > Vm (false on NaN)
	opADD    = op3{0x4ea08400, "add", "4s"}   // 32-bit integer lanes
	opBSL    = op3{0x6e601c00, "bsl", "16b"}  // Vd = Vd&Vn | ^Vd&Vm
	opORR    = op3{0x4ea01c00, "orr", "16b"}  // with n = m: MOV Vd, Vn
)

// enc is o's encoding of Vd, Vn, Vm and its GNU syntax.
func (o op3) enc(d, n, m int) (uint32, string) {
	checkV(d, n, m)
	return o.base | uint32(m)<<16 | uint32(n)<<5 | uint32(d),
		fmt.Sprintf("%s v%d.%s, v%d.%s, v%d.%s", o.gnu, d, o.arr, n, o.arr, m, o.arr)
}

// op2 is the two-register "misc" group: Vd = op(Vn).
type op2 struct {
	base uint32
	gnu  string
}

var (
	opFRINTN = op2{0x4e218800, "frintn"} // round to nearest, ties to even
	opFCVTNS = op2{0x4e21a800, "fcvtns"} // to int32, nearest (exact on integral values)
)

func (o op2) enc(d, n int) (uint32, string) {
	checkV(d, n)
	return o.base | uint32(n)<<5 | uint32(d), fmt.Sprintf("%s v%d.4s, v%d.4s", o.gnu, d, n)
}

// fmulElem is FMUL Vd.4S, Vn.4S, Vm.S[idx]: Vd[l] = Vn[l]·Vm[idx].
func fmulElem(d, n, m, idx int) (uint32, string) {
	return fmlaElem(d, n, m, idx) | 0x8000, fmt.Sprintf("fmul v%d.4s, v%d.4s, v%d.s[%d]", d, n, m, idx)
}

// dupElem is DUP Vd.4S, Vn.S[idx]: lane idx of Vn in every lane.
func dupElem(d, n, idx int) (uint32, string) {
	checkV(d, n)
	if idx < 0 || idx > 3 {
		panic(fmt.Sprintf("dupElem: lane %d", idx))
	}
	return 0x4e000400 | uint32(idx<<3|4)<<16 | uint32(n)<<5 | uint32(d), fmt.Sprintf("dup v%d.4s, v%d.s[%d]", d, n, idx)
}

// shl32 is SHL Vd.4S, Vn.4S, #sh (32-bit lanes, 0 <= sh < 32).
func shl32(d, n, sh int) (uint32, string) {
	checkV(d, n)
	if sh < 0 || sh > 31 {
		panic(fmt.Sprintf("shl32: shift %d", sh))
	}
	return 0x4f005400 | uint32(32+sh)<<16 | uint32(n)<<5 | uint32(d), fmt.Sprintf("shl v%d.4s, v%d.4s, #%d", d, n, sh)
}

// ext8 is EXT Vd.16B, Vn.16B, Vm.16B, #8: Vn's upper 8 bytes, then Vm's
// lower 8 (with n = m: the two halves swapped).
func ext8(d, n, m int) (uint32, string) {
	checkV(d, n, m)
	return 0x6e004000 | uint32(m)<<16 | uint32(n)<<5 | uint32(d), fmt.Sprintf("ext v%d.16b, v%d.16b, v%d.16b, #8", d, n, m)
}

// faddp is FADDP Sd, Vn.2S: lanes 0 and 1 of Vn added into Sd.
func faddp(d, n int) (uint32, string) {
	checkV(d, n)
	return 0x7e30d800 | uint32(n)<<5 | uint32(d), fmt.Sprintf("faddp s%d, v%d.2s", d, n)
}

// opBIF is BIF Vd.16B, Vn.16B, Vm.16B: Vd's bits where Vm's are set, Vn's
// elsewhere (with Vm = Vd > Vn from FCMGT: the x86 maximum, in place).
var opBIF = op3{0x6ee01c00, "bif", "16b"}

// The float64 forms of the norms' sums (norms.go), on 2 lanes (.2D).
var (
	opFADD2D = op3{0x4e60d400, "fadd", "2d"}
	opFSUB2D = op3{0x4ee0d400, "fsub", "2d"}
	opFMUL2D = op3{0x6e60dc00, "fmul", "2d"}
)

// fcvtl64 is FCVTL Vd.2D, Vn.2S (upper false: lanes 0-1) or FCVTL2 Vd.2D,
// Vn.4S (upper: lanes 2-3): float32 widened to float64, exactly.
func fcvtl64(d, n int, upper bool) (uint32, string) {
	checkV(d, n)
	if upper {
		return 0x4e617800 | uint32(n)<<5 | uint32(d), fmt.Sprintf("fcvtl2 v%d.2d, v%d.4s", d, n)
	}
	return 0x0e617800 | uint32(n)<<5 | uint32(d), fmt.Sprintf("fcvtl v%d.2d, v%d.2s", d, n)
}

// faddp64 is FADDP Dd, Vn.2D: lanes 0 and 1 of Vn added into Dd.
func faddp64(d, n int) (uint32, string) {
	checkV(d, n)
	return 0x7e70d800 | uint32(n)<<5 | uint32(d), fmt.Sprintf("faddp d%d, v%d.2d", d, n)
}

// dup64 is DUP Vd.2D, Vn.D[0]: lane 0 of Vn in both lanes.
func dup64(d, n int) (uint32, string) {
	checkV(d, n)
	return 0x4e080400 | uint32(n)<<5 | uint32(d), fmt.Sprintf("dup v%d.2d, v%d.d[0]", d, n)
}
