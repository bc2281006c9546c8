package wgsl

// Fixes of wrong rejections (issue 8): uniformity through pointer parameters
// and names of a continuing block in its break if.

// Uniformity through pointer parameters (issue 8, item 6).
var ptrUniformOK = []struct{ name, src string }{
	{"uniform_through_ptr_store", ent("fn f(p: ptr<function, i32>) { *p = 1; }", "var v = 0; f(&v); if v == 0 { workgroupBarrier(); }")},
	{"uniform_through_ptr_read", ent("fn g(p: ptr<function, u32>) -> u32 { return *p + 1u; }\nfn h(p: ptr<function, u32>, x: u32) { *p = x; }",
		"var v = wid.x; h(&v, 3u); if g(&v) > 2u { workgroupBarrier(); }")},
	{"uniform_through_ptr_struct", "struct S { a: u32 }\n" + ent("fn f(p: ptr<function, S>) { (*p).a = 4u; }\nfn k(p: ptr<function, S>) -> u32 { return (*p).a; }",
		"var s: S; f(&s); if k(&s) == 4u { workgroupBarrier(); }")},
}

var ptrUniformBad = []struct{ name, src, want string }{
	{"nonuniform_through_ptr_store", ent("fn h(p: ptr<function, u32>, x: u32) { *p = x; }", "var v = 0u; h(&v, li); if v == 0u { workgroupBarrier(); }"),
		"4:37: 'workgroupBarrier' must only be called from uniform control flow"},
	{"nonuniform_through_ptr_read", ent("fn g(p: ptr<function, u32>) -> u32 { return *p; }", "var v = li; if g(&v) > 0u { workgroupBarrier(); }"),
		"4:29: 'workgroupBarrier' must only be called from uniform control flow"},
	{"nonuniform_through_ptr_chain", ent("fn h(p: ptr<function, u32>, x: u32) { *p = x; }\nfn m(q: ptr<function, u32>, y: u32) { h(q, y); }",
		"var v = 0u; m(&v, li); if v == 0u { workgroupBarrier(); }"), "5:37: 'workgroupBarrier' must only be called from uniform control flow"},
}

func init() {
	uniformOK = append(uniformOK, ptrUniformOK...)
	invalidPrograms = append(invalidPrograms, ptrUniformBad...)
}

// break if sees names declared in its continuing block (issue 8, item 7).
var breakIfValid = []struct{ name, src string }{
	{"break_if_continuing_name", kernel("", `var i = 0u; var s = 0u;
		loop { s += i; continuing { let next = i + 1u; i = next; break if next >= ou[0]; } } ou[1] = s;
		loop { let k = i; continuing { i++; break if k > 3u; } }`)},
}

var breakIfInvalid = []struct{ name, src, want string }{
	{"break_if_after_loop_name", body("var i = 0;\nloop { continuing { i++; break if j > 3; } }\nlet j = 1;"), "3:35: unknown identifier 'j'"},
}

func init() {
	validPrograms = append(validPrograms, breakIfValid...)
	invalidPrograms = append(invalidPrograms, breakIfInvalid...)
}
