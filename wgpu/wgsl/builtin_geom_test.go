package wgsl

// faceForward, reflect, refract and the quad operations (issue 8: every
// builtin usable in compute shaders), judged by spirv-val and Tint.

var geomValid = []struct{ name, src string }{
	{"geometry_builtins", `const R = reflect(vec2(1.0, -1.0), vec2(0.0, 1.0));
const_assert R.x == 1.0 && R.y == 1.0;
const F = faceForward(vec3(1.0, 2.0, 3.0), vec3(1.0, 0.0, 0.0), vec3(-1.0, 0.0, 0.0));
const_assert F.z == 3.0;
const T = refract(vec2(0.0, -1.0), vec2(0.0, 1.0), 2.0);
const_assert T.y == -1.0;
const_assert all(refract(vec2(1.0, 0.0), vec2(0.0, 1.0), 2.0) == vec2(0.0));
` + kernel("", `let v = vec3(fo[0], fo[1], fo[2]); let n = normalize(vec3(fo[3], 1.0, 0.0));
		let r = reflect(v, n); let f = faceForward(v, n, vec3f(1.0)); let t = refract(v, n, fo[4]);
		fo[5] = r.x + f.y + t.z; let h = reflect(vec2(1, 2), vec2(0.5, fo[6])); fo[7] = h.y;`)},
	{"geometry_builtins_f16", "enable f16;\n" + kernel("", `let a = vec4<f16>(f16(fo[0]), 1.0h, 2.0h, 3.0h); let n = vec4h(0.0h, 1.0h, 0.0h, 0.0h);
		fo[1] = f32(reflect(a, n).y + refract(a, n, 0.5h).x + faceForward(a, n, a).z);`)},
	{"quad_ops", "enable subgroups;\nenable f16;\n" + kernel("", `let x = fo[gid.x]; let i = oi[gid.x]; let u = ou[gid.x];
		fo[gid.x] = quadSwapX(x) + quadSwapY(vec2(x)).y + quadSwapDiagonal(vec4(x)).w + quadBroadcast(x, 3u);
		oi[gid.x] = quadSwapX(i) + quadBroadcast(vec3(i), 1).z; ou[gid.x] = quadSwapDiagonal(u) + quadBroadcast(u, 2i);
		fo[0] = f32(quadSwapY(f16(x)));`)},
}

var geomInvalid = []struct{ name, src, want string }{
	{"reflect_scalar", body("let r = reflect(1.0, 2.0);"), "2:9: 'reflect' needs vectors of one float type"},
	{"refract_vector_eta", body("let r = refract(vec2(1.0), vec2(1.0), vec2(1.0));"), "2:9: 'refract' needs (vecN<T>, vecN<T>, T)"},
	{"faceforward_sizes", body("let r = faceForward(vec2(1.0), vec3(1.0), vec2(1.0));"), "2:9: 'faceForward' needs vectors of one float type"},
	{"reflect_int", body("let r = reflect(vec2(1i), vec2(2i));"), "2:9: 'reflect' needs float vectors"},
	{"quad_without_enable", body("let r = quadSwapX(1.0);"), "2:9: 'quadSwapX' requires 'enable subgroups;'"},
	{"quad_broadcast_runtime_id", "enable subgroups;\n" + kernel("", "fo[0] = quadBroadcast(fo[1], ou[0]);"), "8:30: the id of 'quadBroadcast' must be a const-expression"},
	{"quad_broadcast_id_range", "enable subgroups;\n" + kernel("", "fo[0] = quadBroadcast(fo[1], 4u);"), "8:30: the id of 'quadBroadcast' must be in [0, 4)"},
	{"quad_bool", "enable subgroups;\n" + kernel("", "let b = quadSwapX(fo[0] > 1.0);"), "8:19: 'quadSwapX' needs a numeric scalar or vector"},
	{"quad_nonuniform", "enable subgroups;\n" + kernel("", "if fo[gid.x] > 0.0 { fo[0] = quadSwapX(1.0); }"), "8:30: 'quadSwapX' must only be called from subgroup uniform control flow"},
}

func init() {
	validPrograms = append(validPrograms, geomValid...)
	invalidPrograms = append(invalidPrograms, geomInvalid...)
}
