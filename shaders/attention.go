package shaders

import (
	"cmp"
	"slices"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// attnTiles is the blocking of attention_shared.wgsl and
// attention_shared_subgroup.wgsl: BQ queries per workgroup, QS invocations
// per query (0 or 1: attention_shared.wgsl, one invocation a query; 2 or 4:
// attention_shared_subgroup.wgsl, each holding HD/QS of the query's
// channels), BKV keys per tile staged in workgroup memory.
type attnTiles struct{ BQ, BKV, QS int }

// defaultAttnTiles suit GPUs: 64 queries per workgroup (two NVIDIA warps, one
// AMD wave64 with QS 1), tiles of 32 keys (16 KiB of workgroup memory at
// head size 64). attnTilesFor sets QS.
var defaultAttnTiles = attnTiles{BQ: 64, BKV: 32, QS: 1}

// softwareAttnTiles suit the CPU Vulkan drivers, where the hardware kernel
// set runs in tests and when forced: Debian 12's lavapipe (Mesa 22.3) runs
// the kernel 10-20x slower with workgroups of 64 invocations than of 16
// (BenchmarkAttention: 3.6-4.5 ms against 46-125 ms for 12 heads of 64 rows,
// where attention.wgsl takes 4.8 ms); SwiftShader and Mesa 25's lavapipe
// take about the same time with either. One invocation per query: a CPU
// driver's registers are memory, and a split would only add shuffles and
// invocations.
var softwareAttnTiles = attnTiles{BQ: 16, BKV: 16, QS: 1}

// attnMinRowVec4s is the fewest vec4s of q an invocation of
// attention_shared_subgroup.wgsl is left with (attnQS): QS 4 at head sizes
// 64, 80 and 128 (4, 5 and 8 vec4s), 2 at 32 and 48, 1 below. Measured with
// AMD's compiler (BENCHMARKS.md): QS 2 at head size 128 takes all 256 VGPRs
// (no spills), QS 4 128 to 192; at 64, QS 2 takes 128 to 192, QS 4 80 to
// 108, against 256 for QS 1 at either. TestCompileStatistics holds the
// choice to no spills.
const attnMinRowVec4s = 4

// attnQS is the invocations per query row for head size hd on a device
// whose subgroups have at least sg invocations (0: unknown): the largest
// of 1, 2 and 4 that divides hd/4 and sg and leaves each invocation at
// least attnMinRowVec4s vec4s of the row (fewer would spend more on
// shuffles than the registers are worth); 1 where sg is unknown.
func attnQS(hd, sg int) int {
	qs := 1
	for n := 2; n <= 4; n *= 2 {
		if (hd/4)%n == 0 && hd/4/n >= attnMinRowVec4s && sg >= n && sg%n == 0 {
			qs = n
		}
	}
	return qs
}

// qs is the invocations per query: QS, 1 when unset.
func (a attnTiles) qs() int { return max(a.QS, 1) }

// kernel is the kernel file of the blocking.
func (a attnTiles) kernel() string {
	if a.qs() > 1 {
		return "attention_shared_subgroup.wgsl"
	}
	return "attention_shared.wgsl"
}

// constants are the kernel's override constants for head size hd (QS only
// where it is one: attention_shared.wgsl's is a constant).
func (a attnTiles) constants(hd int) map[string]float64 {
	m := map[string]float64{"HD": float64(hd), "BQ": float64(a.BQ), "BKV": float64(a.BKV)}
	if a.qs() > 1 {
		m["QS"] = float64(a.QS)
	}
	return m
}

// constSet is constants as the forward pass gives them.
func (a attnTiles) constSet(hd int) constSet {
	c := consts("HD", float64(hd)).with("BQ", float64(a.BQ)).with("BKV", float64(a.BKV))
	if a.qs() > 1 {
		c = c.with("QS", float64(a.QS))
	}
	return c
}

// invocations is the workgroup size.
func (a attnTiles) invocations() int { return a.BQ * a.qs() }

// groups is the workgroups of B sequences x H heads x T query rows.
func (a attnTiles) groups(B, H, T int) int { return B * H * ceilDiv(T, a.BQ) }

// sharedBytes is the workgroup memory the kernel uses at head size hd.
func (a attnTiles) sharedBytes(hd int) int { return 2 * a.BKV * hd * 4 }

// attnTilesFor is the blocking for dev at head size hd: softwareAttnTiles
// on CPU drivers, else defaultAttnTiles with QS from attnQS where the
// device has subgroup shuffles (subgroupShuffles; its smallest subgroup
// size), halved until it fits the device's workgroup memory and
// invocations.
func attnTilesFor(dev *wgpu.Device, hd int) attnTiles {
	return attnTilesOn(dev.AdapterInfo(), dev.Limits(), subgroupShuffles(dev), hd)
}

// attnTilesOn is attnTilesFor on an adapter with limits l, with shuffles
// (attention_shared_subgroup.wgsl) or without.
func attnTilesOn(info wgpu.AdapterInfo, l wgpu.Limits, shuffles bool, hd int) attnTiles {
	a := defaultAttnTiles
	if Software(info) {
		a = softwareAttnTiles
	} else if shuffles {
		a.QS = attnQS(hd, int(cmp.Or(l.MinSubgroupSize, l.SubgroupSize)))
	}
	for a.BKV > 1 && a.sharedBytes(hd) > int(l.MaxComputeWorkgroupStorageSize) {
		a.BKV /= 2
	}
	for a.BQ > 1 && a.invocations() > int(l.MaxComputeInvocationsPerWorkgroup) {
		a.BQ /= 2
	}
	return a
}

// subgroupShuffles reports whether dev runs subgroupShuffleXor
// (attention_shared_subgroup.wgsl, attention_coop.wgsl): subgroup
// operations enabled, of the shuffle class among those the adapter offers
// in compute shaders. wgpu.FeatureSubgroups promises only the basic and
// arithmetic classes, and some mobile GPUs offer no more; a pipeline that
// shuffles is refused there.
func subgroupShuffles(dev *wgpu.Device) bool {
	return dev.HasFeature(wgpu.FeatureSubgroups) && slices.Contains(dev.AdapterInfo().Features.SubgroupOperations, "shuffle")
}

// attnShared is the SIMT attention kernel of blocking t:
// attention_shared.wgsl, or attention_shared_subgroup.wgsl where t splits
// the rows (attnTilesFor does so only where the device has subgroup
// operations, and NewGPT2 then compiles it).
func (g *GPT2) attnShared(t attnTiles) *Kernel {
	if t.qs() > 1 {
		return g.attentionSharedSubgroup
	}
	return g.attentionShared
}
