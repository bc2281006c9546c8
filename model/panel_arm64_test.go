//go:build arm64 && !purego

package model

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// neonPanels are the NEON panel kernels by element type, for the tests.
var neonPanels = []struct {
	dtype DType
	f32   *panelKernels[float32]
	u16   *panelKernels[uint16]
}{{F32, neonKernels.panelF32, nil}, {F16, nil, neonKernels.panelF16}, {BF16, nil, neonKernels.panelBF16}}

// On arm64 the "neon" set runs unless $WGPU_EVAL_CPU_KERNELS asks for
// "generic"; its weight products are in panels, the portable set's in rows.
func TestNEONIsDefault(t *testing.T) {
	if want := pickKernels(os.Getenv(kernelsEnv)); kern.set != want {
		t.Errorf("kernel set in use %v, want %v", kern.set, want)
	}
	for env, want := range map[string]kernelSet{"": kernelsNEON, "neon": kernelsNEON, "avx2": kernelsNEON, "generic": kernelsGeneric} {
		if got := pickKernels(env); got != want {
			t.Errorf("pickKernels(%q) = %v, want %v", env, got, want)
		}
	}
	if kernelTableFor(kernelsNEON).panelF32 == nil || kernelTableFor(kernelsGeneric).panelF32 != nil {
		t.Error("the neon set must have panel kernels and the portable one none")
	}
	if s := kernelsNEON.String(); s != "neon" {
		t.Errorf("kernelsNEON names itself %q", s)
	}
}

// Each NEON panel kernel, called directly on operands of exact size (row
// strides wider than K and than the panel), computes the panel contract's
// bits (panelChainRef: one FMA chain per element in increasing k, from 0
// or from c), for every k left over by its 4-step loop, and writes nothing
// between c's rows.
func TestNEONPanelKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, ks := range neonPanels {
		var tiles []int
		var call func(R int, a *float32, lda int, p32 []float32, p16 []uint16, K int, c *float32, ldc, acc int)
		if ks.f32 != nil {
			for _, tl := range *ks.f32 {
				tiles = append(tiles, tl.R)
			}
			call = func(R int, a *float32, lda int, p32 []float32, _ []uint16, K int, c *float32, ldc, acc int) {
				for _, tl := range *ks.f32 {
					if tl.R == R {
						tl.f(a, lda, &p32[0], K, c, ldc, acc)
					}
				}
			}
		} else {
			for _, tl := range *ks.u16 {
				tiles = append(tiles, tl.R)
			}
			call = func(R int, a *float32, lda int, _ []float32, p16 []uint16, K int, c *float32, ldc, acc int) {
				for _, tl := range *ks.u16 {
					if tl.R == R {
						tl.f(a, lda, &p16[0], K, c, ldc, acc)
					}
				}
			}
		}
		if fmt.Sprint(tiles) != "[6 4 2 1]" {
			t.Fatalf("%v: row tiles %v", ks.dtype, tiles)
		}
		for _, R := range tiles {
			for _, K := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 17, 64, 101} {
				for acc := range 2 {
					lda, ldc := K+3, panelNR+5
					a := mixedVec(r, (R-1)*lda+K+1) // +1: a[0] exists for K = 0
					w := make([]float32, (K+1)*panelNR)
					var p32 []float32
					var p16 []uint16
					if ks.dtype == F32 {
						p32 = mixedVec(r, (K+1)*panelNR)
						copy(w, p32)
					} else {
						p16 = make([]uint16, (K+1)*panelNR)
						for i := range p16 {
							p16[i] = random16(r, ks.dtype)
						}
						matrix{dtype: ks.dtype, u16: p16}.widen(w, 0)
					}
					c0 := mixedVec(r, (R-1)*ldc+panelNR)
					for i := range c0 {
						if i%ldc >= panelNR {
							c0[i] = 42
						}
					}
					got := append([]float32(nil), c0...)
					call(R, &a[0], lda, p32, p16, K, &got[0], ldc, acc)
					col := make([]float32, K)
					for o := range got {
						i, j := o/ldc, o%ldc
						if j >= panelNR {
							if got[o] != 42 {
								t.Fatalf("%v %dx32 K=%d: wrote c[%d][%d], a gap", ks.dtype, R, K, i, j)
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
							t.Fatalf("%v %dx32 K=%d acc=%d: c[%d][%d] = %v, want %v (one FMA chain)", ks.dtype, R, K, acc, i, j, got[o], want)
						}
					}
				}
			}
		}
	}
}

// goPanels is the "neon" set's kernel table with its panel kernels and
// gemmNN replaced by their contract written in Go (panelChainRef per
// element), the panels with the NEON set's row tiles. (The other NEON
// kernels give the AVX2 set's bits: TestRowGolden.)
func goPanels() *kernelTable {
	t := neonKernels
	f32 := func(R int) panelKernel[float32] {
		return func(a *float32, lda int, p *float32, k int, c *float32, ldc int, acc int) {
			w := make([]float32, k*panelNR)
			if k > 0 {
				copy(w, unsafe.Slice(p, k*panelNR))
			}
			goPanel(R, a, lda, w, k, c, ldc, acc)
		}
	}
	u16 := func(dtype DType) func(R int) panelKernel[uint16] {
		return func(R int) panelKernel[uint16] {
			return func(a *float32, lda int, p *uint16, k int, c *float32, ldc int, acc int) {
				w := make([]float32, k*panelNR)
				if k > 0 {
					matrix{dtype: dtype, u16: unsafe.Slice(p, k*panelNR)}.widen(w, 0)
				}
				goPanel(R, a, lda, w, k, c, ldc, acc)
			}
		}
	}
	t.gemmNN = goGemmNN
	t.panelF32, t.panelF16, t.panelBF16 = new(panelKernels[float32]), new(panelKernels[uint16]), new(panelKernels[uint16])
	for _, R := range []int{6, 4, 2, 1} {
		*t.panelF32 = append(*t.panelF32, panelTile[float32]{R, f32(R)})
		*t.panelF16 = append(*t.panelF16, panelTile[uint16]{R, u16(F16)(R)})
		*t.panelBF16 = append(*t.panelBF16, panelTile[uint16]{R, u16(BF16)(R)})
	}
	return &t
}

// goGemmNN is gemmNN's contract in the vector sets: each element one FMA
// chain in increasing k from zero (panelChainRef).
func goGemmNN(out []float32, ldo int, a []float32, lda int, b []float32, ldb int, M, N, K int) {
	col := make([]float32, K)
	for j := range N {
		for k := range K {
			col[k] = b[k*ldb+j]
		}
		for i := range M {
			out[i*ldo+j] = panelChainRef(0, a[i*lda:][:K], col)
		}
	}
}

// The NEON gemmNN (attention's scores) computes every element as one FMA
// chain in increasing k (goGemmNN's bits), for every block shape and the
// columns left over, row strides wider than the rows, nothing written
// between out's rows.
func TestNEONGemmNNIsFMAChain(t *testing.T) {
	defer useKernels(kernelsNEON)()
	r := rand.New(rand.NewPCG(23, 24))
	for _, s := range []struct{ M, N, K int }{{1, 1, 1}, {4, 16, 4}, {5, 17, 9}, {9, 48, 64}, {7, 39, 3}, {3, 4, 0}, {8, 23, 20}} {
		lda, ldb, ldo := s.K+3, s.N+5, s.N+2
		a, b := mixedVec(r, s.M*lda), mixedVec(r, max(s.K, 1)*ldb)
		got, want := make([]float32, s.M*ldo), make([]float32, s.M*ldo)
		for i := range got {
			got[i], want[i] = 42, 42
		}
		gemmNN(got, ldo, a, lda, b, ldb, s.M, s.N, s.K)
		goGemmNN(want, ldo, a, lda, b, ldb, s.M, s.N, s.K)
		if i := sameBits(got, want); i >= 0 {
			t.Fatalf("%+v: out[%d][%d] = %v, want %v", s, i/ldo, i%ldo, got[i], want[i])
		}
	}
}

// goPanel is the panel contract for R rows of a, the panel's values
// widened in w (k-major, panelNR wide).
func goPanel(R int, a *float32, lda int, w []float32, k int, c *float32, ldc, acc int) {
	as := unsafe.Slice(a, (R-1)*lda+k)
	cs := unsafe.Slice(c, (R-1)*ldc+panelNR)
	col := make([]float32, k)
	for i := range R {
		for j := range panelNR {
			for kk := range k {
				col[kk] = w[kk*panelNR+j]
			}
			start := float32(0)
			if acc != 0 {
				start = cs[i*ldc+j]
			}
			cs[i*ldc+j] = panelChainRef(start, as[i*lda:][:k], col)
		}
	}
}

// The whole forward of the "neon" set (the weights in panels run by the
// NEON kernels) gives the bits of the same forward with the panels and
// gemmNN run by goPanels' Go model of the contract: the loss and every
// position's NLL, for the GPT-2 test shapes, 1 and 3 threads, k split at
// panelKc.
func TestNEONForwardMatchesGoPanels(t *testing.T) {
	defer func(kc int) { panelKc = kc }(panelKc)
	panelKc = 7 // every product in several chunks of k
	ctx := context.Background()
	for ci, tc := range testConfigs {
		m := randomModel(tc.cfg, uint64(40+ci), ci%2 == 1)
		seqs := randomSeqs(tc.cfg, 3, 9)
		run := func(table *kernelTable, threads int) (LossSums, []float32) {
			old := kern
			kern = table
			defer func() { kern = old }()
			c := NewCPU(m, threads)
			if c.wte.pk == 0 {
				t.Fatalf("%s: the CPU kept its matrices in rows", tc.name)
			}
			s, nll, err := c.LossPerToken(ctx, seqs)
			if err != nil {
				t.Fatal(err)
			}
			return s, nll
		}
		want, wantNLL := run(goPanels(), 1)
		for _, threads := range []int{1, 3} {
			got, nll := run(&neonKernels, threads)
			if got != want {
				t.Errorf("%s threads %d: NEON %+v, Go panels %+v", tc.name, threads, got, want)
			}
			for i := range nll {
				if math.Float32bits(nll[i]) != math.Float32bits(wantNLL[i]) {
					t.Fatalf("%s threads %d: NLL[%d] NEON %v, Go panels %v", tc.name, threads, i, nll[i], wantNLL[i])
				}
			}
		}
	}
}

// BenchmarkPanelKernelL1 times the NEON set's main panel kernel (6 x 32)
// on operands in L1 (K = 256): the kernel's own throughput.
func BenchmarkPanelKernelL1(b *testing.B) {
	const R, K = 6, 256
	a, p := make([]float32, R*K), make([]float32, panelNR*K)
	for i := range a {
		a[i] = 0.001
	}
	c := make([]float32, R*panelNR)
	b.Run("neon", func(b *testing.B) {
		cpu0 := procCPU()
		for range b.N {
			panel6x32NEON(&a[0], K, &p[0], K, &c[0], panelNR, 0)
		}
		if d := procCPU() - cpu0; d > 0 {
			b.ReportMetric(float64(2*R*panelNR*K)*float64(b.N)/d.Seconds()/1e9, "GFLOP/cpu-s")
		}
	})
}

// BenchmarkGemmTile times a 64x64 tile of a weight product on one core, for
// the row lengths of the benchmark models (GPT-2 768 and 3072, Qwen2.5-0.5B
// 896 and 4864): the portable dot products on (out, in) rows (f32, what
// WGPU_EVAL_CPU_KERNELS=generic runs), the NEON dot blocks on the same rows
// (f32neon: AVX2's order) and the NEON panel kernels with float32, F16 and
// BF16 weights (f32panel*), and reports GFLOP/s:
//
//	go test ./model/ -run '^$' -bench GemmTile -benchtime 100x
func BenchmarkGemmTile(b *testing.B) {
	for _, K := range []int{768, 896, 3072, 4864} {
		a, w := make([]float32, 64*K), make([]float32, 64*K)
		w16 := make([]uint16, 64*K)
		for i := range a {
			a[i], w[i] = float32(i%7)*0.1, float32(i%5)*0.1
			w16[i] = bf16Round(w[i])
		}
		out := make([]float32, 64*64)
		run := func(name string, gemm func()) { benchTile(b, name, K, gemm) }
		old := kern
		kern = &genericKernels
		run(fmt.Sprintf("f32/K=%d", K), func() { gemmNT(out, 64, a, K, w, K, 64, 64, K) })
		kern = &neonKernels
		run(fmt.Sprintf("f32neon/K=%d", K), func() { gemmNT(out, 64, a, K, w, K, 64, 64, K) })
		p := packPanels(f32Matrix(w), K)
		run(fmt.Sprintf("f32panel/K=%d", K), func() { gemmNTW(out, 64, a, nil, K, p, 0, K, 64, 64, K) })
		for _, dtype := range []DType{F16, BF16} {
			p16 := packPanels(matrix{dtype: dtype, u16: w16}, K)
			run(fmt.Sprintf("f32panel-%sw/K=%d", strings.ToLower(dtype.String()), K), func() { gemmNTW(out, 64, a, nil, K, p16, 0, K, 64, 64, K) })
		}
		kern = old
	}
}
