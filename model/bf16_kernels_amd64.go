//go:build amd64 && !purego

package model

import (
	"os"

	"golang.org/x/sys/cpu"
)

// The bf16 products on amd64 run the generated VDPBF16PS kernels
// (ops_amd64.s, dpbf*AVX512) on CPUs with AVX512_BF16 (and AVX512F and BW,
// for the masked loads of the tail), the portable ones (bf16_gemm.go) when
// asked for. Both compute what bf16.go documents, bit for bit.

// dpbfAVX512 is the VDPBF16PS kernel table (tests may swap it).
var dpbfAVX512 = dpbfKernels{4, dpbf4x4AVX512, dpbf1x4AVX512, dpbf1x1AVX512,
	chunkKernels[uint16, uint16]{dpbf4x4StartAVX512, dpbf4x4MidAVX512, dpbf4x4EndAVX512}}

// hasBF16Kernels reports whether this CPU runs the VDPBF16PS kernels.
func hasBF16Kernels() bool {
	return cpu.X86.HasAVX512BF16 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW
}

// portableKernelsAsked reports whether kernelsEnv asks for the portable kernels.
func portableKernelsAsked() bool { return os.Getenv(kernelsEnv) == "generic" }
