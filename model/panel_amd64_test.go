//go:build amd64 && !purego

package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"

	"github.com/wgpu-eval/wgpu-eval/internal/x86emu"
)

// checkEmuPanel runs a panel kernel (float32 panel, or 16-bit of dtype)
// emulated on operands of exact size, starting from zero and from c,
// and requires the panel contract's bits (panelChainRef), the gaps
// between output rows untouched and, where native is set, the hardware's
// bits.
func checkEmuPanel(t *testing.T, r *rand.Rand, f x86emu.Func, rows int, dtype DType,
	native32 func(*float32, int, *float32, int, *float32, int, int), native16 func(*float32, int, *uint16, int, *float32, int, int)) {
	t.Helper()
	for _, K := range []int{1, 3, 4, 5, 8, 17, 64, 100} {
		for acc := range 2 {
			lda, ldc := K+3, panelNR+5
			a := mixedVec(r, (rows-1)*lda+K)
			w := make([]float32, K*panelNR) // the panel's values, widened
			var p32 []float32
			var p16 []uint16
			if dtype == F32 {
				p32 = mixedVec(r, K*panelNR)
				copy(w, p32)
			} else {
				p16 = make([]uint16, K*panelNR)
				for i := range p16 {
					p16[i] = random16(r, dtype)
				}
				matrix{dtype: dtype, u16: p16}.widen(w, 0)
			}
			c0 := mixedVec(r, (rows-1)*ldc+panelNR)
			for i := range c0 {
				if i%ldc >= panelNR {
					c0[i] = 42
				}
			}
			got := append([]float32(nil), c0...)
			var fr x86emu.Frame
			var pr x86emu.Region
			if dtype == F32 {
				putPanelArgs(&fr, &a[0], lda, &p32[0], K, &got[0], ldc, acc)
				pr = region(p32, false)
			} else {
				putPanelArgs(&fr, &a[0], lda, &p16[0], K, &got[0], ldc, acc)
				pr = region(p16, false)
			}
			m := &x86emu.Machine{Memory: []x86emu.Region{region(a, false), pr, region(got, true)}}
			if err := m.Call(f, fr.Bytes()); err != nil {
				t.Fatalf("K=%d: %v", K, err)
			}
			col := make([]float32, K)
			for i := range rows {
				for j := range ldc {
					o := i*ldc + j
					if o >= len(got) {
						break
					}
					if j >= panelNR {
						if got[o] != 42 {
							t.Fatalf("K=%d: wrote c[%d][%d], a gap", K, i, j)
						}
						continue
					}
					for k := range K {
						col[k] = w[k*panelNR+j]
					}
					start := float32(0)
					if acc != 0 {
						start = c0[o]
					}
					if want := panelChainRef(start, a[i*lda:][:K], col); math.Float32bits(got[o]) != math.Float32bits(want) {
						t.Fatalf("K=%d acc=%d: c[%d][%d] = %v, want %v (one FMA chain)", K, acc, i, j, got[o], want)
					}
				}
			}
			if native32 == nil && native16 == nil {
				continue
			}
			hw := append([]float32(nil), c0...)
			if native32 != nil {
				native32(&a[0], lda, &p32[0], K, &hw[0], ldc, acc)
			} else {
				native16(&a[0], lda, &p16[0], K, &hw[0], ldc, acc)
			}
			if i := sameBits(got, hw); i >= 0 {
				t.Errorf("K=%d: c[%d] emulated %v, native %v", K, i, got[i], hw[i])
			}
		}
	}
}

// BenchmarkPanelKernelL1 times each vector set's main panel kernel
// (AVX-512: 14x32, AVX2: 6x32) on operands in L1 (K = 256): the kernel's
// own throughput.
func BenchmarkPanelKernelL1(b *testing.B) {
	for _, k := range []struct {
		name string
		ok   bool
		R    int
		f    panelKernel[float32]
	}{
		{"avx512", hasAVX512(), 14, panel14x32AVX512},
		{"avx2", cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C, 6, panel6x32AVX2},
	} {
		b.Run(k.name, func(b *testing.B) {
			if !k.ok {
				b.Skip("this CPU cannot run the kernel natively")
			}
			K := 256
			a, p := make([]float32, k.R*K), make([]float32, 32*K)
			for i := range a {
				a[i] = 0.001
			}
			c := make([]float32, k.R*32)
			cpu0 := procCPU()
			for range b.N {
				k.f(&a[0], K, &p[0], K, &c[0], 32, 0)
			}
			if d := procCPU() - cpu0; d > 0 {
				b.ReportMetric(float64(2*k.R*32*K)*float64(b.N)/d.Seconds()/1e9, "GFLOP/cpu-s")
			}
		})
	}
}

// The AVX2 and AVX-512 panel kernels (native, or AVX-512 emulated) give the
// same bits: both compute each element as one FMA chain in increasing k,
// whatever their tiles (6 x 16 in two passes against 14 x 32), on
// products of the model's shapes' kind (rows left over for every smaller
// tile, a partial last panel, k past panelKc).
func TestPanelSetsBitIdentical(t *testing.T) {
	sets := panelSets()
	if !slicesContains(sets, kernelsAVX2) || !slicesContains(sets, kernelsAVX512) {
		t.Skip("needs the AVX2 and the AVX-512 panel kernels (native or emulated)")
	}
	defer func(kc int) { panelKc = kc }(panelKc)
	r := rand.New(rand.NewPCG(11, 12))
	shapes := []struct{ M, N, K int }{{64, 96, 300}, {63, 70, 129}, {15, 33, 64}, {1, 40, 77}}
	if avx512Emulated || testing.Short() {
		shapes = []struct{ M, N, K int }{{21, 40, 37}, {1, 33, 9}}
	}
	for _, dtype := range []DType{F32, F16, BF16} {
		for _, s := range shapes {
			for _, kc := range []int{2048, 64} {
				panelKc = kc
				p := packPanels(randMatrix(r, dtype, s.N, s.K), s.K)
				a := mixedVec(r, s.M*s.K)
				var outs [2][]float32
				for i, set := range []kernelSet{kernelsAVX2, kernelsAVX512} {
					restore := useKernels(set)
					outs[i] = make([]float32, s.M*s.N)
					gemmNTW(outs[i], s.N, a, nil, s.K, p, 0, s.K, s.M, s.N, s.K)
					restore()
				}
				if i := sameBits(outs[0], outs[1]); i >= 0 {
					t.Fatalf("%v %+v kc %d: [%d] AVX2 %v, AVX-512 %v", dtype, s, kc, i, outs[0][i], outs[1][i])
				}
			}
		}
	}
}
