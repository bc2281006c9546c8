//go:build !amd64 || purego

package model

// The bf16-amx kernels exist on amd64 only.

func hasAMX() bool { return false }

func amxDeclined() bool { return true }

func gemmBF16AMX(out []float32, ldo int, a []uint16, b []uint16, ldb int, M, N, K int) {
	panic("gemmBF16AMX: no AMX kernels in this build")
}

// amxChunkSteps is unused here (tests set it).
var amxChunkSteps = 8
