package model

import (
	"math"
	"unsafe"
)

// The bf16-amx kernels (bf16AMX): the bf16 mode's products on Intel AMX
// tiles, TDPBF16PS. Operands are those of the other bf16 sets (the weights
// rounded to bf16 once, the activations once per matmul, bf16Round), but
// TDPBF16PS sums in another order than VDPBF16PS's lanes, so the products
// are not bit-identical to bf16-avx512's or bf16-generic's: they are
// bit-identical to the scalar model here, whichever kernel, tile or thread
// computes them, and within the bf16 mode's tolerances of the float32 and
// float64 references like the other sets.
//
// One TDPBF16PS adds to each float32 element of its result tile the 32
// products of a row of the first operand (16 pairs of bf16) with a column
// of pairs of the second. Intel's intrinsics guide (__tile_dpbf16ps) writes
// it as one accumulation into the element, pair after pair; the SDM's
// current Operation section keeps instead a temporary per bf16 position
// (colsb/2 of them, from zero, each step an "FP32 FMA with DAZ=FTZ=1, RNE
// rounding"), added horizontally before the element is accumulated. The
// latter is what the hardware computes, bit for bit, as measured on this
// project's Xeon with AMX-BF16 (Linux 6.18, 2026-12-05: 600,000 random and
// adversarial elements: normals, wide exponents, subnormal inputs and
// accumulators, cancellation, ties, overflow, infinities and NaN;
// TestTDPBF16PSMatchesModel keeps checking it where AMX exists), in this
// order (tdpbf16):
//
//	e = +0; o = +0
//	for p := 0; p < 16; p++ {        // pairs in increasing k
//		e = fma(e, a[2p], b[2p])     // the even elements
//		o = fma(o, a[2p+1], b[2p+1]) // the odd elements
//	}
//	acc = add(acc, add(e, o))
//
// where fma and add are dpbf16Lane's step (inputs that are bf16
// subnormals read as zero, the product exact, one rounding to float32 to
// nearest even, a result below the smallest normal flushed to zero; an
// accumulator that is a float32 subnormal reads as zero, which never occurs
// in the kernels: every result is flushed). So a zero result is always +0;
// a NaN in gives a NaN out (payloads, which the hardware propagates as x86
// does, are not modelled; 0·∞ and ∞-∞ give the default NaN).
//
// A product of length K is K32 = K rounded up to 32 elements, the rest
// zero in both operands (which leaves every sum as it is, but for the sign
// of a zero), in ceil(K/32) TDPBF16PS steps of 32 elements in increasing k
// from a zero accumulator (dotBF16AMXRef). Every kernel computes each
// output element that way, with the k blocks at multiples of 32, so the
// result does not depend on the tiling or the thread count.
//
// Layout (amxChunkBF16, amxStoreBF16, gemmBF16AMX): the weights (N, K) are the
// first operand as stored, 16 output features a tile and 32 elements of k
// a row of 64 bytes, so they stay one copy, untouched. TDPBF16PS wants its
// second operand with k in pairs ("VNNI"): the activation panel, which the
// bf16 mode rounds once per matmul anyway, is written in that layout by the
// same pass (roundPanelAMX): tokens in groups of 16 (the panel padded with
// zero tokens to a multiple of 32), each group K32/2 rows of 64 bytes, row
// p holding elements 2p and 2p+1 of the group's 16 tokens. A result tile is
// then 16 features by 16 tokens; the kernel stores it and transposes it
// with AVX-512 shuffles into out's tokens x features (64 shuffles per 256
// results, a cost per output, not per product: at K = 768 the kernel runs
// at about 0.88x its rate at K = 3072). The kernel holds 2x2 result tiles (32 features by 32 tokens),
// two tiles of weights and two of activations: four tile loads for four
// TDPBF16PS; it takes k in chunks of 256 elements for all the blocks of
// the callers' tile (64 tokens by 64 or 128 features), the result tiles
// stored and reloaded between chunks (exact), so that a chunk's operands
// stay in cache. Products of at most 16 rows (a generator's step) take
// a variant without the second token tile (amxChunk16BF16): half the
// TDPBF16PS, as fast per generated token as VDPBF16PS on the Xeon measured
// (30 cpu-ms both, GPT-2 124M shape), where the 32-token kernel was 1.2x
// slower. The transposed layout of the weights (tokens x features
// out of the tiles directly) would need the weights relaid in pairs, a
// second layout of wte that the embedding also reads: not done.

// tdpbf16 returns acc plus the 32 products of a and b as one TDPBF16PS adds
// them to one element (see above): a is the element's row of the first
// operand, b its column of the second, both in k order.
func tdpbf16(acc float32, a, b *[32]uint16) float32 {
	var e, o float32
	for p := range 16 {
		e = dpbf16Lane(e, bf16In(a[2*p]), bf16In(b[2*p]))
		o = dpbf16Lane(o, bf16In(a[2*p+1]), bf16In(b[2*p+1]))
	}
	if math.Float32bits(acc)&0x7f800000 == 0 {
		acc = float32(math.Copysign(0, float64(acc))) // DAZ
	}
	return dpbf16Lane(acc, dpbf16Lane(e, o, 1), 1)
}

// dotBF16AMXRef returns the bf16 dot product of a and b (as long as a) as
// the bf16-amx kernels compute it: the scalar model they are tested
// against.
func dotBF16AMXRef(a, b []uint16) float32 {
	var acc float32
	var pa, pb [32]uint16
	for k := 0; k < len(a); k += 32 {
		clear(pa[:])
		clear(pb[:])
		copy(pa[:], a[k:])
		copy(pb[:], b[k:min(len(a), k+32)])
		acc = tdpbf16(acc, &pa, &pb)
	}
	return acc
}

// amxK32 is K rounded up to a whole TDPBF16PS step.
func amxK32(K int) int { return (K + 31) &^ 31 }

// amxPanelLen is the length of the bf16-amx activation panel of P rows of
// K: P rounded up to 32 tokens, of K32 elements each.
func amxPanelLen(P, K int) int { return (P + 31) &^ 31 * amxK32(K) }

// interleaveVNNI writes 16 rows of K32 bf16 values (rows, row-major) into
// dst (16*K32 values) in VNNI pairs: element (i, 2p+j) at 32p + 2i + j.
func interleaveVNNI(dst, rows []uint16, K32 int) {
	P2 := K32 / 2
	src := unsafe.Slice((*uint32)(unsafe.Pointer(&rows[0])), 16*P2)
	d := unsafe.Slice((*uint32)(unsafe.Pointer(&dst[0])), 16*P2)
	for i := range 16 {
		r := src[i*P2:][:P2]
		for p, v := range r {
			d[p*16+i] = v
		}
	}
}

// roundPanelAMX writes group g (tokens 16g..16g+15) of the bf16-amx panel
// of a (P rows of K floats) into dst: the rows rounded by bf16Round (with
// the vector rounding where the CPU has it), zero-padded to K32 and beyond
// P, in VNNI pairs; rows is 16*K32 values of scratch.
func roundPanelAMX(dst []uint16, a []float32, P, K, g int, rows []uint16) {
	K32 := amxK32(K)
	clear(rows)
	for i := range 16 {
		if t := 16*g + i; t < P {
			bf16RoundRows(bf16AMX, rows[i*K32:][:K], a[t*K:][:K])
		}
	}
	interleaveVNNI(dst[16*g*K32:][:16*K32], rows, K32)
}
