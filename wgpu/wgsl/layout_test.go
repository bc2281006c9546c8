package wgsl

// Matrices whose columns are less than 16 bytes apart (matCx2<f32>, the f16
// matrices) in uniform and storage buffers (issue 8, item 8). WGSL lays them
// out with the column vector's alignment; Vulkan's uniform buffers need 16-byte
// matrix strides, so the emitter splits such matrices into column vectors
// there.

var narrowMatrixValid = []struct{ name, src string }{
	{"narrow_matrix_storage", `enable f16;
struct S { a: vec2<f32>, m: mat2x2<f32>, n: mat3x2<f32>, h: mat2x2<f16>, g: mat4x3<f16>, x: f32 }
@group(0) @binding(0) var<storage, read_write> s: S;
@group(0) @binding(1) var<storage, read_write> ms: array<mat3x2<f32>>;
@compute @workgroup_size(1) fn main() {
	s.m = s.m * 2.0; s.n[1] = s.m[0]; s.h[1][0] = 3.0h; s.g = s.g * 0.5h; s.x = s.n[2].y + f32(s.h[0][1]);
	ms[1] = ms[0]; ms[2][2][1] = s.x;
}`},
	{"narrow_matrix_uniform_top", `@group(0) @binding(0) var<uniform> m: mat2x2<f32>;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(1) fn main() { let v = m * vec2(1.0, 2.0); o[0] = v.x + m[1].y + m[0][1]; let k = u32(o[1]); o[2] = m[k].x + m[k][k]; }`},
	{"narrow_matrix_uniform_struct", `enable f16;
struct M { a: vec2<f32>, m: mat3x2<f32>, x: f32, h: mat2x3<f16>, k: mat4x2<f16> }
struct U { s: M, @align(16) arr: array<mat2x2<f32>, 3>, harr: array<mat4x2<f16>, 2>, last: f32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
fn col(p: ptr<uniform, mat3x2<f32>>, i: u32) -> vec2<f32> { return (*p)[i]; }
fn whole(p: ptr<uniform, mat2x2<f32>>) -> mat2x2<f32> { return *p; }
@compute @workgroup_size(1) fn main() {
	let k = u32(o[0]);
	let s = u.s;
	o[1] = s.m[2].y + s.x + f32(s.h[1].z) + f32(s.k[3].x);
	o[2] = u.s.m[k].x + u.arr[k][1].y + f32(u.harr[k][k].y) + u.last;
	let a = u.arr;
	o[3] = a[2][0].x + whole(&u.arr[k])[1].x + col(&u.s.m, k).y + col(&u.s.m, 1u).x;
	let p = &u.s.m;
	o[4] = (*p)[1][k] + p[2].x;
}`},
	{"narrow_matrix_shared_struct", `struct M { a: f32, m: mat2x2<f32>, @align(16) k: array<mat4x2<f32>, 2> }
struct U { s: M, @align(16) t: array<M, 2> }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> s: array<M>;
var<private> pm: M;
var<workgroup> wm: mat2x2<f32>;
@compute @workgroup_size(1) fn main() { s[0] = u.s; s[1] = u.t[1]; pm = u.t[0]; wm = u.s.k[1][0].x * u.s.m; s[2].m = wm + pm.m; }`},
	{"narrow_matrix_phony_pointers", `@group(0) @binding(0) var<uniform> u: mat2x2<f32>;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
fn f(p: ptr<uniform, mat2x2<f32>>) { _ = p; }
fn next() -> u32 { o[0] += 1.0; return 0u; }
@compute @workgroup_size(1) fn main() { var a: array<f32, 2>; f(&u); let q = &u; _ = q; _ = &u; _ = &a[next()]; }`},
	{"narrow_matrix_push_constant", "var<immediate> pc: mat3x2<f32>;\n@group(0) @binding(0) var<storage, read_write> o: array<vec2<f32>>;\n@compute @workgroup_size(1) fn main() { o[0] = pc[2] + pc * vec3(1.0); }"},
}

func init() {
	validPrograms = append(validPrograms, narrowMatrixValid...)
}
