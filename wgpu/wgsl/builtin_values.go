package wgsl

import "github.com/wgpu-eval/wgpu-eval/wgpu/wgsl/internal/spirv"

// builtinValue is one compute-stage @builtin value, described once for the
// checker (type, enable), the uniformity analysis and the emitter.
type builtinValue struct {
	vec3    bool // vec3<u32>; otherwise u32
	uniform bool // the same for every invocation of a workgroup
	// subgroupUniform: the same for every invocation of a subgroup (and
	// not of a workgroup): uniform in the subgroup uniformity scope only.
	subgroupUniform bool
	subgroup        bool   // needs 'enable subgroups;' and the GroupNonUniform capability
	spirv           uint32 // the SPIR-V BuiltIn
	linear          bool   // linear_indexing: computed from other builtins (no SPIR-V BuiltIn)
}

var builtinValues = map[string]builtinValue{
	"global_invocation_id":    {vec3: true, spirv: spirv.BuiltInGlobalInvocationId},
	"local_invocation_id":     {vec3: true, spirv: spirv.BuiltInLocalInvocationId},
	"local_invocation_index":  {spirv: spirv.BuiltInLocalInvocationIndex},
	"workgroup_id":            {vec3: true, uniform: true, spirv: spirv.BuiltInWorkgroupId},
	"num_workgroups":          {vec3: true, uniform: true, spirv: spirv.BuiltInNumWorkgroups},
	"subgroup_invocation_id":  {subgroup: true, spirv: spirv.BuiltInSubgroupLocalInvocationId},
	"subgroup_size":           {subgroup: true, uniform: true, spirv: spirv.BuiltInSubgroupSize},
	"subgroup_id":             {subgroup: true, subgroupUniform: true, spirv: spirv.BuiltInSubgroupId},
	"num_subgroups":           {subgroup: true, uniform: true, spirv: spirv.BuiltInNumSubgroups},
	"global_invocation_index": {linear: true},
	"workgroup_index":         {linear: true}, // uniform in fact, but Tint treats it as non-uniform
}

// typ is the WGSL type of the builtin value.
func (b builtinValue) typ(ts *types) *wgslType {
	u32 := ts.scalar(kU32)
	if b.vec3 {
		return ts.vec(3, u32)
	}
	return u32
}

// linearIndex computes global_invocation_index or workgroup_index (WGSL's
// linear_indexing) in the entry point being emitted: id.x + n.x * (id.y +
// n.y * id.z), where id is the global invocation id and n the grid of
// invocations (workgroup size times number of workgroups), or id the
// workgroup id and n the number of workgroups.
func (e *emitter) linearIndex(name string) uint32 {
	ts := e.m.types
	u32, v3 := ts.scalar(kU32), ts.vec(3, ts.scalar(kU32))
	uty := e.typeID(u32, plain)
	nwg := e.loadInput("num_workgroups", v3)
	var id uint32
	var n [2]uint32
	for i := range n {
		n[i] = e.op(spirv.OpCompositeExtract, uty, nwg, uint32(i))
	}
	if name == "workgroup_index" {
		id = e.loadInput("workgroup_id", v3)
	} else {
		id = e.loadInput("global_invocation_id", v3)
		for i := range n {
			d := e.f.fn.wgSize[i]
			size := e.constU32(uint32(max(d.val, 1)))
			if d.override != nil {
				size = e.specConstExpr(d.override)
			}
			n[i] = e.op(spirv.OpIMul, uty, n[i], size)
		}
	}
	var c [3]uint32
	for i := range c {
		c[i] = e.op(spirv.OpCompositeExtract, uty, id, uint32(i))
	}
	yz := e.op(spirv.OpIAdd, uty, c[1], e.op(spirv.OpIMul, uty, n[1], c[2]))
	return e.op(spirv.OpIAdd, uty, c[0], e.op(spirv.OpIMul, uty, n[0], yz))
}
