//go:build amd64 && !purego

package model

// roundBF16AVX512 is the bf16 mode's rounding of activations and weights
// for the bf16AVX512 set (bf16RoundRows): VCVTNEPS2BF16 on whole vectors of
// 16 (ops_amd64.s), chosen with the VDPBF16PS kernels on CPUs with
// AVX512_BF16. Tests may swap it (an emulator running the assembly).
var roundBF16AVX512 = roundBF16RowAVX512
