package model

import (
	"sync"
	"unsafe"
)

// The matrix kernels of the CPU forward. Everything is in "NT" form: both
// operands are row-major with the reduction axis contiguous, out = a · bᵀ, so the
// inner loops walk two or more rows side by side. The CPU keeps its weights
// transposed to (out, in) for that reason (see NewCPU).
//
// Every output element is computed by the same sequence of float32 operations,
// whichever kernel (dot2x4, dot1x4, dot1x1) computes it: one accumulator summed
// in increasing k in the portable kernels (ops_dot.go), or 16 (8) lanes summed
// in increasing k, reduced in a fixed order, then the tail, in the AVX-512
// (AVX2) assembly ones on amd64 (ops_kernels_amd64.go, ops_amd64.s). The result
// of an element therefore never depends on how the work was tiled or split
// between goroutines: the forward is bit-identical for any thread count, and a
// row's result does not depend on the other rows of the batch.
//
// Where the kernel set has outer-product kernels (AVX-512, AVX2, NEON) the f32
// mode keeps its weight matrices in panels instead (ops_panel.go), and an
// element of a product with one is a single chain of fused multiply-adds in
// increasing k, from zero, whichever set and register tile (AVX-512: 14, 8,
// 4, 2 or 1 rows; AVX2 and NEON: 6, 4, 2 or 1) computes it: a
// chain split along k (at multiples of panelKc) goes on from the partial sum
// stored exactly in between, so neither the tiling nor the chunking nor the
// thread count changes a bit. Products of activations with activations
// (attention) keep the forms above.

// blockKernel is the signature of the generated dot-product blocks:
// out[i*ldo+j] = a_i · b_j for the block's rows a_i (stride lda elements of
// A) and b_j (stride ldb elements of B), all k long. An element type is
// float32, or uint16 holding F16 or BF16 bits that the kernel widens (or, in
// the bf16 mode, multiplies as bf16).
type blockKernel[A, B float32 | uint16] func(a *A, lda int, b *B, ldb int, k int, out *float32, ldo int)

// blockKernels are one kernel set's blocks for one pair of element types: R
// x 4 (the main block), 1 x 4 and 1 x 1, and where the set has them the 4 x 4
// block's kernels for a product split along k (chunk; zero: none).
type blockKernels[A, B float32 | uint16] struct {
	R                int
	block, row4, one blockKernel[A, B]
	chunk            chunkKernels[A, B]
}

// nnTiles are a vector set's gemmNN kernels (b row-major over k): blocks of
// 4 rows and of 1 row by wide columns, then by narrow ones, then col for
// each column left over, every element one FMA chain in increasing k.
type nnTiles struct {
	wide, narrow int // columns of the blocks
	w4, w1       blockKernel[float32, float32]
	n4, n1       blockKernel[float32, float32]
	col          func(a *float32, b *float32, ldb int, k int, out *float32)
}

// gemmNNTiles is gemmNN with t's kernels: rows in blocks of 4 (then single
// rows) of each column block, wide blocks, then narrow ones, then single
// columns.
func gemmNNTiles(t *nnTiles, out []float32, ldo int, a []float32, lda int, b []float32, ldb int, M, N, K int) {
	if emptyProduct(out, ldo, M, N, K) {
		return
	}
	// The kernels do not check bounds: the last element each side can touch is
	// checked here.
	_ = a[(M-1)*lda+K-1]
	_ = b[(K-1)*ldb+N-1]
	_ = out[(M-1)*ldo+N-1]
	blocks := func(j int, r4, r1 blockKernel[float32, float32]) {
		i := 0
		for ; i+4 <= M; i += 4 {
			r4(&a[i*lda], lda, &b[j], ldb, K, &out[i*ldo+j], ldo)
		}
		for ; i < M; i++ {
			r1(&a[i*lda], lda, &b[j], ldb, K, &out[i*ldo+j], ldo)
		}
	}
	j := 0
	for ; j+t.wide <= N; j += t.wide {
		blocks(j, t.w4, t.w1)
	}
	for ; j+t.narrow <= N; j += t.narrow {
		blocks(j, t.n4, t.n1)
	}
	for ; j < N; j++ {
		for i := range M {
			t.col(&a[i*lda], &b[j], ldb, K, &out[i*ldo+j])
		}
	}
}

// chunkKernel is the signature of the 4x4 block's kernels for one chunk of a
// product split along k: they start from zero (start) or from the lane sums
// in acc (mid, end: 16 floats per output, output (i, j) at 16*(4i+j)), add
// the chunk's k elements, and leave the lane sums in acc (start, mid; k a
// multiple of the lanes) or reduce them and add the tail as the whole block
// does into out (end), so that the chunks compute together what the whole
// 4x4 kernel computes, bit for bit.
type chunkKernel[A, B float32 | uint16] func(a *A, lda int, b *B, ldb int, k int, acc *float32, out *float32, ldo int)

// chunkKernels are one kernel set's chunk kernels, in the order of the
// chunks.
type chunkKernels[A, B float32 | uint16] struct{ start, mid, end chunkKernel[A, B] }

// chunkBytes is the longest chunk of a row of a that gemmBlocks takes at
// once where ks has chunk kernels (1024 float32, 2048 bf16): a 4x4 block's
// rows of b stay in L1 while the rows of a pass through it. Longer products
// are split into equal chunks (multiples of 32 elements, the last one
// shorter). Tests shorten it.
var chunkBytes = 4096

// chunkRows is how many rows of a gemmBlocks takes through one chunk of k
// before the next: their lane sums (16 floats per output) stay in L1.
const chunkRows = 64

// chunkAcc holds the lane sums of chunkRows/4 blocks between chunks, one
// per call in flight (16 KiB: a kernel called through a func value makes a
// local array escape anyway).
var chunkAcc = sync.Pool{New: func() any { return new([chunkRows / 4][256]float32) }}

// gemmBlocks is out = a · bᵀ (M, N > 0) with the blocks of ks: R x 4 blocks,
// then the rows left over 1 x 4, then the columns left over one element at a
// time. Each element is computed alike by every block shape, so the tiling
// does not change the result. Where ks has chunk kernels and a row of a is
// longer than chunkBytes, the 4x4 blocks run chunk by chunk along k
// (gemmChunked): the same result, in an order of memory reads that keeps
// long rows in cache (a 64x64 tile at K = 3072 or 4864, f32 or bf16: 1.2x to
// 1.55x faster on Zen 5, BenchmarkGemmTile).
func gemmBlocks[A, B float32 | uint16](ks blockKernels[A, B], out []float32, ldo int, a []A, lda int, b []B, ldb int, M, N, K int) {
	if emptyProduct(out, ldo, M, N, K) {
		return
	}
	// The kernels do not check bounds: the last element each side can touch
	// is checked here (loads past K, if any, are masked).
	_ = a[(M-1)*lda+K-1]
	_ = b[(N-1)*ldb+K-1]
	_ = out[(M-1)*ldo+N-1]
	R := ks.R
	j := 0
	if size := int(unsafe.Sizeof(a[0])); ks.chunk.start != nil && R == 4 && M >= 4 && K*size > chunkBytes {
		gemmChunked(ks, out, ldo, a, lda, b, ldb, M, N&^3, K, chunkBytes/size)
		j = N &^ 3
	}
	for ; j+4 <= N; j += 4 {
		i := 0
		for ; i+R <= M; i += R {
			ks.block(&a[i*lda], lda, &b[j*ldb], ldb, K, &out[i*ldo+j], ldo)
		}
		for ; i < M; i++ {
			ks.row4(&a[i*lda], lda, &b[j*ldb], ldb, K, &out[i*ldo+j], ldo)
		}
	}
	for ; j < N; j++ {
		for i := range M {
			ks.one(&a[i*lda], lda, &b[j*ldb], ldb, K, &out[i*ldo+j], ldo)
		}
	}
}

// emptyProduct handles a product (M, N) over K that has nothing to sum:
// none at all where M or N is not positive, zeros in out where K is not, and
// reports whether it did (the kernels need M, N and K positive).
func emptyProduct(out []float32, ldo, M, N, K int) bool {
	if M <= 0 || N <= 0 {
		return true
	}
	if K <= 0 {
		for i := range M {
			clear(out[i*ldo:][:N])
		}
		return true
	}
	return false
}

// gemmChunked is gemmBlocks' first N4 columns (a multiple of 4) with the
// 4x4 blocks split along k into equal chunks of at most kmax elements
// (rounded up to 32): for each 4 columns and each chunkRows rows, every
// chunk is taken for all their blocks before the next, the lane sums kept
// in between; the rows left over take the 1 x 4 block on all of k.
func gemmChunked[A, B float32 | uint16](ks blockKernels[A, B], out []float32, ldo int, a []A, lda int, b []B, ldb int, M, N4, K, kmax int) {
	chunks := (K + kmax - 1) / kmax
	kc := ((K+chunks-1)/chunks + 31) &^ 31
	acc := chunkAcc.Get().(*[chunkRows / 4][256]float32)
	defer chunkAcc.Put(acc)
	M4 := M &^ 3
	cs := ks.chunk
	for j := 0; j < N4; j += 4 {
		for i0 := 0; i0 < M4; i0 += chunkRows {
			i1 := min(M4, i0+chunkRows)
			for k0 := 0; k0 < K; k0 += kc {
				kern, kn := cs.mid, kc
				switch {
				case k0+kc >= K:
					kern, kn = cs.end, K-k0
				case k0 == 0:
					kern = cs.start
				}
				for i := i0; i < i1; i += 4 {
					kern(&a[i*lda+k0], lda, &b[j*ldb+k0], ldb, kn, &acc[(i-i0)/4][0], &out[i*ldo+j], ldo)
				}
			}
		}
		for i := M4; i < M; i++ {
			ks.row4(&a[i*lda], lda, &b[j*ldb], ldb, K, &out[i*ldo+j], ldo)
		}
	}
}

const (
	mmRows = 64 // rows of inp per matmul task
	mmCols = 64 // output channels per matmul task
	// mmScratch is the matmul scratch per worker: two tiles, for the two
	// products of swigluMLPForward.
	mmScratch = 2 * mmRows * mmCols
)

// gemmNT computes out[i*ldo+j] = Σ_k a[i*lda+k]·b[j*ldb+k] for i < M, j < N:
// a is (M, K) with row stride lda, b is (N, K) with row stride ldb, out is (M, N)
// with row stride ldo. Single-threaded; callers tile and parallelize.
func gemmNT(out []float32, ldo int, a []float32, lda int, b []float32, ldb int, M, N, K int) {
	if M <= 0 || N <= 0 {
		return
	}
	kern.gemmNT(out, ldo, a, lda, b, ldb, M, N, K)
}

// gemmNTGeneric is gemmNT with the portable kernels.
func gemmNTGeneric(out []float32, ldo int, a []float32, lda int, b []float32, ldb int, M, N, K int) {
	j := 0
	for ; j+4 <= N; j += 4 {
		b0 := b[j*ldb:][:K]
		b1 := b[(j+1)*ldb:][:K]
		b2 := b[(j+2)*ldb:][:K]
		b3 := b[(j+3)*ldb:][:K]
		i := 0
		for ; i+2 <= M; i += 2 {
			c00, c01, c02, c03, c10, c11, c12, c13 := dot2x4Generic(a[i*lda:][:K], a[(i+1)*lda:][:K], b0, b1, b2, b3)
			o := out[i*ldo+j:][:4]
			o[0], o[1], o[2], o[3] = c00, c01, c02, c03
			o = out[(i+1)*ldo+j:][:4]
			o[0], o[1], o[2], o[3] = c10, c11, c12, c13
		}
		if i < M {
			c0, c1, c2, c3 := dot1x4Generic(a[i*lda:][:K], b0, b1, b2, b3)
			o := out[i*ldo+j:][:4]
			o[0], o[1], o[2], o[3] = c0, c1, c2, c3
		}
	}
	for ; j < N; j++ {
		bj := b[j*ldb:][:K]
		for i := range M {
			out[i*ldo+j] = dot1x1Generic(a[i*lda:][:K], bj)
		}
	}
}

// matmulForward computes out = inp · wᵀ + bias, or out += inp · wᵀ + bias when
// residual is set (the residual add of a block, as Hugging Face's
// `hidden = residual + attn_output`).
// inp is (N, C), w is (OC, C) (rows are output channels; float32 or 16-bit),
// bias is (OC) or nil (none), out is (N, OC).
// In the bf16 mode inp is rounded to bf16 once, before the tiles.
// Work is split into (mmRows x mmCols) tiles over the CPU's workers; tile holds
// mmScratch floats of scratch per worker.
func (c *CPU) matmulForward(out, inp []float32, w matrix, bias []float32, N, C, OC int, residual bool, tile []float32) {
	a16, release := c.bf16Operand(w, inp[:N*C], C)
	defer release()
	c.matmulTiles(N, OC, tile, func(scratch []float32, r0, c0, rn, cn int) {
		scratch = scratch[:mmRows*mmCols]
		gemmNTW(scratch, mmCols, inp[r0*C:], w.panelRows(a16, r0, C), C, w, c0*C, C, rn, cn, C)
		var b []float32
		if bias != nil {
			b = bias[c0:][:cn]
		} else {
			b = zeros[:cn]
		}
		if residual {
			accBias(out[r0*OC+c0:], OC, scratch, mmCols, b, rn, cn) // out += scratch + b
		} else {
			addBias(out[r0*OC+c0:], OC, scratch, mmCols, b, rn, cn) // out = scratch + b
		}
	})
}

// matmulTiles runs tile on every (mmRows x mmCols) tile of an (N, OC)
// product, over the CPU's workers: rows r0..r0+rn, columns c0..c0+cn, with
// the worker's mmScratch floats of scratch from tiles.
func (c *CPU) matmulTiles(N, OC int, tiles []float32, tile func(scratch []float32, r0, c0, rn, cn int)) {
	rowTiles := (N + mmRows - 1) / mmRows
	colTiles := (OC + mmCols - 1) / mmCols
	c.parallelFor(rowTiles*colTiles, func(worker, task int) {
		r0 := (task / colTiles) * mmRows
		c0 := (task % colTiles) * mmCols
		tile(tiles[worker*mmScratch:][:mmScratch], r0, c0, min(mmRows, N-r0), min(mmCols, OC-c0))
	})
}

// zeros is the bias of a matmul without one: mmCols zeros.
var zeros [mmCols]float32

// gemmNN computes out[i*ldo+j] = Σ_k a[i*lda+k]·b[k*ldb+j] for i < M, j < N:
// a is (M, K) with row stride lda, b is (K, N) with row stride ldb (the
// reduction axis across b's rows), out is (M, N) with row stride ldo. Each
// element is one chain of multiply-adds in increasing k (fused in the vector
// kernels), so no vector lanes are reduced and an element depends only on its
// row of a and column of b. Attention's scores use it with K = head_dim, where
// gemmNT's per-element lane reductions would cost as much as the products.
// Single-threaded; callers tile and parallelize.
func gemmNN(out []float32, ldo int, a []float32, lda int, b []float32, ldb int, M, N, K int) {
	if M <= 0 || N <= 0 {
		return
	}
	kern.gemmNN(out, ldo, a, lda, b, ldb, M, N, K)
}

// gemmNNGeneric is gemmNN with portable code: row i of out accumulates
// a[i][k] times row k of b, k increasing, with separate multiplies and adds.
func gemmNNGeneric(out []float32, ldo int, a []float32, lda int, b []float32, ldb int, M, N, K int) {
	for i := range M {
		o := out[i*ldo:][:N]
		clear(o)
		ai := a[i*lda:][:K]
		for k, x := range ai {
			bk := b[k*ldb:][:N]
			for j, y := range bk {
				o[j] += float32(x * y)
			}
		}
	}
}
