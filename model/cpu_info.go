package model

// Kernels names the kernel set the CPU path runs in this build on this
// machine ("generic", "avx2", "avx512"), for provenance.
func (c *CPU) Kernels() string { return kernels.String() }

// Threads is the goroutines the CPU path uses.
func (c *CPU) Threads() int { return c.threads }
