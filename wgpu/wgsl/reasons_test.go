package wgsl

import (
	"strings"
	"testing"
)

// The first error names the real reason a module cannot compile (issue 8,
// item 10): textures, or a stage other than compute, before any error their
// declarations would cause on their own.
func TestRealReasonFirst(t *testing.T) {
	for _, c := range []struct{ name, src, first string }{
		{"texture_var", "@group(0) @binding(0) var t: texture_2d<f32>;\n@group(0) @binding(1) var<storage, read_write> o: array<f32>;\n" +
			"@compute @workgroup_size(1) fn main() { o[0] = textureLoad(t, vec2(0, 0), 0).x; }",
			"1:30: textures are not supported ('texture_2d')"},
		{"sampler_var", "@group(0) @binding(0) var s: sampler;" + ep, "1:30: textures are not supported ('sampler')"},
		{"texture_param", "fn f(t: texture_storage_2d<rgba8unorm, write>) {}" + ep, "1:9: textures are not supported ('texture_storage_2d')"},
		{"vertex_struct_io", "struct Out { @builtin(position) pos: vec4<f32>, @location(0) c: vec4<f32> }\n" +
			"@vertex fn vs(@builtin(vertex_index) i: u32) -> Out { var o: Out; return o; }",
			"2:1: only compute shaders are supported: 'vs' is a @vertex entry point"},
		{"fragment", "@fragment fn fs(@location(0) c: vec4<f32>) -> @location(0) vec4<f32> { return c; }",
			"1:1: only compute shaders are supported: 'fs' is a @fragment entry point"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Compile(c.name+".wgsl", c.src, Options{})
			list, ok := err.(ErrorList)
			if !ok || len(list) == 0 {
				t.Fatalf("want an ErrorList, got %v", err)
			}
			got := strings.TrimPrefix(list[0].Error(), c.name+".wgsl:")
			got = strings.Replace(got, " error:", "", 1)
			if !strings.HasPrefix(got, c.first) {
				t.Errorf("first error %q, want %q", got, c.first)
			}
		})
	}
}
