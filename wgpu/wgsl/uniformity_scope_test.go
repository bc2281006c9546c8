package wgsl

// The subgroup uniformity scope (uniformity.go): subgroup and quad
// operations need control flow uniform within each subgroup, where
// subgroup_id is uniform (and num_subgroups, subgroup_size as everywhere),
// subgroup reductions are as uniform as their arguments, and
// subgroupShuffleUp, Down and Xor need a subgroup-uniform amount. Barriers
// keep the workgroup scope. The init below adds the programs to the shared
// corpora, so TestTintOracle checks them against Tint too.

// sgEnt is an entry point of 64 invocations with the subgroup builtins sid
// (subgroup_id), ns (num_subgroups) and si (subgroup_invocation_id), li
// (local_invocation_index) and a read_write buffer o.
func sgEnt(decls, body string) string {
	return "enable subgroups;\n@group(0) @binding(0) var<storage, read_write> o: array<f32>;\n" + decls +
		"\n@compute @workgroup_size(64)\nfn main(@builtin(subgroup_id) sid: u32, @builtin(num_subgroups) ns: u32, " +
		"@builtin(subgroup_invocation_id) si: u32, @builtin(local_invocation_index) li: u32) {\n" + body + "\n}\n"
}

var subgroupScopeValid = []struct{ name, src string }{
	{"subgroup_id_guards_subgroup_op", sgEnt("", "if (sid == 0u) { o[0] = subgroupAdd(1.0); }")},
	{"subgroup_id_flows", sgEnt("fn f(a: u32) { if (a == 0u) { o[0] = subgroupAdd(1.0); } }\nfn id(a: u32) -> u32 { return a; }",
		"var k = sid; f(k); if (id(sid) == 1u) { return; }\nfor (var i = 0u; i < sid; i++) { o[1] = subgroupExclusiveMul(2.0); }\no[2] = quadSwapX(1.0);")},
	{"num_subgroups_guards_barrier", sgEnt("", "if (ns > 1u) { workgroupBarrier(); o[0] = subgroupMax(o[li]); }")},
	{"subgroup_reduction_uniform_args", sgEnt("", "if (subgroupAdd(1u) > 1u && subgroupBallot(true).x != 0u && subgroupBroadcast(sid, 0u) == sid) { o[0] = subgroupMin(2.0); }")},
	{"subgroup_shuffle_uniform_amount", sgEnt("fn up(d: u32) -> f32 { return subgroupShuffleUp(o[0], d); }",
		"o[li] = subgroupShuffleDown(o[li], ns) + subgroupShuffleXor(o[li], sid) + up(2u) + subgroupShuffle(o[li], si);")},
	{"subgroup_const_lanes_127", sgEnt("", "o[li] = subgroupShuffle(o[li], 127u) + subgroupShuffleXor(o[li], 127) + subgroupShuffle(o[li], 127i) + subgroupBroadcast(o[li], 127u) + subgroupShuffleUp(o[li], 0u);")},
	{"subgroup_reduction_of_subgroup_id", sgEnt("", "let first = subgroupBroadcastFirst(sid + 1u); if (first > 1u) { o[li] = subgroupAdd(o[li]); }")},
	{"subgroup_flow_reassigned", sgEnt("", "var x = si; x = sid; if (x == 0u) { o[0] = subgroupAdd(1.0); }")},
	{"subgroup_flow_through_let", sgEnt("fn put(p: ptr<function, u32>, v: u32) { *p = v; }", "var x = si; let p = &x; *p = sid; var y = li; put(&y, ns); if (x == y) { o[0] = subgroupAdd(1.0); }")},
}

var subgroupScopeInvalid = []struct{ name, src, want string }{
	{"subgroup_id_guards_barrier", sgEnt("", "if (sid == 0u) { workgroupBarrier(); }"), "6:18: 'workgroupBarrier' must only be called from uniform control flow"},
	{"subgroup_id_guards_uniform_load", sgEnt("var<workgroup> w: u32;", "if (sid == 0u) { o[0] = f32(workgroupUniformLoad(&w)); }"),
		"6:29: 'workgroupUniformLoad' must only be called from uniform control flow"},
	{"subgroup_invocation_guards_op", sgEnt("", "if (si == 0u) { o[0] = subgroupAdd(1.0); }"), "6:24: 'subgroupAdd' must only be called from subgroup uniform control flow"},
	{"subgroup_scan_not_uniform", sgEnt("", "if (subgroupExclusiveAdd(1.0) > 0.0) { o[0] = subgroupAdd(1.0); }"), "6:47: 'subgroupAdd' must only be called from subgroup"},
	{"subgroup_reduction_nonuniform_arg", sgEnt("", "if (subgroupMin(li) == 0u) { o[0] = subgroupAdd(1.0); }"), "6:37: 'subgroupAdd' must only be called from subgroup"},
	{"subgroup_reduction_guards_barrier", sgEnt("", "if (subgroupAdd(1u) > 0u) { workgroupBarrier(); }"), "6:29: 'workgroupBarrier' must only be called from uniform"},
	{"subgroup_shuffle_up_nonuniform", sgEnt("", "o[0] = subgroupShuffleUp(1.0, li);"), "6:31: this argument of 'subgroupShuffleUp' must be subgroup uniform"},
	{"subgroup_shuffle_xor_nonuniform", sgEnt("", "o[0] = subgroupShuffleXor(1.0, u32(o[1]));"), "6:32: this argument of 'subgroupShuffleXor' must be subgroup uniform"},
	{"subgroup_shuffle_param_nonuniform", sgEnt("fn down(d: u32) -> f32 { return subgroupShuffleDown(o[0], d); }", "o[0] = down(si);"),
		"6:13: this argument must be subgroup uniform"},
	{"subgroup_shuffle_const_lane_128", sgEnt("", "o[li] = subgroupShuffle(o[li], 128u);"), "6:32: the lane argument of 'subgroupShuffle' is 128, not in [0, 128)"},
	{"subgroup_shuffle_xor_const_mask", sgEnt("", "o[li] = subgroupShuffleXor(o[li], 200u);"), "6:35: the lane argument of 'subgroupShuffleXor' is 200"},
	{"subgroup_shuffle_down_const_delta", sgEnt("", "o[li] = subgroupShuffleDown(o[li], 128);"), "6:36: the lane argument of 'subgroupShuffleDown' is 128"},
	{"subgroup_shuffle_xor_i32_mask", sgEnt("", "o[li] = subgroupShuffleXor(o[li], 1i);"), "6:35: cannot use a value of type 'i32' as 'u32'"},
	{"subgroup_broadcast_lane_negative", sgEnt("", "o[li] = subgroupBroadcast(o[li], -1i);"), "6:34: the lane argument of 'subgroupBroadcast' is -1"},
	{"subgroup_shuffle_bool", sgEnt("", "o[li] = f32(subgroupShuffle(li > 1u, 1u));"), "6:13: 'subgroupShuffle' needs a numeric scalar or vector, got 'bool'"},
	{"subgroup_broadcast_first_bool_vec", sgEnt("", "o[li] = f32(subgroupBroadcastFirst(vec2(li > 1u)).x);"), "6:13: 'subgroupBroadcastFirst' needs a numeric scalar or vector, got 'vec2<bool>'"},
	{"subgroup_callee_under_nonuniform", sgEnt("fn g() { o[0] = subgroupAdd(1.0); }", "if (li == 0u) { g(); }"), "6:17: 'g' calls a subgroup operation"},
	{"subgroup_store_through_let", sgEnt("", "var x = sid; let p = &x; *p = si; if (x == 0u) { o[0] = subgroupAdd(1.0); }"), "6:57: 'subgroupAdd' must only be called from subgroup uniform control flow"},
	{"subgroup_store_through_call", sgEnt("fn put(p: ptr<function, u32>, v: u32) { *p = v; }", "var x = sid; let p = &x; put(p, si); if (x == 0u) { o[0] = subgroupAdd(1.0); }"), "6:60: 'subgroupAdd' must only be called from subgroup uniform control flow"},
}

func init() {
	validPrograms = append(validPrograms, subgroupScopeValid...)
	invalidPrograms = append(invalidPrograms, subgroupScopeInvalid...)
}
