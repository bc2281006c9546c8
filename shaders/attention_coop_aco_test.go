package shaders

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// attnACOSpills are the tilings of attention_coop.wgsl at head size 64
// (attnCoopLabel, on RDNA3's 16x16x16 with subgroups of 32) that ACO, AMD's
// compiler, spills: FM2 BKV64 SG2 keeps Q in registers (QW 0: with it in
// workgroup memory the block needs 54272 bytes, past NVIDIA's 48 KiB),
// 64 f16 values an invocation that ACO counts a register each while it
// plans (its register demand), beside 64 f32 of output and 64 scores.
var attnACOSpills = []string{"attention_coop[16x16x16 HD64 FM2 BKV64 SG2 PF0]"}

// TestAttentionCoopACO compiles every tiling the autotuner times of
// attention_coop.wgsl at head size 64 (the default, then attnCoopShapes),
// and the default tilings of head sizes 80 and 128 on NVIDIA's 48 KiB, on
// a Mesa RADV device with matrix units, and fails where ACO spills
// registers (Spilled VGPRs) but for attnACOSpills, logging each tiling's
// VGPRs, spills, workgroup memory, subgroups per SIMD and instructions: the
// figures BENCHMARKS.md quotes. A measurement: it runs with
// $WGPU_EVAL_ACO_STATS set, on RADV's null hardware (no GPU: a fake RX 7900
// XTX whose pipelines ACO compiles, RADV_FORCE_FAMILY=navi31 with Mesa 25)
// or an AMD GPU; elsewhere, or where the driver reports no spills, it
// skips. The device is never closed (on null hardware closing it crashes:
// it has no queue to wait for); the process's end frees it.
func TestAttentionCoopACO(t *testing.T) {
	if os.Getenv("WGPU_EVAL_ACO_STATS") == "" {
		t.Skip("a measurement: set WGPU_EVAL_ACO_STATS on RADV (null hardware: RADV_FORCE_FAMILY=navi31)")
	}
	inst, err := wgpu.CreateInstance(&wgpu.InstanceDescriptor{})
	if err != nil {
		t.Fatal(err)
	}
	ad, err := inst.RequestAdapter(os.Getenv("WGPU_ADAPTER"))
	if err != nil {
		t.Fatal(err)
	}
	feats := []wgpu.FeatureName{wgpu.FeatureShaderF16, wgpu.FeatureSubgroups, wgpu.FeatureCooperativeMatrix,
		wgpu.FeatureSubgroupSizeControl, wgpu.FeaturePipelineStatistics}
	for _, f := range feats {
		if !ad.HasFeature(f) {
			t.Skipf("adapter %s: no %s", ad.Info().Name, f)
		}
	}
	dev, err := ad.RequestDevice(&wgpu.DeviceDescriptor{RequiredFeatures: feats, PipelineCacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, ok := pickMatrixConfig(deviceMatrixConfigs(dev))
	if !ok {
		t.Skip("no matrix configuration")
	}
	def, err := attnCoopTilesFor(cfg, cfg.SubgroupSize, 64, dev.Limits())
	if err != nil {
		t.Fatal(err)
	}
	tilings := []attnCoopTiles{def}
	for _, s := range attnCoopShapes {
		if tl, ok := s.tiles(def); ok && tl.fits(dev.Limits()) == nil && !slices.Contains(tilings, tl) {
			tilings = append(tilings, tl)
		}
	}
	// The default tilings of head sizes 80 and 128 within NVIDIA's 48 KiB
	// (where QW starts: Q in registers at 80, in workgroup memory at 128).
	nvidia := wgpu.Limits{MaxComputeWorkgroupStorageSize: 48 << 10, MaxComputeInvocationsPerWorkgroup: 1024}
	for _, hd := range []int{80, 128} {
		tl, err := attnCoopTilesFor(cfg, cfg.SubgroupSize, hd, nvidia)
		if err != nil {
			t.Fatal(err)
		}
		tilings = append(tilings, tl)
	}
	for _, tl := range tilings {
		k, err := newAttnCoopKernel(dev, tl)
		if err != nil {
			t.Fatal(err)
		}
		p, err := k.Pipeline(nil)
		if err != nil {
			t.Fatal(err)
		}
		st, err := p.cp.Statistics()
		if err != nil {
			t.Fatal(err)
		}
		spilled, ok := st.Lookup("Spilled VGPRs")
		if !ok {
			t.Skipf("%s: the driver reports no spills (not ACO)", attnCoopLabel(tl))
		}
		stat := func(name string) any { v, _ := st.Lookup(name); return v }
		label := attnCoopLabel(tl)
		t.Logf("%-48s QW %d: VGPRs %v, spilled %v, LDS %v bytes, %v subgroups per SIMD, %v instructions", label, tl.qw(),
			stat("VGPRs"), spilled, stat("LDS size"), stat("Subgroups per SIMD"), stat("Instructions"))
		if fmt.Sprint(spilled) != "0" && !slices.Contains(attnACOSpills, label) {
			t.Errorf("%s: %v VGPRs spilled", label, spilled)
		}
	}
}
