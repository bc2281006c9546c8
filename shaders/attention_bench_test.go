package shaders

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// BenchmarkAttention runs attention.wgsl and attention_shared.wgsl (at the
// blockings of GPUs and of CPU drivers), and where the device has subgroups
// of a multiple of 4 attention_shared_subgroup.wgsl at the GPUs' blocking
// with QS 4 (attnTilesFor's at head size 64), at GPT-2's head shape (12 heads of
// 64 channels) on the test device, one dispatch and wait per iteration, for a
// whole window of 64 rows and for a chunk of 32 rows after 96 cached
// positions, reporting GFLOP/s (4·hd flops per visible key of each query row
// and head).
func BenchmarkAttention(b *testing.B) {
	const B, H, hd = 1, 12, 64
	const C = H * hd
	d := newTestDev(b)
	type variant struct {
		file  string
		tiles attnTiles // attention_shared.wgsl's or attention_shared_subgroup.wgsl's
	}
	variants := []variant{{file: "attention.wgsl"}}
	tilings := []attnTiles{defaultAttnTiles, softwareAttnTiles}
	if d.dev.HasFeature(wgpu.FeatureSubgroups) && d.dev.Limits().SubgroupSize%4 == 0 {
		tilings = append(tilings, attnTiles{BQ: 64, BKV: 32, QS: 4})
	}
	for _, t := range tilings {
		if t.invocations() <= int(d.dev.Limits().MaxComputeInvocationsPerWorkgroup) && t.sharedBytes(hd) <= int(d.dev.Limits().MaxComputeWorkgroupStorageSize) {
			variants = append(variants, variant{t.kernel(), t})
		}
	}
	for _, sh := range []struct{ T, pos0 int }{{64, 0}, {32, 96}} {
		S := sh.pos0 + sh.T
		qkv := randF32(1, B*sh.T*3*C, 0, 1)
		cache := randF32(2, B*H*S*hd, 0, 1)
		flops := 0.0
		for t := range sh.T {
			flops += float64(B*H) * 4 * hd * float64(sh.pos0+t+1)
		}
		for _, v := range variants {
			name := v.file
			consts := map[string]float64{"HD": hd}
			groups := grid(ceilDiv(B*H*sh.T, 64))
			if v.tiles.BQ > 0 {
				name += fmt.Sprintf(",BQ=%d,BKV=%d,QS=%d", v.tiles.BQ, v.tiles.BKV, v.tiles.qs())
				consts, groups = v.tiles.constants(hd), grid(v.tiles.groups(B, H, sh.T))
			}
			b.Run(fmt.Sprintf("%s/T=%d,pos0=%d", name, sh.T, sh.pos0), func(b *testing.B) {
				k, err := NewKernel(d.dev, v.file, false)
				if err != nil {
					b.Fatal(err)
				}
				p, err := k.Pipeline(consts)
				if err != nil {
					b.Fatal(err)
				}
				bufs := map[string]Buf{
					"qkv": {Buffer: d.buffer(b, "qkv", f32Bytes(qkv))}, "kc": {Buffer: d.buffer(b, "kc", f32Bytes(cache))},
					"vc": {Buffer: d.buffer(b, "vc", f32Bytes(cache))}, "out": {Buffer: d.buffer(b, "out", make([]byte, 4*B*sh.T*C))},
				}
				params := Params{"B": B, "T": float64(sh.T), "C": C, "H": H, "KV": H, "S": float64(S), "pos0": float64(sh.pos0), "ld": 3 * C, "lscale": 1}
				benchDispatch(b, d, p, bufs, params, groups)
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkLayerNorm runs layernorm.wgsl and, where the device has subgroup
// operations, layernorm_subgroup.wgsl and layernorm_rows.wgsl at GPT-2's
// width for 64 rows (C 768, f32 weights) at several workgroup sizes, one
// dispatch and wait per iteration, reporting GB/s (x read and out written
// once: 8 bytes a value).
func BenchmarkLayerNorm(b *testing.B) {
	const rows, C = 64, 768
	d := newTestDev(b)
	x, w, bias := randF32(1, rows*C, 0.3, 2), randF32(2, C, 1, 0.2), randF32(3, C, 0, 0.1)
	files := []string{"layernorm.wgsl"}
	if d.dev.HasFeature(wgpu.FeatureSubgroups) {
		files = append(files, "layernorm_subgroup.wgsl", "layernorm_rows.wgsl")
	}
	for _, file := range files {
		for _, wg := range []int{8, 32, 64, 128, 256} {
			groups := grid(rows)
			if file == "layernorm_rows.wgsl" {
				perGroup, ok := normRowsFit(d.dev.Limits(), wg, C)
				if !ok || wg < int(d.dev.Limits().MaxSubgroupSize) {
					continue
				}
				groups = grid(ceilDiv(rows, perGroup))
			}
			if file == "layernorm_subgroup.wgsl" && C > lnSubgroupValues*wg || wg > int(d.dev.Limits().MaxComputeInvocationsPerWorkgroup) {
				continue
			}
			b.Run(fmt.Sprintf("%s/WG=%d", file, wg), func(b *testing.B) {
				k, err := NewKernel(d.dev, file, false)
				if err != nil {
					b.Fatal(err)
				}
				p, err := k.Pipeline(map[string]float64{"WG": float64(wg)})
				if err != nil {
					b.Fatal(err)
				}
				bufs := map[string]Buf{
					"x": {Buffer: d.buffer(b, "x", f32Bytes(x))}, "w": {Buffer: d.buffer(b, "w", f32Bytes(w))},
					"b": {Buffer: d.buffer(b, "b", f32Bytes(bias))}, "out": {Buffer: d.buffer(b, "out", make([]byte, 4*rows*C))},
				}
				benchDispatch(b, d, p, bufs, Params{"rows": rows, "C": C, "eps": 1e-5}, groups)
				b.ReportMetric(8*rows*C*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			})
		}
	}
}

// BenchmarkAttentionCoop times attention_coop.wgsl (the default tiling and
// its variants: tiles of 32 and 64 keys, 2 and 4 subgroups) against
// attention_shared.wgsl at GPT-2 124M's attention shape: B windows of 1024
// rows (B from $WGPU_BENCH_ATTN_B, default 8; the forward's batches have 64),
// 12 heads of 64 channels, pos0 0 (the whole causal triangle), one dispatch
// and wait per iteration, reporting GFLOP/s (4·hd flops per visible key of
// each row and head) and ms per window. It needs a device with matrix units
// (skipped elsewhere: lowered, the kernel is no measure of anything).
func BenchmarkAttentionCoop(b *testing.B) {
	const T, H, hd = 1024, 12, 64
	const C = H * hd
	d := newTestDevWith(b, wgpu.FeatureCooperativeMatrix, wgpu.FeatureSubgroupSizeControl)
	cfg, ok := pickMatrixConfig(deviceMatrixConfigs(d.dev))
	if !ok {
		b.Skipf("%s has no matrix units the coop kernels take", d.info.Name)
	}
	B := attnBenchWindows(b)
	sgs := cfg.SubgroupSize
	if sgs == 0 {
		sgs = int(d.dev.Limits().SubgroupSize)
	}
	def, err := attnCoopTilesFor(cfg, sgs, hd, d.dev.Limits())
	if err != nil {
		b.Fatal(err)
	}
	tilings := []attnCoopTiles{def}
	for _, v := range []struct{ BKV, SG int }{{32, 4}, {64, 2}, {32, 2}} {
		t := def
		t.BKV, t.SG = v.BKV, v.SG
		if t != def && t.fits(d.dev.Limits()) == nil {
			tilings = append(tilings, t)
		}
	}
	qkv := randF32(1, B*T*3*C, 0, 1)
	cache := randF32(2, B*H*T*hd, 0, 1)
	bufs := map[string]Buf{
		"qkv": {Buffer: d.buffer(b, "qkv", f32Bytes(qkv))}, "kc": {Buffer: d.buffer(b, "kc", f32Bytes(cache))},
		"vc": {Buffer: d.buffer(b, "vc", f32Bytes(cache))}, "out": {Buffer: d.buffer(b, "out", make([]byte, 4*B*T*C))},
	}
	params := Params{"B": float64(B), "T": T, "C": C, "H": H, "KV": H, "S": T, "pos0": 0, "ld": 3 * C, "lscale": 1}
	flops := float64(B*H) * 4 * hd * float64(T) * float64(T+1) / 2
	report := func(b *testing.B) {
		s := b.Elapsed().Seconds() / float64(b.N)
		b.ReportMetric(flops/s/1e9, "GFLOP/s")
		b.ReportMetric(s*1e3/float64(B), "ms/window")
	}
	st := attnTilesFor(d.dev, hd)
	b.Run(fmt.Sprintf("attention_shared,BQ=%d,BKV=%d,QS=%d/B=%d", st.BQ, st.BKV, st.qs(), B), func(b *testing.B) {
		k, err := NewKernel(d.dev, st.kernel(), false)
		if err != nil {
			b.Fatal(err)
		}
		p, err := k.Pipeline(st.constants(hd))
		if err != nil {
			b.Fatal(err)
		}
		benchDispatch(b, d, p, bufs, params, grid(st.groups(B, H, T)))
		report(b)
	})
	for _, t := range tilings {
		b.Run(fmt.Sprintf("attention_coop,%s,BQ=%d,BKV=%d/B=%d", cfg, t.BQ(), t.BKV, B), func(b *testing.B) {
			k, err := newAttnCoopKernel(d.dev, t)
			if err != nil {
				b.Fatal(err)
			}
			p, err := k.pipeline(constSet{})
			if err != nil {
				b.Fatal(err)
			}
			benchDispatch(b, d, p, bufs, params, grid(t.groups(B, H, T)))
			report(b)
		})
	}
}

// attnBenchWindows is the windows of 1024 rows the coop attention
// benchmarks take: $WGPU_BENCH_ATTN_B, default 8.
func attnBenchWindows(b *testing.B) int {
	s := os.Getenv("WGPU_BENCH_ATTN_B")
	if s == "" {
		return 8
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("$WGPU_BENCH_ATTN_B=%q: want a positive count", s)
	}
	return n
}
