package wgsl

// Overrides computed from other overrides with float arithmetic, builtins and
// conversions, and override-expressions as initializers of private variables
// (issue 8, item 8).

var overrideInitValid = []struct{ name, src string }{
	{"override_derived_float", "override a: f32 = 1.0; override b: f32 = a * 2.0;\n@group(0) @binding(0) var<storage, read_write> o: array<f32>;\n@compute @workgroup_size(1) fn main() { o[0] = b; }"},
	{"override_computed_chain", `enable f16;
override scale: f32 = 0.5;
override bias = scale * 3.0 - 1.0;
override root = sqrt(abs(bias)) + f32(N);
override N: u32 = 4;
override N2 = N * 2u;
override half_scale = f16(scale) * 2.0h;
override flag: bool = true;
override both = flag && root > 1.0;
override big = select(1.0, 2.0, both);
override steps = u32(big * 3.0) + N2;
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
var<workgroup> w: array<f32, N2>;
fn f() -> f32 { return root + big; }
@compute @workgroup_size(N2) fn main(@builtin(local_invocation_index) li: u32) {
	w[li] = bias;
	o[li] = f() + f32(half_scale) + f32(steps) + w[li];
}`},
	{"private_override_init", `override k: u32 = 3;
override s: f32 = 1.5;
override t = s * s;
var<private> a: u32 = k;
var<private> b = k * 2u + 1u;
var<private> c: f32 = s;
var<private> d = t + 1.0;
var<private> e = vec2(s, 2.0 * s);
var<private> g: array<f32, 2> = array(t, s);
var<private> h = 5;
@group(0) @binding(0) var<storage, read_write> o: array<f32>;
fn bump() { d += 1.0; }
@compute @workgroup_size(1) fn main() { bump(); o[0] = f32(a + b) + c + d + e.y + g[0] + f32(h); a = 0u; }
@compute @workgroup_size(1) fn other() { o[1] = d + e.x; }`},
}

var overrideInitInvalid = []struct{ name, src, want string }{
	{"private_init_from_var", "var<private> a: u32;\nvar<private> b = a;" + ep, "2:18: module-scope variable 'a' cannot be used here"},
	{"override_init_from_private", "var<private> a: u32;\noverride b = a;" + ep, "2:14: module-scope variable 'a' cannot be used here"},
}

func init() {
	validPrograms = append(validPrograms, overrideInitValid...)
	invalidPrograms = append(invalidPrograms, overrideInitInvalid...)
}
