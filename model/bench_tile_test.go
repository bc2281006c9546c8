package model

import "testing"

// benchTile runs gemm, one 64x64 tile product over K, as the sub-benchmark
// name, reporting GFLOP/s of wall time and of the process's CPU time (the
// latter where procCPU knows it: on a machine shared with other work the
// CPU time moves less than the wall time).
func benchTile(b *testing.B, name string, K int, gemm func()) {
	b.Run(name, func(b *testing.B) {
		cpu0 := procCPU()
		for range b.N {
			gemm()
		}
		flop := float64(2*64*64*K) * float64(b.N)
		b.ReportMetric(flop/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		if c := procCPU() - cpu0; c > 0 {
			b.ReportMetric(flop/c.Seconds()/1e9, "GFLOP/cpu-s")
		}
	})
}
