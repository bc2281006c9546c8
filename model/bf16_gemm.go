package model

import "fmt"

// bf16Set names the kernels that compute the bf16 mode's products.
type bf16Set uint8

const (
	bf16Off     bf16Set = iota // f32 mode: no bf16 products
	bf16Generic                // portable Go (dpbf16Lane), on any CPU
	bf16AVX512                 // VDPBF16PS (AVX512_BF16 with AVX512F and BW)
	bf16AMX                    // TDPBF16PS on AMX tiles (bf16_amx.go): another summation order
)

func (s bf16Set) String() string {
	return [...]string{"off", "bf16-generic", "bf16-avx512", "bf16-amx"}[s]
}

// errNoBF16 is LoadCPU's and NewCPUBF16's answer on a CPU without
// AVX512_BF16, unless the portable kernels are asked for.
var errNoBF16 = fmt.Errorf("bf16 needs a CPU with AVX512_BF16; this CPU has none (%s=generic runs the portable bf16 kernels, slowly)", kernelsEnv)

// CheckBF16 reports whether the bf16 mode can run here: nil where the CPU
// has AVX512_BF16 (or WGPU_EVAL_CPU_KERNELS=generic asks for the portable
// kernels), else the error LoadCPU would return, so that a command can refuse
// before it reads any weights.
func CheckBF16() error {
	_, err := pickBF16(false)
	return err
}

// pickBF16 returns the bf16 kernels to use: the portable ones when portable
// is set or kernelsEnv asks for generic (read now, so a test can set it),
// the AMX ones where the CPU has AMX-BF16 (and the OS grants the tile
// state) unless kernelsEnv asks for avx512 or avx2, the VDPBF16PS assembly
// where the CPU has AVX512_BF16, else an error.
func pickBF16(portable bool) (bf16Set, error) {
	switch {
	case portable || portableKernelsAsked():
		return bf16Generic, nil
	case (hasAMX() || amxEmulated) && !amxDeclined():
		return bf16AMX, nil
	case hasBF16Kernels() || bf16Emulated:
		return bf16AVX512, nil
	}
	return bf16Off, errNoBF16
}

// bf16Emulated is set by tests only, while dpbfAVX512 holds the VDPBF16PS
// assembly run in an x86 emulator (emu_amd64_test.go): pickBF16 then picks
// it on a CPU without AVX512_BF16.
var bf16Emulated bool

// amxEmulated is set by tests only, while the AMX kernels (amxChunk,
// amxChunk16, amxStore) are the assembly run in an x86 emulator: pickBF16
// then picks bf16AMX on a CPU without AMX.
var amxEmulated bool

// gemmBF16 computes out[i*ldo+j] = a_i · b_j for i < M, j < N, a (M, K) and
// b (N, K) in bf16 bits with row strides lda and ldb, out float32 with row
// stride ldo, as VDPBF16PS computes it (see bf16.go), with the kernels of set;
// for bf16AMX, as TDPBF16PS does (bf16_amx.go), a being that set's panel
// (VNNI pairs, from a multiple of 32 rows; lda unused).
// Single-threaded; callers tile and parallelize.
func gemmBF16(set bf16Set, out []float32, ldo int, a []uint16, lda int, b []uint16, ldb int, M, N, K int) {
	if emptyProduct(out, ldo, M, N, K) {
		return
	}
	switch set {
	case bf16AVX512:
		gemmBlocks(dpbfAVX512, out, ldo, a, lda, b, ldb, M, N, K)
		return
	case bf16AMX:
		gemmBF16AMX(out, ldo, a, b, ldb, M, N, K)
		return
	}
	gemmBF16Generic(out, ldo, a, lda, b, ldb, M, N, K)
}

// dpbfKernel is the signature of the bf16 dot-product blocks (assembly): a
// and b in bf16 bits.
type dpbfKernel = blockKernel[uint16, uint16]

// dpbfKernels are one kernel set's bf16 blocks. Tests may swap the table (an
// emulator running the assembly).
type dpbfKernels = blockKernels[uint16, uint16]

// gemmBF16Generic is gemmBF16 with the portable kernels: four rows of b at a
// time are widened (bf16In) into float32 scratch padded with zeros to a
// multiple of 32, then every row of a, widened alike, is multiplied with them
// in the 16 lanes of dpbf16, block after block, and reduced by reduce16.
// Where the exponents of the rows guarantee that every product is zero or a
// normal float32 far from both ends of the range (expRange.safe), each step
// is a plain float32 multiply and add, which is then exactly the FMA with
// FTZ (see safe); elsewhere every step is checked (dpbf16Lane).
func gemmBF16Generic(out []float32, ldo int, a []uint16, lda int, b []uint16, ldb int, M, N, K int) {
	K32 := (K + 31) &^ 31
	bw := make([]float32, 4*K32)
	aw := make([]float32, K32)
	var br [4]expRange
	for j := 0; j < N; j += 4 {
		n := min(4, N-j)
		clear(bw)
		for r := range 4 {
			br[r] = expRange{}
			if r < n {
				br[r] = widenBF16In(bw[r*K32:][:K], b[(j+r)*ldb:][:K])
			}
		}
		for i := range M {
			ar := widenBF16In(aw[:K], a[i*lda:][:K])
			ws := [4][]float32{bw[:K32], bw[K32 : 2*K32], bw[2*K32 : 3*K32], bw[3*K32:]}
			var c [4]float32
			if ar.safe(br[0]) && ar.safe(br[1]) && ar.safe(br[2]) && ar.safe(br[3]) {
				c = dpbf1x4Fast(aw, ws[0], ws[1], ws[2], ws[3])
			} else {
				c = dpbf1x4Generic(aw, ws[0], ws[1], ws[2], ws[3])
			}
			copy(out[i*ldo+j:][:n], c[:n])
		}
	}
}

// expRange is the smallest and largest biased float32 exponent of a row's
// nonzero values (lo > hi: none).
type expRange struct{ lo, hi uint32 }

// safe reports whether every product of a value of a row of range r with
// one of a row of range o is zero or has a magnitude in [2^-102, 2^127).
// Then a step acc + x·y needs no check: x·y is exact in float32, the float32
// add is the FMA's one rounding, overflow is infinite alike, and a sum that
// is not zero is at least 2^-126 (it is a multiple of the smaller ulp of acc
// and x·y, at least 2^-126 once |acc| > |x·y|/2, else above |x·y|/2), so the
// flush to zero never applies.
func (r expRange) safe(o expRange) bool {
	switch {
	case r.hi == 0xff || o.hi == 0xff:
		return false // an infinity or a NaN
	case r.lo > r.hi || o.lo > o.hi:
		return true // a row of zeros: every product is zero
	}
	// |x| in [2^(e-127), 2^(e-126)) for biased exponent e.
	return r.lo+o.lo >= 254-102 && r.hi+o.hi <= 252+126
}

// widenBF16In sets dst[i] = bf16In(src[i]) and returns the exponent range
// of the nonzero values.
func widenBF16In(dst []float32, src []uint16) expRange {
	dst = dst[:len(src)]
	r := expRange{lo: 255}
	for i, h := range src {
		dst[i] = bf16In(h)
		if e := uint32(h>>7) & 0xff; e != 0 {
			r.lo, r.hi = min(r.lo, e), max(r.hi, e)
		}
	}
	return r
}

// dpbf1x4Generic returns the bf16 dot products of a with b0..b3, all widened
// by bf16In and as long as a, a multiple of 32.
func dpbf1x4Generic(a, b0, b1, b2, b3 []float32) [4]float32 {
	var acc [4][16]float32
	for k := 0; k+32 <= len(a); k += 32 {
		x := (*[32]float32)(a[k:])
		for r, b := range [4][]float32{b0, b1, b2, b3} {
			dpbf16Widened(&acc[r], x, (*[32]float32)(b[k:]))
		}
	}
	return [4]float32{reduce16(&acc[0]), reduce16(&acc[1]), reduce16(&acc[2]), reduce16(&acc[3])}
}

// dpbf1x4Fast is dpbf1x4Generic where every product is safe (expRange.safe):
// plain float32 multiplies and adds, in the same lanes and order.
func dpbf1x4Fast(a, b0, b1, b2, b3 []float32) [4]float32 {
	var acc [4][16]float32
	for k := 0; k+32 <= len(a); k += 32 {
		x := (*[32]float32)(a[k:])
		for r, b := range [4][]float32{b0, b1, b2, b3} {
			ac, y := &acc[r], (*[32]float32)(b[k:])
			for l := 0; l < 31; l += 2 {
				s := ac[l/2] + float32(x[l+1]*y[l+1])
				ac[l/2] = s + float32(x[l]*y[l])
			}
		}
	}
	return [4]float32{reduce16(&acc[0]), reduce16(&acc[1]), reduce16(&acc[2]), reduce16(&acc[3])}
}

// dpbf16Widened is dpbf16 on operands already widened by bf16In, with
// dpbf16Lane's fast path inlined.
func dpbf16Widened(acc *[16]float32, x, y *[32]float32) {
	for l := 0; l < 31; l += 2 {
		x1, y1, x0, y0 := x[l+1], y[l+1], x[l], y[l]
		s := acc[l/2]
		p := float32(x1 * y1)
		if r := s + p; laneSlow(p, r) {
			s = dpbf16LaneExact(s, x1, y1)
		} else {
			s = r
		}
		p = float32(x0 * y0)
		if r := s + p; laneSlow(p, r) {
			s = dpbf16LaneExact(s, x0, y0)
		} else {
			s = r
		}
		acc[l/2] = s
	}
}
