package shaders

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
)

// BenchmarkLMHead runs lmhead_loss.wgsl (VT 256, or the largest power of two
// whose loops fit lavapipe's limit) and lmhead_loss_shared.wgsl (its default
// tiles) on the test device at GPT-2's lm_head shape for 512 positions
// (P 512, C 768, V 50257), one dispatch and wait per iteration, reporting
// GFLOP/s (2·P·V·C flops per dispatch). On software adapters the shape is
// P 64, C 256, V 4096 unless WGPU_BENCH_LMHEAD_FULL=1 (minutes per dispatch
// there, and f32 wte exceeds lavapipe's 128 MiB binding limit).
func BenchmarkLMHead(b *testing.B) {
	d := newTestDev(b)
	P, C, V := 512, 768, 50257
	if Software(d.info) && os.Getenv("WGPU_BENCH_LMHEAD_FULL") == "" {
		P, C, V = 64, 256, 4096
	}
	h := randF32(1, P*C, 0, 1)
	wte := randF32(2, V*C, 0, 0.02)
	r := rand.New(rand.NewPCG(3, 0x5eed))
	tb := make([]byte, 4*P)
	for i := range P {
		binary.LittleEndian.PutUint32(tb[4*i:], uint32(r.IntN(V)))
	}
	plainVT := 256
	for Software(d.info) && plainVT > 4 && plainVT*(C+1) > loopBudget {
		plainVT /= 2
	}
	kernels := []struct {
		file   string
		consts map[string]float64
		groups func(p *Pipeline) [3]uint32
	}{
		{"lmhead_loss.wgsl", map[string]float64{"VT": float64(plainVT)}, func(p *Pipeline) [3]uint32 {
			return [3]uint32{uint32(ceilDiv(ceilDiv(P, 4), int(p.WorkgroupSize[0]))), uint32(ceilDiv(V, plainVT)), 1}
		}},
		{"lmhead_loss_shared.wgsl", nil, func(*Pipeline) [3]uint32 {
			return lossSharedGroups(P, V, sharedLMHeadRows, sharedVocabTile, sharedSliceTiles)
		}},
	}
	for _, f16 := range d.weightTypes() {
		wb := weightBytes(append([]float32(nil), wte...), f16)
		for _, kc := range kernels {
			b.Run(fmt.Sprintf("%s/f16=%v", kc.file, f16), func(b *testing.B) {
				k, err := NewKernel(d.dev, kc.file, f16)
				if err != nil {
					b.Fatal(err)
				}
				p, err := k.Pipeline(kc.consts)
				if err != nil {
					b.Fatal(err)
				}
				tiles := ceilDiv(V, 4) // enough rows of part for either kernel's VT
				bufs := map[string]Buf{
					"h": {Buffer: d.buffer(b, "h", f32Bytes(h))}, "wte": {Buffer: d.buffer(b, "wte", wb)},
					"targets": {Buffer: d.buffer(b, "targets", append(tb, make([]byte, 4*P)...))}, "part": {Buffer: d.buffer(b, "part", make([]byte, 8*tiles*P))},
				}
				params := Params{"P": float64(P), "C": float64(C), "V": float64(V), "v0": 0}
				groups := kc.groups(p)
				benchDispatch(b, d, p, bufs, params, groups)
				b.ReportMetric(2*float64(P)*float64(V)*float64(C)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
