// gelu (tanh form, as GPT-2): y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), in place on f32.
const SQRT_2_OVER_PI = 0.7978845608028654;

@group(0) @binding(0) var<storage, read_write> x: array<vec4<f32>>;

fn gelu(v: vec4<f32>) -> vec4<f32> {
	return 0.5 * v * (1.0 + tanh(SQRT_2_OVER_PI * (v + 0.044715 * v * v * v)));
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
	let i = gid.x + gid.y * nwg.x * 64u;
	if i < arrayLength(&x) { x[i] = gelu(x[i]); }
}
