package model

import (
	"testing"
	"time"
)

// Kernels names the kernel set in use (see kernelSet), for the external tests'
// benchmark reports.
func Kernels() string { return kern.set.String() }

// RefNLLBF16 is the float64 reference forward with the bf16 mode's roundings
// (refNLLRounded with roundBF16Ref), for the external tests.
func RefNLLBF16(m *Model, tokens []int32) []float64 { return refNLLRounded(m, tokens, roundBF16Ref) }

// ProcCPU is the CPU time this process has used (procCPU), for the external
// tests' benchmark reports.
func ProcCPU() time.Duration { return procCPU() }

// RefNLL is the float64 reference forward (refNLL), for the external tests.
func RefNLL(m *Model, tokens []int32) []float64 { return refNLL(m, tokens) }

// BF16Hardware reports whether this CPU runs the VDPBF16PS kernels.
func BF16Hardware() bool { return hasBF16Kernels() }

// bf16AsmEmulated is set (emu_amd64_test.go) where dpbfAVX512 holds the
// VDPBF16PS kernels run in the x86 emulator, on CPUs without AVX512_BF16.
var bf16AsmEmulated bool

// BF16Asm reports whether the bf16 mode's VDPBF16PS kernels can run here,
// natively or in the emulator; where emulated, it makes the bf16 mode
// (NewCPUBF16, LoadCPU) pick them until t ends. Not for parallel tests.
func BF16Asm(t testing.TB) bool {
	if hasBF16Kernels() {
		return true
	}
	if !bf16AsmEmulated {
		return false
	}
	bf16Emulated = true
	t.Cleanup(func() { bf16Emulated = false })
	return true
}

// amxAsmEmulated is set (emu_amx_amd64_test.go) while the AMX kernels are
// the assembly run in the x86 emulator, on CPUs without AMX.
var amxAsmEmulated bool

// AMXAsm reports whether the bf16 mode's AMX kernels can run here, natively
// or in the emulator; where emulated, it makes the bf16 mode pick them until
// t ends (unless WGPU_EVAL_CPU_KERNELS declines them). Not for parallel
// tests.
func AMXAsm(t testing.TB) bool {
	if hasAMX() {
		return true
	}
	if !amxAsmEmulated {
		return false
	}
	amxEmulated = true
	t.Cleanup(func() { amxEmulated = false })
	return true
}

// AMXAsmEmulated reports whether the AMX kernels run in the emulator.
func AMXAsmEmulated() bool { return amxAsmEmulated && !hasAMX() }

// BF16AsmEmulated reports whether the VDPBF16PS kernels run in the emulator.
func BF16AsmEmulated() bool { return bf16AsmEmulated && !hasBF16Kernels() }

// RefLlamaNLL is the float64 Llama-family reference forward (refLlamaNLL),
// for the external tests.
func RefLlamaNLL(m *Model, tokens []int32) []float64 { return refLlamaNLL(m, tokens) }

// RefLlamaNLLBF16 is the float64 Llama-family reference forward with the
// bf16 mode's roundings (refLlamaNLLRounded with roundBF16Ref), for the
// external tests.
func RefLlamaNLLBF16(m *Model, tokens []int32) []float64 {
	return refLlamaNLLRounded(m, tokens, roundBF16Ref)
}

// KernelSets names the kernel sets the tests compare (kernelSets), for the
// external tests.
func KernelSets() []string {
	var names []string
	for _, s := range kernelSets() {
		names = append(names, s.String())
	}
	return names
}

// UseKernels runs the kernel set named as KernelSets names it until t ends.
// Not for parallel tests.
func UseKernels(t testing.TB, name string) {
	for _, s := range kernelSets() {
		if s.String() == name {
			t.Cleanup(useKernels(s))
			return
		}
	}
	t.Fatalf("no kernel set %q here", name)
}

// NoPanels makes the kernel set in use lack its panel kernels until t ends,
// so that CPUs built meanwhile keep their matrices in rows (the dot-product
// kernels), for comparisons with the panel layout. Not for parallel tests.
func NoPanels(t testing.TB) {
	old := kern
	k := *kern
	k.panelF32, k.panelF16, k.panelBF16 = nil, nil, nil
	kern = &k
	t.Cleanup(func() { kern = old })
}

// Panels reports whether c keeps its matrices in the panel layout.
func (c *CPU) Panels() bool { return c.wte.pk != 0 }
