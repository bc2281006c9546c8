//go:build (!amd64 && !arm64) || purego

package model

import "os"

// Other architectures (and purego builds) run the portable kernels for the hot
// loops: gemmNT's dot products, the exponentials of softmax and of the loss, GELU.

// kern is the kernel table in use: always the portable one.
var kern = &genericKernels

// kernelTableFor is the table of set: always the portable one here.
func kernelTableFor(kernelSet) *kernelTable { return &genericKernels }

// kernelSets lists the kernel sets this build can run, for tests.
func kernelSets() []kernelSet { return []kernelSet{kernelsGeneric} }

// kernelsEnv names the kernel set to use; only "generic" means anything here.
const kernelsEnv = "WGPU_EVAL_CPU_KERNELS"

// dpbfAVX512 is never used here (hasBF16Kernels is false).
var dpbfAVX512 dpbfKernels

func hasBF16Kernels() bool { return false }

func portableKernelsAsked() bool { return os.Getenv(kernelsEnv) == "generic" }
