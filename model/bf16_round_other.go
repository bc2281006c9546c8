//go:build !amd64 || purego

package model

// roundBF16AVX512 is never used here (the bf16AVX512 set is never chosen).
var roundBF16AVX512 func(dst *uint16, x *float32, n int)
