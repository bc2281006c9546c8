package model

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkRowKernels times the row kernels of every kernel set on the
// models' shapes: a row of LayerNorm (GPT-2 124M, C = 768) and of RMSNorm
// (Qwen2.5-0.5B, C = 896), the rotation of one head (head_dim 64), a matmul
// tile's epilogue (64 rows of 64 columns, with the residual add) and the
// bf16 rounding of a 16384-element block of activations.
//
//	go test ./model -run '^$' -bench RowKernels
func BenchmarkRowKernels(b *testing.B) {
	r := rand.New(rand.NewPCG(91, 92))
	x, w, bias, o := randVec(r, 1024), randVec(r, 1024), randVec(r, 1024), make([]float32, 1<<14)
	tile, big := randVec(r, mmRows*mmCols), randVec(r, 1<<14)
	dst := make([]uint16, 1<<14)
	for _, set := range kernelSets() {
		b.Run(set.String(), func(b *testing.B) {
			defer useKernels(set)()
			b.Run("layernorm768", func(b *testing.B) {
				for b.Loop() {
					layernormRow(o[:768], x[:768], w, bias, 1e-5)
				}
			})
			b.Run("rmsnorm896", func(b *testing.B) {
				for b.Loop() {
					rmsnormRow(o[:896], x[:896], w, 1e-6)
				}
			})
			b.Run("rotate64", func(b *testing.B) {
				for b.Loop() {
					rotateHalves(o[:32], o[32:64], x[:32], w[:32])
				}
			})
			b.Run("epilogue64x64", func(b *testing.B) {
				for b.Loop() {
					accBias(o, mmCols, tile, mmCols, bias, mmRows, mmCols)
				}
			})
		})
	}
	sets := []bf16Set{bf16Generic}
	if hasBF16Kernels() {
		sets = append(sets, bf16AVX512)
	}
	for _, set := range sets {
		b.Run(set.String()+"/round16384", func(b *testing.B) {
			for b.Loop() {
				bf16RoundRows(set, dst, big)
			}
		})
	}
}
