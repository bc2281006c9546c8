package model

// The matrix kernels of the CPU forward. Everything is in "NT" form: both
// operands are row-major with the reduction axis contiguous, out = a · bᵀ, so the
// inner loops walk two or more rows side by side. The CPU keeps its weights
// transposed to (out, in) for that reason (see NewCPU).
//
// Every output element is a single float32 accumulator summed over k in
// increasing order, whatever kernel (2x4, 1x4, 1x1) computes it. The result of an
// element therefore never depends on how the work was tiled or split between
// goroutines: the forward is bit-identical for any thread count and batch shape.

const (
	mmRows = 64 // rows of inp per matmul task
	mmCols = 64 // output channels per matmul task
)

// gemmNT computes out[i*ldo+j] = Σ_k a[i*lda+k]·b[j*ldb+k] for i < M, j < N:
// a is (M, K) with row stride lda, b is (N, K) with row stride ldb, out is (M, N)
// with row stride ldo. Single-threaded; callers tile and parallelize.
func gemmNT(out []float32, ldo int, a []float32, lda int, b []float32, ldb int, M, N, K int) {
	if M <= 0 || N <= 0 {
		return
	}
	j := 0
	for ; j+4 <= N; j += 4 {
		b0 := b[j*ldb:][:K]
		b1 := b[(j+1)*ldb:][:K]
		b2 := b[(j+2)*ldb:][:K]
		b3 := b[(j+3)*ldb:][:K]
		i := 0
		for ; i+2 <= M; i += 2 {
			c00, c01, c02, c03, c10, c11, c12, c13 := dot2x4(a[i*lda:][:K], a[(i+1)*lda:][:K], b0, b1, b2, b3)
			o := out[i*ldo+j:][:4]
			o[0], o[1], o[2], o[3] = c00, c01, c02, c03
			o = out[(i+1)*ldo+j:][:4]
			o[0], o[1], o[2], o[3] = c10, c11, c12, c13
		}
		if i < M {
			c0, c1, c2, c3 := dot1x4(a[i*lda:][:K], b0, b1, b2, b3)
			o := out[i*ldo+j:][:4]
			o[0], o[1], o[2], o[3] = c0, c1, c2, c3
		}
	}
	for ; j < N; j++ {
		bj := b[j*ldb:][:K]
		for i := range M {
			out[i*ldo+j] = dot1x1(a[i*lda:][:K], bj)
		}
	}
}

// dot2x4 returns the eight dot products of rows a0, a1 with rows b0..b3 (all of
// the same length), unrolled by 4 along k.
func dot2x4(a0, a1, b0, b1, b2, b3 []float32) (c00, c01, c02, c03, c10, c11, c12, c13 float32) {
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
		c00 += x0[0] * w0[0]
		c01 += x0[0] * w1[0]
		c02 += x0[0] * w2[0]
		c03 += x0[0] * w3[0]
		c10 += x1[0] * w0[0]
		c11 += x1[0] * w1[0]
		c12 += x1[0] * w2[0]
		c13 += x1[0] * w3[0]
		c00 += x0[1] * w0[1]
		c01 += x0[1] * w1[1]
		c02 += x0[1] * w2[1]
		c03 += x0[1] * w3[1]
		c10 += x1[1] * w0[1]
		c11 += x1[1] * w1[1]
		c12 += x1[1] * w2[1]
		c13 += x1[1] * w3[1]
		c00 += x0[2] * w0[2]
		c01 += x0[2] * w1[2]
		c02 += x0[2] * w2[2]
		c03 += x0[2] * w3[2]
		c10 += x1[2] * w0[2]
		c11 += x1[2] * w1[2]
		c12 += x1[2] * w2[2]
		c13 += x1[2] * w3[2]
		c00 += x0[3] * w0[3]
		c01 += x0[3] * w1[3]
		c02 += x0[3] * w2[3]
		c03 += x0[3] * w3[3]
		c10 += x1[3] * w0[3]
		c11 += x1[3] * w1[3]
		c12 += x1[3] * w2[3]
		c13 += x1[3] * w3[3]
	}
	for ; k < K; k++ {
		x0, x1 := a0[k], a1[k]
		c00 += x0 * b0[k]
		c01 += x0 * b1[k]
		c02 += x0 * b2[k]
		c03 += x0 * b3[k]
		c10 += x1 * b0[k]
		c11 += x1 * b1[k]
		c12 += x1 * b2[k]
		c13 += x1 * b3[k]
	}
	return
}

// dot1x4 returns the dot products of row a with rows b0..b3.
func dot1x4(a, b0, b1, b2, b3 []float32) (c0, c1, c2, c3 float32) {
	K := len(a)
	b0, b1, b2, b3 = b0[:K], b1[:K], b2[:K], b3[:K]
	for k, x := range a {
		c0 += x * b0[k]
		c1 += x * b1[k]
		c2 += x * b2[k]
		c3 += x * b3[k]
	}
	return
}

// dot1x1 returns the dot product of a and b.
func dot1x1(a, b []float32) (c float32) {
	b = b[:len(a)]
	for k, x := range a {
		c += x * b[k]
	}
	return
}

// matmulForward computes out = inp · wᵀ + bias, or out += inp · wᵀ + bias when
// residual is set (the residual add of a block, as Hugging Face's
// `hidden = residual + attn_output`).
// inp is (N, C), w is (OC, C) (rows are output channels), bias is (OC), out is (N, OC).
// Work is split into (mmRows x mmCols) tiles over the CPU's workers; tile holds
// mmRows*mmCols floats of scratch per worker.
func (c *CPU) matmulForward(out, inp, w, bias []float32, N, C, OC int, residual bool, tile []float32) {
	rowTiles := (N + mmRows - 1) / mmRows
	colTiles := (OC + mmCols - 1) / mmCols
	c.parallelFor(rowTiles*colTiles, func(worker, task int) {
		r0 := (task / colTiles) * mmRows
		c0 := (task % colTiles) * mmCols
		rn := min(mmRows, N-r0)
		cn := min(mmCols, OC-c0)
		scratch := tile[worker*mmRows*mmCols:][:mmRows*mmCols]
		gemmNT(scratch, mmCols, inp[r0*C:], C, w[c0*C:], C, rn, cn, C)
		b := bias[c0:][:cn]
		for i := range rn {
			s := scratch[i*mmCols:][:cn]
			o := out[(r0+i)*OC+c0:][:cn]
			if residual {
				for j, v := range s {
					o[j] += v + b[j]
				}
			} else {
				for j, v := range s {
					o[j] = v + b[j]
				}
			}
		}
	})
}
