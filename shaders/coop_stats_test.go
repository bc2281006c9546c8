package shaders

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// TestCoopDriverStats, with $WGPU_TEST_COOP_STATS set, compiles
// matmul_coop.wgsl on the device's own compiler for the default tiling
// and every shape the autotuner times (coopShapes), each with w's tile
// row-major and n-major (WT 0 and 1), STORE and vec4 loads: every pipeline
// must compile; the driver's statistics (VK_KHR_pipeline_executable_properties:
// registers, spills, workgroup memory, occupancy, under its names) are
// printed, one line per pipeline ("TILING: NAME=VALUE; ..."), after a line "=== pipeline TILING"
// written to stderr just before its compile, so that a driver's own dump
// (RADV_DEBUG=shaders) can be split by pipeline (bench/aco_coop.py counts
// the loads and stores of the main loop in RADV's). It runs on a device
// with matrix units and pipeline statistics, among them RADV on null
// hardware (RADV_FORCE_FAMILY: the pipelines compile, nothing runs), which
// is why the device is never closed: there, waiting for its idle queue
// crashes; the process's exit frees it.
func TestCoopDriverStats(t *testing.T) {
	if os.Getenv("WGPU_TEST_COOP_STATS") == "" {
		t.Skip("a diagnostic: set $WGPU_TEST_COOP_STATS")
	}
	inst, err := wgpu.CreateInstance(&wgpu.InstanceDescriptor{})
	if err != nil {
		t.Fatal(err)
	}
	ad, err := inst.RequestAdapter(os.Getenv("WGPU_ADAPTER"))
	if err != nil {
		t.Fatal(err)
	}
	feats := []wgpu.FeatureName{wgpu.FeatureShaderF16, wgpu.FeatureSubgroups, wgpu.FeatureCooperativeMatrix, wgpu.FeatureSubgroupSizeControl, wgpu.FeaturePipelineStatistics}
	for _, f := range feats {
		if !ad.HasFeature(f) {
			t.Skipf("%s: no feature %v", ad.Info().Name, f)
		}
	}
	dev, err := ad.RequestDevice(&wgpu.DeviceDescriptor{RequiredFeatures: feats, PipelineCacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, ok := pickMatrixConfig(deviceMatrixConfigs(dev))
	if !ok {
		t.Skipf("%s: no matrix configuration the kernels take", ad.Info().Name)
	}
	sgs := cfg.SubgroupSize
	if sgs == 0 {
		sgs = int(dev.Limits().SubgroupSize)
	}
	var tilings []coopTiles
	add := func(tl coopTiles) {
		for _, wt := range []int{0, 1} {
			tl.WT = wt
			if !slices.Contains(tilings, tl) && tl.fits(dev) == nil {
				tilings = append(tilings, tl)
			}
		}
	}
	add(coopMatmulTiles(cfg, sgs))
	for _, s := range coopShapes {
		if tl, ok := s.tiles(cfg, sgs, int(dev.Limits().MaxComputeWorkgroupStorageSize)); ok {
			add(tl)
		}
	}
	fmt.Printf("%s: %v, subgroups of %d\n", ad.Info().Name, cfg, sgs)
	for _, tl := range tilings {
		k, err := newCoopKernel(dev, "matmul_coop.wgsl", tl)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(os.Stderr, "\n=== pipeline %v\n", tl)
		p, err := k.pipeline(tl.constSet().with("EPI", float64(epiStore)).with("VEC", 1))
		if err != nil {
			t.Fatalf("%v: %v", tl, err)
		}
		st, err := pipelineStats(p)
		if err != nil {
			t.Fatalf("%v: %v", tl, err)
		}
		line := tl.String() + ":"
		for _, name := range slices.Sorted(maps.Keys(st)) {
			line += fmt.Sprintf(" %s=%v;", name, st[name])
		}
		fmt.Println(line)
	}
}
