package model

// Kernels names the dot-product kernel set in use, for the external tests'
// benchmark reports.
func Kernels() string { return kernels.String() }
