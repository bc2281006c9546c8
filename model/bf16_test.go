package model

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// roundBF16Ref rounds x to bfloat16's 8 significant bits, to nearest, ties to
// even, by the arithmetic of the definition (frexp, scale, round, scale
// back): the tests' independent form of bf16Round for normal values.
func roundBF16Ref(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	m, e := math.Frexp(x) // x = m·2^e, 0.5 <= |m| < 1
	return math.Ldexp(math.RoundToEven(math.Ldexp(m, 8)), e-8)
}

// bf16Value draws bf16 bits: mostly ordinary values around 1, and a share
// of extreme exponents (subnormals, near the float32 overflow and underflow
// thresholds of a product), zeros and signs.
func bf16Value(r *rand.Rand) uint16 {
	sign := uint16(r.IntN(2)) << 15
	frac := uint16(r.IntN(128))
	var exp int
	switch r.IntN(8) {
	case 0:
		exp = r.IntN(256) // anything, Inf/NaN included at 255
		if exp == 255 {
			exp = 254
		}
	case 1:
		exp = r.IntN(4) // zero, subnormal or tiny
	case 2:
		exp = 190 + r.IntN(64) // large: products overflow
	case 3:
		exp = 20 + r.IntN(50) // small: products underflow
	default:
		exp = 120 + r.IntN(14)
	}
	return sign | uint16(exp)<<7 | frac
}

// refLane is one VDPBF16PS step from its definition, in exact arithmetic:
// acc + x·y formed exactly (big.Float), rounded once to 24 bits (nearest,
// even; exponent unbounded), below 2^-126 flushed to a zero of the result's
// sign, from 2^128 on infinite. x and y are already DAZ'd; all finite.
func refLane(acc, x, y float32) float32 {
	exact := new(big.Float).SetPrec(2000)
	p := new(big.Float).SetPrec(2000).Mul(big.NewFloat(float64(x)), big.NewFloat(float64(y)))
	exact.Add(big.NewFloat(float64(acc)), p)
	if exact.Sign() == 0 {
		return acc + float32(x*y) // IEEE's sign of an exact zero sum
	}
	r := new(big.Float).SetPrec(24).SetMode(big.ToNearestEven).Set(exact)
	neg := r.Signbit()
	e := r.MantExp(nil) // r = m·2^e, 0.5 <= |m| < 1
	switch {
	case e <= -126:
		return float32(math.Copysign(0, map[bool]float64{true: -1, false: 1}[neg]))
	case e > 128:
		return float32(math.Copysign(math.Inf(1), map[bool]float64{true: -1, false: 1}[neg]))
	}
	f, acc2 := r.Float32()
	if acc2 != big.Exact {
		panic("refLane: inexact")
	}
	return f
}

// sdmLane is refLane made fast where it can be: when the float64 sum of acc
// and the exact product x·y is itself exact (the significand bits of both,
// 24 and 16 at most, fit in float64's 53) and normal as a float32, the one
// rounding to float32 is Go's conversion; anything else (an infinite acc
// aside, which a finite product leaves as it is) goes to refLane. It shares
// nothing with dpbf16Lane but the definition.
func sdmLane(acc, x, y float32) float32 {
	if math.IsInf(float64(acc), 0) {
		return acc
	}
	p := float64(x) * float64(y) // exact: two 8-bit significands
	if acc != 0 && p != 0 {
		_, ea := math.Frexp(float64(acc)) // acc in [2^(ea-1), 2^ea): its last bit is at least 2^(ea-24)
		_, ep := math.Frexp(p)            // p's, 2^(ep-16)
		if max(ea, ep)+1-min(ea-24, ep-16) > 53 {
			return refLane(acc, x, y)
		}
	}
	if s := float64(acc) + p; math.Abs(s) >= 0x1p-126 {
		return float32(s) // to nearest, even; from 2^128 on infinite
	}
	return refLane(acc, x, y)
}

// makeFP32 is VDPBF16PS's make_fp32 (the bf16 bits in the upper half of a
// float32) read as the instruction reads it, "DAZ in": a subnormal is a
// zero of its sign.
func makeFP32(h uint16) float32 {
	f := math.Float32frombits(uint32(h) << 16)
	if f != 0 && math.Abs(float64(f)) < 0x1p-126 {
		return float32(math.Copysign(0, float64(f)))
	}
	return f
}

// sdmDot is the test's own model of a bf16 dot product as the kernels
// define it (bf16.go's comment), written from the pseudocode of VDPBF16PS
// in Intel's SDM: a and b (as long as a) padded with zeros to blocks of 32;
// per block, each of 16 float32 lanes i does srcdest[i] +=
// make_fp32(a[2i+1])·make_fp32(b[2i+1]), then the same for 2i, each one
// FMA step (sdmLane); then the lanes are added in the kernels' fixed tree:
// lane i plus lane i+8, then i plus i+4, then (x0+x2)+(x1+x3). It calls none
// of the helpers the kernels use (bf16In, dpbf16Lane, reduce16).
func sdmDot(a, b []uint16) float32 {
	var lane [16]float32
	n := (len(a) + 31) / 32 * 32
	pa, pb := make([]uint16, n), make([]uint16, n)
	copy(pa, a)
	copy(pb, b[:len(a)])
	for k0 := 0; k0 < len(pa); k0 += 32 {
		for i := range lane {
			for _, k := range []int{k0 + 2*i + 1, k0 + 2*i} {
				lane[i] = sdmLane(lane[i], makeFP32(pa[k]), makeFP32(pb[k]))
			}
		}
	}
	var h [8]float32
	for i := range h {
		h[i] = lane[i] + lane[i+8]
	}
	var q [4]float32
	for i := range q {
		q[i] = h[i] + h[i+4]
	}
	return (q[0] + q[2]) + (q[1] + q[3])
}

// One step of the scalar model is the exact definition, on values that reach
// every path: ordinary, subnormal inputs (DAZ), products that underflow or
// overflow float32, results flushed to zero, exact cancellations.
func TestDPBF16Lane(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	paths := map[string]int{}
	for i := range 400000 {
		x, y := bf16In(bf16Value(r)), bf16In(bf16Value(r))
		var acc float32
		switch i % 4 {
		case 0:
			acc = bf16In(bf16Value(r)) * (1 + float32(r.IntN(1<<16))/(1<<16))
		case 1:
			acc = -x * y // cancellation
			if r.IntN(2) == 0 {
				acc = math.Nextafter32(acc, 0)
			}
		case 2:
			acc = float32(r.NormFloat64())
		}
		if !finite32(acc) || !finite32(x*y) && math.IsInf(float64(x)*float64(y), 0) {
			continue
		}
		if acc != 0 && math.Abs(float64(acc)) < 0x1p-126 {
			continue // acc is never subnormal: every step flushes
		}
		got, want := dpbf16Lane(acc, x, y), refLane(acc, x, y)
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("dpbf16Lane(%g, %g, %g) = %g (%#x), want %g (%#x)", acc, x, y, got, math.Float32bits(got), want, math.Float32bits(want))
		}
		if s := sdmLane(acc, x, y); math.Float32bits(s) != math.Float32bits(want) {
			t.Fatalf("the test's sdmLane(%g, %g, %g) = %g (%#x), refLane %g (%#x)", acc, x, y, s, math.Float32bits(s), want, math.Float32bits(want))
		}
		p := float64(x) * float64(y)
		if p != 0 && math.Abs(p) < 0x1p-126 {
			paths["product underflows"]++
		}
		if math.Abs(p) >= 0x1p128 {
			paths["product overflows"]++
		}
		if want == 0 && acc+float32(x*y) != 0 {
			paths["result is flushed"]++
		}
		if math.IsInf(float64(want), 0) {
			paths["result overflows"]++
		}
	}
	for _, p := range []string{"product underflows", "product overflows", "result is flushed", "result overflows"} {
		if paths[p] < 100 {
			t.Errorf("only %d cases where the %s", paths[p], p)
		}
	}
	// Infinities, by IEEE 754's fusedMultiplyAdd: an infinite acc plus a
	// finite product is acc, even one beyond the float32 range of the other
	// sign (2^97·2^97 = 2^194 is not rounded to infinity first); Inf - Inf
	// and 0·Inf are NaN.
	inf, big := float32(math.Inf(1)), bf16In(0x7000) // 2^97
	for _, c := range []struct{ acc, x, y, want float32 }{
		{-inf, big, big, -inf},
		{inf, -big, big, inf},
		{inf, big, big, inf},
		{-inf, 1, 2, -inf},
		{1, inf, 2, inf},
		{-inf, inf, 2, float32(math.NaN())},
		{1, inf, 0, float32(math.NaN())},
		{1, big, big, inf},
	} {
		got := dpbf16Lane(c.acc, c.x, c.y)
		if math.Float32bits(got) != math.Float32bits(c.want) && !(got != got && c.want != c.want) {
			t.Errorf("dpbf16Lane(%g, %g, %g) = %g, want %g", c.acc, c.x, c.y, got, c.want)
		}
	}
}

// bf16Round against its definition: normal values round to 8 significant
// bits (nearest, even), beyond the largest bf16 to infinity; subnormals to
// zero; NaNs are truncated and quieted, as VCVTNEPS2BF16 does (the
// hardware's bits are checked in TestAVX512KernelsInBounds where the CPU
// has AVX512_BF16).
func TestBF16Round(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		x := math.Float32frombits(r.Uint32())
		if r.IntN(4) == 0 { // exact ties
			x = math.Float32frombits(r.Uint32()&^0xffff | 0x8000)
		}
		got := bf16Round(x)
		var want uint16
		switch b := math.Float32bits(x); {
		case x != x: // the SDM's convert_fp32_to_bfloat16: truncated, quiet bit set
			want = uint16(b>>16) | 0x40
		case b&0x7f800000 == 0:
			want = uint16(b>>16) & 0x8000
		default:
			v := roundBF16Ref(float64(x))
			want = uint16(math.Float32bits(float32(v)) >> 16) // exact, or ±Inf
		}
		if got != want {
			t.Fatalf("bf16Round(%g) = %#x, want %#x", x, got, want)
		}
	}
}

// bf16Rows returns n bf16 values: N(0, 1) rounded, with a few extremes
// (zeros, subnormals, huge and tiny values) when wild.
func bf16Rows(r *rand.Rand, n int, wild bool) []uint16 {
	v := make([]uint16, n)
	for i := range v {
		v[i] = bf16Round(float32(r.NormFloat64()))
		if wild && r.IntN(16) == 0 {
			v[i] = bf16Value(r)
		}
	}
	return v
}

// bf16Huge returns n bf16 values of magnitude 2^64 to 2^127, either sign:
// every product overflows float32, so lanes become infinite and then meet
// products of the other sign (which the FMA leaves finite).
func bf16Huge(r *rand.Rand, n int) []uint16 {
	v := make([]uint16, n)
	for i := range v {
		v[i] = uint16(r.IntN(2))<<15 | uint16(191+r.IntN(63))<<7 | uint16(r.IntN(128))
	}
	return v
}

// checkBF16Kernels checks gemm (a bf16 gemm: the portable driver, a kernel
// table through gemmBlocks, or the scalar model dotBF16Ref) against the
// test's own model sdmDot, bit for bit, over shapes that use every block and tail, strides wider than
// K, and operands with extreme values; on short rows, also operands whose
// every product overflows (where only a few lanes are used, an infinite
// result survives the reduction rather than meeting one of the other sign).
func checkBF16Kernels(t *testing.T, gemm func(out []float32, ldo int, a []uint16, lda int, b []uint16, ldb int, M, N, K int)) {
	t.Helper()
	r := rand.New(rand.NewPCG(5, 6))
	for _, K := range []int{2, 3, 4, 6, 34, 36} {
		const M, N = 5, 5
		a, b := bf16Huge(r, M*K), bf16Huge(r, N*K)
		out := make([]float32, M*N)
		gemm(out, N, a, K, b, K, M, N, K)
		for i := range M {
			for j := range N {
				want, got := sdmDot(a[i*K:][:K], b[j*K:][:K]), out[i*N+j]
				if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
					t.Fatalf("%dx%dx%d (huge): out[%d][%d] = %g, want %g", M, N, K, i, j, got, want)
				}
			}
		}
	}
	for _, sh := range [][3]int{{1, 1, 1}, {1, 4, 31}, {4, 4, 32}, {5, 7, 33}, {9, 13, 64}, {3, 5, 100}, {8, 9, 768}, {2, 3, 3072}, {70, 6, 200}} {
		for _, wild := range []bool{false, true} {
			M, N, K := sh[0], sh[1], sh[2]
			lda, ldb, ldo := K+r.IntN(3), K+r.IntN(3), N+r.IntN(3)
			a, b := bf16Rows(r, M*lda, wild), bf16Rows(r, N*ldb, wild)
			out := make([]float32, M*ldo)
			gemm(out, ldo, a, lda, b, ldb, M, N, K)
			for i := range M {
				for j := range N {
					want := sdmDot(a[i*lda:][:K], b[j*ldb:][:K])
					got := out[i*ldo+j]
					if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
						t.Fatalf("%dx%dx%d (wild %v): out[%d][%d] = %g, want %g", M, N, K, wild, i, j, got, want)
					}
				}
			}
		}
	}
}

// The portable bf16 kernels are the SDM's definition, bit for bit.
func TestGemmBF16Generic(t *testing.T) { checkBF16Kernels(t, gemmBF16Generic) }

// The scalar model dotBF16Ref, which the x86 emulator's tests
// (emu_amd64_test.go) hold the assembly to, is the SDM's definition, bit for
// bit.
func TestDotBF16RefIsTheSDM(t *testing.T) {
	checkBF16Kernels(t, func(out []float32, ldo int, a []uint16, lda int, b []uint16, ldb int, M, N, K int) {
		for i := range M {
			for j := range N {
				out[i*ldo+j] = dotBF16Ref(a[i*lda:][:K], b[j*ldb:][:K])
			}
		}
	})
}

// The VDPBF16PS kernels are the SDM's definition, bit for bit: on a CPU with
// AVX512_BF16 natively, elsewhere on amd64 the same assembly in the x86
// emulator (emu_amd64_test.go swaps dpbfAVX512); other architectures have
// no such kernels.
func TestGemmBF16AVX512(t *testing.T) {
	if !hasBF16Kernels() && !bf16AsmEmulated {
		t.Skip("no VDPBF16PS kernels here: not amd64, or the emulator could not take them (see TestAVX512KernelsRun)")
	}
	checkBF16Kernels(t, func(out []float32, ldo int, a []uint16, lda int, b []uint16, ldb int, M, N, K int) {
		gemmBlocks(dpbfAVX512, out, ldo, a, lda, b, ldb, M, N, K)
	})
}

// Products split along k (gemmBlocks with chunkBytes at 128: chunks of 64
// bf16, so that the shapes of checkBF16Kernels take one to 48 chunks, the
// last one shorter or with a tail, and more rows than one pass takes) are
// the whole kernels' products, bit for bit. TestGemmChunked does the same
// for the float32 kernels.
func TestGemmBF16Chunked(t *testing.T) {
	if !hasBF16Kernels() && !bf16AsmEmulated {
		t.Skip("no VDPBF16PS kernels here: not amd64, or the emulator could not take them (see TestAVX512KernelsRun)")
	}
	defer func(n int) { chunkBytes = n }(chunkBytes)
	chunkBytes = 128
	checkBF16Kernels(t, func(out []float32, ldo int, a []uint16, lda int, b []uint16, ldb int, M, N, K int) {
		gemmBlocks(dpbfAVX512, out, ldo, a, lda, b, ldb, M, N, K)
	})
}

// dotBF16Ref is a dot product: on ordinary values it is within float32
// accumulation error of the exact (float64) sum of the bf16 products.
func TestDotBF16RefIsADot(t *testing.T) {
	// Each lane sums K/16 terms, then 4 levels of the tree: each add errs
	// by at most 2^-24 of the magnitude so far.
	checkIsADot(t, 7, dotBF16Ref, func(K int) float64 { return float64(K/16+6) * 0x1p-24 })
}

// checkIsADot checks that dot, on random ordinary bf16 rows (from seed) of
// lengths 1 to 3072, is within relTol(K) of the sum of the products'
// magnitudes from their exact (float64) sum.
func checkIsADot(t *testing.T, seed uint64, dot func(a, b []uint16) float32, relTol func(K int) float64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed+1))
	for _, K := range []int{1, 17, 32, 100, 768, 3072} {
		a, b := bf16Rows(r, K, false), bf16Rows(r, K, false)
		var exact, mag float64
		for k := range K {
			p := float64(bf16To32(a[k])) * float64(bf16To32(b[k]))
			exact += p
			mag += math.Abs(p)
		}
		got := float64(dot(a, b))
		if tol := relTol(K) * mag; math.Abs(got-exact) > tol {
			t.Errorf("K=%d: %g, exact %g (tolerance %g)", K, got, exact, tol)
		}
	}
}

// The unchecked path of the portable kernels (dpbf1x4Fast) computes what the
// checked one does wherever expRange.safe lets it run: rows whose products
// reach both ends of the safe range, and sums that cancel through zero.
func TestDPBF16FastPath(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	row := func(n int, elo, ehi uint32) []uint16 {
		v := make([]uint16, n)
		for i := range v {
			if r.IntN(10) == 0 {
				continue // zeros are safe
			}
			e := elo + uint32(r.IntN(int(ehi-elo+1)))
			v[i] = uint16(r.IntN(2))<<15 | uint16(e)<<7 | uint16(r.IntN(128))
		}
		return v
	}
	for range 2000 {
		K := 32 * (1 + r.IntN(4))
		var elo, ehi uint32
		if r.IntN(2) == 0 {
			elo, ehi = 76, 80 // products near 2^-102
		} else {
			elo, ehi = 184, 189 // products near 2^126
		}
		a := row(K, elo, ehi)
		var bs [4][]uint16
		for j := range bs {
			bs[j] = row(K, elo, ehi)
			if j == 1 { // b1 = -a: every partial sum cancels pairwise
				for k := range bs[j] {
					bs[j][k] = a[k] ^ 0x8000
				}
			}
		}
		aw := make([]float32, K)
		ar := widenBF16In(aw, a)
		var ws [4][]float32
		safe := true
		for j := range ws {
			ws[j] = make([]float32, K)
			safe = safe && ar.safe(widenBF16In(ws[j], bs[j]))
		}
		if !safe {
			continue
		}
		fast := dpbf1x4Fast(aw, ws[0], ws[1], ws[2], ws[3])
		checked := dpbf1x4Generic(aw, ws[0], ws[1], ws[2], ws[3])
		for j := range fast {
			if math.Float32bits(fast[j]) != math.Float32bits(checked[j]) {
				t.Fatalf("K=%d exponents %d..%d: column %d: fast %g, checked %g", K, elo, ehi, j, fast[j], checked[j])
			}
		}
	}
	// The bounds: 2^-51·2^-51 = 2^-102 is safe, 2^-52·2^-51 not; so is a row
	// holding an infinity.
	if !(expRange{76, 76}).safe(expRange{76, 76}) || (expRange{75, 75}).safe(expRange{76, 76}) || (expRange{100, 255}).safe(expRange{100, 100}) {
		t.Error("expRange.safe's bounds are off")
	}
}
