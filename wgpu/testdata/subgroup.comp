#version 450
// subgroup: per subgroup, out = (subgroupAdd(x), subgroupMax(x), gl_SubgroupSize).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) buffer O { float o[]; };
void main() {
  float v = x[gl_GlobalInvocationID.x];
  float s = subgroupAdd(v);
  float m = subgroupMax(v);
  if (subgroupElect()) {
    uint sg = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    o[sg * 3u] = s; o[sg * 3u + 1u] = m; o[sg * 3u + 2u] = float(gl_SubgroupSize);
  }
}
