//go:build goexperiment.simd && amd64

package model

import "simd/archsimd"

// The vector exponentials of softmax, of the loss and of GELU, in
// GOEXPERIMENT=simd builds. Cephes' expf: x clamped to [-87.34, 88.72],
// n = round(x·log2 e), r = x - n·ln 2 in two steps, e^r by a degree-7
// polynomial, times 2^n built in the exponent bits. Within 1.3 ulp of e^x for
// x in [-87.3, 88] (measured), exactly 1 at x = 0, +Inf from x ≈ 88.4 (e^x
// itself overflows float32 at 88.72), and below 1.2e-38 (the smallest normal
// float32, not 0) for x < -87.34, which changes no sum. Softmax and the loss
// only take x <= 0. Rows are done a vector at a time with
// lane-wise sums reduced in a fixed order, then the tail with expf, so the
// result depends only on the row.

// Cephes' expf constants: clamp range, log2(e), ln 2 in two parts, polynomial.
const (
	expLo    = -87.33654
	expHi    = 88.72283
	expLog2e = 1.44269504088896341
	expC1    = 0.693359375
	expC2    = 2.12194440e-4
	expP0    = 1.9875691500e-4
	expP1    = 1.3981999507e-3
	expP2    = 8.3334519073e-3
	expP3    = 4.1665795894e-2
	expP4    = 1.6666665459e-1
	expP5    = 5.0000001201e-1
)

// expSubRow sets row[i] = e^(row[i] - m) and returns their sum.
func expSubRow(row []float32, m float32) (sum float32) {
	switch kernels {
	case kernelsAVX512:
		sum = expSubRowAVX512(row, m)
	case kernelsAVX2:
		sum = expSubRowAVX2(row, m)
	default:
		return expSubRowGeneric(row, m)
	}
	archsimd.ClearAVXUpperBits()
	return sum
}

// geluRow applies gelu_new to every element of x. The vector kernels use the
// identity 0.5·x·(1 + tanh(u)) = x / (1 + e^(-2u)), u = sqrt(2/π)·(x + 0.044715·x³).
func geluRow(x []float32) {
	switch kernels {
	case kernelsAVX512:
		geluRowAVX512(x)
	case kernelsAVX2:
		geluRowAVX2(x)
	default:
		geluRowGeneric(x)
		return
	}
	archsimd.ClearAVXUpperBits()
}

// sumExpSub returns Σ e^(row[i] - m).
func sumExpSub(row []float32, m float32) (sum float32) {
	switch kernels {
	case kernelsAVX512:
		sum = sumExpSubAVX512(row, m)
	case kernelsAVX2:
		sum = sumExpSubAVX2(row, m)
	default:
		return sumExpSubGeneric(row, m)
	}
	archsimd.ClearAVXUpperBits()
	return sum
}

// exp16Consts are exp16's constants, broadcast once per row.
type exp16Consts struct {
	lo, hi, log2e, c1, c2, p0, p1, p2, p3, p4, p5, one archsimd.Float32x16
	bias                                               archsimd.Int32x16
}

func newExp16Consts() exp16Consts {
	b := archsimd.BroadcastFloat32x16
	return exp16Consts{
		lo: b(expLo), hi: b(expHi), log2e: b(expLog2e), c1: b(-expC1), c2: b(expC2),
		p0: b(expP0), p1: b(expP1), p2: b(expP2), p3: b(expP3), p4: b(expP4), p5: b(expP5),
		one: b(1), bias: archsimd.BroadcastInt32x16(127),
	}
}

// exp16 is e^x on 16 lanes (see the comment at the top of the file).
func (k *exp16Consts) exp16(x archsimd.Float32x16) archsimd.Float32x16 {
	x = x.Max(k.lo).Min(k.hi)
	n := x.Mul(k.log2e).RoundToEvenScaled(0)
	r := n.MulAdd(k.c1, x)
	r = n.MulAdd(k.c2, r)
	p := k.p0.MulAdd(r, k.p1)
	p = p.MulAdd(r, k.p2)
	p = p.MulAdd(r, k.p3)
	p = p.MulAdd(r, k.p4)
	p = p.MulAdd(r, k.p5)
	p = p.MulAdd(r.Mul(r), r.Add(k.one))
	return p.Mul(n.ConvertToInt32().Add(k.bias).ShiftAllLeft(23).AsFloat32x16())
}

//go:noinline
func expSubRowAVX512(row []float32, m float32) float32 {
	k := newExp16Consts()
	mv := archsimd.BroadcastFloat32x16(m)
	var acc archsimd.Float32x16
	i := 0
	for ; i+16 <= len(row); i += 16 {
		e := k.exp16(archsimd.LoadFloat32x16Slice(row[i : i+16 : i+16]).Sub(mv))
		e.StoreSlice(row[i : i+16 : i+16])
		acc = acc.Add(e)
	}
	sum := hsum16(acc)
	for ; i < len(row); i++ {
		e := expf(row[i] - m)
		row[i] = e
		sum += e
	}
	return sum
}

//go:noinline
func sumExpSubAVX512(row []float32, m float32) float32 {
	k := newExp16Consts()
	mv := archsimd.BroadcastFloat32x16(m)
	var acc archsimd.Float32x16
	i := 0
	for ; i+16 <= len(row); i += 16 {
		acc = acc.Add(k.exp16(archsimd.LoadFloat32x16Slice(row[i : i+16 : i+16]).Sub(mv)))
	}
	sum := hsum16(acc)
	for ; i < len(row); i++ {
		sum += expf(row[i] - m)
	}
	return sum
}

// exp8Consts are exp8's constants, broadcast once per row.
type exp8Consts struct {
	lo, hi, log2e, c1, c2, p0, p1, p2, p3, p4, p5, one archsimd.Float32x8
	bias                                               archsimd.Int32x8
}

func newExp8Consts() exp8Consts {
	b := archsimd.BroadcastFloat32x8
	return exp8Consts{
		lo: b(expLo), hi: b(expHi), log2e: b(expLog2e), c1: b(-expC1), c2: b(expC2),
		p0: b(expP0), p1: b(expP1), p2: b(expP2), p3: b(expP3), p4: b(expP4), p5: b(expP5),
		one: b(1), bias: archsimd.BroadcastInt32x8(127),
	}
}

// exp8 is e^x on 8 lanes (see the comment at the top of the file).
func (k *exp8Consts) exp8(x archsimd.Float32x8) archsimd.Float32x8 {
	x = x.Max(k.lo).Min(k.hi)
	n := x.Mul(k.log2e).RoundToEven()
	r := n.MulAdd(k.c1, x)
	r = n.MulAdd(k.c2, r)
	p := k.p0.MulAdd(r, k.p1)
	p = p.MulAdd(r, k.p2)
	p = p.MulAdd(r, k.p3)
	p = p.MulAdd(r, k.p4)
	p = p.MulAdd(r, k.p5)
	p = p.MulAdd(r.Mul(r), r.Add(k.one))
	return p.Mul(n.ConvertToInt32().Add(k.bias).ShiftAllLeft(23).AsFloat32x8())
}

//go:noinline
func expSubRowAVX2(row []float32, m float32) float32 {
	k := newExp8Consts()
	mv := archsimd.BroadcastFloat32x8(m)
	var acc archsimd.Float32x8
	i := 0
	for ; i+8 <= len(row); i += 8 {
		e := k.exp8(archsimd.LoadFloat32x8Slice(row[i : i+8 : i+8]).Sub(mv))
		e.StoreSlice(row[i : i+8 : i+8])
		acc = acc.Add(e)
	}
	sum := hsum8(acc)
	for ; i < len(row); i++ {
		e := expf(row[i] - m)
		row[i] = e
		sum += e
	}
	return sum
}

//go:noinline
func sumExpSubAVX2(row []float32, m float32) float32 {
	k := newExp8Consts()
	mv := archsimd.BroadcastFloat32x8(m)
	var acc archsimd.Float32x8
	i := 0
	for ; i+8 <= len(row); i += 8 {
		acc = acc.Add(k.exp8(archsimd.LoadFloat32x8Slice(row[i : i+8 : i+8]).Sub(mv)))
	}
	sum := hsum8(acc)
	for ; i < len(row); i++ {
		sum += expf(row[i] - m)
	}
	return sum
}

//go:noinline
func geluRowAVX512(x []float32) {
	k := newExp16Consts()
	b := archsimd.BroadcastFloat32x16
	m2s, c := b(-2*0.7978845608028654), b(0.044715)
	i := 0
	for ; i+16 <= len(x); i += 16 {
		v := archsimd.LoadFloat32x16Slice(x[i : i+16 : i+16])
		u := v.Mul(v).Mul(v).MulAdd(c, v) // x + 0.044715·x³
		v.Div(k.exp16(u.Mul(m2s)).Add(k.one)).StoreSlice(x[i : i+16 : i+16])
	}
	for ; i < len(x); i++ {
		x[i] = gelu(x[i])
	}
}

//go:noinline
func geluRowAVX2(x []float32) {
	k := newExp8Consts()
	b := archsimd.BroadcastFloat32x8
	m2s, c := b(-2*0.7978845608028654), b(0.044715)
	i := 0
	for ; i+8 <= len(x); i += 8 {
		v := archsimd.LoadFloat32x8Slice(x[i : i+8 : i+8])
		u := v.Mul(v).Mul(v).MulAdd(c, v) // x + 0.044715·x³
		v.Div(k.exp8(u.Mul(m2s)).Add(k.one)).StoreSlice(x[i : i+8 : i+8])
	}
	for ; i < len(x); i++ {
		x[i] = gelu(x[i])
	}
}
