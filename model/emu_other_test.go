//go:build !amd64 || purego

package model

// KernelSetEmulated reports whether the kernel set named as KernelSets
// names it runs in an emulator here: never in this build (emu_amd64_test.go
// emulates AVX-512 on amd64).
func KernelSetEmulated(string) bool { return false }
