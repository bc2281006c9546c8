package shaders

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strconv"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/refops"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// subgroupSizeBuiltin matches a WGSL parameter that reads the subgroup_size
// builtin.
var subgroupSizeBuiltin = regexp.MustCompile(`@builtin\(\s*subgroup_size\s*\)`)

// TestNoKernelTrustsSubgroupSize: no kernel reads the subgroup_size builtin.
// Without a required subgroup size (which only the coop kernels' pipelines
// set, and they do not read it either), Vulkan gives SPIR-V 1.3 modules the
// device's subgroupSize there, which is not the lanes a subgroup runs on
// every driver: Intel's report 32 for pipelines they compile for 8 or 16
// lanes, MoltenVK 64 for AMD's 32, the rest of the subgroup inactive. A
// kernel that strides by it skips data there (the _rows norm kernels did,
// before they counted their lanes: include/row_subgroup.wgsl's lanes). The
// CPU drivers here run as many lanes as they report, except lavapipe with
// LP_NATIVE_VECTOR_WIDTH past 512 (TestPartialSubgroups), where the suites
// run too; this check covers every driver at once.
func TestNoKernelTrustsSubgroupSize(t *testing.T) {
	names, err := fs.Glob(sources, "*.wgsl")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		src, err := Source(name, false)
		if err != nil {
			t.Fatal(err)
		}
		if loc := subgroupSizeBuiltin.FindStringIndex(src); loc != nil {
			t.Errorf("%s reads @builtin(subgroup_size) (at byte %d): count the subgroup's lanes instead (include/row_subgroup.wgsl's lanes)", path.Base(name), loc[0])
		}
	}
}

// TestNormRowsNarrowSubgroups runs the _rows norm kernels compiled with a
// MAXV too small for the width in the device's subgroups, as on a device
// whose subgroups are smaller than the host counted on (MoltenVK on AMD
// reports subgroups of 64 and runs 32 lanes; a driver may give a pipeline
// fewer lanes than its smallest reported size): the registers then hold
// only part of each row, and the rest must come from memory, not be left
// out. Tolerance as TestNormRows'.
func TestNormRowsNarrowSubgroups(t *testing.T) {
	d := newTestDev(t)
	if !d.dev.HasFeature(wgpu.FeatureSubgroups) {
		t.Skipf("%s has no subgroup operations", d.info.Name)
	}
	l := d.dev.Limits()
	sg := int(l.MinSubgroupSize)
	wg := min(256, int(l.MaxComputeInvocationsPerWorkgroup))
	const rows = 37
	for _, file := range []string{"layernorm_rows.wgsl", "rmsnorm_rows.wgsl"} {
		for _, maxv := range []int{1, 2} {
			// widths past MAXV·sg: one vec4 more, not a multiple of sg, three times as many
			for _, c4 := range []int{maxv*sg + 1, maxv*sg + sg/2 + 3, 3 * maxv * sg} {
				C := 4 * c4
				t.Run(fmt.Sprintf("%s/MAXV=%d/C=%d", file, maxv, C), func(t *testing.T) {
					src, err := rowsSource(file, false, maxv)
					if err != nil {
						t.Fatal(err)
					}
					k, err := compileKernel(d.dev, fmt.Sprintf("%s[MAXV %d]", file, maxv), src, 0)
					if err != nil {
						t.Fatal(err)
					}
					p, err := k.Pipeline(map[string]float64{"WG": float64(wg)})
					if err != nil {
						t.Fatal(err)
					}
					x := randF32(uint64(C)+7, rows*C, 0.3, 2)
					w, b := randF32(2, C, 1, 0.2), randF32(3, C, 0, 0.1)
					bufs := map[string]Buf{"x": {Buffer: d.buffer(t, "x", f32Bytes(x))}, "w": {Buffer: d.buffer(t, "w", weightBytes(w, false))}}
					eps := 1e-6
					want := refops.RMSNorm(f64(x), f64(w), rows, C, eps)
					if file == "layernorm_rows.wgsl" {
						eps = 1e-5
						bufs["b"] = Buf{Buffer: d.buffer(t, "b", weightBytes(b, false))}
						want = refops.LayerNorm(f64(x), f64(w), f64(b), rows, C, eps)
					}
					out := d.buffer(t, "out", make([]byte, 4*rows*C))
					bufs["out"] = Buf{Buffer: out}
					d.run(t, p, bufs, Params{"rows": rows, "C": float64(C), "eps": eps}, [3]uint32{2, 1, 1})
					checkClose(t, file, d.readF32(t, out, rows*C), want, 2e-5)
				})
			}
		}
	}
}

// TestAttnTilesWithoutShuffles: attention splits query rows over
// invocations (attention_shared_subgroup.wgsl, which shuffles) only on a
// GPU whose subgroups shuffle; one with basic and arithmetic operations
// alone (wgpu.FeatureSubgroups' promise, all some mobile GPUs offer) keeps
// attention_shared.wgsl, whose pipeline it can create.
func TestAttnTilesWithoutShuffles(t *testing.T) {
	gpu := wgpu.AdapterInfo{Name: "a GPU", DeviceType: "integrated-gpu"}
	l := wgpu.Limits{SubgroupSize: 32, MinSubgroupSize: 32, MaxSubgroupSize: 32,
		MaxComputeWorkgroupStorageSize: 32 << 10, MaxComputeInvocationsPerWorkgroup: 512}
	for _, hd := range []int{64, 128} {
		if a := attnTilesOn(gpu, l, true, hd); a.qs() != 4 || a.kernel() != "attention_shared_subgroup.wgsl" {
			t.Errorf("head size %d with shuffles: %+v (%s), want QS 4", hd, a, a.kernel())
		}
		if a := attnTilesOn(gpu, l, false, hd); a.qs() != 1 || a.kernel() != "attention_shared.wgsl" {
			t.Errorf("head size %d without shuffles: %+v (%s), want QS 1", hd, a, a.kernel())
		}
	}
}

// partialSubgroupsEnv, set by an implementation entry of
// $WGPU_TEST_VULKAN_IMPLS (scripts/vulkan-impls.sh), is the number of lanes
// that implementation's subgroups really run while its subgroupSize
// reports more: Mesa's lavapipe with LP_NATIVE_VECTOR_WIDTH=1024 reports 32
// (the subgroup_size builtin too) and runs 16, the rest of each subgroup
// inactive, as Intel's ANV and MoltenVK on AMD do (see
// TestNoKernelTrustsSubgroupSize). The suites rerun there
// (TestKernelsOnVulkanImpls, pipeline/backend's TestGPUOnVulkanImpls); at
// 31edcad, before the _rows norm kernels counted their lanes, TestNormRows
// fails there, and nowhere else here.
const partialSubgroupsEnv = "WGPU_TEST_PARTIAL_SUBGROUPS"

// TestPartialSubgroups holds such an implementation to what its entry says,
// so that the suites' runs there keep testing kernels on subgroups smaller
// than reported: in workgroups of two reported subgroups, every invocation
// reads the device's subgroupSize in the subgroup_size builtin, counts
// $WGPU_TEST_PARTIAL_SUBGROUPS lanes in its subgroup (subgroupAdd), fewer,
// and has a lane number below that count; the workgroup has
// 2·size/lanes subgroups.
func TestPartialSubgroups(t *testing.T) {
	v := os.Getenv(partialSubgroupsEnv)
	if v == "" {
		t.Skipf("runs in the suites' reruns on an implementation whose subgroups run fewer lanes than reported ($%s)", partialSubgroupsEnv)
	}
	lanes, err := strconv.Atoi(v)
	if err != nil || lanes < 1 {
		t.Fatalf("$%s = %q: want a number of lanes", partialSubgroupsEnv, v)
	}
	d := newTestDev(t)
	if !d.dev.HasFeature(wgpu.FeatureSubgroups) {
		t.Fatalf("%s has no subgroup operations", d.info.Name)
	}
	size := int(d.dev.Limits().SubgroupSize)
	if lanes >= size {
		t.Fatalf("$%s = %d: not fewer than the %d lanes %s reports", partialSubgroupsEnv, lanes, size, d.info.Name)
	}
	wg := 2 * size
	src := fmt.Sprintf(`enable subgroups;
@group(0) @binding(0) var<storage, read_write> seen: array<vec4<u32>>; // per invocation: size, lanes, lane, subgroup
@compute @workgroup_size(%d)
fn main(@builtin(local_invocation_index) li: u32, @builtin(subgroup_size) size: u32,
	@builtin(subgroup_invocation_id) lane: u32, @builtin(subgroup_id) sg: u32) {
	seen[li] = vec4<u32>(size, subgroupAdd(1u), lane, sg);
}
`, wg)
	k, err := compileKernel(d.dev, "subgroup_lanes.wgsl", wgsl.Expanded{Text: src}, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := k.pipeline(constSet{})
	if err != nil {
		t.Fatal(err)
	}
	out := d.buffer(t, "seen", make([]byte, 16*wg))
	d.run(t, p, map[string]Buf{"seen": {Buffer: out}}, nil, [3]uint32{1, 1, 1})
	raw := make([]byte, 16*wg)
	if err := d.dev.Queue().ReadBuffer(out, 0, raw); err != nil {
		t.Fatal(err)
	}
	subgroups := map[uint32]bool{}
	for li := range wg {
		var got [4]uint32
		for c := range got {
			got[c] = binary.LittleEndian.Uint32(raw[16*li+4*c:])
		}
		if int(got[0]) != size || int(got[1]) != lanes || int(got[2]) >= lanes {
			t.Fatalf("invocation %d: subgroup_size %d, %d lanes counted, lane %d; want %d, %d, below %d ($%s)",
				li, got[0], got[1], got[2], size, lanes, lanes, partialSubgroupsEnv)
		}
		subgroups[got[3]] = true
	}
	if len(subgroups) != wg/lanes {
		t.Errorf("%d subgroups in a workgroup of %d, want %d", len(subgroups), wg, wg/lanes)
	}
	t.Logf("%s: subgroupSize %d, subgroups of %d lanes", d.info.Name, size, lanes)
}
