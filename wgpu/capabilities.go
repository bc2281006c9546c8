package wgpu

import (
	"fmt"
	"slices"
)

// SPIR-V capabilities a device may lack, with what it needs for each: a module that declares one the device does not
// have is invalid Vulkan (VUID-VkShaderModuleCreateInfo-pCode-08740), whose driver may refuse it, crash or run it
// wrong. The CPU drivers have nearly all of them, so only this check shows such a module before it reaches a GPU that
// lacks one (f16 on an older GPU, a subgroup operation a mobile GPU does not offer in compute shaders).
const (
	capFloat16                      = 9
	capFloat64                      = 10
	capInt64                        = 11
	capInt64Atomics                 = 12
	capInt16                        = 22
	capInt8                         = 39
	capGroupNonUniform              = 61
	capGroupNonUniformVote          = 62
	capGroupNonUniformArithmetic    = 63
	capGroupNonUniformBallot        = 64
	capGroupNonUniformShuffle       = 65
	capGroupNonUniformShuffleRel    = 66
	capGroupNonUniformClustered     = 67
	capGroupNonUniformQuad          = 68
	capStorageBuffer16BitAccess     = 4433
	capUniformAndStorage16BitAccess = 4434
	capStoragePushConstant16        = 4435
	capStorageBuffer8BitAccess      = 4448
	capVulkanMemoryModel            = 5345
	capVulkanMemoryModelDeviceScope = 5346
)

// subgroupCapabilities are the subgroup operations (AdapterInfo.Features.SubgroupOperations' names) behind each
// GroupNonUniform capability.
var subgroupCapabilities = map[uint32]string{
	capGroupNonUniform: "basic", capGroupNonUniformVote: "vote", capGroupNonUniformArithmetic: "arithmetic",
	capGroupNonUniformBallot: "ballot", capGroupNonUniformShuffle: "shuffle", capGroupNonUniformShuffleRel: "shuffle-relative",
	capGroupNonUniformClustered: "clustered", capGroupNonUniformQuad: "quad",
}

// capabilities are the OpCapability operands of SPIR-V code (they come first, right after the 5-word header).
func capabilities(code []uint32) []uint32 {
	const opCapability = 17
	var caps []uint32
	for i := 5; i < len(code); {
		op, n := code[i]&0xffff, int(code[i]>>16)
		if op != opCapability || n < 2 || i+n > len(code) {
			break
		}
		caps = append(caps, code[i+1])
		i += n
	}
	return caps
}

// checkCapabilities refuses SPIR-V code (of the pipeline or module what names) that declares a capability this device
// does not have or did not enable: ErrMissingFeature, naming the capability and what it needs. Capabilities it does
// not know pass, for the driver to judge (SPIR-V modules given by the caller).
func (d *Device) checkCapabilities(what string, code []uint32) error {
	a := d.adapter
	f16 := d.features[FeatureShaderF16]
	storage16 := f16 || d.features[FeatureStorage16Bit]
	for _, c := range capabilities(code) {
		var ok bool
		var needs string
		switch c {
		case capFloat16:
			ok, needs = f16, fmt.Sprintf("f16 arithmetic: %s (shaderFloat16)", FeatureShaderF16)
		case capStorageBuffer16BitAccess:
			ok, needs = storage16, fmt.Sprintf("16-bit values in storage buffers: %s or %s", FeatureShaderF16, FeatureStorage16Bit)
		case capUniformAndStorage16BitAccess:
			ok, needs = storage16 && a.uniform16, fmt.Sprintf("16-bit values in uniform buffers: %s or %s, on an adapter with uniformAndStorageBuffer16BitAccess", FeatureShaderF16, FeatureStorage16Bit)
		case capInt8:
			ok, needs = d.features[FeatureCooperativeMatrix] && a.int8, fmt.Sprintf("8-bit integers: %s, on an adapter with shaderInt8", FeatureCooperativeMatrix)
		case capVulkanMemoryModel:
			ok, needs = a.memModel, "the Vulkan memory model (vulkanMemoryModel)"
		case capVulkanMemoryModelDeviceScope:
			ok, needs = a.memScope, "the Vulkan memory model at device scope (vulkanMemoryModelDeviceScope)"
		case capFloat64, capInt64, capInt64Atomics, capInt16, capStoragePushConstant16, capStorageBuffer8BitAccess:
			ok, needs = false, "a Vulkan feature this package never enables"
		default:
			op, sub := subgroupCapabilities[c]
			if !sub {
				continue
			}
			ok = slices.Contains(a.info.Features.SubgroupOperations, op)
			needs = fmt.Sprintf("subgroup operations of the %q class in compute shaders (the adapter offers %v)", op, a.info.Features.SubgroupOperations)
		}
		if !ok {
			return errorf(ErrMissingFeature, "%s: SPIR-V capability %s needs %s, which %s lacks", what, capabilityName(c), needs, a.info.Name)
		}
	}
	return nil
}

// capabilityName spells the capabilities checkCapabilities refuses as SPIR-V does.
func capabilityName(c uint32) string {
	names := map[uint32]string{capFloat16: "Float16", capFloat64: "Float64", capInt64: "Int64", capInt64Atomics: "Int64Atomics",
		capInt16: "Int16", capInt8: "Int8", capGroupNonUniform: "GroupNonUniform", capGroupNonUniformVote: "GroupNonUniformVote",
		capGroupNonUniformArithmetic: "GroupNonUniformArithmetic", capGroupNonUniformBallot: "GroupNonUniformBallot",
		capGroupNonUniformShuffle: "GroupNonUniformShuffle", capGroupNonUniformShuffleRel: "GroupNonUniformShuffleRelative",
		capGroupNonUniformClustered: "GroupNonUniformClustered", capGroupNonUniformQuad: "GroupNonUniformQuad",
		capStorageBuffer16BitAccess: "StorageBuffer16BitAccess", capUniformAndStorage16BitAccess: "UniformAndStorageBuffer16BitAccess",
		capStoragePushConstant16: "StoragePushConstant16", capStorageBuffer8BitAccess: "StorageBuffer8BitAccess",
		capVulkanMemoryModel: "VulkanMemoryModel", capVulkanMemoryModelDeviceScope: "VulkanMemoryModelDeviceScope"}
	if n, ok := names[c]; ok {
		return n
	}
	return fmt.Sprint(c)
}
