#version 450
// h2f: y = float(x) * 2 + 1, x stored as f16; only 16-bit storage, no f16 arithmetic.
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float16_t x[]; };
layout(std430, set = 0, binding = 1) buffer Y { float y[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  y[i] = float(x[i]) * 2.0 + 1.0;
}
