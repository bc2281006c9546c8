package model

// Kernels names the kernel set in use (see kernelSet), for the external tests'
// benchmark reports.
func Kernels() string { return kernels.String() }

// RefNLLBF16 is the float64 reference forward with the bf16 mode's roundings
// (refNLLRounded with roundBF16Ref), for the external tests.
func RefNLLBF16(m *Model, tokens []int32) []float64 { return refNLLRounded(m, tokens, roundBF16Ref) }

// RefNLL is the float64 reference forward (refNLL), for the external tests.
func RefNLL(m *Model, tokens []int32) []float64 { return refNLL(m, tokens) }

// BF16Hardware reports whether this CPU runs the VDPBF16PS kernels.
func BF16Hardware() bool { return hasBF16Kernels() }
