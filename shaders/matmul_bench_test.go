package shaders

import (
	"fmt"
	"testing"
)

// BenchmarkMatmul runs matmul.wgsl and matmul_shared.wgsl with their default
// tiles at GPT-2's attention-projection shape for 256 tokens (M 256, K 768,
// N 768, EPI 0) on the test device, one dispatch and wait per iteration,
// reporting GFLOP/s (2·M·N·K flops per dispatch).
func BenchmarkMatmul(b *testing.B) {
	const M, K, N = 256, 768, 768
	d := newTestDev(b)
	x := randF32(1, M*K, 0, 1)
	w, bias := randF32(2, K*N, 0, 0.02), randF32(3, N, 0, 0.1)
	kernels := []struct {
		file   string
		groups [3]uint32
	}{
		{"matmul.wgsl", matmulGroups(M, N, 64, 65535)},
		{"matmul_shared.wgsl", sharedGroups(M, N, defaultMatmulTiles.BM, defaultMatmulTiles.BN, 65535)},
	}
	for _, f16 := range d.weightTypes() {
		for _, kc := range kernels {
			b.Run(fmt.Sprintf("%s/f16=%v", kc.file, f16), func(b *testing.B) {
				k, err := NewKernel(d.dev, kc.file, f16)
				if err != nil {
					b.Fatal(err)
				}
				p, err := k.Pipeline(nil)
				if err != nil {
					b.Fatal(err)
				}
				bufs := map[string]Buf{
					"x": {Buffer: d.buffer(b, "x", f32Bytes(x))}, "w": {Buffer: d.buffer(b, "w", weightBytes(w, f16))},
					"bias": {Buffer: d.buffer(b, "bias", weightBytes(bias, f16))}, "out": {Buffer: d.buffer(b, "out", make([]byte, 4*M*N))},
				}
				params := Params{"M": M, "N": N, "K": K}
				if kc.file == "matmul_shared.wgsl" { // the KV cache bindings of its c_attn epilogue, unused here
					bufs["kc"], bufs["vc"] = Buf{Buffer: d.buffer(b, "kc", make([]byte, 16))}, Buf{Buffer: d.buffer(b, "vc", make([]byte, 16))}
					params["T"], params["H"], params["S"], params["pos0"] = 1, 1, 1, 0
				}
				d.run(b, p, bufs, params, kc.groups) // warm-up
				if err := d.dev.Queue().WaitIdle(); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for b.Loop() {
					d.run(b, p, bufs, params, kc.groups)
					if err := d.dev.Queue().WaitIdle(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(2*M*N*K*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
