package model

import "math"

// The row operations of the norms (GPT-2's LayerNorm, the Llama family's
// RMSNorm and Qwen3's per-head q/k norm), of the rotary embedding and of the
// matmul epilogue (bias, residual). Each is a kernel of the kernel table
// (rowKernels), in portable Go here and in generated assembly on amd64
// (ops_amd64.s, internal/asmgen/gen_rows.go) and arm64 (ops_arm64.s,
// internal/neongen/norms.go); every set computes the same operations in
// the same order, so the results are bit-identical whichever set runs.
//
// Float64 sums of a row (sumRow, sumSqDevRow) have one fixed order: 8
// float64 partial sums, lane l taking the elements i ≡ l (mod 8) of the
// first n - n%8 in increasing i (starting from +0); the lanes reduced in a
// fixed tree, y_j = l_j + l_(j+4) for j < 4, then (y0 + y2) + (y1 + y3); then
// the n%8 elements left over added one by one in increasing i. (AVX2 holds
// the 8 lanes in two YMM registers of 4, AVX-512 in one ZMM.) Compared with
// one running sum, the error bound is the same kind (n·2⁻⁵³·Σ|terms| at
// worst) and in practice smaller (eight shorter chains).
//
// Element-wise float32 operations are rounded one by one, in the order each
// doc comment gives, and never fused into FMAs: the portable code converts
// explicitly (float32(...)) where Go could otherwise fuse a product into a
// sum on some architectures.

// rowKernels are one kernel set's row operations (see above). The slices
// are as long as x (or x1) wherever the callers below pass them; the bias
// kernels' rows are checked by checkRows.
type rowKernels struct {
	sumRow        func(x []float32) float64                // Σ float64(x[i])
	sumSqDevRow   func(x []float32, m float64) float64     // Σ (float64(x[i]) - m)²
	scaleMulRow   func(o, x, w []float32, s float32)       // o[i] = (x[i]·s)·w[i]
	normAffineRow func(o, x, w, b []float32, m, s float32) // o[i] = ((x[i]-m)·s)·w[i] + b[i]
	rotateRow     func(x1, x2, c, s []float32)             // rotate-half rotary embedding
	addBiasRows   biasRowsKernel                           // o[r*ldo+j] = v[r*ldv+j] + b[j]
	accBiasRows   biasRowsKernel                           // o[r*ldo+j] += v[r*ldv+j] + b[j]
}

// biasRowsKernel is the signature of the epilogue kernels: rows rows of n
// elements of o (row stride ldo) and of v (ldv), with bias b (n).
type biasRowsKernel = func(o []float32, ldo int, v []float32, ldv int, b []float32, rows, n int)

// genericRowKernels are the portable row kernels.
var genericRowKernels = rowKernels{
	sumRowGeneric, sumSqDevRowGeneric, scaleMulRowGeneric, normAffineRowGeneric, rotateRowGeneric,
	addBiasRowsGeneric, accBiasRowsGeneric,
}

// rmsnormRow sets o = x·rstd·w with rstd = 1/sqrt(mean(x²) + eps); o may be
// x. The mean square is taken in float64 (sumSqDevRow with m = 0: the squares
// are exact in float64, only their sum rounds), rstd is rounded to float32,
// and each output is (x[i]·rstd)·w[i] in float32 (transformers' LlamaRMSNorm
// computes in float32).
func rmsnormRow(o, x, w []float32, eps float64) {
	n := len(x)
	o, w = o[:n], w[:n]
	ss := kern.sumSqDevRow(x, 0)
	rstd := float32(1 / math.Sqrt(ss/float64(n)+eps))
	kern.scaleMulRow(o, x, w, rstd)
}

// layernormRow sets o = (x - mean)·rstd·w + b with the mean and the (biased)
// variance of x taken in float64 (sumRow, then sumSqDevRow about the mean),
// rstd = 1/sqrt(var + eps) and the mean rounded to float32, and each output
// ((x[i] - mean)·rstd)·w[i] + b[i] in float32, each operation rounded; o may
// be x.
func layernormRow(o, x, w, b []float32, eps float64) {
	n := len(x)
	o, w, b = o[:n], w[:n], b[:n]
	mean := kern.sumRow(x) / float64(n)
	ss := kern.sumSqDevRow(x, mean)
	rstd := float32(1 / math.Sqrt(ss/float64(n)+eps))
	kern.normAffineRow(o, x, w, b, float32(mean), rstd)
}

// rotateHalves rotates the pairs (x1[i], x2[i]) by the angles whose cosines
// and sines are c[i], s[i]: x1[i], x2[i] = x1·c - x2·s, x2·c + x1·s, each
// product rounded to float32 before the sum (as transformers computes
// q·cos + rotate_half(q)·sin in float32).
func rotateHalves(x1, x2, c, s []float32) {
	n := len(x1)
	kern.rotateRow(x1, x2[:n], c[:n], s[:n])
}

// addBias sets o[r*ldo+j] = v[r*ldv+j] + b[j] for r < rows, j < n: the
// epilogue of a matmul tile (v) with a bias.
func addBias(o []float32, ldo int, v []float32, ldv int, b []float32, rows, n int) {
	if rows > 0 && n > 0 {
		checkRows(o, ldo, v, ldv, b, rows, n)
		kern.addBiasRows(o, ldo, v, ldv, b, rows, n)
	}
}

// accBias sets o[r*ldo+j] += v[r*ldv+j] + b[j] for r < rows, j < n, the
// sum with the bias first, then added to o: the epilogue of a matmul tile
// with a bias and the residual add.
func accBias(o []float32, ldo int, v []float32, ldv int, b []float32, rows, n int) {
	if rows > 0 && n > 0 {
		checkRows(o, ldo, v, ldv, b, rows, n)
		kern.accBiasRows(o, ldo, v, ldv, b, rows, n)
	}
}

// checkRows panics unless o and v hold rows rows of n elements at their
// strides and b n elements (the kernels check no bounds).
func checkRows(o []float32, ldo int, v []float32, ldv int, b []float32, rows, n int) {
	_, _, _ = o[(rows-1)*ldo+n-1], v[(rows-1)*ldv+n-1], b[n-1]
}

// reduce8 adds eight float64 lanes in the fixed tree of the sums.
func reduce8(l *[8]float64) float64 {
	y0, y1, y2, y3 := l[0]+l[4], l[1]+l[5], l[2]+l[6], l[3]+l[7]
	return (y0 + y2) + (y1 + y3)
}

// sumRowGeneric returns Σ float64(x[i]) in the order of the sums (above).
func sumRowGeneric(x []float32) float64 {
	var l [8]float64
	n := len(x) &^ 7
	for i := 0; i < n; i += 8 {
		for j, v := range x[i : i+8 : i+8] {
			l[j] += float64(v)
		}
	}
	return sumTail(reduce8(&l), x[n:])
}

// sumTail returns s + Σ float64(x[i]), added in increasing i.
func sumTail(s float64, x []float32) float64 {
	for _, v := range x {
		s += float64(v)
	}
	return s
}

// sumSqDevRowGeneric returns Σ d·d with d = float64(x[i]) - m, the
// difference and the square each rounded to float64 before the add, in the
// order of the sums (above).
func sumSqDevRowGeneric(x []float32, m float64) float64 {
	var l [8]float64
	n := len(x) &^ 7
	for i := 0; i < n; i += 8 {
		for j, v := range x[i : i+8 : i+8] {
			d := float64(v) - m
			l[j] += float64(d * d)
		}
	}
	return sumSqDevTail(reduce8(&l), x[n:], m)
}

// sumSqDevTail returns s + Σ (float64(x[i]) - m)², added in increasing i.
func sumSqDevTail(s float64, x []float32, m float64) float64 {
	for _, v := range x {
		d := float64(v) - m
		s += float64(d * d)
	}
	return s
}

// scaleMulRowGeneric sets o[i] = (x[i]·s)·w[i].
func scaleMulRowGeneric(o, x, w []float32, s float32) {
	o, w = o[:len(x)], w[:len(x)]
	for i, v := range x {
		o[i] = v * s * w[i]
	}
}

// normAffineRowGeneric sets o[i] = ((x[i] - m)·s)·w[i] + b[i].
func normAffineRowGeneric(o, x, w, b []float32, m, s float32) {
	o, w, b = o[:len(x)], w[:len(x)], b[:len(x)]
	for i, v := range x {
		o[i] = float32((v-m)*s*w[i]) + b[i]
	}
}

// rotateRowGeneric sets x1[i], x2[i] = x1·c - x2·s, x2·c + x1·s (x2, c, s
// as long as x1), products rounded first.
func rotateRowGeneric(x1, x2, c, s []float32) {
	x2, c, s = x2[:len(x1)], c[:len(x1)], s[:len(x1)]
	for i, a := range x1 {
		b := x2[i]
		x1[i] = float32(a*c[i]) - float32(b*s[i])
		x2[i] = float32(b*c[i]) + float32(a*s[i])
	}
}

// addBiasRowsGeneric sets o[r*ldo+j] = v[r*ldv+j] + b[j].
func addBiasRowsGeneric(o []float32, ldo int, v []float32, ldv int, b []float32, rows, n int) {
	b = b[:n]
	for r := range rows {
		o, v := o[r*ldo:][:n], v[r*ldv:][:n]
		for j, x := range v {
			o[j] = x + b[j]
		}
	}
}

// accBiasRowsGeneric sets o[r*ldo+j] += v[r*ldv+j] + b[j].
func accBiasRowsGeneric(o []float32, ldo int, v []float32, ldv int, b []float32, rows, n int) {
	b = b[:n]
	for r := range rows {
		o, v := o[r*ldo:][:n], v[r*ldv:][:n]
		for j, x := range v {
			o[j] += x + b[j]
		}
	}
}
