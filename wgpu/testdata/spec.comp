#version 450
// spec: y = FLIP ? -(x * MUL + ADD) + OFF : x * MUL + ADD + OFF, with specialization constants of each type.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint MUL = 1u;
layout(constant_id = 2) const float ADD = 0.0;
layout(constant_id = 3) const int OFF = 0;
layout(constant_id = 4) const bool FLIP = false;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) buffer Y { float y[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  float v = x[i] * float(MUL) + ADD;
  y[i] = (FLIP ? -v : v) + float(OFF);
}
