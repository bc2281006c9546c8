package wgsl

import (
	"strings"
	"testing"
)

// Programs for the builtins of builtinTable; init adds them to the shared
// valid and invalid corpora, so the Tint oracle judges them too.
var tableValid = []struct{ name, src string }{
	{"bits_abstract_args", kernel(`const A = countLeadingZeros(1); const B = firstLeadingBit(-1); const C = extractBits(-8, 1u, 3u);
		const D = insertBits(0u, 7, 4u, 4u); const E = countTrailingZeros(vec2(8, 0));`,
		`oi[0] = A + B + C + E.x + E.y; ou[0] = D; const_assert A == 31 && B == -1 && C == -4 && D == 0x70u && E.y == 32;`)},
	{"bits_runtime_vectors", kernel("", `let v = vec3<u32>(ou[0], ou[1], ou[2]); let w = vec2<i32>(oi[0], oi[1]);
		let a = firstTrailingBit(v) + countLeadingZeros(v) + extractBits(v, ou[3], 4u) + insertBits(v, vec3(1u), 2u, ou[4]);
		let b = firstLeadingBit(w) + countTrailingZeros(w) + extractBits(w, 1u, 2u) + insertBits(w, w, 0u, 32u);
		ou[5] = a.z; oi[2] = b.y; ou[6] = insertBits(ou[7], 3, 1u, 2u);`)},
	// A function may end in a for loop without condition and break, as in
	// a loop statement: control never leaves it.
	{"return_from_endless_for", kernel("fn first(x: i32) -> i32 { for (var i = 0; ; i++) { if i * i >= x { return i; } } }\n"+
		"fn second() -> i32 { for (;;) { switch oi[0] { default { break; } } return 2; } }", "oi[0] = first(oi[1]) + second();")},
	{"ldexp_runtime_max_exponent", kernel("", "fo[0] = ldexp(fo[1], 128) + ldexp(vec2(fo[2]), vec2(-1000, 128)).y;")},
	{"float_split", kernel(`const F = frexp(1.5); const M = modf(-2.5); const L = ldexp(1.0, 4); const Q = quantizeToF16(1.0);`,
		`let x = fo[0]; let f = frexp(x); let m = modf(vec2(x, 1.0)); var r = modf(x);
		fo[1] = f.fract + f32(f.exp) + m.fract.x + m.whole.y + r.whole + ldexp(x, oi[0]) + ldexp(vec2(x), vec2(2)).y;
		fo[2] = F.fract + f32(F.exp) + M.whole + L + Q + quantizeToF16(x) + quantizeToF16(vec2(x)).y;
		const_assert F.exp == 1 && M.fract == -0.5 && L == 16.0;`)},
	{"float_split_abstract", kernel(`const F = frexp(1.5); const M = modf(vec2(2, -3.25));`,
		`fo[0] = F.exp; ou[0] = F.exp; oi[0] = F.exp; let r = frexp(6.0); var m = M; fo[1] = r.fract + f32(r.exp) + m.fract.y + M.whole.x;
		let big: f32 = frexp(1e300).fract; fo[2] = big; const_assert F.exp == 1 && F.fract == 0.75 && M.whole.y == -3 && M.fract.y == -0.25;`)},
	{"packing", kernel(`const P = pack4x8unorm(vec4(1.0, 0.0, 0.5, 0.25)); const U = unpack4xI8(0xff80u);`,
		`let v = vec4(fo[0], fo[1], fo[2], fo[3]);
		ou[0] = pack4x8snorm(v) ^ pack4x8unorm(v) ^ pack2x16snorm(v.xy) ^ pack2x16unorm(v.zw) ^ pack2x16float(v.xy) ^ P;
		fo[4] = unpack4x8snorm(ou[1]).x + unpack4x8unorm(ou[1]).y + unpack2x16snorm(ou[2]).x + unpack2x16unorm(ou[2]).y + unpack2x16float(ou[3]).x;
		let iv = vec4(oi[0], oi[1], 2, 3);
		ou[1] = pack4xI8(iv) ^ pack4xI8Clamp(iv) ^ pack4xU8(vec4u(ou[4])) ^ pack4xU8Clamp(vec4(ou[5], 1u, 2u, 3u));
		oi[2] = unpack4xI8(ou[6]).w + dot4I8Packed(ou[6], ou[7]) + U.x; ou[2] = unpack4xU8(ou[6]).z + dot4U8Packed(ou[6], 0x01010101u);
		const_assert P == 0x408000ffu && U.y == -1 && dot4I8Packed(0xffu, 0xffu) == 1 && dot4U8Packed(0xffu, 0xffu) == 65025u;`)},
	{"matrix_const_override", kernel(`const T = transpose(mat2x3(1.0, 2, 3, 4, 5, 6)); const D = determinant(mat2x2(1.0, 2, 3, 4));
		override o: f32 = 2.0; override od = determinant(mat2x2(o, 0.0, 0.0, o)); const S = select(1.0, 2, true);`,
		`fo[0] = T[2][1] + D + od + S; const_assert D == -2.0 && T[2][1] == 6.0 && S == 2.0 && all(vec2(dot(vec2(1, 2), vec2(3, 4)) == 11, any(vec2(false, true))));`)},
	// Float to integer conversion saturates to the integer nearest trunc(e)
	// that the float type represents: f32's are 2147483520 and 4294967040.
	{"float_to_int_saturates", kernel(`const A = i32(1e20f); const B = u32(1e20f); const C = i32(-1e20f); const D = i32(3e9);
		const E = u32(4294967295.0); const F = vec2<i32>(vec2(2147483647.0f, 3.9f)); const G = u32(-1.5f);`,
		`ou[0] = B; const_assert A == 2147483520 && B == 4294967040u && C == i32(-2147483648) && D == 2147483647 && E == 4294967295u;
		const_assert F.x == 2147483520 && F.y == 3 && G == 0u;`)},
	// bitcast of constants through f16 components folds like any other.
	{"bitcast_const_f16", "enable f16;\n" + kernel(`const H = bitcast<vec4<f16>>(vec2(0xbc003c00u, 0x4000c000u)); const U = bitcast<u32>(vec2<f16>(1h, 2h));`,
		`ou[0] = U + bitcast<u32>(H.xy); const_assert U == 0x40003c00u && all(H == vec4(1h, -1h, -2h, 2h)) && bitcast<f32>(vec2<f16>(0h, 1.875h)) == 1.0f;
		const_assert all(bitcast<vec2<u32>>(vec4<f16>(1h, 2h, 3h, 4h)) == vec2(0x40003c00u, 0x44004200u)) && all(bitcast<vec2<i32>>(vec4<f16>()) == vec2(0i));`)},
	{"templated_calls", kernel(`const A = array<u32, 3>(1u, 2u, 3u); alias V = vec2<f32>;`,
		`let a = array<f32, 2>(fo[0], 1.0); let v = vec3<i32>(1, oi[0], 3); let w = V(a[0], a[1]);
		let b = bitcast<vec2<u32>>(w); let m = mat2x2<f32>(w, w); let z = vec4<u32>();
		ou[0] = A[1] + b.y + u32(v.y) + z.x + bitcast<u32>(m[1].x) + array<u32, 2>()[0];`)},
}

var tableInvalid = []struct{ name, src, want string }{
	{"clz_float", body("let a = countLeadingZeros(1.5);"), "2:27: 'countLeadingZeros' needs an i32 or u32"},
	{"extract_signed_offset", body("let a = extractBits(1u, -1i, 2u);"), "2:25: cannot use a value of type 'i32' as 'u32'"},
	{"insert_mixed", body("let a = insertBits(1u, 2i, 0u, 1u);"), "2:24: cannot use a value of type 'i32' as 'u32'"},
	{"ldexp_shape", body("let a = ldexp(vec2(1.0), 2);"), "2:26: 'ldexp' needs an i32 exponent"},
	{"ldexp_const_overflow", body("const a = ldexp(1.0f, 200);"), "2:11: 'ldexp' exponent 200 is too large"},
	{"quantize_overflow", body("const a = quantizeToF16(1e6);"), "2:11: outside the finite range of f16"},
	{"quantize_int", body("let a = quantizeToF16(vec2(1i));"), "2:23: 'quantizeToF16' needs a float scalar or vector, got 'vec2<i32>'"},
	{"pack_shape", body("let a = pack4x8snorm(vec2(1.0));"), "2:22: cannot use a value of type 'vec2<abstract-float>' as 'vec4<f32>'"},
	{"pack_float_overflow", body("const a = pack2x16float(vec2(1e6, 0.0));"), "2:11: outside the finite range of f16"},
	{"extract_const_range_past_32", body("const a = extractBits(1u, 40u, 4u);"), "2:11: 'extractBits': offset 40 + count 4 is more than the bit width 32"},
	{"extract_runtime_value_const_range", "@group(0) @binding(0) var<storage, read_write> b: array<u32>;\n" + body("b[0] = extractBits(b[1], 30u, 4u);"),
		"3:8: 'extractBits': offset 30 + count 4 is more than"},
	{"insert_runtime_value_const_range", "@group(0) @binding(0) var<storage, read_write> b: array<i32>;\n" + body("b[0] = insertBits(b[1], b[2], 1u, 0xffffffffu);"),
		"3:8: 'insertBits': offset 1 + count 4294967295 is more than"},
	{"bitcast_const_inf", body("const a = bitcast<f32>(0x7f800000u);"), "2:11: bitcast<f32> of a constant gives +Inf, not a finite 'f32'"},
	{"bitcast_const_f16_nan", "enable f16;\n" + body("const a = bitcast<vec2<f16>>(0x7e000000u);"), "3:11: bitcast<vec2<f16>> of a constant gives NaN"},
	// A value past a float type's largest finite value does not convert,
	// even where it would round down to it (65519 to f16's 65504).
	{"f16_conversion_past_max", "enable f16;\n" + body("const a = f16(65519.0);"), "3:11: value 65519 cannot be represented as 'f16'"},
	{"f32_literal_past_max", body("const a = 3.4028235e38f;"), "2:11: float literal 3.4028235e38f is out of range for f32"},
	{"quantize_past_max", body("const a = quantizeToF16(-65519.0);"), "2:11: outside the finite range of f16"},
	{"pack_float_past_max", body("const a = pack2x16float(vec2(1.0, 65505.0));"), "2:11: outside the finite range of f16"},
	{"ldexp_runtime_const_exponent", "@group(0) @binding(0) var<storage, read_write> b: array<f32>;\n" + body("b[0] = ldexp(b[1], 129);"),
		"3:8: 'ldexp': exponent 129 is more than 128 for 'f32'"},
	{"ldexp_runtime_vec_const_exponent", "@group(0) @binding(0) var<storage, read_write> b: array<f32>;\n" + body("b[0] = ldexp(vec2(b[1]), vec2(1, 200)).y;"),
		"3:8: 'ldexp': exponent 200 is more than 128"},
	{"ldexp_runtime_f16_const_exponent", "enable f16;\n@group(0) @binding(0) var<storage, read_write> b: array<f16>;\n" + body("b[0] = ldexp(b[1], 17);"),
		"4:8: 'ldexp': exponent 17 is more than 16 for 'f16'"},
	{"return_after_for_with_break", "fn f() -> i32 { for (;;) { if true { break; } return 1; } }" + ep, "1:15: function 'f' must return a value on every path"},
	{"dot4_args", body("let a = dot4I8Packed(1u);"), "2:9: 'dot4I8Packed' takes 2 arguments, got 1"},
	{"frexp_int_vec", body("let a = frexp(vec2(1u));"), "2:15: 'frexp' needs a float scalar or vector"},
	{"mix_vector_factor_scalars", body("let a = mix(1.0, 2.0, vec2(0.5));"), "2:9: 'mix' arguments must have the same shape"},
	{"unpack_result_unused", body("unpack4xU8(1u);"), "2:1: the result of 'unpack4xU8' must be used"},
}

func init() {
	validPrograms = append(validPrograms, tableValid...)
	invalidPrograms = append(invalidPrograms, tableInvalid...)
}

// The table's constant evaluation agrees with its own Go helpers on values
// the specification spells out.
func TestTableConstEval(t *testing.T) {
	for _, c := range []struct {
		name string
		got  uint32
		want uint32
	}{
		{"extractBits signed 1 bit", extractBits(true, 1, 0, 1), 0xffffffff},
		{"extractBits count past 32", extractBits(false, 0xf0000000, 28, 100), 0xf},
		{"extractBits offset past 32", extractBits(true, 0xffffffff, 40, 4), 0},
		{"insertBits whole word", insertBits(1, 0xabcd, 0, 32), 0xabcd},
		{"insertBits clamped count", insertBits(0, 0xffffffff, 30, 8), 0xc0000000},
		{"firstLeadingBit i32 -2", firstLeadingBit(&wgslType{Kind: kI32}, 0xfffffffe), 0},
		{"firstLeadingBit u32 top", firstLeadingBit(&wgslType{Kind: kU32}, 0x80000000), 31},
	} {
		if c.got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, c.got, c.want)
		}
	}
}

// TestTableComplete checks that every builtin of builtinTable is described
// for each stage: a signature, a constant evaluation unless it is never a
// const-expression, and an emission.
func TestTableComplete(t *testing.T) {
	if len(builtinTable) < 100 {
		t.Errorf("builtinTable has %d builtins, want all of them", len(builtinTable))
	}
	for name, b := range builtinTable {
		if (b.sig == nil) != b.matrix { // the checker takes subgroup matrix builtins before the table
			t.Errorf("%s: signature set %v, matrix %v", name, b.sig != nil, b.matrix)
		}
		if (b.eval == nil) != (b.runtime || b.subgroup) {
			t.Errorf("%s: eval set %v, runtime %v, subgroup %v", name, b.eval != nil, b.runtime, b.subgroup)
		}
		if (b.emit == nil) == (b.emitCall == nil) {
			t.Errorf("%s: want exactly one of emit and emitCall", name)
		}
		if b.noValue && b.discardable {
			t.Errorf("%s: both noValue and discardable", name)
		}
	}
	for _, name := range []string{"exp", "clamp", "dot", "select", "determinant", "subgroupAdd", "atomicAdd", "arrayLength", "workgroupBarrier", "quadSwapX", "pack4x8snorm"} {
		if builtinTable[name] == nil {
			t.Errorf("%s is not in builtinTable", name)
		}
	}
}

// TestSpecializeConstArgRanges: an override argument that the specification
// bounds (ldexp's exponent, extractBits' and insertBits' offset + count, a
// subgroup lane) is a pipeline-creation error once its value is out of range,
// and fine in range.
func TestSpecializeConstArgRanges(t *testing.T) {
	for _, c := range []struct {
		body string
		ok   float64
		bad  float64
		want string
	}{
		{"o[0] = ldexp(o[1], i32(s));", 128, 129, "'ldexp': exponent 129 is more than 128 for 'f32'"},
		{"o[0] = f32(extractBits(u32(o[1]), s, 4u));", 28, 29, "'extractBits': offset 29 + count 4 is more than the bit width 32"},
		{"o[0] = f32(insertBits(u32(o[1]), 1u, 4u, s));", 28, 29, "'insertBits': offset 4 + count 29"},
		{"o[0] = subgroupShuffle(o[1], s);", 127, 128, "the lane argument of 'subgroupShuffle' is 128, not in [0, 128)"},
	} {
		src := "enable subgroups;\n@group(0) @binding(0) var<storage, read_write> o: array<f32>;\noverride s: u32;\n" +
			"@compute @workgroup_size(1) fn main() { " + c.body + " }\n"
		m := compileOK(t, "ranges.wgsl", src)
		if _, err := m.Specialize("main", map[string]float64{"s": c.ok}); err != nil {
			t.Errorf("%s with s = %v: %v", c.body, c.ok, err)
		}
		if _, err := m.Specialize("main", map[string]float64{"s": c.bad}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s with s = %v: %v; want an error containing %q", c.body, c.bad, err, c.want)
		}
	}
}
