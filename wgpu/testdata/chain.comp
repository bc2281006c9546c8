#version 450
// chain: op 0: c = a + b; op 1: c = 2c + a (reads the previous dispatch's c); op 2: d = c + 1.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 2) buffer C { float c[]; };
layout(push_constant) uniform PC { uint n; uint op; } pc;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= pc.n) return;
  if (pc.op == 0u)      c[i] = a[i] + b[i];
  else if (pc.op == 1u) c[i] = c[i] * 2.0 + a[i];
  else                  c[i] = b[i] + 1.0;
}
