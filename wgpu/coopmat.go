package wgpu

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wgpu-eval/wgpu-eval/wgpu/internal/vk"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// Cooperative matrices (VK_KHR_cooperative_matrix): the hardware matrix units (NVIDIA tensor cores, AMD WMMA, Intel
// XMX) that WGSL's chromium_experimental_subgroup_matrix compiles to on a device with FeatureCooperativeMatrix.
//
// What a caller must do to run subgroup matrices on the matrix units:
//   - require FeatureCooperativeMatrix (and FeatureShaderF16 for f16 operands, which need shaderFloat16; i8 and u8
//     ones need shaderInt8, which the device enables with the feature wherever the adapter has it);
//   - use only shapes and types of a configuration whose SubgroupMatrix is true (Adapter.CooperativeMatrixConfigs);
//   - on an adapter whose subgroup size varies (Limits.MinSubgroupSize < MaxSubgroupSize: AMD's wave32/wave64,
//     Intel's 8..32), also require FeatureSubgroupSizeControl and set ComputePipelineDescriptor.RequiredSubgroupSize
//     on every pipeline whose shader uses them, to the size the kernel's tiling was written for (llama.cpp's Vulkan
//     backend fixes 32, AMD's wave32, for its KHR cooperative-matrix kernels); CreateComputePipeline refuses such a
//     pipeline without it, since the matrices of one subgroup are spread over its invocations;
//   - give such pipelines a workgroup size whose x is a multiple of that subgroup size (of MaxSubgroupSize without
//     one): the device runs them with whole subgroups only (VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT,
//     where computeFullSubgroups exists), since a cooperative-matrix operation needs every invocation of the
//     subgroup, and CreateComputePipeline checks the multiple for WGSL modules.
//
// Without the feature the same WGSL compiles to ordinary invocation code (wgsl.Options.CooperativeMatrix false), which
// every device runs: the feature is about speed, never about which kernels can run.

// ComponentType names the element type of a cooperative matrix, in WGSL's spelling where WGSL has the type.
type ComponentType string

// The component types of VkComponentTypeKHR. An unknown value reads "VkComponentTypeKHR(N)".
const (
	ComponentF16  ComponentType = "f16"
	ComponentF32  ComponentType = "f32"
	ComponentF64  ComponentType = "f64"
	ComponentI8   ComponentType = "i8"
	ComponentI16  ComponentType = "i16"
	ComponentI32  ComponentType = "i32"
	ComponentI64  ComponentType = "i64"
	ComponentU8   ComponentType = "u8"
	ComponentU16  ComponentType = "u16"
	ComponentU32  ComponentType = "u32"
	ComponentU64  ComponentType = "u64"
	ComponentE4M3 ComponentType = "e4m3" // 8-bit float, 4 exponent bits (VK_NV_cooperative_matrix2)
	ComponentE5M2 ComponentType = "e5m2" // 8-bit float, 5 exponent bits (VK_NV_cooperative_matrix2)
	ComponentBF16 ComponentType = "bf16" // bfloat16 (VK_KHR_shader_bfloat16), which NVIDIA's drivers list
)

// componentTypeBFloat16KHR is VK_COMPONENT_TYPE_BFLOAT16_KHR, newer than the
// vk.xml the vk package is generated from (Debian 12's 1.3.239): an H200's
// driver (580.159.04) lists a 16x16x16 bf16 configuration, which read
// "VkComponentTypeKHR(1000141000)" in `wgpu-eval devices`.
const componentTypeBFloat16KHR vk.ComponentTypeKHR = 1000141000

var componentTypes = map[vk.ComponentTypeKHR]ComponentType{
	vk.ComponentTypeFloat16KHR: ComponentF16, vk.ComponentTypeFloat32KHR: ComponentF32, vk.ComponentTypeFloat64KHR: ComponentF64,
	vk.ComponentTypeSint8KHR: ComponentI8, vk.ComponentTypeSint16KHR: ComponentI16, vk.ComponentTypeSint32KHR: ComponentI32,
	vk.ComponentTypeSint64KHR: ComponentI64, vk.ComponentTypeUint8KHR: ComponentU8, vk.ComponentTypeUint16KHR: ComponentU16,
	vk.ComponentTypeUint32KHR: ComponentU32, vk.ComponentTypeUint64KHR: ComponentU64,
	vk.ComponentTypeFloatE4m3NV: ComponentE4M3, vk.ComponentTypeFloatE5m2NV: ComponentE5M2,
	componentTypeBFloat16KHR: ComponentBF16,
}

func componentType(t vk.ComponentTypeKHR) ComponentType {
	if c, ok := componentTypes[t]; ok {
		return c
	}
	return ComponentType(fmt.Sprintf("VkComponentTypeKHR(%d)", int32(t)))
}

// wgslMatrixTypes are the component types WGSL's subgroup matrices can hold (f16 needs `enable f16;`).
var wgslMatrixTypes = map[ComponentType]bool{ComponentF16: true, ComponentF32: true, ComponentI8: true,
	ComponentU8: true, ComponentI32: true, ComponentU32: true}

// Scopes of a cooperative matrix: the invocations that hold it together.
const (
	ScopeSubgroup    = "subgroup"
	ScopeWorkgroup   = "workgroup"
	ScopeDevice      = "device"
	ScopeQueueFamily = "queue-family"
)

func scopeName(s vk.ScopeKHR) string {
	switch s {
	case vk.ScopeSubgroupKHR:
		return ScopeSubgroup
	case vk.ScopeWorkgroupKHR:
		return ScopeWorkgroup
	case vk.ScopeDeviceKHR:
		return ScopeDevice
	case vk.ScopeQueueFamilyKHR:
		return ScopeQueueFamily
	}
	return fmt.Sprintf("VkScopeKHR(%d)", int32(s))
}

// CooperativeMatrixConfig is one multiply-accumulate the device's matrix units run (a VkCooperativeMatrixPropertiesKHR):
// Result (M x N) = A (M x K) * B (K x N) + C (M x N), for matrices held by the invocations of Scope.
type CooperativeMatrixConfig struct {
	M          uint32        `json:"m"`
	N          uint32        `json:"n"`
	K          uint32        `json:"k"`
	AType      ComponentType `json:"a_type"`
	BType      ComponentType `json:"b_type"`
	CType      ComponentType `json:"c_type"`
	ResultType ComponentType `json:"result_type"`
	// SaturatingAccumulation: integer results saturate instead of wrapping.
	SaturatingAccumulation bool   `json:"saturating_accumulation"`
	Scope                  string `json:"scope"` // ScopeSubgroup, ScopeWorkgroup, ...
	// SubgroupMatrix: WGSL's subgroup matrices can use this configuration: subgroup scope, one component type for
	// the left and right matrices and one for the accumulator and result, types WGSL has, no saturation.
	SubgroupMatrix bool `json:"subgroup_matrix"`
}

// String formats the configuration as "16x16x16 f16*f16+f32->f32 subgroup" (", saturating" when it saturates).
func (c CooperativeMatrixConfig) String() string {
	s := fmt.Sprintf("%dx%dx%d %s*%s+%s->%s %s", c.M, c.N, c.K, c.AType, c.BType, c.CType, c.ResultType, c.Scope)
	if c.SaturatingAccumulation {
		s += ", saturating"
	}
	return s
}

// cooperativeMatrixConfig converts one VkCooperativeMatrixPropertiesKHR.
func cooperativeMatrixConfig(p *vk.CooperativeMatrixPropertiesKHR) CooperativeMatrixConfig {
	c := CooperativeMatrixConfig{M: p.MSize, N: p.NSize, K: p.KSize,
		AType: componentType(p.AType), BType: componentType(p.BType), CType: componentType(p.CType),
		ResultType: componentType(p.ResultType), SaturatingAccumulation: p.SaturatingAccumulation != 0, Scope: scopeName(p.Scope)}
	c.SubgroupMatrix = c.Scope == ScopeSubgroup && c.AType == c.BType && c.CType == c.ResultType &&
		!c.SaturatingAccumulation && wgslMatrixTypes[c.AType] && wgslMatrixTypes[c.ResultType]
	return c
}

// queryCooperativeMatrix lists the configurations with Vulkan's two-call idiom; query is
// vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR bound to a physical device (a seam for tests).
func queryCooperativeMatrix(query func(n *uint32, p *vk.CooperativeMatrixPropertiesKHR) vk.Result) ([]CooperativeMatrixConfig, error) {
	for range 4 { // the count may grow between the calls (VK_INCOMPLETE): ask again
		var n uint32
		if err := check("vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR", query(&n, nil)); err != nil {
			return nil, err
		}
		if n == 0 {
			return []CooperativeMatrixConfig{}, nil
		}
		var ar vk.Arena
		props := vk.NewSlice[vk.CooperativeMatrixPropertiesKHR](&ar, int(n)) // sType set, pNext nil
		r := query(&n, &props[0])
		if r == vk.Incomplete {
			ar.Release()
			continue
		}
		if err := check("vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR", r); err != nil {
			ar.Release()
			return nil, err
		}
		out := make([]CooperativeMatrixConfig, 0, n)
		for i := range props[:min(int(n), len(props))] {
			out = append(out, cooperativeMatrixConfig(&props[i]))
		}
		ar.Release()
		return out, nil
	}
	return nil, fmt.Errorf("vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR: %w", vk.Incomplete)
}

// CooperativeMatrixConfigs lists the adapter's cooperative-matrix configurations, all scopes (empty without
// FeatureCooperativeMatrix). Only those with SubgroupMatrix set serve WGSL subgroup matrices.
func (a *Adapter) CooperativeMatrixConfigs() []CooperativeMatrixConfig {
	return append([]CooperativeMatrixConfig{}, a.info.Features.CooperativeMatrixConfigs...)
}

// CooperativeMatrixConfigs lists the configurations the device's shaders may use: the adapter's when
// FeatureCooperativeMatrix was enabled at RequestDevice, else none (subgroup matrices then compile to ordinary code).
func (d *Device) CooperativeMatrixConfigs() []CooperativeMatrixConfig {
	if !d.features[FeatureCooperativeMatrix] {
		return nil
	}
	return d.adapter.CooperativeMatrixConfigs()
}

// capabilityCooperativeMatrixKHR is SPIR-V's CooperativeMatrixKHR capability.
const capabilityCooperativeMatrixKHR = 6022

// usesCooperativeMatrix reports whether SPIR-V declares the CooperativeMatrixKHR capability (capabilities come first,
// right after the 5-word header).
func usesCooperativeMatrix(code []uint32) bool {
	const opCapability = 17
	for i := 5; i < len(code); {
		op, n := code[i]&0xffff, int(code[i]>>16)
		if op != opCapability || n < 2 || i+n > len(code) {
			return false
		}
		if code[i+1] == capabilityCooperativeMatrixKHR {
			return true
		}
		i += n
	}
	return false
}

// cooperativeSubgroups checks a pipeline whose shader uses cooperative matrices against the device's subgroups:
// a subgroup size fixed where it varies, and a workgroup x that whole subgroups fill where the device can require
// them (full reports whether it can; wgX is 0 when unknown, for SPIR-V modules). It returns whether to set
// VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT.
func cooperativeSubgroups(label string, l Limits, required, wgX uint32, full bool) (requireFull bool, err error) {
	if required == 0 && l.MinSubgroupSize < l.MaxSubgroupSize {
		return false, errorf(ErrBadUsage, "pipeline %q uses cooperative matrices on an adapter whose subgroup size varies (%d..%d): "+
			"set RequiredSubgroupSize (with %s) to the size the kernel was written for", label, l.MinSubgroupSize, l.MaxSubgroupSize, FeatureSubgroupSizeControl)
	}
	if !full {
		return false, nil
	}
	size := required
	if size == 0 {
		size = l.MaxSubgroupSize
	}
	if wgX != 0 && size != 0 && wgX%size != 0 {
		return false, errorf(ErrBadUsage, "pipeline %q uses cooperative matrices, which need whole subgroups: workgroup size x %d is not a multiple of the subgroup size %d",
			label, wgX, size)
	}
	return true, nil
}

// Runs reports whether the configuration runs m, one subgroup matrix multiplication of a WGSL module: WGSL
// may use it (SubgroupMatrix), its shape is m's, and its operand and result types are m's.
func (c CooperativeMatrixConfig) Runs(m wgsl.MatrixConfig) bool {
	return c.SubgroupMatrix && int(c.M) == m.M && int(c.N) == m.N && int(c.K) == m.K &&
		string(c.AType) == m.Component && string(c.ResultType) == m.Result
}

// checkMatrixConfigs reports the first subgroup matrix multiplication of a module that none of the device's
// configurations runs, naming the ones it has: a module compiled for the matrix units (wgsl.Options.CooperativeMatrix)
// must use only those.
func checkMatrixConfigs(label string, used []wgsl.MatrixConfig, have []CooperativeMatrixConfig) error {
	for _, m := range used {
		if !slices.ContainsFunc(have, func(c CooperativeMatrixConfig) bool { return c.Runs(m) }) {
			var names []string
			for _, c := range have {
				if c.SubgroupMatrix {
					names = append(names, c.String())
				}
			}
			return fmt.Errorf("%w: shader %q multiplies %dx%dx%d %s matrices into %s, which the device's matrix units do not run (they run: %s)",
				ErrBadUsage, label, m.M, m.N, m.K, m.Component, m.Result, strings.Join(names, "; "))
		}
	}
	return nil
}
