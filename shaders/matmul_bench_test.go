package shaders

import (
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
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

// coopBenchDevice is the device of a coop benchmark, with the matrix
// configuration the kernels take and its subgroup size, and the rows to
// time: 65536 (64 windows of 1024 tokens), or $WGPU_BENCH_COOP_M. It skips
// the benchmark on a device without matrix units or shader-f16.
func coopBenchDevice(b *testing.B) (d *testDev, cfg MatrixConfig, rows, sgs int) {
	b.Helper()
	d = newTestDevWith(b, wgpu.FeatureCooperativeMatrix, wgpu.FeatureSubgroupSizeControl)
	cfg, ok := pickMatrixConfig(deviceMatrixConfigs(d.dev))
	if !ok || !d.f16 {
		b.Skipf("%s: no matrix units the coop kernels take (or no shader-f16)", d.info.Name)
	}
	rows = 65536
	if s := os.Getenv("WGPU_BENCH_COOP_M"); s != "" {
		var err error
		if rows, err = strconv.Atoi(s); err != nil || rows < 1 {
			b.Fatalf("$WGPU_BENCH_COOP_M %q: want a positive row count", s)
		}
	}
	sgs = cfg.SubgroupSize
	if sgs == 0 {
		sgs = int(d.dev.Limits().SubgroupSize)
	}
	return d, cfg, rows, sgs
}

// BenchmarkMatmulCoop times matmul_coop.wgsl with every tiling the coop
// autotuner would try (coopMatmulTiles' default first, then coopShapes that
// fit the device), and matmul_shared.wgsl with its default tiles for
// comparison, at GPT-2 124M's four weight matmuls for 64 windows of 1024
// tokens (M 65536; $WGPU_BENCH_COOP_M for another), f16 weights, EPI 0, on
// a device with matrix units (skipped elsewhere: lowered, the tilings are
// far too slow to time). One dispatch and wait per iteration; reports
// TFLOP/s (2·M·N·K flops per dispatch). On a GPU:
//
//	go test ./shaders -run '^$' -bench MatmulCoop -benchtime 5x -timeout 20m
func BenchmarkMatmulCoop(b *testing.B) {
	d, cfg, M, sgs := coopBenchDevice(b)
	tilings := []coopTiles{coopMatmulTiles(cfg, sgs)}
	for _, s := range coopShapes {
		if t, ok := s.tiles(cfg, sgs, int(d.dev.Limits().MaxComputeWorkgroupStorageSize)); ok && t.fits(d.dev) == nil && !slices.Contains(tilings, t) {
			tilings = append(tilings, t)
		}
	}
	const C = 768
	for _, kn := range [][2]int{{C, 3 * C}, {C, C}, {C, 4 * C}, {4 * C, C}} {
		K, N := kn[0], kn[1]
		bufs := map[string]Buf{
			"x": {Buffer: d.buffer(b, "x", randomF32(uint32(K), M*K))}, "w": {Buffer: d.buffer(b, "w", weightBytes(randF32(2, K*N, 0, 0.02), true))},
			"bias": {Buffer: d.buffer(b, "bias", weightBytes(randF32(3, N, 0, 0.1), true))}, "out": {Buffer: d.buffer(b, "out", make([]byte, 4*M*N))},
			"kc": {Buffer: d.buffer(b, "kc", nil)}, "vc": {Buffer: d.buffer(b, "vc", nil)},
		}
		params := Params{"M": float64(M), "N": float64(N), "K": float64(K), "T": 1, "H": 1, "S": 1, "pos0": 0}
		time := func(b *testing.B, p *Pipeline, groups [3]uint32) {
			benchDispatch(b, d, p, bufs, params, groups)
			b.ReportMetric(2*float64(M)*float64(N)*float64(K)*float64(b.N)/b.Elapsed().Seconds()/1e12, "TFLOP/s")
		}
		for _, tl := range tilings {
			b.Run(fmt.Sprintf("K%d_N%d/%s_%dx%d_%dx%d_BK%d_EC%d", K, N, cfg, tl.SGM, tl.SGN, tl.FM, tl.FN, tl.BK, tl.EC), func(b *testing.B) {
				k, err := newCoopKernel(d.dev, "matmul_coop.wgsl", tl)
				if err != nil {
					b.Fatal(err)
				}
				p, err := k.pipeline(tl.constSet().with("EPI", float64(epiStore)).with("VEC", 1))
				if err != nil {
					b.Fatal(err)
				}
				time(b, p, sharedGroups(M, N, tl.BM(), tl.BN(), 65535))
			})
		}
		b.Run(fmt.Sprintf("K%d_N%d/simt_%v", K, N, defaultMatmulTiles), func(b *testing.B) {
			k, err := NewKernel(d.dev, "matmul_shared.wgsl", true)
			if err != nil {
				b.Fatal(err)
			}
			p, err := k.pipeline(defaultMatmulTiles.constSet().with("EPI", float64(epiStore)).with("VEC", 1))
			if err != nil {
				b.Fatal(err)
			}
			time(b, p, sharedGroups(M, N, defaultMatmulTiles.BM, defaultMatmulTiles.BN, 65535))
		})
	}
}

// BenchmarkLMHeadCoop times lmhead_loss_coop.wgsl with every LM-head tiling
// the coop autotuner would try (coopHeadTiles' default, then
// coopHeadShapes), and lmhead_loss_shared.wgsl with its default tiles, at
// GPT-2 124M's LM head (C 768, V 50257) for 64 windows of 1024 tokens
// (P 65536; $WGPU_BENCH_COOP_M for another), f16 wte, on a device with
// matrix units (skipped elsewhere). One dispatch and wait per iteration;
// reports TFLOP/s (2·P·V·C flops per dispatch). On a GPU:
//
//	go test ./shaders -run '^$' -bench LMHeadCoop -benchtime 5x -timeout 20m
func BenchmarkLMHeadCoop(b *testing.B) {
	d, cfg, P, sgs := coopBenchDevice(b)
	C, V := 768, 50257
	tilings := []coopTiles{coopHeadTiles(cfg, sgs, sharedVocabTile, sharedSliceTiles)}
	for _, s := range coopHeadShapes {
		if t, ok := s.tiles(cfg, sgs, sharedVocabTile, sharedSliceTiles, int(d.dev.Limits().MaxComputeWorkgroupStorageSize)); ok && t.fits(d.dev) == nil {
			tilings = append(tilings, t)
		}
	}
	tb := make([]byte, 4*P)
	for i := range P {
		binary.LittleEndian.PutUint32(tb[4*i:], uint32((i*7919)%V))
	}
	parts := ceilDiv(V, sharedVocabTile*sharedSliceTiles)
	bufs := map[string]Buf{
		"h": {Buffer: d.buffer(b, "h", randomF32(1, P*C))}, "wte": {Buffer: d.buffer(b, "wte", weightBytes(randF32(2, V*C, 0, 0.02), true))},
		"targets": {Buffer: d.buffer(b, "targets", append(tb, make([]byte, 4*P)...))}, "part": {Buffer: d.buffer(b, "part", make([]byte, 8*parts*P))},
	}
	coopBufs := maps.Clone(bufs) // h as to_f16.wgsl leaves it
	coopBufs["h"] = Buf{Buffer: d.buffer(b, "h16", weightBytes(randF32(1, P*C, 0, 1), true))}
	params := Params{"P": float64(P), "C": float64(C), "V": float64(V), "v0": 0}
	time := func(b *testing.B, p *Pipeline, bufs map[string]Buf, groups [3]uint32) {
		benchDispatch(b, d, p, bufs, params, groups)
		b.ReportMetric(2*float64(P)*float64(V)*float64(C)*float64(b.N)/b.Elapsed().Seconds()/1e12, "TFLOP/s")
	}
	for _, tl := range tilings {
		b.Run(fmt.Sprintf("%s_BM%d_VT%d_NT%d_%dx%d_BK%d", cfg, tl.BM(), tl.vt, tl.nt, tl.SGM, tl.SGN, tl.BK), func(b *testing.B) {
			k, err := newCoopKernel(d.dev, "lmhead_loss_coop.wgsl", tl)
			if err != nil {
				b.Fatal(err)
			}
			p, err := k.pipeline(tl.constSet())
			if err != nil {
				b.Fatal(err)
			}
			time(b, p, coopBufs, lossSharedGroups(P, V, tl.BM(), tl.vt, tl.nt))
		})
	}
	b.Run("simt", func(b *testing.B) {
		k, err := NewKernel(d.dev, "lmhead_loss_shared.wgsl", true)
		if err != nil {
			b.Fatal(err)
		}
		p, err := k.Pipeline(nil)
		if err != nil {
			b.Fatal(err)
		}
		time(b, p, bufs, lossSharedGroups(P, V, sharedLMHeadRows, sharedVocabTile, sharedSliceTiles))
	})
}
