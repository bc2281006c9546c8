//go:build (amd64 || arm64) && !purego

package model

// vecRows are a vector set's kernels of the softmax, the loss and the MLPs'
// activations, each over the first n - n%lanes elements of a row; the
// methods below (the kernel table's functions) do the rest with the
// portable code, so a row's tail is computed alike in every set of the
// same lanes. AVX2 and AVX-512 have 8 and 16 lanes; NEON's kernels take 8
// (two vectors of 4) and compute AVX2's bits.
type vecRows struct {
	lanes                int
	divMaxRow            func(row *float32, n int, d float32) float32
	maxRow               func(row *float32, n int) float32
	mulRow               func(row *float32, n int, m float32)
	expSubRow, sumExpSub func(row *float32, n int, m float32) float32
	geluRow              func(x *float32, n int)
	swigluRow            func(gate, up *float32, n int)
	geluErfRow           func(x *float32, n int)
}

func (v *vecRows) divMaxRowFn(row []float32, d float32) float32 {
	w := v.lanes
	if len(row) < w {
		return divMaxRowGeneric(row, d)
	}
	mx := v.divMaxRow(&row[0], len(row), d)
	return max(mx, divMaxRowGeneric(row[len(row)&^(w-1):], d))
}

func (v *vecRows) maxRowFn(row []float32) float32 {
	w := v.lanes
	if len(row) < w {
		return maxRowGeneric(row)
	}
	mx := v.maxRow(&row[0], len(row))
	return max(mx, maxRowGeneric(row[len(row)&^(w-1):]))
}

func (v *vecRows) mulRowFn(row []float32, m float32) {
	w := v.lanes
	if len(row) < w {
		mulRowGeneric(row, m)
		return
	}
	v.mulRow(&row[0], len(row), m)
	mulRowGeneric(row[len(row)&^(w-1):], m)
}

func (v *vecRows) expSubRowFn(row []float32, m float32) float32 {
	w := v.lanes
	var sum float32
	i := 0
	if len(row) >= w {
		sum = v.expSubRow(&row[0], len(row), m)
		i = len(row) &^ (w - 1)
	}
	for ; i < len(row); i++ {
		e := expf(row[i] - m)
		row[i] = e
		sum += e
	}
	return sum
}

func (v *vecRows) sumExpSubFn(row []float32, m float32) float32 {
	w := v.lanes
	var sum float32
	i := 0
	if len(row) >= w {
		sum = v.sumExpSub(&row[0], len(row), m)
		i = len(row) &^ (w - 1)
	}
	for ; i < len(row); i++ {
		sum += expf(row[i] - m)
	}
	return sum
}

// geluRowFn is geluRow with v's kernel, which uses the identity
// 0.5·x·(1 + tanh(u)) = x / (1 + e^(-2u)), u = sqrt(2/π)·(x + 0.044715·x³).
func (v *vecRows) geluRowFn(x []float32) {
	w := v.lanes
	i := 0
	if len(x) >= w {
		v.geluRow(&x[0], len(x))
		i = len(x) &^ (w - 1)
	}
	for ; i < len(x); i++ {
		x[i] = gelu(x[i])
	}
}

// geluErfRowFn is geluErfRow with v's kernel (the same erfc fit in float32),
// the tail by the scalar code.
func (v *vecRows) geluErfRowFn(x []float32) {
	w := v.lanes
	i := 0
	if len(x) >= w {
		v.geluErfRow(&x[0], len(x))
		i = len(x) &^ (w - 1)
	}
	geluErfRowGeneric(x[i:])
}

// swigluRowFn is swigluRow with v's kernel (u as long as g), the tail by
// the scalar silu.
func (v *vecRows) swigluRowFn(g, u []float32) {
	w := v.lanes
	i := 0
	if len(g) >= w {
		v.swigluRow(&g[0], &u[0], len(g))
		i = len(g) &^ (w - 1)
	}
	swigluRowGeneric(g[i:], u[i:])
}

// vecRowKernels are one vector set's assembly row kernels (ops_rows.go; lanes
// wide, the sums 8 float64 lanes at every width). Each covers the first
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
