package model

// The portable dot-product kernels behind gemmNT: plain float32 scalar code,
// unrolled so that the compiler keeps the accumulators in registers and drops
// the bounds checks. Every output is one accumulator summed in increasing k.
// The products are wrapped in float32(...) because Go lets a compiler fuse
// x*y+z into an FMA (arm64 does, amd64 with GOAMD64=v3 does) and it would not do
// so alike in every kernel; an explicit conversion forbids the fusion.

// kernelSet names a set of kernels for the hot loops: gemmNT's dot products
// (dot2x4, dot1x4, dot1x1), the exponential rows (expSubRow, sumExpSub) and
// GELU (geluRow).
// ops_kernels_generic.go maps them to the portable code; GOEXPERIMENT=simd
// builds on amd64 pick the widest vector set the CPU has (ops_*_simd_amd64.go).
type kernelSet uint8

const (
	kernelsGeneric kernelSet = iota // portable float32 scalar code
	kernelsAVX2                     // 8 lanes (AVX2 and FMA)
	kernelsAVX512                   // 16 lanes
)

func (d kernelSet) String() string {
	return [...]string{"generic", "avx2", "avx512"}[d]
}

// dot2x4Generic returns the eight dot products of rows a0, a1 with rows b0..b3 (all of
// the same length), unrolled by 4 along k.
func dot2x4Generic(a0, a1, b0, b1, b2, b3 []float32) (c00, c01, c02, c03, c10, c11, c12, c13 float32) {
	K := len(a0)
	a1, b0, b1, b2, b3 = a1[:K], b0[:K], b1[:K], b2[:K], b3[:K]
	k := 0
	for ; k+4 <= K; k += 4 {
		x0 := a0[k : k+4 : k+4]
		x1 := a1[k : k+4 : k+4]
		w0 := b0[k : k+4 : k+4]
		w1 := b1[k : k+4 : k+4]
		w2 := b2[k : k+4 : k+4]
		w3 := b3[k : k+4 : k+4]
		c00 += float32(x0[0] * w0[0])
		c01 += float32(x0[0] * w1[0])
		c02 += float32(x0[0] * w2[0])
		c03 += float32(x0[0] * w3[0])
		c10 += float32(x1[0] * w0[0])
		c11 += float32(x1[0] * w1[0])
		c12 += float32(x1[0] * w2[0])
		c13 += float32(x1[0] * w3[0])
		c00 += float32(x0[1] * w0[1])
		c01 += float32(x0[1] * w1[1])
		c02 += float32(x0[1] * w2[1])
		c03 += float32(x0[1] * w3[1])
		c10 += float32(x1[1] * w0[1])
		c11 += float32(x1[1] * w1[1])
		c12 += float32(x1[1] * w2[1])
		c13 += float32(x1[1] * w3[1])
		c00 += float32(x0[2] * w0[2])
		c01 += float32(x0[2] * w1[2])
		c02 += float32(x0[2] * w2[2])
		c03 += float32(x0[2] * w3[2])
		c10 += float32(x1[2] * w0[2])
		c11 += float32(x1[2] * w1[2])
		c12 += float32(x1[2] * w2[2])
		c13 += float32(x1[2] * w3[2])
		c00 += float32(x0[3] * w0[3])
		c01 += float32(x0[3] * w1[3])
		c02 += float32(x0[3] * w2[3])
		c03 += float32(x0[3] * w3[3])
		c10 += float32(x1[3] * w0[3])
		c11 += float32(x1[3] * w1[3])
		c12 += float32(x1[3] * w2[3])
		c13 += float32(x1[3] * w3[3])
	}
	for ; k < K; k++ {
		x0, x1 := a0[k], a1[k]
		c00 += float32(x0 * b0[k])
		c01 += float32(x0 * b1[k])
		c02 += float32(x0 * b2[k])
		c03 += float32(x0 * b3[k])
		c10 += float32(x1 * b0[k])
		c11 += float32(x1 * b1[k])
		c12 += float32(x1 * b2[k])
		c13 += float32(x1 * b3[k])
	}
	return
}

// dot1x4Generic returns the dot products of row a with rows b0..b3.
func dot1x4Generic(a, b0, b1, b2, b3 []float32) (c0, c1, c2, c3 float32) {
	K := len(a)
	b0, b1, b2, b3 = b0[:K], b1[:K], b2[:K], b3[:K]
	for k, x := range a {
		c0 += float32(x * b0[k])
		c1 += float32(x * b1[k])
		c2 += float32(x * b2[k])
		c3 += float32(x * b3[k])
	}
	return
}

// dot1x1Generic returns the dot product of a and b.
func dot1x1Generic(a, b []float32) (c float32) {
	b = b[:len(a)]
	for k, x := range a {
		c += float32(x * b[k])
	}
	return
}
