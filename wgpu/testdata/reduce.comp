#version 450
// reduce: partial[wg] = sum of x[wg*WG .. wg*WG+WG) (tree reduction in workgroup memory); WG is spec constant 0.
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) buffer P { float partial[]; };
layout(push_constant) uniform PC { uint n; } pc;
shared float s[WG];
void main() {
  uint i = gl_GlobalInvocationID.x, l = gl_LocalInvocationID.x;
  s[l] = i < pc.n ? x[i] : 0.0;
  barrier();
  for (uint stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (l < stride) s[l] += s[l + stride];
    barrier();
  }
  if (l == 0u) partial[gl_WorkGroupID.x] = s[0];
}
