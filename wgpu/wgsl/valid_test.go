package wgsl

import (
	"strings"
	"testing"
)

// kernel wraps a body in an entry point with one f32, one i32 and one u32
// read_write buffer (fo, oi, ou) and the global invocation id (gid).
func kernel(decls, body string) string {
	return decls + `
@group(0) @binding(0) var<storage, read_write> fo: array<f32>;
@group(0) @binding(1) var<storage, read_write> oi: array<i32>;
@group(0) @binding(2) var<storage, read_write> ou: array<u32>;
@compute @workgroup_size(1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
` + body + `
}
`
}

var validPrograms = []struct{ name, src string }{
	{"empty", "@compute @workgroup_size(1) fn main() {}"},
	{"arith_f32", kernel("", `let a = fo[0]; let b = fo[1];
		fo[2] = a + b; fo[3] = a - b; fo[4] = a * b; fo[5] = a / b; fo[6] = a % b; fo[7] = -a;`)},
	{"arith_i32", kernel("", `let a = oi[0]; let b = oi[1];
		oi[2] = a + b; oi[3] = a - b; oi[4] = a * b; oi[5] = a / b; oi[6] = a % b; oi[7] = -a;
		oi[8] = a << 3u; oi[9] = a >> u32(b); oi[10] = a & b; oi[11] = a | b; oi[12] = a ^ b; oi[13] = ~a;`)},
	{"arith_u32", kernel("", `let a = ou[0]; let b = ou[1];
		ou[2] = a + b; ou[3] = a - b; ou[4] = a * b; ou[5] = a / b; ou[6] = a % b;
		ou[8] = a << b; ou[9] = a >> 2u; ou[10] = a & b; ou[11] = a | 7u; ou[12] = a ^ b; ou[13] = ~a;`)},
	{"arith_f16", "enable f16;\n" + kernel(`@group(1) @binding(0) var<storage, read_write> oh: array<f16>;`,
		`let a = oh[0]; let b = oh[1]; oh[2] = a * b + 1.5h; oh[3] = a / b - 2; oh[4] = max(a, b); oh[5] = sqrt(abs(a));
		fo[0] = f32(a); oh[6] = f16(fo[1]); oh[7] = f16(oi[0]); ou[0] = u32(a);`)},
	{"f16_vectors", "enable f16;\n" + kernel(`@group(1) @binding(0) var<storage, read_write> oh: array<vec4<f16>>;`,
		`let v = oh[0]; oh[1] = v * 2.0h + vec4<f16>(1.0); oh[2] = vec4h(v.xy, v.zw) * v.x;
		fo[0] = dot(vec4<f32>(v), vec4f(1.0));`)},
	{"abstract_numerics", kernel(`const A = 1 + 2 * 3; const B = A * 1.5; const C: u32 = A; const D = vec3(1, 2, 3) * 2;`,
		`fo[0] = B; ou[0] = C + 4; oi[0] = D.y; fo[1] = f32(A) + 0.5; ou[1] = 0xFFFFFFFFu; oi[1] = -2147483648; oi[3] = 2147483647i + 1i; ou[2] = 0u - 1u;
		fo[2] = 1e3 + 0x1p4; let x = 3; oi[2] = x;`)},
	{"conversions", kernel("", `let f = fo[0]; let i = oi[0]; let u = ou[0];
		oi[1] = i32(f); ou[1] = u32(f); fo[1] = f32(i) + f32(u); ou[2] = u32(i); oi[2] = i32(u);
		ou[3] = u32(f > 1.0); fo[2] = f32(i != 0); let b = bool(u); ou[4] = select(0u, 1u, b);
		let v = vec3<f32>(vec3<i32>(1, 2, 3)); fo[3] = v.z; let w = vec2<u32>(vec2<f32>(fo[4], fo[5])); ou[5] = w.x;`)},
	{"bitcast", kernel("", `ou[0] = bitcast<u32>(fo[0]); fo[1] = bitcast<f32>(ou[1]); oi[0] = bitcast<i32>(ou[2]);
		let v = bitcast<vec2<u32>>(vec2<f32>(1.0, 2.0)); ou[3] = v.y; ou[4] = bitcast<u32>(1.0);`)},
	{"vectors_swizzles", kernel("", `var v = vec4<f32>(1.0, 2.0, 3.0, 4.0);
		v.x = 5.0; v[1] = 6.0; let w = v.wzyx; let s = v.xy + w.zw; fo[0] = s.x + v.rgb.b;
		var u = vec3u(1u); u.z += 2u; ou[0] = u.z; let k = oi[0]; fo[1] = v[k];
		fo[2] = (v * 2.0).x + (2.0 * v).y + (v / 2.0).z + (v + 1.0).w;`)},
	{"if_else", kernel("", `let x = oi[0];
		if x > 0 { oi[1] = 1; } else if x < -5 { oi[1] = 2; } else { oi[1] = 3; }
		if (x == 7) { oi[2] = 7; }`)},
	{"short_circuit", kernel("", `let a = oi[0]; let b = oi[1];
		if (a > 0 && b > 0) || a < -10 { oi[2] = 1; }
		let c = (a == 1) || (b == 2 && a != 3); ou[0] = select(0u, 1u, c);`)},
	{"for_loop", kernel("", `var s = 0u; for (var i = 0u; i < ou[0]; i++) { if i == 3u { continue; } if i > 10u { break; } s += i; } ou[1] = s;`)},
	{"while_loop", kernel("", `var i = 0; var s = 0; while i < 10 { i += 1; if i % 2 == 0 { continue; } s += i; } oi[0] = s;`)},
	{"loop_continuing", kernel("", `var i = 0u; var s = 0u;
		loop { if i >= 8u { break; } s += i * i; continuing { i++; } } ou[0] = s;
		var j = 0; loop { j += 2; continuing { break if j > 20; } } oi[0] = j;
		var m = 0u; loop { let step = m + 3u; if step > 5u { m += 1u; } continuing { m = step; break if m > 30u; } } ou[1] = m;`)},
	{"nested_loops", kernel("", `var s = 0;
		for (var i = 0; i < 4; i++) { for (var j = 0; j < 4; j++) { if j > i { break; } var k = 0; while k < j { k++; if k == 2 { continue; } s += k; } } }
		oi[0] = s;`)},
	{"functions", kernel(`fn sq(x: f32) -> f32 { return x * x; }
		fn add3(a: i32, b: i32, c: i32) -> i32 { return a + b + c; }
		fn store(p: ptr<function, i32>, v: i32) { *p = v; }
		fn early(x: u32) -> u32 { if x > 3u { return 1u; } else { return 2u; } }
		fn nothing() { }`,
		`fo[0] = sq(fo[1]); var t = 0; store(&t, add3(1, 2, oi[0])); oi[0] = t; ou[0] = early(ou[1]); nothing();`)},
	{"private_vars", kernel(`var<private> counter: u32 = 5u; var<private> acc: array<f32, 4>;
		fn bump() { counter += 1u; }`, `bump(); acc[1] = 2.0; ou[0] = counter; fo[0] = acc[1];`)},
	{"structs_function", kernel(`struct P { a: f32, b: vec3<f32>, c: u32 }
		fn mk(x: f32) -> P { return P(x, vec3(x), 3u); }`,
		`var p = mk(fo[0]); p.b.y = 2.0; p.c += 1u; fo[0] = p.a + p.b.y; ou[0] = p.c; let q = P(); fo[1] = q.a; let r = p; fo[2] = r.b.z;`)},
	{"arrays_function", kernel("", `var a: array<i32, 8>; for (var i = 0; i < 8; i++) { a[i] = i * i; }
		oi[0] = a[oi[1]]; let b = array<f32, 3>(1.0, 2.0, 3.0); fo[0] = b[ou[0]]; let c = array(1u, 2u, 3u); ou[0] = c[1];
		var m: array<array<u32, 2>, 2>; m[1][0] = 4u; ou[1] = m[1][0];`)},
	{"structs_storage", `struct Item { pos: vec3<f32>, id: u32, w: array<f32, 2> }
		struct Buf { count: u32, items: array<Item> }
		@group(0) @binding(0) var<storage, read_write> buf: Buf;
		@group(0) @binding(1) var<storage, read> src: array<Item>;
		@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
			let n = arrayLength(&buf.items); let m = arrayLength(&src);
			if gid.x >= min(n, m) { return; }
			buf.items[gid.x] = src[gid.x];
			buf.items[gid.x].pos.y += 1.0;
			let it = buf.items[0]; buf.items[1].w = it.w; buf.count = n;
		}`},
	{"uniform_struct", `struct U { scale: f32, n: u32, off: vec4<f32>, arr: array<vec4<f32>, 2>, inner: In }
		struct In { x: f32 }
		@group(0) @binding(0) var<uniform> u: U;
		@group(0) @binding(1) var<storage, read_write> o: array<f32>;
		@compute @workgroup_size(8, 8) fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
			o[lid.x] = u.scale * u.off.y + u.arr[1].z + u.inner.x; let c = u; o[1] = c.arr[0].x;
		}`},
	{"uniform_scalar", `@group(0) @binding(0) var<uniform> n: u32;
		@group(0) @binding(1) var<storage, read_write> o: array<u32>;
		@compute @workgroup_size(1) fn main() { o[0] = n; }`},
	{"workgroup_barrier", `var<workgroup> tile: array<f32, 64>;
		@group(0) @binding(0) var<storage, read_write> o: array<f32>;
		@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wg: vec3<u32>) {
			tile[li] = f32(li); workgroupBarrier();
			for (var s = 32u; s > 0u; s >>= 1u) { if li < s { tile[li] += tile[li + s]; } workgroupBarrier(); }
			if li == 0u { o[wg.x] = tile[0]; } storageBarrier();
		}`},
	{"atomics", `@group(0) @binding(0) var<storage, read_write> c: atomic<u32>;
		@group(0) @binding(1) var<storage, read_write> arr: array<atomic<i32>>;
		var<workgroup> wc: atomic<u32>;
		@compute @workgroup_size(32) fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
			let old = atomicAdd(&c, 1u); atomicSub(&c, 1u); atomicMax(&arr[0], 5); atomicMin(&arr[1], -5);
			atomicAnd(&arr[2], 3); atomicOr(&arr[3], 4); atomicXor(&arr[4], 1); let e = atomicExchange(&arr[5], 9);
			atomicStore(&wc, old); let l = atomicLoad(&wc);
			let r = atomicCompareExchangeWeak(&arr[6], 0, 1); if r.exchanged { atomicAdd(&arr[7], r.old_value + e + i32(l)); }
		}`},
	{"overrides", `override WG: u32 = 64; override scale: f32 = 2.0; @id(7) override flag: bool = true; override N: i32;
		var<workgroup> tile: array<f32, WG * 2>;
		@group(0) @binding(0) var<storage, read_write> o: array<f32>;
		@compute @workgroup_size(WG, 1, 1) fn main(@builtin(local_invocation_index) li: u32) {
			tile[li] = scale; workgroupBarrier();
			if flag { o[li] = tile[(li + 1u) % WG] * f32(N); }
		}`},
	{"derived_overrides", `override BM: u32 = 64; override WX: u32 = 16; override TM = BM / WX; override ROWS: i32 = 2; override WXI: i32 = 16;
		var<workgroup> tile: array<f32, BM * TM>;
		@group(0) @binding(0) var<storage, read_write> o: array<u32>;
		@compute @workgroup_size(WXI, ROWS) fn main(@builtin(local_invocation_index) li: u32) {
			tile[li] = 1.0; workgroupBarrier(); o[li] = TM + u32(tile[li]); }`},
	{"push_constants", `struct PC { n: u32, alpha: f32 }
		var<push_constant> pc: PC;
		@group(0) @binding(0) var<storage, read_write> o: array<f32>;
		@compute @workgroup_size(16) fn main(@builtin(global_invocation_id) gid: vec3<u32>) { if gid.x < pc.n { o[gid.x] *= pc.alpha; } }`},
	{"math_builtins", kernel("", `let x = fo[0]; let v = vec3<f32>(fo[1], fo[2], fo[3]);
		fo[4] = exp(x) + log(x) + tanh(x) + sqrt(x) + inverseSqrt(x) + pow(x, 2.0) + exp2(x) + log2(x);
		fo[5] = max(x, 1.0) + min(x, 2.0) + clamp(x, 0.0, 1.0) + abs(x) + fma(x, x, 1.0) + sign(x);
		fo[6] = floor(x) + ceil(x) + round(x) + trunc(x) + fract(x) + sin(x) + cos(x) + atan2(x, 1.0) + saturate(x);
		fo[7] = dot(v, v) + length(v) + distance(v, vec3(0.0)) + normalize(v).x + cross(v, v).y + mix(x, 1.0, 0.5) + step(0.5, x) + smoothstep(0.0, 1.0, x);
		oi[0] = max(oi[1], 3) + min(oi[2], -1) + clamp(oi[3], 0, 9) + abs(oi[4]) + sign(oi[5]) + dot(vec2(oi[0], 1), vec2(2, 3));
		ou[0] = max(ou[1], 3u) + min(ou[2], 1u) + clamp(ou[3], 0u, 9u) + abs(ou[4]) + countOneBits(ou[5]) + reverseBits(ou[6]);
		let m = mix(v, vec3(1.0), 0.25); fo[8] = m.x; let s = select(v, vec3(0.0), vec3(x > 0.0, false, true)); fo[9] = s.y;
		ou[7] = pack2x16float(vec2(x, 1.0)); fo[10] = unpack2x16float(ou[8]).y;
		if all(v > vec3(0.0)) || any(v == vec3(1.0)) { fo[11] = 1.0; }`)},
	{"subgroups", "enable subgroups;\n" + `@group(0) @binding(0) var<storage, read_write> o: array<f32>;
		@group(0) @binding(1) var<storage, read_write> ou: array<u32>;
		@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) gid: vec3<u32>,
			@builtin(subgroup_invocation_id) sid: u32, @builtin(subgroup_size) ssz: u32) {
			let x = o[gid.x];
			o[gid.x] = subgroupAdd(x) + subgroupMax(x) + subgroupMin(x) + subgroupMul(x) + subgroupExclusiveAdd(x) + subgroupInclusiveAdd(x);
			o[gid.x + 1u] = subgroupBroadcast(x, 0u) + subgroupBroadcastFirst(x) + subgroupShuffle(x, sid ^ 1u) + subgroupShuffleXor(x, 1u) + subgroupShuffleDown(x, 1u) + subgroupShuffleUp(x, 1u);
			ou[0] = (subgroupAnd(ou[1]) | subgroupOr(ou[2])) ^ (subgroupXor(ssz) + subgroupAdd(sid));
			let b = subgroupBallot(x > 0.0); ou[1] = b.x;
			let e = subgroupElect(); let al = subgroupAll(x > 0.0); let an = subgroupAny(x < 0.0);
			if (e && al) || an { ou[2] = 1u; }
		}`},
	{"const_assert_alias", `alias F = f32; alias V = vec4<F>; const K = 4u; const_assert K == 4u;
		@group(0) @binding(0) var<storage, read_write> o: array<V, K>;
		@compute @workgroup_size(K) fn main(@builtin(local_invocation_id) lid: vec3<u32>) { const_assert 2 > 1; o[lid.x] = V(F(lid.x)); }`},
	{"compound_assign", kernel("", `var x = 1.0; x += 2.0; x -= 0.5; x *= 3.0; x /= 2.0; fo[0] = x;
		var i = 17; i %= 5; i <<= 2u; i >>= 1u; i &= 7; i |= 8; i ^= 3; oi[0] = i;
		var v = vec2<f32>(1.0); v *= 2.0; v += vec2(1.0, 2.0); fo[1] = v.y; _ = fo[2]; ou[0]++; ou[1]--; fo[3] += 1.0;`)},
	{"let_pointers", kernel(`fn inc(p: ptr<function, u32>) { *p += 1u; }`, `var a = 3u; let p = &a; *p = 4u; inc(&a); ou[0] = *p + a;`)},
	{"many_builtins_ids", `@group(0) @binding(0) var<storage, read_write> o: array<u32>;
		@compute @workgroup_size(4, 2, 1) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>,
			@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) w: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
			o[li] = g.x + l.y + w.z + n.x; }`},
	{"two_entry_points", `@group(0) @binding(0) var<storage, read_write> o: array<f32>;
		fn helper(i: u32) -> f32 { return f32(i) * 2.0; }
		@compute @workgroup_size(8) fn a(@builtin(global_invocation_id) g: vec3<u32>) { o[g.x] = helper(g.x); }
		@compute @workgroup_size(16) fn b(@builtin(global_invocation_id) g: vec3<u32>) { o[g.x] += 1.0; }`},
	{"returns_in_loops", kernel(`fn find(x: u32) -> u32 { for (var i = 0u; i < 10u; i++) { if i * i >= x { return i; } } return 99u; }
		fn forever(x: i32) -> i32 { loop { if x > 0 { return 1; } return 2; } }`, `ou[0] = find(ou[1]); oi[0] = forever(oi[1]);`)},
	{"comments_and_trailing_commas", `/* block /* nested */ comment */
		struct S { a: u32, b: f32, } // trailing comma
		@group(0) @binding(0) var<storage, read_write> o: array<S>;
		@compute @workgroup_size(1,) fn main() { o[0] = S(1u, 2.0,); }`},
	{"vec_bool_and_compare", kernel("", `let a = vec3<f32>(fo[0], fo[1], fo[2]); let m = a > vec3(0.5);
		let c = select(vec3<u32>(0u), vec3<u32>(1u), m); ou[0] = c.x + c.y + c.z; let n = !m; if n.x { ou[1] = 1u; }`)},
	{"shadowing", kernel(`fn max(a: i32) -> i32 { return a; } struct vec2f { x: u32 }`,
		`let length = arrayLength(&fo); let min = 3u; ou[0] = length + min; oi[0] = max(5); let v = vec2f(2u); ou[1] = v.x;
		{ let fo = 1.0; let x = fo * 2.0; } fo[0] = 1.0;`)},
	{"switch", kernel("", `var s = 0u;
		for (var i = 0u; i < 10u; i++) {
			switch i % 4u {
				case 0u: { s += 1u; }
				case 1u, 2u { if i > 4u { break; } s += 10u; }
				case 3u, default: { continue; }
			}
			s += 100u;
		}
		ou[0] = s;
		switch oi[0] { case -1, 5 { oi[1] = 2; } default { return; } }
		const K = 3; switch K { case 1 + 2: { fo[0] = 1.0; } default: {} }`)},
	{"identity_constructors", kernel("struct S { a: f32 }", `let v = vec3<f32>(fo[0]); let w = vec3<f32>(v); let u = vec3(v); let s = S(S(fo[1]).a);
		let a = array<f32, 1>(f32(fo[2])); fo[3] = w.x + u.y + s.a + a[0] + f32(i32(oi[0])) + f32(u32(ou[0]));`)},
	{"const_all_any", kernel("", `const t = all(vec3(true, false, true)) || any(vec2(false, true)); ou[0] = select(0u, 1u, t && all(true));`)},
	{"abstract_runtime_index", kernel("", `fo[0] = vec3(0.5, 1.0, 2.0)[ou[0] % 3u]; oi[0] = array(1, 2, 3)[ou[1]]; let k = vec2(1.5)[oi[1]];`)},
	{"matrices", "enable f16;\n" + `struct T { m: mat3x3<f32>, arr: array<mat2x4<f32>, 2>, h: mat2x2<f16> }
		@group(0) @binding(0) var<storage, read_write> t: T;
		@group(0) @binding(1) var<uniform> u: mat4x4<f32>;
		@group(0) @binding(2) var<storage, read_write> o: array<f32>;
		var<private> pm: mat2x2f;
		var<workgroup> wm: array<mat3x3<f32>, 2>;
		const I = mat2x2(1.0, 0.0, 0.0, 1.0);
		const K = mat2x2<f32>(vec2(1.0, 2.0), vec2(3.0, 4.0)) * vec2(1.0, 1.0);
		@compute @workgroup_size(2) fn main(@builtin(local_invocation_index) li: u32) {
			var m = t.m; m[1][2] = 5.0; m[li] = vec3(1.0);
			let v = m * vec3(1.0, 2.0, 3.0) + vec3(1.0, 2.0, 3.0) * m;
			let p = mat2x3<f32>(v, v) * mat2x2<f32>(1.0, 2.0, 3.0, 4.0);
			pm = I * 2.0 + transpose(pm) - (pm * -1.0) * pm;
			wm[li] = m + transpose(m) * 0.5;
			workgroupBarrier();
			t.arr[li] = mat2x4<f32>(u[0], u[1]) * 2.0;
			t.h = mat2x2<f16>(pm) * t.h;
			o[li] = determinant(m) + p[1].z + pm[0][1] + wm[1u - li][2].x + u[3].w + K.y + f32(t.h[1][0]) + determinant(I);
			t.m = m;
		}`},
	{"minus_minus", kernel("", `let a = oi[0]; oi[1] = --a; oi[2] = a--a; oi[3] = a - -1; var b = a; b--;`)},
	{"zero_vec_inferred", kernel("", `let z = vec3(); fo[0] = f32(z.x) + vec2<f32>(vec2()).y; let w: vec4<u32> = vec4(); ou[0] = w.w;`)},
	{"workgroup_size_beyond_devices", "@compute @workgroup_size(2048, 64, 64) fn main() {}"}, // device limits apply at pipeline creation
	{"huge_buffer_copy", "@group(0) @binding(0) var<storage, read_write> b: array<array<f32, 8192>, 2>;\n" +
		"@compute @workgroup_size(1) fn main() {\n    let x = b[0];\n}"},
	{"huge_copies", bigCopySrc("8192")},
	{"huge_copies_forwarded", `struct S { a: array<f32, 1000>, m: mat2x2<f32> }
		@group(0) @binding(0) var<storage, read_write> b: array<S, 4>;
		var<private> p: array<array<f32, 300>, 300>;
		var<workgroup> w: array<S, 2>;
		fn h(s: S, k: u32) -> f32 { return s.a[k] + s.m[1][k % 2u]; }
		fn f(s: S, k: u32) -> f32 { return h(s, k); }
		fn g(i: u32) -> S { let x = b[i]; return x; }
		fn pick(c: bool) -> S { if c { return g(1u); } return S(g(2u).a, mat2x2<f32>()); }
		@compute @workgroup_size(2) fn main(@builtin(local_invocation_index) li: u32) {
			let x = b[li];
			var y = x;
			y.a[li] = f(x, li) + f(g(li), li + 1u);
			b[3] = pick(li == 0u);
			w[li] = y;
			workgroupBarrier();
			let q = p;
			p[li] = q[299u - li];
			b[2].a[li] = h(w[1u - li], li) + q[li][li] + select(0.0, 1.0, pick(false).a[li] > 0.0);
		}`},
	{"value_struct_array_index", kernel(`struct S { v: array<u32, 4> }`, `let s = S(array<u32, 4>(1u, 2u, 3u, 4u)); ou[0] = s.v[ou[1] % 4u];`)},
}

func TestValidPrograms(t *testing.T) {
	for _, p := range validPrograms {
		t.Run(p.name, func(t *testing.T) {
			compileOK(t, p.name+".wgsl", p.src)
		})
	}
}

func TestOverrideReflection(t *testing.T) {
	var src string
	for _, p := range validPrograms {
		if p.name == "overrides" {
			src = p.src
		}
	}
	m := compileOK(t, "overrides.wgsl", src)
	r := m.Reflection
	if len(r.Overrides) != 4 {
		t.Fatalf("overrides: %+v", r.Overrides)
	}
	got := map[string]Override{}
	for _, o := range r.Overrides {
		got[o.Name] = o
	}
	if o := got["flag"]; o.ID != 7 || o.Type != "bool" || o.Default != 1 {
		t.Errorf("flag: %+v", o)
	}
	if o := got["WG"]; o.ID != 0 || o.Default != 64 || !o.HasDefault {
		t.Errorf("WG: %+v", o)
	}
	if o := got["N"]; o.HasDefault || o.Type != "i32" {
		t.Errorf("N: %+v", o)
	}
	if ep := r.EntryPoints[0]; ep.WorkgroupSize != [3]uint32{64, 1, 1} || ep.WorkgroupSizeOverrides[0] != "WG" {
		t.Errorf("entry point: %+v", ep)
	}
	if !strings.Contains(r.Bindings[0].Type, "array<f32>") {
		t.Errorf("binding: %+v", r.Bindings[0])
	}
}
