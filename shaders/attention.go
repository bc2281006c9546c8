package shaders

import "github.com/wgpu-eval/wgpu-eval/wgpu"

// attnTiles is the blocking of attention_shared.wgsl: BQ queries (and
// invocations) per workgroup, BKV keys per tile staged in workgroup memory.
type attnTiles struct{ BQ, BKV int }

// defaultAttnTiles suit GPUs: 64 queries per workgroup (two NVIDIA warps, one
// AMD wave64), tiles of 32 keys (16 KiB of workgroup memory at head size 64).
var defaultAttnTiles = attnTiles{BQ: 64, BKV: 32}

// constants are the kernel's override constants for head size hd.
func (a attnTiles) constants(hd int) map[string]float64 {
	return map[string]float64{"HD": float64(hd), "BQ": float64(a.BQ), "BKV": float64(a.BKV)}
}

// groups is the workgroups of B sequences x H heads x T query rows.
func (a attnTiles) groups(B, H, T int) int { return B * H * ceilDiv(T, a.BQ) }

// sharedBytes is the workgroup memory the kernel uses at head size hd.
func (a attnTiles) sharedBytes(hd int) int { return 2 * a.BKV * hd * 4 }

// attnTilesFor is the default blocking, halved until it fits the device's
// workgroup memory and invocations.
func attnTilesFor(l wgpu.Limits, hd int) attnTiles {
	a := defaultAttnTiles
	for a.BKV > 1 && a.sharedBytes(hd) > int(l.MaxComputeWorkgroupStorageSize) {
		a.BKV /= 2
	}
	for a.BQ > 1 && a.BQ > int(l.MaxComputeInvocationsPerWorkgroup) {
		a.BQ /= 2
	}
	return a
}
