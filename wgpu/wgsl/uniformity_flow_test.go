package wgsl

import "testing"

// Local variables in the uniformity analysis (uniformity.go) are tracked
// flow-sensitively, as the specification and Tint track them: a variable is
// as uniform as the value last stored to it on the paths that reach a use,
// and a store through a pointer (a let, a parameter, a call) lands in the
// variable the pointer names. The init below adds the programs to the
// shared corpora, so TestTintOracle checks each against Tint too. With the
// analysis as it was (flow-insensitive, pointer lets not followed), 38 of
// them failed: valid ones refused, and invalid ones accepted, barriers under
// control flow that depends on li through a store via a pointer.

// flowPrograms are valid: each variable is uniform where it decides whether
// a barrier runs.
var flowPrograms = []struct{ name, src string }{
	{"flow_reassigned", ent("", "var x = li; x = 0u; if x == 0u { workgroupBarrier(); }")},
	{"flow_nonuniform_after_use", ent("", "var x = 0u; if x == 0u { workgroupBarrier(); } x = li;")},
	{"flow_both_branches", ent("", "var x = li; if wid.x > 0u { x = 1u; } else { x = 2u; } if x == 0u { workgroupBarrier(); }")},
	{"flow_branch_returns", ent("", "var x = 0u; if wid.x > 0u { x = li; return; } if x == 0u { workgroupBarrier(); }")},
	{"flow_reset_in_loop", ent("", "var x = 0u; for (var i = 0u; i < 4u; i++) { x = li; x = 0u; if x == 0u { workgroupBarrier(); } }")},
	{"flow_reset_after_loop", ent("", "var x = 0u; for (var i = 0u; i < 4u; i++) { x = li; } x = 3u; if x == 0u { workgroupBarrier(); }")},
	{"flow_reset_before_break", ent("", "var x = 0u; loop { x = li; x = 1u; if wid.x > 1u { break; } } if x == 0u { workgroupBarrier(); }")},
	{"flow_continuing_resets", ent("", "var x = 0u; var i = 0u; loop { if x == 0u { workgroupBarrier(); } continuing { x = li; x = 0u; i++; break if i > 3u; } }")},
	{"flow_switch_every_clause", ent("", "var x = li; switch wid.x { case 0u: { x = 1u; } default: { x = 3u; if wid.y > 4u { break; } x = 2u; } } if x == 0u { workgroupBarrier(); }")},
	{"flow_inner_loop_after_reset", ent("", "var x = 0u; for (var i = 0u; i < 4u; i++) { x = 0u; for (var j = 0u; j < 4u; j++) { if x == 0u { workgroupBarrier(); } } x = li; }")},
	{"flow_declared_in_loop", ent("", "for (var i = 0u; i < 4u; i++) { var x: u32; var y = 0u; if x == y { workgroupBarrier(); } x = li; y = li; }")},
	{"flow_let_keeps_value", ent("", "var x = 0u; let y = x; x = li; if y == 0u { workgroupBarrier(); }")},
	{"flow_whole_struct", "struct S { a: u32, b: u32 }\n" + ent("", "var s = S(); s.a = li; s = S(1u, 2u); if s.a == 0u { workgroupBarrier(); }")},
	{"flow_whole_array", ent("", "var a = array<u32, 4>(); a[1] = li; a = array<u32, 4>(); if a[1] == 0u { workgroupBarrier(); }")},
	{"flow_compound_of_uniform", ent("", "var x = li; x = 2u; x *= 3u; if x == 6u { workgroupBarrier(); }")},
	{"flow_loop_bound_reset", ent("", "var n = li; n = 4u; for (var i = 0u; i < n; i++) { workgroupBarrier(); }")},
	{"flow_local_in_callee", ent("fn h(a: u32) -> u32 { var x = a; x = 5u; return x; }", "if h(li) == 5u { workgroupBarrier(); }")},
	{"flow_unreachable_barrier", ent("", "var x = 0u; if wid.x == 0u { return; } else { return; }\nx = li; if x == 0u { workgroupBarrier(); }")},
	{"flow_read_through_let", ent("", "var x = 0u; let p = &x; var v = vec4<u32>(); let q = &v; if *p == 0u && q.y == 0u { workgroupBarrier(); }")},
	{"flow_callee_overwrites", ent("fn g(p: ptr<function, u32>) { *p = 0u; }", "var x = li; g(&x); var y = li; let q = &y; g(q); if x == 0u && y == 0u { workgroupBarrier(); }")},
	{"flow_callee_stores_uniform", ent("fn g(p: ptr<function, u32>, v: u32) { *p = v; }\nfn k(q: ptr<function, u32>, v: u32) { g(q, 1u); }",
		"var x = li; g(&x, 3u); var y = li; k(&y, li); if x == 3u && y == 1u { workgroupBarrier(); }")},
	{"flow_callee_last_store", ent("fn g(p: ptr<function, u32>, v: u32) { *p = v; *p = 0u; }", "var x = 0u; g(&x, li); if x == 0u { workgroupBarrier(); }")},
	{"flow_callee_reads_reset", ent("fn g(p: ptr<function, u32>) -> u32 { if *p == 0u { workgroupBarrier(); } return *p; }", "var x = li; x = 2u; if g(&x) == 0u { workgroupBarrier(); }")},
	{"flow_inner_break", ent("", "var x = 0u; for (var i = 0u; i < 2u; i++) { for (var j = 0u; j < 2u; j++) { x = li; break; } x = 1u; } if x == 0u { workgroupBarrier(); }")},
	{"flow_update_resets", ent("", "var x = 0u; for (var i = 0u; i < 4u; x = 0u) { if x == 0u { workgroupBarrier(); } i++; x = li; }")},
	{"flow_unreachable_after_loop", ent("", "loop { if wid.x > 2u { return; } }\nvar x = li; if x == 0u { workgroupBarrier(); }")},
	{"flow_swap_uniform", ent("fn sw(a: ptr<function, u32>, b: ptr<function, u32>) { let t = *a; *a = *b; *b = t; }", "var x = li; var y = 0u; sw(&x, &y); if x == 0u { workgroupBarrier(); }")},
}

// flowInvalid are invalid: a barrier depends on a variable made
// non-uniform on some path, often through a pointer.
var flowInvalid = []struct{ name, src, want string }{
	{"flow_store_through_let", ent("", "var x = 0u; let p = &x; *p = li; if x == 0u { workgroupBarrier(); }"), "4:47: 'workgroupBarrier' must only be called from uniform control flow"},
	{"flow_store_through_let_chain", ent("", "var x = 0u; let p = &x; let q = p; *q += li; if x == 0u { workgroupBarrier(); }"), "4:59: 'workgroupBarrier' must only be called"},
	{"flow_store_through_let_element", ent("", "var a = array<u32, 4>(); let p = &a[1]; *p = li; if a[1] == 0u { workgroupBarrier(); }"), "4:66: 'workgroupBarrier' must only be called"},
	{"flow_store_through_let_member", "struct S { f: u32 }\n" + ent("", "var s = S(); let p = &s.f; *p = li; if s.f == 0u { workgroupBarrier(); }"), "5:52: 'workgroupBarrier' must only be called"},
	{"flow_store_through_let_component", ent("", "var v = vec4<u32>(); let p = &v; p.x = li; if v.x == 0u { workgroupBarrier(); }"), "4:59: 'workgroupBarrier' must only be called"},
	{"flow_store_through_let_index", ent("", "var v = vec4<u32>(); let p = &v; p[2] = li; if v.z == 0u { workgroupBarrier(); }"), "4:60: 'workgroupBarrier' must only be called"},
	{"flow_store_nonuniform_element", ent("", "var a = array<u32, 4>(); let p = &a[li % 4u]; *p = 1u; if a[0] == 0u { workgroupBarrier(); }"), "4:72: 'workgroupBarrier' must only be called"},
	{"flow_increment_through_let", ent("", "var x = 0u; let p = &x; if li == 0u { (*p)++; } if x == 0u { workgroupBarrier(); }"), "4:62: 'workgroupBarrier' must only be called"},
	{"flow_call_stores_through_let", ent("fn put(p: ptr<function, u32>, v: u32) { *p = v; }", "var x = 0u; let p = &x; put(p, li); if x == 0u { workgroupBarrier(); }"), "4:50: 'workgroupBarrier' must only be called"},
	{"flow_callee_stores_through_let", ent("fn put(p: ptr<function, u32>, v: u32) { let q = &(*p); *q = v; }", "var x = 0u; put(&x, li); if x == 0u { workgroupBarrier(); }"), "4:39: 'workgroupBarrier' must only be called"},
	{"flow_callee_reads_through_let", ent("fn g(p: ptr<function, u32>) { if *p == 0u { workgroupBarrier(); } }", "var x = li; let q = &x; g(q);"), "4:27: this argument must be uniform"},
	{"flow_one_branch", ent("@group(0) @binding(0) var<storage, read_write> o: array<u32>;", "var x = 0u; if o[0] > 0u { x = 7u; } if x == 0u { workgroupBarrier(); }"), "4:51: 'workgroupBarrier' must only be called"},
	{"flow_branch_returns_nonuniform", ent("", "var x = 0u; if li > 0u { x = li; return; } if x == 0u { workgroupBarrier(); }"), "4:57: 'workgroupBarrier' must only be called"},
	{"flow_carried_by_loop", ent("", "var x = 0u; for (var i = 0u; i < 4u; i++) { if x == 0u { workgroupBarrier(); } x = li; }"), "4:58: 'workgroupBarrier' must only be called"},
	{"flow_carried_three_steps", ent("", "var a = 0u; var b = 0u; var c = 0u; for (var i = 0u; i < 4u; i++) { if c == 0u { workgroupBarrier(); } c = b; b = a; a = li; }"), "4:82: 'workgroupBarrier' must only be called"},
	{"flow_out_of_loop_by_break", ent("", "var x = 0u; loop { x = li; if wid.x > 1u { break; } x = 0u; } if x == 0u { workgroupBarrier(); }"), "4:76: 'workgroupBarrier' must only be called"},
	{"flow_out_of_loop_by_continue", ent("", "var x = 0u; for (var i = 0u; i < 4u; i++) { x = 1u; if wid.x > 1u { x = li; continue; } } if x == 0u { workgroupBarrier(); }"), "4:104: 'workgroupBarrier' must only be called"},
	{"flow_continuing_to_start", ent("", "var x = 0u; var i = 0u; loop { if x == 0u { workgroupBarrier(); } continuing { x = li; i++; break if i > 3u; } }"), "4:45: 'workgroupBarrier' must only be called"},
	{"flow_break_if_exit", ent("", "var x = 0u; var i = 0u; loop { continuing { x = li; i++; break if i > 3u; } } if x == 0u { workgroupBarrier(); }"), "4:92: 'workgroupBarrier' must only be called"},
	{"flow_switch_break_skips", ent("", "var x = li; switch wid.x { case 0u: { x = 1u; } default: { if wid.y > 4u { break; } x = 2u; } } if x == 0u { workgroupBarrier(); }"), "4:110: 'workgroupBarrier' must only be called"},
	{"flow_partial_store", ent("", "var a = array<u32, 4>(); a = array<u32, 4>(); a[1] = li; if a[0] == 0u { workgroupBarrier(); }"), "4:74: 'workgroupBarrier' must only be called"},
	{"flow_callee_may_keep", ent("fn g(p: ptr<function, u32>, v: u32) { if v > 3u { *p = 0u; } }", "var x = li; g(&x, 5u); if x == 0u { workgroupBarrier(); }"), "4:37: 'workgroupBarrier' must only be called"},
	{"flow_callee_partial", ent("fn g(p: ptr<function, vec2<u32>>, v: u32) { p.x = v; }", "var x = vec2<u32>(); g(&x, li); if x.y == 0u { workgroupBarrier(); }"), "4:48: 'workgroupBarrier' must only be called"},
	{"flow_callee_element", ent("fn g(p: ptr<function, u32>) { *p = 0u; }", "var a = array<u32, 2>(li, li); g(&a[0]); if a[0] == 0u { workgroupBarrier(); }"), "4:58: 'workgroupBarrier' must only be called"},
	{"flow_swap_nonuniform", ent("fn sw(a: ptr<function, u32>, b: ptr<function, u32>) { let t = *a; *a = *b; *b = t; }", "var x = li; var y = 0u; sw(&x, &y); if y == 0u { workgroupBarrier(); }"), "4:50: 'workgroupBarrier' must only be called"},
	{"flow_inner_break_out", ent("", "var x = 0u; for (var i = 0u; i < 2u; i++) { x = 1u; for (var j = 0u; j < 2u; j++) { x = li; break; } } if x == 0u { workgroupBarrier(); }"), "4:117: 'workgroupBarrier' must only be called"},
	{"flow_update_taints", ent("", "var x = 0u; for (var i = 0u; i < 4u; x = li) { if x == 0u { workgroupBarrier(); } i++; }"), "4:61: 'workgroupBarrier' must only be called"},
	{"flow_loop_bound_grows", ent("", "var n = 4u; for (var i = 0u; i < n; i++) { workgroupBarrier(); n = li; }"), "4:44: 'workgroupBarrier' must only be called"},
}

func init() {
	uniformOK = append(uniformOK, flowPrograms...)
	invalidPrograms = append(invalidPrograms, flowInvalid...)
}

// TestUniformitySaturated: a function that reaches no fixed point within
// maxUniformityPasses is analysed with every loop's state saturated; that
// refuses more, never less: every invalid program stays refused with the
// limit at 0 and 1 passes.
func TestUniformitySaturated(t *testing.T) {
	saved := maxUniformityPasses
	defer func() { maxUniformityPasses = saved }()
	for _, limit := range []int{0, 1} {
		maxUniformityPasses = limit
		for _, p := range append(append([]struct{ name, src, want string }{}, uniformityPrograms...), flowInvalid...) {
			if _, err := Compile(p.name+".wgsl", p.src, Options{}); err == nil {
				t.Errorf("limit %d: %s compiled; want %q", limit, p.name, p.want)
			}
		}
	}
}
