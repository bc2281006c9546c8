package wgpu

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// No Vulkan implementation on a CPU offers VK_KHR_cooperative_matrix, so these tests drive the parsing, the query and
// the device-creation chain through seams, and check on the real adapters (lavapipe in CI) that it is reported absent
// and refused with a clear error.

func TestCooperativeMatrixConfigFromProperties(t *testing.T) {
	props := func(m, n, k uint32, a, b, c, r vk.ComponentTypeKHR, sat bool, scope vk.ScopeKHR) *vk.CooperativeMatrixPropertiesKHR {
		p := &vk.CooperativeMatrixPropertiesKHR{MSize: m, NSize: n, KSize: k, AType: a, BType: b, CType: c, ResultType: r, Scope: scope}
		if sat {
			p.SaturatingAccumulation = vk.True
		}
		return p
	}
	f16, f32, i8, u8, i32 := vk.ComponentTypeFloat16KHR, vk.ComponentTypeFloat32KHR, vk.ComponentTypeSint8KHR, vk.ComponentTypeUint8KHR, vk.ComponentTypeSint32KHR
	for _, c := range []struct {
		in   *vk.CooperativeMatrixPropertiesKHR
		want string
		wgsl bool
	}{
		{props(16, 16, 16, f16, f16, f32, f32, false, vk.ScopeSubgroupKHR), "16x16x16 f16*f16+f32->f32 subgroup", true},
		{props(16, 8, 16, f16, f16, f16, f16, false, vk.ScopeSubgroupKHR), "16x8x16 f16*f16+f16->f16 subgroup", true},
		{props(16, 16, 32, i8, i8, i32, i32, false, vk.ScopeSubgroupKHR), "16x16x32 i8*i8+i32->i32 subgroup", true},
		{props(16, 16, 32, i8, i8, i32, i32, true, vk.ScopeSubgroupKHR), "16x16x32 i8*i8+i32->i32 subgroup, saturating", false},
		{props(16, 16, 32, i8, u8, i32, i32, false, vk.ScopeSubgroupKHR), "16x16x32 i8*u8+i32->i32 subgroup", false},       // mixed signedness
		{props(16, 16, 16, f16, f16, f16, f32, false, vk.ScopeSubgroupKHR), "16x16x16 f16*f16+f16->f32 subgroup", false},   // C != result
		{props(64, 64, 16, f16, f16, f32, f32, false, vk.ScopeWorkgroupKHR), "64x64x16 f16*f16+f32->f32 workgroup", false}, // not subgroup scope
		{props(16, 16, 32, vk.ComponentTypeFloatE4m3NV, vk.ComponentTypeFloatE4m3NV, f32, f32, false, vk.ScopeSubgroupKHR), "16x16x32 e4m3*e4m3+f32->f32 subgroup", false},
		{props(16, 16, 16, 1000141000, 1000141000, f32, f32, false, vk.ScopeSubgroupKHR), "16x16x16 bf16*bf16+f32->f32 subgroup", false}, // VK_COMPONENT_TYPE_BFLOAT16_KHR, as an H200 lists it
		{props(8, 8, 8, 77, 77, f32, f32, false, 9), "8x8x8 VkComponentTypeKHR(77)*VkComponentTypeKHR(77)+f32->f32 VkScopeKHR(9)", false},
	} {
		got := cooperativeMatrixConfig(c.in)
		if got.String() != c.want || got.SubgroupMatrix != c.wgsl {
			t.Errorf("config %q (subgroup matrix %v), want %q (%v)", got, got.SubgroupMatrix, c.want, c.wgsl)
		}
		if got.M != c.in.MSize || got.N != c.in.NSize || got.K != c.in.KSize {
			t.Errorf("%s: M, N, K = %d, %d, %d", c.want, got.M, got.N, got.K)
		}
	}
}

// fakeCoopQuery is vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR of a device with configs, as a driver answers:
// it fails the test where the caller's output structs lack their sType or carry a pNext.
func fakeCoopQuery(t *testing.T, configs func(call int) []vk.CooperativeMatrixPropertiesKHR) func(*uint32, *vk.CooperativeMatrixPropertiesKHR) vk.Result {
	call := 0
	return func(n *uint32, p *vk.CooperativeMatrixPropertiesKHR) vk.Result {
		call++
		have := configs(call)
		if p == nil {
			*n = uint32(len(have))
			return vk.Success
		}
		out := unsafe.Slice(p, *n)
		for i := range out {
			if out[i].SType != vk.StructureTypeCooperativeMatrixPropertiesKHR || out[i].PNext != nil {
				t.Errorf("call %d: output %d has sType %d, pNext %v", call, i, out[i].SType, out[i].PNext)
			}
		}
		k := copy(out, have)
		for i := range out[:k] {
			out[i].SType = vk.StructureTypeCooperativeMatrixPropertiesKHR
		}
		*n = uint32(k)
		if k < len(have) {
			return vk.Incomplete
		}
		return vk.Success
	}
}

func TestCooperativeMatrixQueryReadsEveryConfig(t *testing.T) {
	f16 := vk.CooperativeMatrixPropertiesKHR{MSize: 16, NSize: 16, KSize: 16, AType: vk.ComponentTypeFloat16KHR,
		BType: vk.ComponentTypeFloat16KHR, CType: vk.ComponentTypeFloat32KHR, ResultType: vk.ComponentTypeFloat32KHR, Scope: vk.ScopeSubgroupKHR}
	i8 := vk.CooperativeMatrixPropertiesKHR{MSize: 16, NSize: 16, KSize: 32, AType: vk.ComponentTypeSint8KHR,
		BType: vk.ComponentTypeSint8KHR, CType: vk.ComponentTypeSint32KHR, ResultType: vk.ComponentTypeSint32KHR, Scope: vk.ScopeSubgroupKHR}
	got, err := queryCooperativeMatrix(fakeCoopQuery(t, func(int) []vk.CooperativeMatrixPropertiesKHR {
		return []vk.CooperativeMatrixPropertiesKHR{f16, i8}
	}))
	if err != nil || len(got) != 2 || got[0].String() != "16x16x16 f16*f16+f32->f32 subgroup" || got[1].K != 32 {
		t.Fatalf("configs %v, %v", got, err)
	}

	// The list grows between the count and the fill (VK_INCOMPLETE): the query asks again and gets all three.
	got, err = queryCooperativeMatrix(fakeCoopQuery(t, func(call int) []vk.CooperativeMatrixPropertiesKHR {
		if call == 1 {
			return []vk.CooperativeMatrixPropertiesKHR{f16, i8}
		}
		return []vk.CooperativeMatrixPropertiesKHR{f16, i8, f16}
	}))
	if err != nil || len(got) != 3 {
		t.Fatalf("after VK_INCOMPLETE: configs %v, %v", got, err)
	}

	got, err = queryCooperativeMatrix(fakeCoopQuery(t, func(int) []vk.CooperativeMatrixPropertiesKHR { return nil }))
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("no configs: %#v, %v (want an empty, non-nil list)", got, err)
	}

	_, err = queryCooperativeMatrix(func(*uint32, *vk.CooperativeMatrixPropertiesKHR) vk.Result { return vk.ErrorOutOfHostMemory })
	if !errors.Is(err, ErrOutOfMemory) || !strings.Contains(err.Error(), "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR") {
		t.Errorf("failing query: %v", err)
	}
}

// chainNodes lists the sTypes of a pNext chain, with each node's address.
func chainNodes(p unsafe.Pointer) map[vk.StructureType]unsafe.Pointer {
	type head struct {
		SType vk.StructureType
		PNext unsafe.Pointer
	}
	out := map[vk.StructureType]unsafe.Pointer{}
	for ; p != nil; p = (*head)(p).PNext {
		out[(*head)(p).SType] = p
	}
	return out
}

// TestCooperativeMatrixFeatureChain: requiring the feature puts VkPhysicalDeviceCooperativeMatrixFeaturesKHR
// (cooperativeMatrix on) in vkCreateDevice's chain with the extension, the Vulkan memory model SPV_KHR_cooperative_matrix
// requires, and computeFullSubgroups (whole subgroups) without turning on subgroup size control the caller did not
// ask for; not requiring it adds none of them.
func TestCooperativeMatrixFeatureChain(t *testing.T) {
	a := &Adapter{apiVersion: vk.MakeAPIVersion(1, 3, 0), exts: map[string]bool{extCooperativeMatrix: true},
		memModel: true, fullGroups: true}
	var ar vk.Arena
	defer ar.Release()

	f2, exts := a.featureChain(&ar, map[FeatureName]bool{FeatureCooperativeMatrix: true})
	nodes := chainNodes(f2.PNext)
	cm, ok := nodes[vk.StructureTypePhysicalDeviceCooperativeMatrixFeaturesKHR]
	if !ok || (*vk.PhysicalDeviceCooperativeMatrixFeaturesKHR)(cm).CooperativeMatrix != vk.True {
		t.Errorf("no cooperativeMatrix = VK_TRUE in the chain %v", nodes)
	}
	if ok && (*vk.PhysicalDeviceCooperativeMatrixFeaturesKHR)(cm).CooperativeMatrixRobustBufferAccess != 0 {
		t.Error("cooperativeMatrixRobustBufferAccess enabled though nothing asked for it")
	}
	if mm, ok := nodes[vk.StructureTypePhysicalDeviceVulkanMemoryModelFeatures]; !ok || (*vk.PhysicalDeviceVulkanMemoryModelFeatures)(mm).VulkanMemoryModel != vk.True {
		t.Error("vulkanMemoryModel not enabled with cooperative matrices")
	}
	sc, ok := nodes[vk.StructureTypePhysicalDeviceSubgroupSizeControlFeatures]
	if !ok || (*vk.PhysicalDeviceSubgroupSizeControlFeatures)(sc).ComputeFullSubgroups != vk.True ||
		(*vk.PhysicalDeviceSubgroupSizeControlFeatures)(sc).SubgroupSizeControl != 0 {
		t.Errorf("subgroup size control features in the chain: %v", ok)
	}
	if !slices.Contains(exts, extCooperativeMatrix) || slices.Contains(exts, "VK_EXT_subgroup_size_control") {
		t.Errorf("extensions %v: want %s, and no subgroup-size-control extension on Vulkan 1.3", exts, extCooperativeMatrix)
	}

	f2, exts = a.featureChain(&ar, map[FeatureName]bool{FeatureCooperativeMatrix: true, FeatureSubgroupSizeControl: true})
	sc = chainNodes(f2.PNext)[vk.StructureTypePhysicalDeviceSubgroupSizeControlFeatures]
	if sc == nil || (*vk.PhysicalDeviceSubgroupSizeControlFeatures)(sc).SubgroupSizeControl != vk.True ||
		(*vk.PhysicalDeviceSubgroupSizeControlFeatures)(sc).ComputeFullSubgroups != vk.True {
		t.Error("subgroup-size-control with cooperative-matrix: want one struct with both features")
	}

	f2, exts = a.featureChain(&ar, map[FeatureName]bool{})
	nodes = chainNodes(f2.PNext)
	if _, ok := nodes[vk.StructureTypePhysicalDeviceCooperativeMatrixFeaturesKHR]; ok || slices.Contains(exts, extCooperativeMatrix) {
		t.Errorf("cooperative matrices enabled though not required: %v %v", nodes, exts)
	}
	if _, ok := nodes[vk.StructureTypePhysicalDeviceSubgroupSizeControlFeatures]; ok {
		t.Error("subgroup size control features in the chain though nothing asked for them")
	}
}

// TestRequestCooperativeMatrixWithoutItFails: on an adapter without the feature (every CPU implementation) the
// device request fails with ErrMissingFeature naming the feature, the adapter and what is missing.
func TestRequestCooperativeMatrixWithoutItFails(t *testing.T) {
	inst, adapters := realAdapters(t)
	defer inst.Close()
	tried := 0
	for _, a := range adapters {
		if a.HasFeature(FeatureCooperativeMatrix) {
			continue
		}
		tried++
		d, err := a.RequestDevice(&DeviceDescriptor{RequiredFeatures: []FeatureName{FeatureCooperativeMatrix}, PipelineCacheDir: "-"})
		if err == nil {
			d.Close()
			t.Errorf("%s: device with cooperative-matrix created on an adapter without it", a.Info().Name)
			continue
		}
		msg := err.Error()
		if !errors.Is(err, ErrMissingFeature) || !strings.Contains(msg, "cooperative-matrix") ||
			!strings.Contains(msg, a.Info().Name) || !strings.Contains(msg, extCooperativeMatrix) {
			t.Errorf("%s: error %q, want ErrMissingFeature naming the feature, the adapter and %s", a.Info().Name, msg, extCooperativeMatrix)
		}
	}
	if tried == 0 {
		t.Skip("every adapter here has cooperative matrices")
	}
}

// TestAdapterCooperativeMatrixReport: lavapipe (and SwiftShader) report the feature absent with an empty list of
// configurations, in the JSON too; an adapter reporting it has configurations.
func TestAdapterCooperativeMatrixReport(t *testing.T) {
	inst, adapters := realAdapters(t)
	defer inst.Close()
	for _, a := range adapters {
		info := a.Info()
		ft := info.Features
		has := a.HasFeature(FeatureCooperativeMatrix)
		if has != ft.CooperativeMatrix || has != (len(ft.CooperativeMatrixConfigs) > 0) || ft.CooperativeMatrixConfigs == nil {
			t.Errorf("%s: feature %v, Features.CooperativeMatrix %v, %d configs (list nil: %v)", info.Name, has,
				ft.CooperativeMatrix, len(ft.CooperativeMatrixConfigs), ft.CooperativeMatrixConfigs == nil)
		}
		if len(a.CooperativeMatrixConfigs()) != len(ft.CooperativeMatrixConfigs) {
			t.Errorf("%s: CooperativeMatrixConfigs() lists %d, the info %d", info.Name, len(a.CooperativeMatrixConfigs()), len(ft.CooperativeMatrixConfigs))
		}
		isCPU := strings.HasPrefix(info.Name, "llvmpipe") || strings.HasPrefix(info.Name, "SwiftShader")
		if isCPU && has {
			t.Errorf("%s reports cooperative matrices, which no CPU implementation offers", info.Name)
		}
		if !has {
			b, err := json.Marshal(info.Features)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), `"cooperative_matrix":false`) || !strings.Contains(string(b), `"cooperative_matrix_configs":[]`) {
				t.Errorf("%s: JSON features %s", info.Name, b)
			}
		}
		t.Logf("%s: cooperative matrices %v %v (%s)", info.Name, has, ft.CooperativeMatrixConfigs, a.missingReason(FeatureCooperativeMatrix))
	}
}

// TestCooperativeMatrixConfigJSON: the configuration's JSON names, as `wgpu-eval devices --json` prints them.
func TestCooperativeMatrixConfigJSON(t *testing.T) {
	c := CooperativeMatrixConfig{M: 16, N: 8, K: 16, AType: ComponentF16, BType: ComponentF16, CType: ComponentF32,
		ResultType: ComponentF32, Scope: ScopeSubgroup, SubgroupMatrix: true}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"m":16,"n":8,"k":16,"a_type":"f16","b_type":"f16","c_type":"f32","result_type":"f32",` +
		`"saturating_accumulation":false,"scope":"subgroup","subgroup_matrix":true}`
	if string(b) != want {
		t.Errorf("JSON %s\nwant %s", b, want)
	}
	var back CooperativeMatrixConfig
	if err := json.Unmarshal(b, &back); err != nil || back != c {
		t.Errorf("round trip %+v, %v", back, err)
	}
}

// TestWGSLOptionsFollowDeviceFeature: shader modules compile subgroup matrices to SPV_KHR_cooperative_matrix exactly
// when the device enabled the feature, and the device lists configurations only then.
func TestWGSLOptionsFollowDeviceFeature(t *testing.T) {
	configs := []CooperativeMatrixConfig{{M: 16, N: 16, K: 16, AType: ComponentF16, BType: ComponentF16, CType: ComponentF32,
		ResultType: ComponentF32, Scope: ScopeSubgroup, SubgroupMatrix: true}}
	a := &Adapter{}
	a.info.Features.CooperativeMatrix, a.info.Features.CooperativeMatrixConfigs = true, configs
	on := &Device{adapter: a, features: map[FeatureName]bool{FeatureCooperativeMatrix: true}}
	off := &Device{adapter: a, features: map[FeatureName]bool{FeatureShaderF16: true}}
	if !on.wgslOptions().CooperativeMatrix || len(on.CooperativeMatrixConfigs()) != 1 {
		t.Errorf("device with the feature: options %+v, configs %v", on.wgslOptions(), on.CooperativeMatrixConfigs())
	}
	if off.wgslOptions().CooperativeMatrix || off.CooperativeMatrixConfigs() != nil {
		t.Errorf("device without the feature: options %+v, configs %v", off.wgslOptions(), off.CooperativeMatrixConfigs())
	}
	env := newEnv(t) // a real device (lavapipe in CI): never the feature unless asked for
	if env.dev.wgslOptions().CooperativeMatrix {
		t.Error("real device without the feature compiles to cooperative matrices")
	}
}

// spirvWords assembles a module header and the given instructions (each opcode word first).
func spirvWords(instrs ...[]uint32) []uint32 {
	w := []uint32{0x07230203, 0x00010300, 0, 100, 0}
	for _, in := range instrs {
		w = append(w, uint32(len(in))<<16|in[0])
		w = append(w, in[1:]...)
	}
	return w
}

func TestUsesCooperativeMatrix(t *testing.T) {
	const opCapability, opExtension, opMemoryModel = 17, 10, 14
	shader := []uint32{opCapability, 1}
	coop := []uint32{opCapability, capabilityCooperativeMatrixKHR}
	for _, c := range []struct {
		name string
		code []uint32
		want bool
	}{
		{"capability", spirvWords(shader, []uint32{opCapability, 5345}, coop, []uint32{opMemoryModel, 0, 3}), true},
		{"none", spirvWords(shader, []uint32{opExtension, 0x5f565053}, []uint32{opMemoryModel, 0, 3}), false},
		{"after the capabilities", spirvWords(shader, []uint32{opMemoryModel, 0, 3}, coop), false},
		{"truncated", spirvWords(shader, coop)[:7], false},
		{"header only", spirvWords(), false},
	} {
		if got := usesCooperativeMatrix(c.code); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if usesCooperativeMatrix(loadSPIRV(t, "spec")) {
		t.Error("testdata/spec.spv reported as using cooperative matrices")
	}
}

// TestCooperativeMatrixSubgroupRules: what CreateComputePipeline asks of a pipeline using cooperative matrices
// (documented in coopmat.go): a fixed subgroup size where it varies, and whole subgroups.
func TestCooperativeMatrixSubgroupRules(t *testing.T) {
	amd := Limits{SubgroupSize: 64, MinSubgroupSize: 32, MaxSubgroupSize: 64}
	nv := Limits{SubgroupSize: 32, MinSubgroupSize: 32, MaxSubgroupSize: 32}
	for _, c := range []struct {
		name           string
		l              Limits
		required, wgX  uint32
		full, wantFull bool
		err            string
	}{
		{"AMD without a size", amd, 0, 128, true, false, "set RequiredSubgroupSize"},
		{"AMD wave32", amd, 32, 128, true, true, ""},
		{"AMD wave64, x 96", amd, 64, 96, true, false, "not a multiple of the subgroup size 64"},
		{"NVIDIA fixed 32", nv, 0, 64, true, true, ""},
		{"NVIDIA x 16", nv, 0, 16, true, false, "not a multiple"},
		{"SPIR-V module (x unknown)", nv, 0, 0, true, true, ""},
		{"no computeFullSubgroups", nv, 0, 16, false, false, ""},
	} {
		full, err := cooperativeSubgroups("mm", c.l, c.required, c.wgX, c.full)
		if c.err == "" && (err != nil || full != c.wantFull) {
			t.Errorf("%s: full %v, %v; want %v", c.name, full, err, c.wantFull)
		}
		if c.err != "" && (!errors.Is(err, ErrBadUsage) || !strings.Contains(fmt.Sprint(err), c.err)) {
			t.Errorf("%s: error %v, want ErrBadUsage with %q", c.name, err, c.err)
		}
	}
}

// realAdapters lists the machine's adapters (lavapipe in CI, where Vulkan is required).
func realAdapters(t *testing.T) (*Instance, []*Adapter) {
	t.Helper()
	inst, err := CreateInstance(nil)
	if Unavailable(err) {
		prereq.Missing(t, "vulkan", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	adapters, err := inst.EnumerateAdapters()
	if Unavailable(err) {
		inst.Close()
		prereq.Missing(t, "vulkan", err)
	}
	if err != nil {
		inst.Close()
		t.Fatal(err)
	}
	return inst, adapters
}

// TestRequestCooperativeMatrixWhereOffered: on an adapter with matrix units (a real GPU; skipped elsewhere) a device
// with the feature is created under the validation layer, lists configurations WGSL can use, compiles WGSL for them
// and runs an ordinary kernel as before.
func TestRequestCooperativeMatrixWhereOffered(t *testing.T) {
	probe, adapters := realAdapters(t)
	offered := slices.ContainsFunc(adapters, func(a *Adapter) bool { return a.HasFeature(FeatureCooperativeMatrix) })
	probe.Close()
	if !offered {
		t.Skip("no adapter here offers cooperative matrices (no CPU implementation does)")
	}
	env := newEnv(t, FeatureCooperativeMatrix, FeatureShaderF16)
	d := env.dev
	configs := d.CooperativeMatrixConfigs()
	if !d.HasFeature(FeatureCooperativeMatrix) || len(configs) == 0 || !d.wgslOptions().CooperativeMatrix {
		t.Fatalf("device: feature %v, configs %v, options %+v", d.HasFeature(FeatureCooperativeMatrix), configs, d.wgslOptions())
	}
	if !slices.ContainsFunc(configs, func(c CooperativeMatrixConfig) bool { return c.SubgroupMatrix }) {
		t.Errorf("no configuration WGSL can use among %v", configs)
	}
	t.Logf("%s: %d configurations, whole subgroups %v, subgroup sizes %d..%d: %v", env.ad.Info().Name, len(configs),
		d.fullGroups, d.limits.MinSubgroupSize, d.limits.MaxSubgroupSize, configs)
	m := wgslModule(t, d, "iota.wgsl", `@group(0) @binding(0) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(32) fn main(@builtin(global_invocation_id) g: vec3u) { o[g.x] = f32(g.x) * 2.0; }`)
	p := wgslPipeline(t, d, m, "main", nil, [3]uint32{32, 1, 1})
	out := newBuffer(t, d, 4*64, storageRW)
	got := dispatchOut(t, d, p, out, 2)
	for i, v := range got {
		if v != float32(2*i) {
			t.Fatalf("kernel on the device with cooperative matrices: o[%d] = %g, want %d", i, v, 2*i)
		}
	}
}

// TestModuleMatrixConfigsMustRun: a module compiled for the matrix units may
// use only multiplications the device's WGSL-usable configurations run: the
// shape, the operand type and the result type must all match, and a
// configuration WGSL cannot use (saturating, mixed operand types) runs
// nothing; the error names the multiplication and what the device runs.
func TestModuleMatrixConfigsMustRun(t *testing.T) {
	have := []CooperativeMatrixConfig{
		{M: 16, N: 16, K: 16, AType: ComponentF16, BType: ComponentF16, CType: ComponentF32, ResultType: ComponentF32, Scope: ScopeSubgroup, SubgroupMatrix: true},
		{M: 16, N: 8, K: 16, AType: ComponentF16, BType: ComponentF16, CType: ComponentF16, ResultType: ComponentF16, Scope: ScopeSubgroup, SubgroupMatrix: true},
		{M: 8, N: 8, K: 32, AType: ComponentI8, BType: ComponentI8, CType: ComponentI32, ResultType: ComponentI32, Scope: ScopeSubgroup, SaturatingAccumulation: true},
	}
	ok := []wgsl.MatrixConfig{{M: 16, N: 16, K: 16, Component: "f16", Result: "f32"}, {M: 16, N: 8, K: 16, Component: "f16", Result: "f16"}}
	if err := checkMatrixConfigs("k", ok, have); err != nil {
		t.Errorf("configurations the device runs: %v", err)
	}
	for _, bad := range []wgsl.MatrixConfig{
		{M: 16, N: 16, K: 8, Component: "f16", Result: "f32"},  // shape
		{M: 16, N: 16, K: 16, Component: "f32", Result: "f32"}, // operands
		{M: 16, N: 8, K: 16, Component: "f16", Result: "f32"},  // result
		{M: 8, N: 8, K: 32, Component: "i8", Result: "i32"},    // only a configuration WGSL cannot use
	} {
		err := checkMatrixConfigs("k", append(ok, bad), have)
		want := fmt.Sprintf("%dx%dx%d %s matrices into %s", bad.M, bad.N, bad.K, bad.Component, bad.Result)
		if !errors.Is(err, ErrBadUsage) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "16x16x16 f16*f16+f32->f32 subgroup") {
			t.Errorf("%+v: err = %v, want ErrBadUsage naming %q and the device's configurations", bad, err, want)
		}
	}
	if err := checkMatrixConfigs("k", nil, nil); err != nil {
		t.Errorf("a module without subgroup matrices: %v", err)
	}
}

// TestOldValidationLayerHidesCoopMatrix: under a validation layer written for
// a Vulkan header before 1.3.255 (Debian 12's is 1.3.239) the adapter does
// not use VK_KHR_cooperative_matrix, saying why (such a layer reported the
// extension's structures as errors on an H200); a newer layer or no
// validation keeps it.
func TestOldValidationLayerHidesCoopMatrix(t *testing.T) {
	old := vk.MakeAPIVersion(1, 3, 239)
	if why := layerPredatesCoopMatrix(true, old); !strings.Contains(why, "predates it (written for Vulkan 1.3.239; the extension came with 1.3.255)") {
		t.Errorf("a 1.3.239 layer: %q", why)
	}
	for _, c := range []struct {
		validation bool
		spec       uint32
	}{{false, old}, {true, vk.MakeAPIVersion(1, 3, 255)}, {true, vk.MakeAPIVersion(1, 4, 309)}} {
		if why := layerPredatesCoopMatrix(c.validation, c.spec); why != "" {
			t.Errorf("validation %v, layer %s: %q, want the extension used", c.validation, vk.VersionString(c.spec), why)
		}
	}
	if coopMatrixHeader != vk.MakeAPIVersion(1, 3, 255) {
		t.Errorf("coopMatrixHeader %s", vk.VersionString(coopMatrixHeader))
	}
}
