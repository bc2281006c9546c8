//go:build amd64 && !purego

package model

import (
	"fmt"
	"testing"
)

// packPanelsTest packs w (N, K), rows output channels, into panels of 32
// columns k-major: [N/32][K][32], the last panel zero-padded.
func packPanelsTest(w []float32, N, K int) []float32 {
	np := (N + 31) / 32
	p := make([]float32, np*K*32)
	for j := range N {
		for k := range K {
			p[(j/32)*K*32+k*32+j%32] = w[j*K+k]
		}
	}
	return p
}

// gemmPanelTest is out (M, N, N a multiple of 32) = a · wᵀ with w packed by
// packPanelsTest, k in chunks of kc.
func gemmPanelTest(out []float32, ldo int, a []float32, lda int, p []float32, M, N, K, kc int) {
	for k0 := 0; k0 < K; k0 += kc {
		kn := min(kc, K-k0)
		acc := 0
		if k0 > 0 {
			acc = 1
		}
		for j := 0; j < N; j += 32 {
			pp := p[(j/32)*K*32+k0*32:]
			i := 0
			for ; i+14 <= M; i += 14 {
				panel14x32AVX512(&a[i*lda+k0], lda, &pp[0], kn, &out[i*ldo+j], ldo, acc)
			}
			for _, r := range []int{8, 4, 2, 1} {
				for ; i+r <= M; i += r {
					f := map[int]func(*float32, int, *float32, int, *float32, int, int){8: panel8x32AVX512, 4: panel4x32AVX512, 2: panel2x32AVX512, 1: panel1x32AVX512}[r]
					f(&a[i*lda+k0], lda, &pp[0], kn, &out[i*ldo+j], ldo, acc)
				}
			}
		}
	}
}

func TestPanelProto(t *testing.T) {
	if !hasAVX512() {
		t.Skip("prototype: native AVX-512 only")
	}
	for _, K := range []int{1, 5, 768, 777} {
		M, N := 64, 64
		a, w := make([]float32, M*K), make([]float32, N*K)
		for i := range a {
			a[i] = float32(i%7)*0.1 - 0.3
		}
		for i := range w {
			w[i] = float32(i%5)*0.1 - 0.2
		}
		p := packPanelsTest(w, N, K)
		out := make([]float32, M*N)
		gemmPanelTest(out, N, a, K, p, M, N, K, 128)
		for i := range M {
			for j := range N {
				var s float64
				for k := range K {
					s += float64(a[i*K+k]) * float64(w[j*K+k])
				}
				if d := float64(out[i*N+j]) - s; d > 1e-3 || d < -1e-3 {
					t.Fatalf("K=%d (%d,%d): %v want %v", K, i, j, out[i*N+j], s)
				}
			}
		}
	}
}

func BenchmarkPanelTile(b *testing.B) {
	for _, K := range []int{768, 896, 3072, 4864} {
		a, w := make([]float32, 64*K), make([]float32, 64*K)
		for i := range a {
			a[i], w[i] = float32(i%7)*0.1, float32(i%5)*0.1
		}
		p := packPanelsTest(w, 64, K)
		for _, M := range []int{56, 64} {
			for _, kc := range []int{128, 256, 512, 100000} {
				out := make([]float32, 64*64)
				b.Run(fmt.Sprintf("K=%d/M=%d/kc=%d", K, M, kc), func(b *testing.B) {
					cpu0 := procCPU()
					for range b.N {
						gemmPanelTest(out, 64, a, K, p, M, 64, K, kc)
					}
					flop := float64(2*M*64*K) * float64(b.N)
					b.ReportMetric(flop/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					b.ReportMetric(flop/(procCPU()-cpu0).Seconds()/1e9, "GFLOP/cpu-s")
				})
			}
		}
	}
}

func BenchmarkPanelKernelL1(b *testing.B) {
	K := 256
	a, p := make([]float32, 14*K), make([]float32, 32*K)
	for i := range a {
		a[i] = 0.001
	}
	c := make([]float32, 14*32)
	b.Run("14x32", func(b *testing.B) {
		cpu0 := procCPU()
		for range b.N {
			panel14x32AVX512(&a[0], K, &p[0], K, &c[0], 32, 0)
		}
		b.ReportMetric(float64(2*14*32*K)*float64(b.N)/(procCPU()-cpu0).Seconds()/1e9, "GFLOP/cpu-s")
	})
}

func BenchmarkPanelKernelL1Packed(b *testing.B) {
	K := 256
	a, p := make([]float32, 14*K), make([]float32, 32*K)
	c := make([]float32, 14*32)
	b.Run("14x32", func(b *testing.B) {
		cpu0 := procCPU()
		for range b.N {
			pkpanel14x32AVX512(&a[0], K, &p[0], K, &c[0], 32, 0)
		}
		b.ReportMetric(float64(2*14*32*K)*float64(b.N)/(procCPU()-cpu0).Seconds()/1e9, "GFLOP/cpu-s")
	})
}
