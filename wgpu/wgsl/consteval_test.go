package wgsl

// Integer overflow in const-expressions, as the WGSL specification and Tint
// have it: concrete i32 and u32 arithmetic wraps (abstract_numerics in
// valid_test.go has 2147483647i + 1i), AbstractInt arithmetic must stay in
// the 64-bit range, shifts must not lose significant bits, and an AbstractInt
// shift amount is not taken modulo a bit width. The init below adds these
// programs to the shared corpora, so TestTintOracle checks them against
// Tint too.

var constOverflowValid = []struct{ name, src string }{
	// Wrapping, not errors: the specification's "Integer Types" and its
	// example -1 * i32(-2147483648).
	{"const_concrete_wraps", `const a = 2147483647i + 1i; const b = 4294967295u + 1u; const c = 65536i * 65536i;
const d = -(-2147483647i - 1i); const e = 0u - 1u; const f = -1 * i32(-2147483648);
const_assert a == -2147483647i - 1i && b == 0u && c == 0i && d == a && e == 4294967295u && f == a;` + ep},
	// The most negative value is its own negation, for AbstractInt too.
	{"const_abstract_neg_min", `const m = -9223372036854775807 - 1;
const_assert -m == m; const_assert abs(m) == m;` + ep},
	// Shifting an AbstractInt by 64 or more bits.
	{"const_abstract_wide_shift", `const_assert (0 << 100) == 0; const_assert (0 << 4294967295) == 0;
const_assert (5 >> 64) == 0; const_assert (-5 >> 100) == -1; const_assert (-1 << 63) == -9223372036854775807 - 1;` + ep},
	// dot of concrete integers wraps like + and *.
	{"const_dot_wraps", `const_assert dot(vec2(2147483647i, 1i), vec2(1i, 1i)) == -2147483647i - 1i;
const_assert dot(vec2(65536i, 0i), vec2(65536i, 0i)) == 0i;
const_assert dot(vec3(4294967295u, 1u, 2u), vec3(1u, 1u, 1u)) == 2u;
const_assert dot(vec2(4611686018427387904, 3), vec2(1, 1)) == 4611686018427387907;` + ep},
}

var constOverflowInvalid = []struct{ name, src, want string }{
	{"const_abstract_add_overflow", "const a = 9223372036854775807 + 1;" + ep, "1:31: '+' overflows 'abstract-int'"},
	{"const_abstract_sub_overflow", "const a = -9223372036854775807 - 2;" + ep, "1:32: '-' overflows 'abstract-int'"},
	{"const_abstract_mul_overflow", "const a = 4294967296 * 4294967296;" + ep, "1:22: '*' overflows 'abstract-int'"},
	{"const_abstract_div_overflow", "const a = (-9223372036854775807 - 1) / -1;" + ep, "1:38: integer division overflows"},
	{"const_abstract_dot_overflow", "const a = dot(vec2(9223372036854775807, 1), vec2(1, 1));" + ep, "1:11: '+' overflows 'abstract-int'"},
	{"const_abstract_shl_sign", "const a = 1 << 63;" + ep, "1:13: '<<' overflows 'abstract-int'"},
	{"const_abstract_shl_64", "const a = 1 << 64;" + ep, "1:13: '<<' overflows 'abstract-int'"},
	{"const_abstract_shl_far", "const a = -1 << 100;" + ep, "1:14: '<<' overflows 'abstract-int'"},
	{"const_abstract_shift_negative", "const a = 1 >> -1;" + ep, "1:13: the shift amount -1 cannot be represented as 'u32'"},
	{"const_abstract_shift_too_far", "const a = 1 >> 4294967296;" + ep, "1:13: the shift amount 4294967296 cannot be represented as 'u32'"},
	{"const_i32_shl_sign", "const a = 1i << 31u;" + ep, "1:14: '<<' overflows 'i32'"},
	{"const_u32_shl_lost", "const a = 3u << 31u;" + ep, "1:14: '<<' overflows 'u32'"},
	{"const_i32_div_overflow", "const a = (-2147483647i - 1i) / -1i;" + ep, "1:31: integer division overflows"},
	{"const_materialize_i32", body("let a = 2147483647 + 1;"), "2:9: value 2147483648 cannot be represented as 'i32'"},
}

func init() {
	validPrograms = append(validPrograms, constOverflowValid...)
	invalidPrograms = append(invalidPrograms, constOverflowInvalid...)
}
