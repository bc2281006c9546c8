//go:build goexperiment.simd && amd64

package model

import "simd/archsimd"

// With GOEXPERIMENT=simd (Go 1.26's experimental simd/archsimd package),
// gemmNT's dot products run 16 lanes at a time on CPUs with AVX-512, 8 on CPUs
// with AVX2 and FMA: lane l of an accumulator sums a[k]·b[k] for k ≡ l (mod
// lanes) in increasing k with fused multiply-adds, the lanes are reduced in a
// fixed tree, then the K%lanes tail is added in increasing k (unfused). The
// three kernels of a set do exactly this, so an output does not depend on which
// one computed it. On other CPUs the portable kernels run. (FMA rather than a
// multiply and an add: besides being more accurate, it keeps the 2x4 kernel's
// eight accumulators in registers; with separate products the compiler spills
// two of them and the kernel runs at half speed.)
//
// The vector kernels are called through wrappers that clear the upper halves of
// the vector registers after each call (VZEROUPPER): left dirty, they make every
// later scalar SSE instruction (the stores, exp, LayerNorm) several times slower.
// The clear must sit outside the kernel, hence go:noinline: inside, the compiler
// may schedule vector moves after it.

// kernels is the kernel set in use: the widest this CPU has.
var kernels = func() kernelSet {
	switch {
	case archsimd.X86.AVX512():
		return kernelsAVX512
	case archsimd.X86.AVX2() && archsimd.X86.FMA():
		return kernelsAVX2
	}
	return kernelsGeneric
}()

// kernelSets lists the kernel sets this CPU can run, for tests.
func kernelSets() []kernelSet {
	return []kernelSet{kernelsGeneric, kernelsAVX2, kernelsAVX512}[:kernels+1]
}

func dot2x4(a0, a1, b0, b1, b2, b3 []float32) (c00, c01, c02, c03, c10, c11, c12, c13 float32) {
	switch kernels {
	case kernelsAVX512:
		c00, c01, c02, c03, c10, c11, c12, c13 = dot2x4AVX512(a0, a1, b0, b1, b2, b3)
	case kernelsAVX2:
		c00, c01, c02, c03, c10, c11, c12, c13 = dot2x4AVX2(a0, a1, b0, b1, b2, b3)
	default:
		return dot2x4Generic(a0, a1, b0, b1, b2, b3)
	}
	archsimd.ClearAVXUpperBits()
	return
}

func dot1x4(a, b0, b1, b2, b3 []float32) (c0, c1, c2, c3 float32) {
	switch kernels {
	case kernelsAVX512:
		c0, c1, c2, c3 = dot1x4AVX512(a, b0, b1, b2, b3)
	case kernelsAVX2:
		c0, c1, c2, c3 = dot1x4AVX2(a, b0, b1, b2, b3)
	default:
		return dot1x4Generic(a, b0, b1, b2, b3)
	}
	archsimd.ClearAVXUpperBits()
	return
}

func dot1x1(a, b []float32) (c float32) {
	switch kernels {
	case kernelsAVX512:
		c = dot1x1AVX512(a, b)
	case kernelsAVX2:
		c = dot1x1AVX2(a, b)
	default:
		return dot1x1Generic(a, b)
	}
	archsimd.ClearAVXUpperBits()
	return
}

// hsum4 reduces the 4 lanes of v in a fixed order.
func hsum4(v archsimd.Float32x4) float32 {
	v = v.AddPairs(v)
	return v.GetElem(0) + v.GetElem(1)
}

// hsum16 reduces the 16 lanes of v in a fixed order.
func hsum16(v archsimd.Float32x16) float32 {
	x8 := v.GetLo().Add(v.GetHi())
	return hsum4(x8.GetLo().Add(x8.GetHi()))
}

func load16(s []float32, k int) archsimd.Float32x16 {
	return archsimd.LoadFloat32x16Slice(s[k : k+16 : k+16])
}

//go:noinline
func dot2x4AVX512(a0, a1, b0, b1, b2, b3 []float32) (c00, c01, c02, c03, c10, c11, c12, c13 float32) {
	K := len(a0)
	a1, b0, b1, b2, b3 = a1[:K], b0[:K], b1[:K], b2[:K], b3[:K]
	var s00, s01, s02, s03, s10, s11, s12, s13 archsimd.Float32x16
	k := 0
	for ; k+16 <= K; k += 16 {
		x0, x1 := load16(a0, k), load16(a1, k)
		w := load16(b0, k)
		s00 = x0.MulAdd(w, s00)
		s10 = x1.MulAdd(w, s10)
		w = load16(b1, k)
		s01 = x0.MulAdd(w, s01)
		s11 = x1.MulAdd(w, s11)
		w = load16(b2, k)
		s02 = x0.MulAdd(w, s02)
		s12 = x1.MulAdd(w, s12)
		w = load16(b3, k)
		s03 = x0.MulAdd(w, s03)
		s13 = x1.MulAdd(w, s13)
	}
	c00, c01, c02, c03 = hsum16(s00), hsum16(s01), hsum16(s02), hsum16(s03)
	c10, c11, c12, c13 = hsum16(s10), hsum16(s11), hsum16(s12), hsum16(s13)
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

//go:noinline
func dot1x4AVX512(a, b0, b1, b2, b3 []float32) (c0, c1, c2, c3 float32) {
	K := len(a)
	b0, b1, b2, b3 = b0[:K], b1[:K], b2[:K], b3[:K]
	var s0, s1, s2, s3 archsimd.Float32x16
	k := 0
	for ; k+16 <= K; k += 16 {
		x := load16(a, k)
		s0 = x.MulAdd(load16(b0, k), s0)
		s1 = x.MulAdd(load16(b1, k), s1)
		s2 = x.MulAdd(load16(b2, k), s2)
		s3 = x.MulAdd(load16(b3, k), s3)
	}
	c0, c1, c2, c3 = hsum16(s0), hsum16(s1), hsum16(s2), hsum16(s3)
	for ; k < K; k++ {
		x := a[k]
		c0 += float32(x * b0[k])
		c1 += float32(x * b1[k])
		c2 += float32(x * b2[k])
		c3 += float32(x * b3[k])
	}
	return
}

//go:noinline
func dot1x1AVX512(a, b []float32) float32 {
	K := len(a)
	b = b[:K]
	var s archsimd.Float32x16
	k := 0
	for ; k+16 <= K; k += 16 {
		s = load16(a, k).MulAdd(load16(b, k), s)
	}
	c := hsum16(s)
	for ; k < K; k++ {
		c += float32(a[k] * b[k])
	}
	return c
}

// hsum8 reduces the 8 lanes of v in a fixed order.
func hsum8(v archsimd.Float32x8) float32 {
	return hsum4(v.GetLo().Add(v.GetHi()))
}

func load8(s []float32, k int) archsimd.Float32x8 {
	return archsimd.LoadFloat32x8Slice(s[k : k+8 : k+8])
}

//go:noinline
func dot2x4AVX2(a0, a1, b0, b1, b2, b3 []float32) (c00, c01, c02, c03, c10, c11, c12, c13 float32) {
	K := len(a0)
	a1, b0, b1, b2, b3 = a1[:K], b0[:K], b1[:K], b2[:K], b3[:K]
	var s00, s01, s02, s03, s10, s11, s12, s13 archsimd.Float32x8
	k := 0
	for ; k+8 <= K; k += 8 {
		x0, x1 := load8(a0, k), load8(a1, k)
		w := load8(b0, k)
		s00 = x0.MulAdd(w, s00)
		s10 = x1.MulAdd(w, s10)
		w = load8(b1, k)
		s01 = x0.MulAdd(w, s01)
		s11 = x1.MulAdd(w, s11)
		w = load8(b2, k)
		s02 = x0.MulAdd(w, s02)
		s12 = x1.MulAdd(w, s12)
		w = load8(b3, k)
		s03 = x0.MulAdd(w, s03)
		s13 = x1.MulAdd(w, s13)
	}
	c00, c01, c02, c03 = hsum8(s00), hsum8(s01), hsum8(s02), hsum8(s03)
	c10, c11, c12, c13 = hsum8(s10), hsum8(s11), hsum8(s12), hsum8(s13)
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

//go:noinline
func dot1x4AVX2(a, b0, b1, b2, b3 []float32) (c0, c1, c2, c3 float32) {
	K := len(a)
	b0, b1, b2, b3 = b0[:K], b1[:K], b2[:K], b3[:K]
	var s0, s1, s2, s3 archsimd.Float32x8
	k := 0
	for ; k+8 <= K; k += 8 {
		x := load8(a, k)
		s0 = x.MulAdd(load8(b0, k), s0)
		s1 = x.MulAdd(load8(b1, k), s1)
		s2 = x.MulAdd(load8(b2, k), s2)
		s3 = x.MulAdd(load8(b3, k), s3)
	}
	c0, c1, c2, c3 = hsum8(s0), hsum8(s1), hsum8(s2), hsum8(s3)
	for ; k < K; k++ {
		x := a[k]
		c0 += float32(x * b0[k])
		c1 += float32(x * b1[k])
		c2 += float32(x * b2[k])
		c3 += float32(x * b3[k])
	}
	return
}

//go:noinline
func dot1x1AVX2(a, b []float32) float32 {
	K := len(a)
	b = b[:K]
	var s archsimd.Float32x8
	k := 0
	for ; k+8 <= K; k += 8 {
		s = load8(a, k).MulAdd(load8(b, k), s)
	}
	c := hsum8(s)
	for ; k < K; k++ {
		c += float32(a[k] * b[k])
	}
	return c
}
