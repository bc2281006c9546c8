package model

import "sync"

//go:generate go run ./internal/neongen -out ops_arm64.s -stubs ops_arm64_stubs.go

// The panel layout of the weight matrices, for the outer-product kernels.
//
// Where the kernel set has panel kernels (AVX-512 and AVX2 on amd64, NEON on
// arm64: one layout for all), the f32 mode keeps every weight matrix (the
// blocks', wte and an untied lm_head; F32, F16 or BF16) in panels of panelNR output channels
// instead of rows: panel p holds channels [p·panelNR, (p+1)·panelNR)
// k-major, element (j, k) at (j/panelNR)·K·panelNR + k·panelNR + j%panelNR,
// the last panel padded with zeros. It is packed once, when the CPU is
// built (packPanels); no second layout is kept. A product then runs a
// register tile of accumulators over a panel, per k loading the tile's
// vectors of the panel and broadcasting each of its rows' elements of a's
// column k:
//
//   - AVX-512: 14 rows x 32 channels (28 zmm; then 8, 4, 2, 1 rows for the
//     rows left over), 2 loads for 28 FMAs, where the 4x4 dot-product
//     blocks load 8 vectors for 16 FMAs and reduce 16 lanes per output,
//     their a rows streaming from L2. On a Xeon a 64x64 f32 tile runs at
//     79-83% of the CPU's FMA peak, 1.3-1.6x the dot blocks
//     (BenchmarkGemmTile), and a GPT-2 124M or Qwen2.5-0.5B window takes
//     1.2x less CPU time (BENCHMARKS.md). Measured there and not taken:
//     blocking k so that a's rows stay in L1 (no faster at these K: a tile
//     reads a's 14 rows once per panel, the panel once per 14 rows, both
//     from L2 at a few bytes a cycle), and 8 x 48 or 6 x 64 register tiles
//     (3-7% faster in a standalone driver, but panels of 48 or 64
//     channels).
//   - AVX2 (16 ymm): 6 rows x 16 channels, half a panel (12 accumulators,
//     2 panel vectors, 1 broadcast: 8 loads for 12 FMAs, where the 3x4 dot
//     blocks load 7 vectors for 12 FMAs and reduce 8 lanes per output), the
//     kernel running the panel's two halves one after the other over all
//     of its k; 4 rows alike, 2 rows and 1 in one pass of 4 vectors (8 and
//     4 accumulators). On the same Xeon running this set the 6 x 16
//     kernel reaches 98% of the core's 256-bit FMA peak on operands in L1
//     (BenchmarkPanelKernelL1), a 64x64 f32 tile 1.05-1.30x (median
//     1.11x) the 3x4 dot blocks at K = 768 and 1.13-1.24x at K = 3072 and
//     4864: the dot blocks there already run at 74-89% of that peak, which
//     caps the gain. A GPT-2 124M window takes 1.06-1.08x less CPU time (1.14-1.17x
//     from F16 weights, whose dot blocks widen every row of b they load),
//     a Qwen2.5-0.5B window 1.02-1.05x (BENCHMARKS.md). Measured there and
//     not taken: blocking k (256 to 2048) so that the tile's 6 rows of a
//     stay in L1 between the two passes (no faster).
//
//   - NEON (arm64, 32 128-bit registers; internal/neongen): 6 rows x 16
//     channels over the panel's two halves in turn, as AVX2, in 24
//     accumulators of 4 lanes; per row one 16-byte load of a gives four
//     values of k, each multiplied by lane (FMLA by element), so four k
//     cost 6 loads of a and 8 of panel pairs for 96 FMAs; then 4 rows (4
//     panel vectors at once), 2 rows and 1 over the whole panel in one
//     pass. F16 panels widen by FCVTL, BF16 by SHLL #16, both exact. Not
//     measured yet (BENCHMARKS.md says how).
//
// A one-row product (the generator's steps) streams the weights from
// memory either way and did not gain on AVX-512.
//
// Every output element is one chain of fused multiply-adds in increasing k,
// whichever row tile computes it, whatever the tiling: the chain is split
// along k only at multiples of panelKc, and the partial sum goes through
// memory (exact) to the next chunk. The portable fallback (a set without
// panel kernels given a panel matrix: only when tests switch sets) is one
// chain of separate multiplies and adds in increasing k, as dot1x1Generic.

// panelNR is the output channels of a panel: two 16-lane vectors, or four
// 8-lane ones.
const panelNR = 32

// panelKc is the longest stretch of k a panel kernel call takes; longer
// products run in chunks of it, the accumulators stored in between. A
// variable so that tests can shorten it (the results do not change).
var panelKc = 2048

// panelKernel is the signature of the generated outer-product kernels:
// c[i*ldc+j] (i < R, j < panelNR) = (acc != 0 ? c[i*ldc+j] : 0) +
// Σ_k a[i*lda+k]·p[k*panelNR+j], one FMA chain per element in increasing k.
type panelKernel[E float32 | uint16] func(a *float32, lda int, p *E, k int, c *float32, ldc int, acc int)

// panelTile is one panel kernel and the rows of a it takes.
type panelTile[E float32 | uint16] struct {
	R int
	f panelKernel[E]
}

// panelKernels are one set's outer-product kernels for one element type of
// the panel, largest row tile first, the last one row.
type panelKernels[E float32 | uint16] []panelTile[E]

// panelMR is the rows of the largest register tile of any set (AVX-512's).
const panelMR = 14

// packPanels returns m (rows of K elements, in the row layout) in the panel
// layout.
func packPanels(m matrix, K int) matrix {
	if m.pk != 0 || K <= 0 || m.len() == 0 {
		return m
	}
	N := m.len() / K
	n := (N + panelNR - 1) / panelNR * panelNR * K
	out := matrix{dtype: m.dtype, pk: K, n: N}
	if m.dtype == F32 {
		out.f32 = make([]float32, n)
		packInto(out.f32, m.f32, N, K)
	} else {
		out.u16 = make([]uint16, n)
		packInto(out.u16, m.u16, N, K)
	}
	return out
}

// packInto writes the N rows of K elements of src to dst in panels.
func packInto[E float32 | uint16](dst, src []E, N, K int) {
	for j := range N {
		p := dst[(j/panelNR)*K*panelNR+j%panelNR:]
		for k, v := range src[j*K:][:K] {
			p[k*panelNR] = v
		}
	}
}

// gemmPanelW is gemmNTW for a matrix b in the panel layout: out (M, N) =
// a · b[j0:j0+N]ᵀ, b's rows K long.
func gemmPanelW(out []float32, ldo int, a []float32, lda int, b matrix, j0, M, N, K int) {
	if emptyProduct(out, ldo, M, N, K) {
		return
	}
	_ = a[(M-1)*lda+K-1]
	_ = out[(M-1)*ldo+N-1]
	switch {
	case b.dtype == F32 && kern.panelF32 != nil:
		_ = b.f32[(j0+N-1)/panelNR*K*panelNR+K*panelNR-1]
		gemmPanel(kern.panelF32, out, ldo, a, lda, b.f32, j0, M, N, K)
	case b.dtype == F16 && kern.panelF16 != nil:
		_ = b.u16[(j0+N-1)/panelNR*K*panelNR+K*panelNR-1]
		gemmPanel(kern.panelF16, out, ldo, a, lda, b.u16, j0, M, N, K)
	case b.dtype == BF16 && kern.panelBF16 != nil:
		_ = b.u16[(j0+N-1)/panelNR*K*panelNR+K*panelNR-1]
		gemmPanel(kern.panelBF16, out, ldo, a, lda, b.u16, j0, M, N, K)
	default:
		gemmPanelGeneric(out, ldo, a, lda, b, j0, M, N, K)
	}
}

// panelPart holds gemmPanel's scratch for a panel partly inside the
// product's columns (a kernel called through a func value makes a local
// array escape anyway).
var panelPart = sync.Pool{New: func() any { return new([panelMR * panelNR]float32) }}

// gemmPanel is gemmPanelW with the kernels ks: for each panel the columns
// touch, each chunk of k, the row tiles of ks from the largest down. A panel
// only partly inside [j0, j0+N) is computed into scratch and its columns
// copied.
func gemmPanel[E float32 | uint16](ks *panelKernels[E], out []float32, ldo int, a []float32, lda int, p []E, j0, M, N, K int) {
	var part *[panelMR * panelNR]float32 // from panelPart where a panel is partly inside
	defer func() {
		if part != nil {
			panelPart.Put(part)
		}
	}()
	for q := j0 / panelNR; q*panelNR < j0+N; q++ {
		lo, hi := max(j0, q*panelNR), min(j0+N, (q+1)*panelNR) // columns of this panel
		whole := lo == q*panelNR && hi == (q+1)*panelNR
		if !whole && part == nil {
			part = panelPart.Get().(*[panelMR * panelNR]float32)
		}
		pq := p[q*K*panelNR:]
		i := 0
		for _, t := range *ks {
			R := t.R
			for ; i+R <= M; i += R {
				var c *float32
				ldc := ldo
				if whole {
					c = &out[i*ldo+lo-j0]
				} else {
					c, ldc = &part[0], panelNR
				}
				for k0 := 0; k0 < K; k0 += panelKc {
					acc := 0
					if k0 > 0 {
						acc = 1
					}
					t.f(&a[i*lda+k0], lda, &pq[k0*panelNR], min(panelKc, K-k0), c, ldc, acc)
				}
				if !whole {
					for r := range R {
						copy(out[(i+r)*ldo+lo-j0:][:hi-lo], part[r*panelNR+lo-q*panelNR:])
					}
				}
			}
		}
	}
}

// gemmPanelGeneric is gemmPanelW with portable code: each element one chain
// of separate multiplies and adds in increasing k (as dot1x1Generic).
func gemmPanelGeneric(out []float32, ldo int, a []float32, lda int, b matrix, j0, M, N, K int) {
	col := make([]float32, K)
	for j := range N {
		b.widenRow(col, j0+j)
		for i := range M {
			out[i*ldo+j] = dot1x1Generic(a[i*lda:][:K], col)
		}
	}
}

// widenRow writes row j of m (K = m.pk elements) to dst as float32.
func (m matrix) widenRow(dst []float32, j int) {
	K := m.pk
	base := (j/panelNR)*K*panelNR + j%panelNR
	switch m.dtype {
	case F32:
		for k := range dst[:K] {
			dst[k] = m.f32[base+k*panelNR]
		}
	case F16:
		for k := range dst[:K] {
			dst[k] = f16To32(m.u16[base+k*panelNR])
		}
	case BF16:
		for k := range dst[:K] {
			dst[k] = bf16To32(m.u16[base+k*panelNR])
		}
	}
}

// packPanels puts c's weight matrices in the panel layout where the kernel
// set in use has panel kernels and c is in the f32 mode, and reports
// whether it did. A tied lm_head stays the same matrix as wte. Each matrix
// is replaced as soon as it is packed, so the peak is one matrix more.
func (c *CPU) packPanels() bool {
	if c.bf16 != bf16Off || kern.panelF32 == nil {
		return false
	}
	C := c.cfg.NEmbd
	tied := c.lmHead.same(c.wte)
	c.wte = packPanels(c.wte, C)
	if tied {
		c.lmHead = c.wte
	} else {
		c.lmHead = packPanels(c.lmHead, C)
	}
	for i := range c.layers {
		l := &c.layers[i]
		for _, m := range []*matrix{&l.qkvW, &l.projW, &l.fcW, &l.upW, &l.fcProjW} {
			if m.len() > 0 {
				*m = packPanels(*m, c.matrixK(l, m))
			}
		}
	}
	return true
}

// matrixK is the row length of l's matrix m (one of its fields).
func (c *CPU) matrixK(l *cpuLayer, m *matrix) int {
	switch m {
	case &l.projW:
		if c.cfg.Arch == ArchLlama {
			return c.cfg.QDim()
		}
	case &l.fcProjW:
		return c.cfg.Inner()
	}
	return c.cfg.NEmbd
}
