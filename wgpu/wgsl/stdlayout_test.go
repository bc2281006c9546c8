package wgsl

import (
	"strings"
	"testing"
)

// stdUniformPrograms are valid WGSL whose uniform buffers break the 16-byte
// rules of Vulkan's extended layout (element strides, offsets of arrays and
// structs). Tint accepts them (WGSL's uniform_buffer_standard_layout); we
// compile them under Options.UniformStandardLayout, which package wgpu sets
// on devices with uniformBufferStandardLayout, and reject them without it,
// with the error want.
var stdUniformPrograms = []struct{ name, src, want string }{
	{"uniform_stride", "@group(0) @binding(0) var<uniform> b: array<f32, 4>;" + ep, "1:39: element stride that is a multiple of 16"},
	{"uniform_array_offset", "struct M { a: f32, m: mat2x2<f32>, k: array<mat4x2<f32>, 2> }\n@group(0) @binding(0) var<uniform> u: M;" + ep,
		"2:39: uniform struct member 'k' of array type must be at a multiple of 16 (offset 24; use @align(16))"},
	{"uniform_struct_offset", "struct P { x: f32, y: f32 }\nstruct U { a: f32, p: P, b: f32 }\n@group(0) @binding(0) var<uniform> u: U;\n" +
		"@group(0) @binding(1) var<storage, read_write> o: array<f32>;\n@compute @workgroup_size(1) fn main() { o[0] = u.p.y + u.b; }",
		"3:39: uniform struct member 'p' of struct type must be at a multiple of 16 (offset 4)"},
	{"uniform_after_struct", "struct P { x: vec2<f32> }\nstruct U { @align(16) p: P, b: f32 }\n@group(0) @binding(0) var<uniform> u: U;\n" +
		"@group(0) @binding(1) var<storage, read_write> o: array<f32>;\n@compute @workgroup_size(1) fn main() { o[0] = u.b; }",
		"3:39: uniform struct member 'b' must start 16-byte aligned after struct member 'p'"},
	{"uniform_vec2_array_dynamic", "@group(0) @binding(0) var<uniform> u: array<vec2<f32>, 5>;\n" +
		"@group(0) @binding(1) var<storage, read_write> o: array<vec2<f32>>;\n" +
		"fn at(p: ptr<uniform, array<vec2<f32>, 5>>, i: u32) -> vec2<f32> { return (*p)[i]; }\n" +
		"@compute @workgroup_size(5) fn main(@builtin(local_invocation_index) i: u32) { let a = u; o[i] = at(&u, i) + a[4u - i]; }",
		"1:39: element stride that is a multiple of 16"},
	{"requires_uniform_standard_layout", "requires uniform_buffer_standard_layout;\n@group(0) @binding(0) var<uniform> u: array<u32, 3>;\n" +
		"@group(0) @binding(1) var<storage, read_write> o: array<u32>;\n@compute @workgroup_size(1) fn main() { o[0] = u[2]; }",
		"1:10: language feature 'uniform_buffer_standard_layout' needs Options.UniformStandardLayout"},
}

// TestStdUniformLayout checks that each program is refused under the zero
// Options and compiles to valid SPIR-V (for spirv-val's
// --uniform-buffer-standard-layout) with Options.UniformStandardLayout.
func TestStdUniformLayout(t *testing.T) {
	for _, p := range stdUniformPrograms {
		t.Run(p.name, func(t *testing.T) {
			_, err := Compile(p.name+".wgsl", p.src, Options{})
			if err == nil {
				t.Fatalf("compiled under the zero Options; want %q", p.want)
			}
			pos, msg, _ := strings.Cut(p.want, ": ")
			if !strings.Contains(err.Error(), ":"+pos+": ") || !strings.Contains(err.Error(), msg) {
				t.Errorf("error %q; want %q", err, p.want)
			}
			m, err := Compile(p.name+".wgsl", p.src, Options{UniformStandardLayout: true})
			if err != nil {
				t.Fatalf("with UniformStandardLayout: %v", err)
			}
			spirvVal(t, p.name, m.SPIRV, "--uniform-buffer-standard-layout")
		})
	}
}
