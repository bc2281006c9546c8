package shaders

import "github.com/wgpu-eval/wgpu-eval/wgpu"

// attnTiles is the blocking of attention_shared.wgsl: BQ queries (and
// invocations) per workgroup, BKV keys per tile staged in workgroup memory.
type attnTiles struct{ BQ, BKV int }

// defaultAttnTiles suit GPUs: 64 queries per workgroup (two NVIDIA warps, one
// AMD wave64), tiles of 32 keys (16 KiB of workgroup memory at head size 64).
var defaultAttnTiles = attnTiles{BQ: 64, BKV: 32}

// softwareAttnTiles suit the CPU Vulkan drivers, where the hardware kernel
// set runs in tests and when forced: Debian 12's lavapipe (Mesa 22.3) runs
// the kernel 10-20x slower with workgroups of 64 invocations than of 16
// (BenchmarkAttention: 3.6-4.5 ms against 46-125 ms for 12 heads of 64 rows,
// where attention.wgsl takes 4.8 ms); SwiftShader and Mesa 25's lavapipe
// take about the same time with either.
var softwareAttnTiles = attnTiles{BQ: 16, BKV: 16}

// constants are the kernel's override constants for head size hd.
func (a attnTiles) constants(hd int) map[string]float64 {
	return map[string]float64{"HD": float64(hd), "BQ": float64(a.BQ), "BKV": float64(a.BKV)}
}

// constSet is constants as the forward pass gives them.
func (a attnTiles) constSet(hd int) constSet {
	return consts("HD", float64(hd)).with("BQ", float64(a.BQ)).with("BKV", float64(a.BKV))
}

// groups is the workgroups of B sequences x H heads x T query rows.
func (a attnTiles) groups(B, H, T int) int { return B * H * ceilDiv(T, a.BQ) }

// sharedBytes is the workgroup memory the kernel uses at head size hd.
func (a attnTiles) sharedBytes(hd int) int { return 2 * a.BKV * hd * 4 }

// attnTilesFor is the blocking for the adapter (softwareAttnTiles on CPU
// drivers, else defaultAttnTiles), halved until it fits the device's
// workgroup memory and invocations.
func attnTilesFor(info wgpu.AdapterInfo, l wgpu.Limits, hd int) attnTiles {
	a := defaultAttnTiles
	if Software(info) {
		a = softwareAttnTiles
	}
	for a.BKV > 1 && a.sharedBytes(hd) > int(l.MaxComputeWorkgroupStorageSize) {
		a.BKV /= 2
	}
	for a.BQ > 1 && a.BQ > int(l.MaxComputeInvocationsPerWorkgroup) {
		a.BQ /= 2
	}
	return a
}
