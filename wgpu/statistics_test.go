package wgpu

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
)

// statsShader is a kernel whose loop of n multiply-adds the compiler unrolls where n is small: the bigger n, the
// more instructions.
func statsShader(n int) string {
	return fmt.Sprintf(`@group(0) @binding(0) var<storage, read_write> b: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
	var a = b[id.x];
	var s = 0.0;
	for (var i = 0; i < %d; i++) { s = s * a + f32(i) * sin(a + f32(i)); }
	b[id.x] = s;
}`, n)
}

func statsPipeline(t *testing.T, d *Device, label string, n int) *ComputePipeline {
	t.Helper()
	m, err := d.CreateShaderModule(&ShaderModuleDescriptor{Label: label, WGSL: statsShader(n)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	p, err := d.CreateComputePipeline(&ComputePipelineDescriptor{Label: label, Module: m})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPipelineStatistics: where the driver has VK_KHR_pipeline_executable_properties (NVIDIA's; not lavapipe or
// SwiftShader), every pipeline of a device with FeaturePipelineStatistics carries the driver's statistics, each
// named and of one of the four value types, and the device lists them in creation order, those of closed
// pipelines too; where the driver counts instructions, the kernel with more code has more. Elsewhere, asking for
// the feature fails with ErrMissingFeature naming the extension.
func TestPipelineStatistics(t *testing.T) {
	probe := newEnv(t)
	if !probe.ad.HasFeature(FeaturePipelineStatistics) {
		d, err := probe.ad.RequestDevice(&DeviceDescriptor{RequiredFeatures: []FeatureName{FeaturePipelineStatistics}, PipelineCacheDir: "-"})
		if err == nil {
			d.Close()
			t.Fatalf("%s: a device with %s on an adapter without it", probe.ad.Info().Name, FeaturePipelineStatistics)
		}
		if !errors.Is(err, ErrMissingFeature) || !strings.Contains(err.Error(), extPipelineStatistics) {
			t.Errorf("error %v, want ErrMissingFeature naming %s", err, extPipelineStatistics)
		}
		return
	}
	env := newEnv(t, FeaturePipelineStatistics)
	d := env.dev
	small := statsPipeline(t, d, "small", 1)
	big := statsPipeline(t, d, "big", 24)
	for _, p := range []*ComputePipeline{small, big} {
		st, err := p.Statistics()
		if err != nil {
			t.Fatal(err)
		}
		if st.Label != p.label || len(st.Executables) == 0 {
			t.Fatalf("%s: statistics %+v", p.label, st)
		}
		for _, e := range st.Executables {
			if len(e.Statistics) == 0 {
				t.Errorf("%s: executable %q reports no statistics", p.label, e.Name)
			}
			for _, s := range e.Statistics {
				switch s.Value.(type) {
				case bool, int64, uint64, float64:
				default:
					t.Errorf("%s: statistic %q has value %#v", p.label, s.Name, s.Value)
				}
				if strings.TrimSpace(s.Name) == "" {
					t.Errorf("%s: a statistic without a name: %+v", p.label, s)
				}
			}
		}
		if _, err := json.Marshal(st); err != nil {
			t.Errorf("%s: %v", p.label, err)
		}
	}
	small.Close()
	all := d.PipelineStatistics()
	if len(all) != 2 || all[0].Label != "small" || all[1].Label != "big" {
		t.Fatalf("device lists %d pipelines: %+v", len(all), all)
	}
	counted := false
	for _, e := range all[0].Executables {
		for _, s := range e.Statistics {
			if !strings.Contains(strings.ToLower(s.Name), "instruction") {
				continue
			}
			v, ok := all[1].Lookup(s.Name)
			a, aok := asUint(s.Value)
			b, bok := asUint(v)
			if ok && aok && bok {
				counted = true
				if b <= a {
					t.Errorf("%q: the bigger kernel has %d, the smaller %d", s.Name, b, a)
				}
			}
		}
	}
	t.Logf("%s: %+v (instruction counts compared: %v)", env.ad.Info().Name, all[1].Executables, counted)
}

// fakeStatistic is a driver's statistic in C layout.
func fakeStatistic(name string, format vk.PipelineExecutableStatisticFormatKHR, set func(v *vk.PipelineExecutableStatisticValueKHR)) vk.PipelineExecutableStatisticKHR {
	s := vk.PipelineExecutableStatisticKHR{SType: vk.StructureTypePipelineExecutableStatisticKHR, Format: format}
	copy(s.Name[:], name)
	copy(s.Description[:], "about "+name)
	set(&s.Value)
	return s
}

// fakeStatistics is a driver whose pipeline has the executables named, each with stats (fakeFill answers).
func fakeStatistics(t *testing.T, names []string, stats []vk.PipelineExecutableStatisticKHR) (executablesQuery, statisticsQuery) {
	execs := make([]vk.PipelineExecutablePropertiesKHR, len(names))
	for i, name := range names {
		execs[i] = vk.PipelineExecutablePropertiesKHR{SType: vk.StructureTypePipelineExecutablePropertiesKHR, SubgroupSize: 32}
		copy(execs[i].Name[:], name)
	}
	execsQ := func(info *vk.PipelineInfoKHR, n *uint32, p *vk.PipelineExecutablePropertiesKHR) vk.Result {
		if info.SType != vk.StructureTypePipelineInfoKHR {
			t.Errorf("VkPipelineInfoKHR without its sType")
		}
		return fakeFill(t, n, p, execs, vk.StructureTypePipelineExecutablePropertiesKHR)
	}
	statsQ := func(info *vk.PipelineExecutableInfoKHR, n *uint32, p *vk.PipelineExecutableStatisticKHR) vk.Result {
		if info.SType != vk.StructureTypePipelineExecutableInfoKHR || int(info.ExecutableIndex) >= len(names) {
			t.Errorf("executable info %+v", *info)
		}
		return fakeFill(t, n, p, stats, vk.StructureTypePipelineExecutableStatisticKHR)
	}
	return execsQ, statsQ
}

// fakeFill answers a count-then-fill call with items as a driver does: their count where p is nil, else as many as
// *n has room for, with VK_INCOMPLETE where that is fewer than there are. It fails t for a slot whose sType is not
// want, as the spec requires of the caller.
func fakeFill[T any](t *testing.T, n *uint32, p *T, items []T, want vk.StructureType) vk.Result {
	if p == nil {
		*n = uint32(len(items))
		return vk.Success
	}
	out := unsafe.Slice(p, *n)
	for i := range out[:min(len(out), len(items))] {
		if got := *(*vk.StructureType)(unsafe.Pointer(&out[i])); got != want {
			t.Errorf("slot %d: sType %d, want %d", i, got, want)
		}
		out[i] = items[i]
	}
	if int(*n) < len(items) {
		return vk.Incomplete
	}
	*n = uint32(len(items))
	return vk.Success
}

// TestReadPipelineStatistics reads a fake driver's report: every executable, the four value formats (a NaN as
// text, which JSON can carry), those written where the list grew between the count and the fill; and refuses
// counts past maxPipelineReports, an unknown format and a failing call, each with the reason in Err.
func TestReadPipelineStatistics(t *testing.T) {
	stats := []vk.PipelineExecutableStatisticKHR{
		fakeStatistic("Register Count", vk.PipelineExecutableStatisticFormatUint64KHR, func(v *vk.PipelineExecutableStatisticValueKHR) { *v.U64() = 232 }),
		fakeStatistic("Spilled", vk.PipelineExecutableStatisticFormatBool32KHR, func(v *vk.PipelineExecutableStatisticValueKHR) { *v.B32() = vk.True }),
		fakeStatistic("Delta", vk.PipelineExecutableStatisticFormatInt64KHR, func(v *vk.PipelineExecutableStatisticValueKHR) { *v.I64() = -7 }),
		fakeStatistic("Occupancy", vk.PipelineExecutableStatisticFormatFloat64KHR, func(v *vk.PipelineExecutableStatisticValueKHR) { *v.F64() = 0.25 }),
		fakeStatistic("Ratio", vk.PipelineExecutableStatisticFormatFloat64KHR, func(v *vk.PipelineExecutableStatisticValueKHR) { *v.F64() = math.NaN() }),
	}
	execs, statsQ := fakeStatistics(t, []string{"compute", "compute (fast path)"}, stats)
	got := readPipelineStatistics("k", execs, statsQ)
	if got.Err != "" || got.Label != "k" || len(got.Executables) != 2 {
		t.Fatalf("%+v", got)
	}
	want := []any{uint64(232), true, int64(-7), 0.25, "NaN"}
	for _, e := range got.Executables {
		if e.SubgroupSize != 32 || len(e.Statistics) != len(want) {
			t.Fatalf("executable %+v", e)
		}
		for i, s := range e.Statistics {
			if s.Value != want[i] || s.Description != "about "+s.Name {
				t.Errorf("%s: %#v (%q), want %#v", s.Name, s.Value, s.Description, want[i])
			}
		}
	}
	if v, ok := got.Lookup("Register Count"); !ok || v != uint64(232) {
		t.Errorf("Lookup: %v %v", v, ok)
	}
	if _, err := json.Marshal(got); err != nil {
		t.Error(err)
	}
	if got.Executables[1].Name != "compute (fast path)" {
		t.Errorf("names %q", got.Executables[1].Name)
	}

	bad := append([]vk.PipelineExecutableStatisticKHR{}, stats...)
	bad[2].Format = 9
	execs, statsQ = fakeStatistics(t, []string{"compute"}, bad)
	if got := readPipelineStatistics("k", execs, statsQ); !strings.Contains(got.Err, "Delta") || !strings.Contains(got.Err, "format 9") {
		t.Errorf("unknown format: %q", got.Err)
	}
	huge := func(_ *vk.PipelineInfoKHR, n *uint32, _ *vk.PipelineExecutablePropertiesKHR) vk.Result {
		*n = 1 << 30
		return vk.Success
	}
	if got := readPipelineStatistics("k", huge, statsQ); !strings.Contains(got.Err, "1073741824 executables") {
		t.Errorf("a count past the bound: %q", got.Err)
	}
	// More statistics at the fill than at the count (VK_INCOMPLETE): those written are kept.
	execs, statsQ = fakeStatistics(t, []string{"compute"}, stats)
	grown := func(info *vk.PipelineExecutableInfoKHR, n *uint32, p *vk.PipelineExecutableStatisticKHR) vk.Result {
		if p == nil {
			*n = 3
			return vk.Success
		}
		return statsQ(info, n, p)
	}
	if got := readPipelineStatistics("k", execs, grown); got.Err != "" || len(got.Executables) != 1 || len(got.Executables[0].Statistics) != 3 {
		t.Errorf("a grown list: %+v", got)
	}
	failing := func(*vk.PipelineExecutableInfoKHR, *uint32, *vk.PipelineExecutableStatisticKHR) vk.Result {
		return vk.ErrorOutOfHostMemory
	}
	execs, _ = fakeStatistics(t, []string{"compute"}, stats)
	if got := readPipelineStatistics("k", execs, failing); !strings.Contains(got.Err, "vkGetPipelineExecutableStatisticsKHR") {
		t.Errorf("failing call: %q", got.Err)
	}
}

// TestPipelineStatisticsFeatureChain: requiring the feature enables pipelineExecutableInfo with the extension; not
// requiring it adds neither.
func TestPipelineStatisticsFeatureChain(t *testing.T) {
	a := &Adapter{apiVersion: vk.MakeAPIVersion(1, 3, 0), exts: map[string]bool{extPipelineStatistics: true}}
	var ar vk.Arena
	defer ar.Release()
	f2, exts := a.featureChain(&ar, map[FeatureName]bool{FeaturePipelineStatistics: true})
	pe, ok := chainNodes(f2.PNext)[vk.StructureTypePhysicalDevicePipelineExecutablePropertiesFeaturesKHR]
	if !ok || (*vk.PhysicalDevicePipelineExecutablePropertiesFeaturesKHR)(pe).PipelineExecutableInfo != vk.True || !slices.Contains(exts, extPipelineStatistics) {
		t.Errorf("chain %v, extensions %v", chainNodes(f2.PNext), exts)
	}
	f2, exts = a.featureChain(&ar, map[FeatureName]bool{})
	if _, ok := chainNodes(f2.PNext)[vk.StructureTypePhysicalDevicePipelineExecutablePropertiesFeaturesKHR]; ok || slices.Contains(exts, extPipelineStatistics) {
		t.Errorf("enabled though not required: %v", exts)
	}
}

// asUint is an integer statistic's value.
func asUint(v any) (uint64, bool) {
	switch x := v.(type) {
	case uint64:
		return x, true
	case int64:
		return uint64(x), x >= 0
	}
	return 0, false
}

// TestPipelineStatisticsNeedTheFeature: without the feature a pipeline has no statistics to give (a clear error)
// and the device lists none.
func TestPipelineStatisticsNeedTheFeature(t *testing.T) {
	env := newEnv(t)
	p := statsPipeline(t, env.dev, "plain", 1)
	if _, err := p.Statistics(); !errors.Is(err, ErrMissingFeature) || !strings.Contains(err.Error(), string(FeaturePipelineStatistics)) {
		t.Errorf("Statistics without the feature: %v", err)
	}
	if s := env.dev.PipelineStatistics(); s != nil {
		t.Errorf("device lists %+v", s)
	}
}

// TestAdapterExtensions: the adapter lists its device extensions sorted, once each, with those its features
// stand on among them (cooperative matrices and pipeline statistics are extensions in every Vulkan version).
func TestAdapterExtensions(t *testing.T) {
	inst, adapters := realAdapters(t)
	defer inst.Close()
	for _, a := range adapters {
		info := a.Info()
		ext := info.Extensions
		if len(ext) == 0 || !slices.IsSorted(ext) || len(slices.Compact(slices.Clone(ext))) != len(ext) {
			t.Errorf("%s: extensions %v: want a sorted list without repeats", info.Name, ext)
		}
		for _, e := range ext {
			if !strings.HasPrefix(e, "VK_") {
				t.Errorf("%s: extension %q", info.Name, e)
			}
		}
		for f, e := range map[FeatureName]string{FeatureCooperativeMatrix: extCooperativeMatrix, FeaturePipelineStatistics: extPipelineStatistics} {
			if a.HasFeature(f) && !slices.Contains(ext, e) {
				t.Errorf("%s: feature %s without %s among %v", info.Name, f, e, ext)
			}
		}
		t.Logf("%s: %d extensions", info.Name, len(ext))
	}
}
