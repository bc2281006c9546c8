#version 450
// fill: out[i] = i * 3 + seed over a 2-D grid of 256-wide workgroups (for buffers near the binding limit).
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) buffer O { uint o[]; };
layout(push_constant) uniform PC { uint n; uint seed; } pc;
void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u;
  if (i < pc.n) o[i] = i * 3u + pc.seed;
}
