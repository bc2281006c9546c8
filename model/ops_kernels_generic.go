//go:build !amd64 || purego

package model

import "os"

// Other architectures (and purego builds) run the portable kernels for the hot
// loops: gemmNT's dot products, the exponentials of softmax and of the loss, GELU.

// kernels is the kernel set in use.
var kernels = kernelsGeneric

// kernelSets lists the kernel sets this build can run, for tests.
func kernelSets() []kernelSet { return []kernelSet{kernelsGeneric} }

// gemmNTVec is never called here (kernels is always kernelsGeneric).
func gemmNTVec(out []float32, ldo int, a []float32, lda int, b []float32, ldb int, M, N, K int) {
	gemmNTGeneric(out, ldo, a, lda, b, ldb, M, N, K)
}

// gemmNT16Vec is never called here (kernels is always kernelsGeneric).
func gemmNT16Vec(out []float32, ldo int, a []float32, lda int, b []uint16, ldb int, M, N, K int, dtype DType) {
	gemmNT16Generic(out, ldo, a, lda, b, ldb, M, N, K, dtype)
}

// gemmNNVec is never called here (kernels is always kernelsGeneric).
func gemmNNVec(out []float32, ldo int, a []float32, lda int, b []float32, ldb int, M, N, K int) {
	gemmNNGeneric(out, ldo, a, lda, b, ldb, M, N, K)
}

func dot1x1(a, b []float32) float32 { return dot1x1Generic(a, b) }

func divMaxRow(row []float32, d float32) float32 { return divMaxRowGeneric(row, d) }

func mulRow(row []float32, m float32) { mulRowGeneric(row, m) }

func expSubRow(row []float32, m float32) float32 { return expSubRowGeneric(row, m) }

func sumExpSub(row []float32, m float32) float32 { return sumExpSubGeneric(row, m) }

func geluRow(x []float32) { geluRowGeneric(x) }

// kernelsEnv names the kernel set to use; only "generic" means anything here.
const kernelsEnv = "WGPU_EVAL_CPU_KERNELS"

// dpbfAVX512 is never used here (hasBF16Kernels is false).
var dpbfAVX512 dpbfKernels

func hasBF16Kernels() bool { return false }

func portableKernelsAsked() bool { return os.Getenv(kernelsEnv) == "generic" }
