package wgpu

import (
	"errors"
	"strings"
	"testing"
)

// TestCapabilitiesOfDevice: a WGSL pipeline whose SPIR-V needs a feature the device did not enable (f16 arithmetic
// without shader-f16) is refused at creation with ErrMissingFeature naming the capability, before the driver sees
// it: invalid Vulkan, which the CPU drivers run anyway and a GPU without the feature may not. With the feature it
// is created.
func TestCapabilitiesOfDevice(t *testing.T) {
	const src = `enable f16;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3<u32>) {
	let h = f16(id.x) * 0.5h;
	out[id.x] = f32(h);
}`
	plain := newEnv(t)
	m, err := plain.dev.CreateShaderModule(&ShaderModuleDescriptor{Label: "half.wgsl", WGSL: src})
	if err != nil {
		t.Fatal(err)
	}
	_, err = plain.dev.CreateComputePipeline(&ComputePipelineDescriptor{Label: "half", Module: m, EntryPoint: "main"})
	if !errors.Is(err, ErrMissingFeature) || !strings.Contains(err.Error(), "Float16") || !strings.Contains(err.Error(), string(FeatureShaderF16)) {
		t.Fatalf("f16 pipeline on a device without %s: %v, want ErrMissingFeature naming Float16 and the feature", FeatureShaderF16, err)
	}
	if !plain.ad.HasFeature(FeatureShaderF16) {
		return
	}
	half := newEnv(t, FeatureShaderF16)
	m, err = half.dev.CreateShaderModule(&ShaderModuleDescriptor{Label: "half.wgsl", WGSL: src})
	if err != nil {
		t.Fatal(err)
	}
	p, err := half.dev.CreateComputePipeline(&ComputePipelineDescriptor{Label: "half", Module: m, EntryPoint: "main"})
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
}

// TestCapabilitiesSubgroupOperations: the subgroup operations a module uses must be among those the adapter offers
// in compute shaders (Vulkan has no feature to enable for them, only supportedOperations): shuffles on an adapter
// with basic and arithmetic operations only (some mobile GPUs) are refused, naming the class; each class the
// adapter lists passes.
func TestCapabilitiesSubgroupOperations(t *testing.T) {
	header := []uint32{0x07230203, 0x00010300, 0, 10, 0}
	capability := func(c uint32) []uint32 { return []uint32{2<<16 | 17, c} }
	code := append(append(append(append([]uint32{}, header...), capability(1)...), capability(capGroupNonUniform)...), capability(capGroupNonUniformShuffle)...)
	d := &Device{adapter: &Adapter{info: AdapterInfo{Name: "a mobile GPU", Features: Features{Subgroups: true,
		SubgroupOperations: []string{"basic", "vote", "arithmetic", "ballot"}}}}, features: map[FeatureName]bool{FeatureSubgroups: true}}
	err := d.checkCapabilities(`pipeline "p"`, code)
	if !errors.Is(err, ErrMissingFeature) || !strings.Contains(err.Error(), "GroupNonUniformShuffle") || !strings.Contains(err.Error(), `"shuffle"`) {
		t.Fatalf("shuffles without them: %v, want ErrMissingFeature naming GroupNonUniformShuffle and the shuffle class", err)
	}
	d.adapter.info.Features.SubgroupOperations = append(d.adapter.info.Features.SubgroupOperations, "shuffle")
	if err := d.checkCapabilities(`pipeline "p"`, code); err != nil {
		t.Fatal(err)
	}
	if got := capabilities(code); len(got) != 3 || got[2] != capGroupNonUniformShuffle {
		t.Fatalf("capabilities: %v", got)
	}
}
