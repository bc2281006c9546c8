//go:build amd64 && !purego

package model

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// The AVX-512 float32 blocks split along k (gemmBlocks with chunkBytes at
// 256: chunks of 64 floats, one to 47 of them, the last shorter or with a
// tail, leftover rows and columns, more rows than one pass takes) compute
// the whole blocks' products bit for bit, with b in float32, F16 and BF16.
// Natively on an AVX-512 CPU, in the emulator elsewhere.
func TestGemmChunked(t *testing.T) {
	if !slices.Contains(kernelSets(), kernelsAVX512) {
		t.Skip("the AVX-512 kernels are neither in use nor emulated here")
	}
	v := vecAVX512
	r := rand.New(rand.NewPCG(11, 12))
	defer func(n int) { chunkBytes = n }(chunkBytes)
	for _, sh := range [][3]int{{4, 4, 64}, {4, 4, 65}, {5, 7, 200}, {70, 6, 300}, {8, 9, 3000}, {12, 8, 1031}} {
		M, N, K := sh[0], sh[1], sh[2]
		lda, ldb, ldo := K+r.IntN(3), K+r.IntN(3), N+r.IntN(3)
		a, b := randVec(r, M*lda), randVec(r, N*ldb)
		b16 := make([]uint16, N*ldb)
		both := func(name string, gemm func(out []float32)) {
			chunkBytes = 256
			chunked := make([]float32, M*ldo)
			gemm(chunked)
			chunkBytes = 1 << 30
			whole := make([]float32, M*ldo)
			gemm(whole)
			if i := sameBits(chunked, whole); i >= 0 {
				t.Fatalf("%s %dx%dx%d: out[%d] chunked %v, whole %v", name, M, N, K, i, chunked[i], whole[i])
			}
		}
		both("f32", func(out []float32) { gemmBlocks(v.dots, out, ldo, a, lda, b, ldb, M, N, K) })
		for _, dt := range []DType{F16, BF16} {
			for i := range b16 {
				b16[i] = random16(r, dt)
			}
			ks := v.dotsF16
			if dt == BF16 {
				ks = v.dotsBF16
			}
			both(dt.String(), func(out []float32) { gemmBlocks(ks, out, ldo, a, lda, b16, ldb, M, N, K) })
		}
	}
}

// BenchmarkGemmTile times one 64x64 matmul tile (a task of matmulForward)
// on one core with the kernels in use, whole and split along k, for the
// row lengths of the benchmark models (GPT-2 768 and 3072, Qwen2.5-0.5B 896
// and 4864), in float32 (the dot-product blocks on rows, f32; and where the
// set has them the outer-product kernels on panels, f32panel, with float32
// and with BF16 weights beside the dot blocks on BF16 rows) and in the bf16
// mode where the CPU has AVX512_BF16, and reports GFLOP/s:
//
//	go test ./model/ -run '^$' -bench GemmTile -benchtime 300x
func BenchmarkGemmTile(b *testing.B) {
	defer func(n int) { chunkBytes = n }(chunkBytes)
	for _, K := range []int{768, 896, 3072, 4864} {
		a, w := make([]float32, 64*K), make([]float32, 64*K)
		a16, w16 := make([]uint16, 64*K), make([]uint16, 64*K)
		for i := range a {
			a[i], w[i] = float32(i%7)*0.1, float32(i%5)*0.1
			a16[i], w16[i] = bf16Round(a[i]), bf16Round(w[i])
		}
		out := make([]float32, 64*64)
		for _, chunked := range []bool{false, true} {
			name := fmt.Sprintf("K=%d/whole", K)
			chunkBytes = 1 << 30
			if chunked {
				name, chunkBytes = fmt.Sprintf("K=%d/chunked", K), 4096
			}
			run := func(name string, gemm func()) { benchTile(b, name, K, gemm) }
			run("f32/"+name, func() { gemmNT(out, 64, a, K, w, K, 64, 64, K) })
			if kern.panelF32 != nil && !chunked { // the panel kernels' own chunks: panelKc
				p := packPanels(f32Matrix(w), K)
				run(fmt.Sprintf("f32panel/K=%d", K), func() { gemmNTW(out, 64, a, nil, K, p, 0, K, 64, 64, K) })
				p16 := packPanels(matrix{dtype: BF16, u16: w16}, K)
				run(fmt.Sprintf("f32panel-bf16w/K=%d", K), func() { gemmNTW(out, 64, a, nil, K, p16, 0, K, 64, 64, K) })
			}
			if kern.panelF32 != nil {
				run("f32-bf16w/"+name, func() { gemmNT16(out, 64, a, K, w16, K, 64, 64, K, BF16) })
			}
			if hasBF16Kernels() {
				run("bf16/"+name, func() { gemmBF16(bf16AVX512, out, 64, a16, K, w16, K, 64, 64, K) })
			}
			if hasAMX() && !chunked { // the AMX kernel does not split k
				p := amxPanel(a16, K, 64, K)
				run(fmt.Sprintf("amx/K=%d", K), func() { gemmBF16(bf16AMX, out, 64, p, K, w16, K, 64, 64, K) })
			}
		}
	}
}
