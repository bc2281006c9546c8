package model

// Kernels names the kernel set in use (see kernelSet), for the external tests'
// benchmark reports.
func Kernels() string { return kernels.String() }
