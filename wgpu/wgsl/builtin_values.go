package wgsl

import "github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"

// builtinValue is one compute-stage @builtin value, described once for the
// checker (type, enable), the uniformity analysis and the emitter.
type builtinValue struct {
	vec3     bool   // vec3<u32>; otherwise u32
	uniform  bool   // the same for every invocation of a workgroup
	subgroup bool   // needs 'enable subgroups;' and the GroupNonUniform capability
	spirv    uint32 // the SPIR-V BuiltIn
}

var builtinValues = map[string]builtinValue{
	"global_invocation_id":   {vec3: true, spirv: spirv.BuiltInGlobalInvocationId},
	"local_invocation_id":    {vec3: true, spirv: spirv.BuiltInLocalInvocationId},
	"local_invocation_index": {spirv: spirv.BuiltInLocalInvocationIndex},
	"workgroup_id":           {vec3: true, uniform: true, spirv: spirv.BuiltInWorkgroupId},
	"num_workgroups":         {vec3: true, uniform: true, spirv: spirv.BuiltInNumWorkgroups},
	"subgroup_invocation_id": {subgroup: true, spirv: spirv.BuiltInSubgroupLocalInvocationId},
	"subgroup_size":          {subgroup: true, uniform: true, spirv: spirv.BuiltInSubgroupSize},
	"subgroup_id":            {subgroup: true, spirv: spirv.BuiltInSubgroupId},
	"num_subgroups":          {subgroup: true, uniform: true, spirv: spirv.BuiltInNumSubgroups},
}

// typ is the WGSL type of the builtin value.
func (b builtinValue) typ(ts *types) *Type {
	u32 := ts.scalar(KU32)
	if b.vec3 {
		return ts.vec(3, u32)
	}
	return u32
}
