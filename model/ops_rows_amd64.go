//go:build amd64 && !purego

package model

// vecRowKernels are one vector set's assembly row kernels (ops_rows.go; lanes
// wide, the sums 8 float64 lanes at either width). Each covers the first
// n - n%lanes elements (n - n%8 for the sums); the methods below do the rest
// with the portable code's operations, in the same order.
type vecRowKernels struct {
	lanes                    int
	sumRow                   func(x *float32, n int) float64
	sumSqDevRow              func(x *float32, n int, m float64) float64
	scaleMulRow              func(o, x, w *float32, n int, s float32)
	normAffineRow            func(o, x, w, b *float32, n int, m, s float32)
	rotateRow                func(x1, x2, c, s *float32, n int)
	addBiasRows, accBiasRows func(o *float32, ldo int, v *float32, ldv int, b *float32, rows, n int)
}

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

// table is r's part of a kernel table.
func (r *vecRowKernels) table() rowKernels {
	return rowKernels{r.sumRowFn, r.sumSqDevRowFn, r.scaleMulRowFn, r.normAffineRowFn, r.rotateRowFn, r.addBiasRowsFn, r.accBiasRowsFn}
}

// whole is n rounded down to a multiple of w (a power of 2): how many
// elements the kernels cover.
func whole(n, w int) int { return n &^ (w - 1) }

func (r *vecRowKernels) sumRowFn(x []float32) float64 {
	var s float64
	n := whole(len(x), 8)
	if n > 0 {
		s = r.sumRow(&x[0], n)
	}
	return sumTail(s, x[n:])
}

func (r *vecRowKernels) sumSqDevRowFn(x []float32, m float64) float64 {
	var s float64
	n := whole(len(x), 8)
	if n > 0 {
		s = r.sumSqDevRow(&x[0], n, m)
	}
	return sumSqDevTail(s, x[n:], m)
}

// The assembly checks no bounds: the element-wise kernels first cut (and so
// check) their other slices to the length of x (or x1).

func (r *vecRowKernels) scaleMulRowFn(o, x, w []float32, s float32) {
	o, w = o[:len(x)], w[:len(x)]
	n := whole(len(x), r.lanes)
	if n > 0 {
		r.scaleMulRow(&o[0], &x[0], &w[0], n, s)
	}
	scaleMulRowGeneric(o[n:], x[n:], w[n:], s)
}

func (r *vecRowKernels) normAffineRowFn(o, x, w, b []float32, m, s float32) {
	o, w, b = o[:len(x)], w[:len(x)], b[:len(x)]
	n := whole(len(x), r.lanes)
	if n > 0 {
		r.normAffineRow(&o[0], &x[0], &w[0], &b[0], n, m, s)
	}
	normAffineRowGeneric(o[n:], x[n:], w[n:], b[n:], m, s)
}

func (r *vecRowKernels) rotateRowFn(x1, x2, c, s []float32) {
	x2, c, s = x2[:len(x1)], c[:len(x1)], s[:len(x1)]
	n := whole(len(x1), r.lanes)
	if n > 0 {
		r.rotateRow(&x1[0], &x2[0], &c[0], &s[0], n)
	}
	rotateRowGeneric(x1[n:], x2[n:], c[n:], s[n:])
}

// The bias kernels take o, v and b checked by their callers (checkRows).

func (r *vecRowKernels) addBiasRowsFn(o []float32, ldo int, v []float32, ldv int, b []float32, rows, n int) {
	w := whole(n, r.lanes)
	if w > 0 {
		r.addBiasRows(&o[0], ldo, &v[0], ldv, &b[0], rows, w)
	}
	if w < n {
		addBiasRowsGeneric(o[w:], ldo, v[w:], ldv, b[w:], rows, n-w)
	}
}

func (r *vecRowKernels) accBiasRowsFn(o []float32, ldo int, v []float32, ldv int, b []float32, rows, n int) {
	w := whole(n, r.lanes)
	if w > 0 {
		r.accBiasRows(&o[0], ldo, &v[0], ldv, &b[0], rows, w)
	}
	if w < n {
		accBiasRowsGeneric(o[w:], ldo, v[w:], ldv, b[w:], rows, n-w)
	}
}
