//go:build amd64 && !purego

package model

// rowsAVX2 and rowsAVX512 are the vector sets' row kernels (the tests
// replace vecAVX512's with emulated ones on CPUs without AVX-512).
var (
	rowsAVX2 = &vecRowKernels{
		8, sumRowAVX2, sumSqDevRowAVX2, scaleMulRowAVX2, normAffineRowAVX2, rotateRowAVX2,
		addBiasRowsAVX2, accBiasRowsAVX2,
	}
	rowsAVX512 = &vecRowKernels{
		16, sumRowAVX512, sumSqDevRowAVX512, scaleMulRowAVX512, normAffineRowAVX512, rotateRowAVX512,
		addBiasRowsAVX512, accBiasRowsAVX512,
	}
)
