package model

// kernelTable is one kernel set's hot loops as function values, chosen once:
// kern is the table in use (kernelTableFor(pickKernels(...)) at start-up), so
// the ops below call through it instead of branching on the set each call.
// Tests run another set by building its table (useKernels).
type kernelTable struct {
	set        kernelSet
	gemmNT     func(out []float32, ldo int, a []float32, lda int, b []float32, ldb int, M, N, K int)
	gemmNT16   func(out []float32, ldo int, a []float32, lda int, b []uint16, ldb int, M, N, K int, dtype DType)
	gemmNN     func(out []float32, ldo int, a []float32, lda int, b []float32, ldb int, M, N, K int)
	dot1x1     func(a, b []float32) float32
	divMaxRow  func(row []float32, d float32) float32
	maxRow     func(row []float32) float32
	mulRow     func(row []float32, m float32)
	expSubRow  func(row []float32, m float32) float32
	sumExpSub  func(row []float32, m float32) float32
	geluRow    func(x []float32)
	swigluRow  func(g, u []float32)
	geluErfRow func(x []float32)

	// The outer-product kernels of the panel layout (ops_panel.go); nil
	// where the set has none (its matrices stay in rows).
	panelF32            *panelKernels[float32]
	panelF16, panelBF16 *panelKernels[uint16]

	rowKernels // the norms', rotary embedding's and matmul epilogue's (ops_rows.go)
}

// genericKernels is the portable set's table.
var genericKernels = kernelTable{
	kernelsGeneric, gemmNTGeneric, gemmNT16Generic, gemmNNGeneric, dot1x1Generic,
	divMaxRowGeneric, maxRowGeneric, mulRowGeneric, expSubRowGeneric, sumExpSubGeneric, geluRowGeneric, swigluRowGeneric,
	geluErfRowGeneric, nil, nil, nil, genericRowKernels,
}

// dot1x1 returns the dot product of a and b (as long as a) as gemmNT computes
// each element.
func dot1x1(a, b []float32) float32 {
	if len(a) == 0 {
		return 0
	}
	_ = b[len(a)-1]
	return kern.dot1x1(a, b)
}

// divMaxRow sets row[i] /= d and returns the largest quotient (-Inf for an
// empty row).
func divMaxRow(row []float32, d float32) float32 { return kern.divMaxRow(row, d) }

// maxRow returns the largest row[i] (-Inf for an empty row). A row with a
// NaN gives a NaN or the largest other element, as the kernel set's maximum
// does (vector maxima return their second operand on a NaN), and a zero
// maximum may have either sign; the loss comes out the same (NaN, or
// unchanged by the sign).
func maxRow(row []float32) float32 { return kern.maxRow(row) }

// mulRow sets row[i] *= m.
func mulRow(row []float32, m float32) { kern.mulRow(row, m) }

// expSubRow sets row[i] = e^(row[i] - m) and returns their sum.
func expSubRow(row []float32, m float32) float32 { return kern.expSubRow(row, m) }

// sumExpSub returns Σ e^(row[i] - m), as expSubRow sums them.
func sumExpSub(row []float32, m float32) float32 { return kern.sumExpSub(row, m) }

// geluRow applies gelu_new to every element of x.
func geluRow(x []float32) { kern.geluRow(x) }

// geluErfRow applies the exact GELU, x·Φ(x), to every element of x.
func geluErfRow(x []float32) { kern.geluErfRow(x) }

// swigluRow sets g[i] = silu(g[i])·u[i] (u at least as long as g).
func swigluRow(g, u []float32) { kern.swigluRow(g, u[:len(g)]) }
