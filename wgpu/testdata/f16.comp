#version 450
// f16: c = a * b + 0.5 in float16 storage and arithmetic.
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer A { float16_t a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { float16_t b[]; };
layout(std430, set = 0, binding = 2) buffer C { float16_t c[]; };
layout(push_constant) uniform PC { uint n; } pc;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= pc.n) return;
  c[i] = a[i] * b[i] + float16_t(0.5);
}
