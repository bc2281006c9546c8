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
