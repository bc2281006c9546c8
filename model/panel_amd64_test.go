//go:build amd64 && !purego

package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"

	"github.com/wgpu-eval/wgpu-eval/internal/x86emu"
)

// fma32 is a·b + c rounded once to float32 (VFMADD231PS's result): the
// product is exact in float64, the sum is rounded to float64 to odd (the
// two-sum error decides), which then rounds to float32 as the exact sum
// would (53 >= 2·24 + 2 bits).
func fma32(a, b, c float32) float32 {
	p, q := float64(a)*float64(b), float64(c)
	s := p + q
	bb := s - p
	e := (p - (s - bb)) + (q - bb)
	if e != 0 && math.Float64bits(s)&1 == 0 {
		s = math.Nextafter(s, math.Copysign(math.Inf(1), e)+s)
	}
	return float32(s)
}

// panelChainRef is the panel contract's element: c, then a[k]·w[k] added by
// fused multiply-adds in increasing k.
func panelChainRef(c float32, a []float32, w []float32) float32 {
	for k := range a {
		c = fma32(a[k], w[k], c)
	}
	return c
}

// The reference itself: fma32 is one rounding of the exact a·b + c (checked
// against math/big on random operands of every magnitude, and on the
// double-rounding case of a sum exactly halfway between float32s plus a
// tiny product).
func TestFMA32IsOneRounding(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		a, b, c := mixed(r), mixed(r), mixed(r)
		if r.IntN(3) == 0 {
			c = float32(math.Ldexp(float64(c), 20))
		}
		if got, want := fma32(a, b, c), bigFMA32(a, b, c); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fma32(%g, %g, %g) = %g, want %g", a, b, c, got, want)
		}
	}
	// 1 + 2^-24 is halfway between 1 and its successor; plus 2^-60 it rounds up.
	if got, want := fma32(float32(math.Ldexp(1, -30)), float32(math.Ldexp(1, -30)), 1+float32(math.Ldexp(1, -23))), bigFMA32(float32(math.Ldexp(1, -30)), float32(math.Ldexp(1, -30)), 1+float32(math.Ldexp(1, -23))); got != want {
		t.Errorf("tiny product: %g, want %g", got, want)
	}
}

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

// panelSets are the kernel sets of kernelSets() with panel kernels.
func panelSets() []kernelSet {
	var sets []kernelSet
	for _, s := range kernelSets() {
		if kernelTableFor(s).panelF32 != nil {
			sets = append(sets, s)
		}
	}
	return sets
}

// With every set's panel kernels (AVX2, and AVX-512 native or emulated),
// every element of a product with a panel-layout matrix is the contract's
// one FMA chain in increasing k (panelChainRef), for every row tile of the
// set (AVX-512: 14, 8, 4, 2, 1 rows; AVX2: 6, 4, 2, 1), a partial last
// panel, and k split in chunks.
func TestGemmPanelIsFMAChain(t *testing.T) {
	sets := panelSets()
	if len(sets) == 0 {
		t.Skip("no kernel set with panel kernels runs here")
	}
	defer func(kc int) { panelKc = kc }(panelKc)
	for _, set := range sets {
		restore := useKernels(set)
		r := rand.New(rand.NewPCG(9, 10))
		for _, dtype := range []DType{F32, F16, BF16} {
			for _, kc := range []int{2048, 6} {
				panelKc = kc
				M, N, K := 29, 45, 19
				w := randMatrix(r, dtype, N, K)
				p := packPanels(w, K)
				a := mixedVec(r, M*K)
				out := make([]float32, M*N)
				gemmNTW(out, N, a, nil, K, p, 0, K, M, N, K)
				col := make([]float32, K)
				for j := range N {
					w.widen(col, j*K)
					for i := range M {
						if want := panelChainRef(0, a[i*K:][:K], col); math.Float32bits(out[i*N+j]) != math.Float32bits(want) {
							t.Fatalf("%v %v kc %d: (%d,%d) %v, want %v", set, dtype, kc, i, j, out[i*N+j], want)
						}
					}
				}
			}
		}
		restore()
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
