package shaders

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// wgslValues evaluates WGSL constant expressions exprs (names of consts or
// overrides) in the text of kernel (its includes spliced in, f32 weights) as
// the compiler does, by declaring an override initialized with each and
// reading its value from the reflection: what the host must agree with.
func wgslValues(t *testing.T, kernel string, exprs ...string) map[string]float64 {
	t.Helper()
	src, err := Source(kernel, false)
	if err != nil {
		t.Fatal(err)
	}
	return probeValues(t, kernel, src, exprs...)
}

// probeValues is wgslValues for a WGSL text.
func probeValues(t *testing.T, name, src string, exprs ...string) map[string]float64 {
	t.Helper()
	var b strings.Builder
	b.WriteString(src)
	for i, e := range exprs {
		fmt.Fprintf(&b, "\noverride probe_%d: u32 = u32(%s);", i, e)
	}
	b.WriteByte('\n')
	m, err := wgsl.Compile(name, b.String(), wgsl.Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out := map[string]float64{}
	for i, e := range exprs {
		j := slices.IndexFunc(m.Reflection.Overrides, func(o wgsl.Override) bool { return o.Name == fmt.Sprintf("probe_%d", i) })
		if j < 0 || !m.Reflection.Overrides[j].HasDefault {
			t.Fatalf("%s: %s has no value", name, e)
		}
		out[e] = m.Reflection.Overrides[j].Default
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
