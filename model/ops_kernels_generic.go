//go:build !(goexperiment.simd && amd64)

package model

// Without GOEXPERIMENT=simd on amd64, the hot loops (gemmNT's dot products, the
// exponentials of softmax and of the loss, GELU) run the portable kernels.

// kernels is the kernel set in use.
var kernels = kernelsGeneric

// kernelSets lists the kernel sets this build can run, for tests.
func kernelSets() []kernelSet { return []kernelSet{kernelsGeneric} }

func dot2x4(a0, a1, b0, b1, b2, b3 []float32) (c00, c01, c02, c03, c10, c11, c12, c13 float32) {
	return dot2x4Generic(a0, a1, b0, b1, b2, b3)
}

func dot1x4(a, b0, b1, b2, b3 []float32) (c0, c1, c2, c3 float32) {
	return dot1x4Generic(a, b0, b1, b2, b3)
}

func dot1x1(a, b []float32) float32 { return dot1x1Generic(a, b) }

func expSubRow(row []float32, m float32) float32 { return expSubRowGeneric(row, m) }

func sumExpSub(row []float32, m float32) float32 { return sumExpSubGeneric(row, m) }

func geluRow(x []float32) { geluRowGeneric(x) }
