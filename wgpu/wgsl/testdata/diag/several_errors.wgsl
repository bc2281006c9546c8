// Several independent mistakes; all are reported, sorted by position.
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;

fn scale(x: f32) -> f32 {
	return x * 2;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
	let i = gid.x;
	src[i] = 1.0;
	dst[i] = scale(src[i]);
	let n: u32 = -1;
	var v = vec3<f32>(1.0, 2.0);
	if i { return; }
}
