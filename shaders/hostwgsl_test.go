package shaders

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// wgslValues evaluates WGSL expressions exprs (of consts and overrides, at
// their defaults) in the text of kernel (its includes spliced in, f32
// weights) as the compiler does: what the host must agree with.
func wgslValues(t *testing.T, kernel string, exprs ...string) map[string]float64 {
	t.Helper()
	src, err := Source(kernel, false)
	if err != nil {
		t.Fatal(err)
	}
	return probeValues(t, kernel, src, exprs...)
}

// probeValues is wgslValues for a WGSL text: each expression (plus one)
// becomes the workgroup size of an entry point of its own, which a pipeline without
// constants gets with the overrides' defaults applied (Module.Specialize).
func probeValues(t *testing.T, name, src string, exprs ...string) map[string]float64 {
	t.Helper()
	var b strings.Builder
	b.WriteString(src)
	for i, e := range exprs {
		fmt.Fprintf(&b, "\n@compute @workgroup_size(1u + u32(%s)) fn probe_%d() {}", e, i) // 1 + : a size is at least 1
	}
	b.WriteByte('\n')
	m, err := wgsl.Compile(name, b.String(), wgsl.Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out := map[string]float64{}
	for i, e := range exprs {
		sp, err := m.Specialize(fmt.Sprintf("probe_%d", i), nil)
		if err != nil {
			t.Fatalf("%s: %s: %v", name, e, err)
		}
		out[e] = float64(sp.WorkgroupSize[0]) - 1
	}
	return out
}

// TestEpiloguesMatchWGSL checks that every Go epilogue has the WGSL constant
// EPI_<its name> of its value in include/matmul_epilogue.wgsl, and every
// EPI_ constant there a Go epilogue: the host sets EPI by the Go constant,
// the kernels test it by the WGSL name.
func TestEpiloguesMatchWGSL(t *testing.T) {
	const file = "include/matmul_epilogue.wgsl"
	text, err := sources.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// A module around the include: what it asks of the kernels that include it.
	src := string(text) + `
override EPI: u32 = 0;
struct Params { M: u32, N: u32 }
var<push_constant> p: Params;
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
fn storeKV(m: u32, n: u32, v: f32) {}
@compute @workgroup_size(1) fn main() { store(0u, 0u, vec4<f32>(0.0), vec4<f32>(0.0)); }
`
	var exprs []string
	for e := range epilogueNames {
		exprs = append(exprs, "EPI_"+e.String())
	}
	got := probeValues(t, file, src, exprs...)
	for e := range epilogueNames {
		if v := got["EPI_"+e.String()]; v != float64(e) {
			t.Errorf("%s: EPI_%s = %v, Go's %s = %d", file, e, v, e, uint32(e))
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^const EPI_(\w+)`).FindAllStringSubmatch(string(text), -1) {
		found := false
		for e := range epilogueNames {
			found = found || e.String() == m[1]
		}
		if !found {
			t.Errorf("%s: EPI_%s has no Go epilogue", file, m[1])
		}
	}
	if s := epilogue(9).String(); s != "epilogue(9)" {
		t.Errorf("epilogue(9).String() = %q", s)
	}
}

// TestHostConstantsMatchWGSL checks every number the host keeps of a kernel
// (array bounds it must respect, the defaults of overrides it relies on)
// against the kernel's WGSL, as the compiler evaluates it.
func TestHostConstantsMatchWGSL(t *testing.T) {
	cases := []struct {
		kernel, expr string
		host         int
		why          string
	}{
		{"topk_logits.wgsl", "KMAX", MaxTopLogprobs, "MaxTopLogprobs"},
		{"topk_logits_shared.wgsl", "KMAX", MaxTopLogprobs, "MaxTopLogprobs"},
		{"topk_logits_shared.wgsl", "WG", sharedTopWG, "sharedTopWG (topSlice's loop budget)"},
		{"layernorm_subgroup.wgsl", "MAXE", lnSubgroupValues, "lnSubgroupValues"},
		{"rmsnorm_subgroup.wgsl", "MAXE", lnSubgroupValues, "lnSubgroupValues"},
		{"layernorm_rows.wgsl", "MAXV", lnRowVec4s, "lnRowVec4s"}, // include/row_subgroup.wgsl's
		{"rmsnorm_rows.wgsl", "MAXV", lnRowVec4s, "lnRowVec4s"},
		{"lmhead_loss.wgsl", "VT", maxVocabTile, "maxVocabTile"},
		{"lmhead_loss_shared.wgsl", "VT", sharedVocabTile, "sharedVocabTile"},
		{"lmhead_loss_shared.wgsl", "NT", sharedSliceTiles, "sharedSliceTiles"},
		{"lmhead_loss_shared.wgsl", "BM", sharedLMHeadRows, "sharedLMHeadRows"},
		{"attention.wgsl", "4u * MAXHD4", maxHeadDim, "maxHeadDim"},
		{"attention_shared.wgsl", "4u * MAXHD4", maxHeadDim, "maxHeadDim"},
		{"attention_shared.wgsl", "BQ", defaultAttnTiles.BQ, "defaultAttnTiles.BQ"},
		{"attention_shared.wgsl", "BKV", defaultAttnTiles.BKV, "defaultAttnTiles.BKV"},
		{"attention_shared.wgsl", "MAXBKV", max(defaultAttnTiles.BKV, softwareAttnTiles.BKV), "the largest BKV the host sets"},
		{"attention_shared_subgroup.wgsl", "4u * MAXHD4", maxHeadDim, "maxHeadDim"}, // include/attention_shared.wgsl's
		{"attention_shared.wgsl", "QS", defaultAttnTiles.QS, "defaultAttnTiles.QS"},
		{"matmul_shared.wgsl", "BM", defaultMatmulTiles.BM, "defaultMatmulTiles.BM"},
		{"matmul_shared.wgsl", "BN", defaultMatmulTiles.BN, "defaultMatmulTiles.BN"},
		{"matmul_shared.wgsl", "BK", defaultMatmulTiles.BK, "defaultMatmulTiles.BK"},
		{"matmul_shared.wgsl", "TM", defaultMatmulTiles.TM, "defaultMatmulTiles.TM"},
		{"matmul_shared.wgsl", "TN", defaultMatmulTiles.TN, "defaultMatmulTiles.TN"},
		{"matmul_shared.wgsl", "WG", defaultMatmulTiles.invocations(), "matmulTiles.invocations"},
		{"matmul_shared.wgsl", "XS", defaultMatmulTiles.BM/4 + 1 - (defaultMatmulTiles.BM/4)%2, "matmulTiles.sharedBytes's XS"},
	}
	for _, c := range cases {
		got := wgslValues(t, c.kernel, c.expr)[c.expr]
		if got != float64(c.host) {
			t.Errorf("%s: %s = %v, the host's %s = %d", c.kernel, c.expr, got, c.why, c.host)
		}
	}
	if 1<<sharedTopLog2WG != sharedTopWG {
		t.Errorf("sharedTopLog2WG %d is not log2(sharedTopWG %d)", sharedTopLog2WG, sharedTopWG)
	}
}

// TestExtentGroups checks the dispatch geometry made from a pipeline's
// workgroup size: enough workgroups for every item, no workgroup without
// one, spread over x and y past 65535 as kernels flatten them.
func TestExtentGroups(t *testing.T) {
	for _, c := range []struct {
		wg   uint32
		e    extent
		want [3]uint32
	}{
		{64, perInvocation(1), [3]uint32{1, 1, 1}},
		{64, perInvocation(64), [3]uint32{1, 1, 1}},
		{64, perInvocation(65), [3]uint32{2, 1, 1}},
		{256, perInvocation(1000), [3]uint32{4, 1, 1}},
		{1, perInvocation(65536), [3]uint32{65535, 2, 1}},
		{64, perInvocation(0), [3]uint32{1, 1, 1}},
		{64, perWorkgroup(70000), [3]uint32{65535, 2, 1}},
		{64, perWorkgroup(3), [3]uint32{3, 1, 1}},
		{64, perInvocation(130).withY(7), [3]uint32{3, 7, 1}},
		{128, perWorkgroup(5).withY(50), [3]uint32{5, 50, 1}},
	} {
		p := &Pipeline{WorkgroupSize: [3]uint32{c.wg, 1, 1}}
		if got := p.Groups(c.e); got != c.want {
			t.Errorf("WG %d, %+v: %v, want %v", c.wg, c.e, got, c.want)
		}
	}
}

// TestConstSet checks the comparable override sets: the same constants in
// any order are one set (one pipeline), with replaces, and Map and String
// give them back.
func TestConstSet(t *testing.T) {
	a := consts("TN", 8).with("BM", 128).with("VEC", 1).with("BK", 8)
	b, err := constsOf(map[string]float64{"VEC": 1, "BK": 8, "TN": 8, "BM": 128})
	if err != nil || a != b {
		t.Errorf("%v != %v (%v)", a, b, err)
	}
	if s := a.String(); s != "BK=8,BM=128,TN=8,VEC=1" {
		t.Errorf("String() = %q", s)
	}
	if c := a.with("VEC", 0); c == a || c.n != a.n {
		t.Errorf("with(VEC, 0) = %v", c)
	} else if v := c.Map()["VEC"]; v != 0 {
		t.Errorf("VEC = %v after with(VEC, 0)", v)
	}
	if m := a.Map(); len(m) != 4 || m["BM"] != 128 || m["BK"] != 8 {
		t.Errorf("Map() = %v", m)
	}
	if (constSet{}).Map() != nil {
		t.Error("the empty set's map is not nil")
	}
	big := map[string]float64{}
	for i := range maxConsts + 1 {
		big[fmt.Sprint("C", i)] = 1
	}
	if _, err := constsOf(big); err == nil {
		t.Errorf("%d constants: no error", len(big))
	}
}
