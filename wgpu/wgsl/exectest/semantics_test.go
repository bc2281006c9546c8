package exectest

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// An ecase is one expression checked against Go like a bcase, but written
// as a template over its arguments $0, $1, ... (operators, conversions,
// nested calls). rtOnly marks a case whose const form is a
// shader-creation error, so it runs only at run time.
type ecase struct {
	expr   string
	args   []barg
	outs   []string
	want   []uint32
	rtOnly bool // const form would be a shader-creation error
}

// runExprs runs every case at run time and, unless rtOnly, as a const
// declaration, in one kernel. The run-time cases are grouped by template
// and argument types: one block per group, one invocation per case, so the
// kernel stays small for lavapipe however many inputs there are. pre is
// prepended to the module (enables).
func runExprs(t *testing.T, pre string, cases []ecase) {
	t.Helper()
	type group struct {
		key   string
		cases []int
	}
	var groups []*group
	byKey := map[string]*group{}
	for ci, c := range cases {
		k := c.expr
		for _, a := range c.args {
			k += "|" + a.typ
		}
		g := byKey[k]
		if g == nil {
			g = &group{key: k}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.cases = append(g.cases, ci)
	}
	var in []uint32
	var body strings.Builder
	nout := 0
	outAt := make([]int, len(cases))
	maxN := 0
	for _, g := range groups {
		c0 := cases[g.cases[0]]
		stride := 0
		for _, a := range c0.args {
			stride += len(a.bits)
		}
		base := len(in)
		for _, ci := range g.cases {
			for _, a := range cases[ci].args {
				in = append(in, a.bits...)
			}
		}
		ob := nout
		for k, ci := range g.cases {
			outAt[ci] = ob + k*len(c0.outs)
		}
		nout += len(g.cases) * len(c0.outs)
		maxN = max(maxN, len(g.cases))
		e := c0.expr
		off := 0
		offs := make([]int, len(c0.args))
		for k, a := range c0.args {
			offs[k] = off
			off += len(a.bits)
		}
		for k := len(c0.args) - 1; k >= 0; k-- {
			a := c0.args[k]
			parts := make([]string, len(a.bits))
			for j := range a.bits {
				parts[j] = fmt.Sprintf("bitcast<%s>(in[%d + i * %du + %du])", a.elem(), base, stride, offs[k]+j)
			}
			x := parts[0]
			if len(parts) > 1 {
				x = a.typ + "(" + strings.Join(parts, ", ") + ")"
			}
			e = strings.ReplaceAll(e, fmt.Sprintf("$%d", k), x)
		}
		fmt.Fprintf(&body, "\tif i < %du {\n\t\tlet r = %s;\n", len(g.cases), e)
		for j, o := range c0.outs {
			fmt.Fprintf(&body, "\t\to[%du + i * %du + %du] = bitcast<u32>(%s);\n", ob, len(c0.outs), j, o)
		}
		body.WriteString("\t}\n")
	}
	constAt := make([]int, len(cases))
	body.WriteString("\tif i == 0u {\n")
	for ci, c := range cases {
		constAt[ci] = -1
		if c.rtOnly {
			continue
		}
		e := c.expr
		for k := len(c.args) - 1; k >= 0; k-- {
			e = strings.ReplaceAll(e, fmt.Sprintf("$%d", k), c.args[k].expr(false, 0))
		}
		fmt.Fprintf(&body, "\t{\n\t\tconst r = %s;\n", e)
		constAt[ci] = nout
		for j, o := range c.outs {
			fmt.Fprintf(&body, "\t\to[%d] = bitcast<u32>(%s);\n", nout+j, o)
		}
		body.WriteString("\t}\n")
		nout += len(c.outs)
	}
	body.WriteString("\t}\n")
	src := pre + "@group(0) @binding(0) var<storage, read> in: array<u32>;\n" +
		"@group(0) @binding(1) var<storage, read_write> o: array<u32>;\n" +
		"@compute @workgroup_size(64)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n\tlet i = gid.x;\n" + body.String() + "}\n"
	validate(t, src)
	var features []wgpu.FeatureName
	if strings.Contains(pre, "enable f16;") {
		features = append(features, "shader-f16")
	}
	d := newDevice(t, features...)
	out := getU32(d.run(t, src, nil, nil, [3]uint32{uint32(maxN+63) / 64, 1, 1}, u32s(append(in, 0)...), make([]byte, 4*nout))[1])
	for _, how := range []string{"runtime", "const"} {
		for ci, c := range cases {
			k := outAt[ci]
			if how == "const" {
				k = constAt[ci]
			}
			if k < 0 {
				continue
			}
			for j, w := range c.want {
				if out[k+j] != w {
					e := c.expr
					for a := len(c.args) - 1; a >= 0; a-- {
						e = strings.ReplaceAll(e, fmt.Sprintf("$%d", a), c.args[a].expr(false, 0))
					}
					t.Errorf("%s %s %s = %#x, want %#x", how, e, c.outs[j], out[k+j], w)
				}
			}
		}
	}
}

// TestFloatToIntConversion: a float converts to the integer nearest its
// truncation that the float type also represents (WGSL "scalar floating
// point to integral conversion"): above the range that is 2147483520 for
// f32 to i32 and 4294967040 for f32 to u32, not the integer maxima.
func TestFloatToIntConversion(t *testing.T) {
	xs := []float32{0, 0.5, -0.5, 3.9, -3.9, 1e20, -1e20, 2147483520, 2147483648, 4294967040, 4294967296, -2147483648, -3e9, 123456.7}
	var cs []ecase
	r1 := comps(1)
	for _, x := range xs {
		cs = append(cs,
			ecase{"i32($0)", []barg{f(x)}, r1, []uint32{uint32(goF32ToI32(x))}, false},
			ecase{"u32($0)", []barg{f(x)}, r1, []uint32{goF32ToU32(x)}, false},
			ecase{"vec2<i32>(vec2($0, -$0))", []barg{f(x)}, comps(2), []uint32{uint32(goF32ToI32(x)), uint32(goF32ToI32(-x))}, false},
			ecase{"vec3<u32>(vec3($0, -$0, 1.0))", []barg{f(x)}, comps(3), []uint32{goF32ToU32(x), goF32ToU32(-x), 1}, false},
		)
	}
	runExprs(t, "", cs)
}

func goF32ToI32(x float32) int32 {
	return int32(math.Max(math.Min(math.Trunc(float64(x)), 2147483520), math.MinInt32))
}

func goF32ToU32(x float32) uint32 {
	return uint32(math.Max(math.Min(math.Trunc(float64(x)), 4294967040), 0))
}

// h2 packs two f16 values as vec2<f16> bits.
func h2(a, b float32) uint32 { return uint32(toF16(a)) | uint32(toF16(b))<<16 }

// TestF16Semantics: f16 conversions, arithmetic and bitcasts between f16
// vectors and 32-bit types, at run time and folded as constants (the
// bitcasts through f16 were no const-expressions), against Go.
func TestF16Semantics(t *testing.T) {
	var cs []ecase
	r1 := comps(1)
	for _, x := range []float32{0, 1, -2.5, 0.1, 65504, -65504, 6.1035156e-05, 5.9604645e-08, 1000.5, 2049, 0.33325195} {
		hx := fromF16(toF16(x))
		cs = append(cs,
			ecase{"bitcast<u32>(vec2<f16>(f16($0), -f16($0)))", []barg{f(hx)}, r1, []uint32{h2(hx, -hx)}, false},
			ecase{"bitcast<u32>(vec2(f16($0) * 2.0h, f16($0) / 4.0h))", []barg{f(hx)}, r1, []uint32{h2(2*hx, hx/4)}, math.Abs(float64(hx)) > 32000},
			ecase{"f32(bitcast<vec2<f16>>($0).y)", []barg{u(h2(1, hx))}, r1, []uint32{math.Float32bits(hx)}, false},
			ecase{"i32(f16($0))", []barg{f(hx)}, r1, []uint32{uint32(int32(hx))}, false},
			ecase{"u32(f16($0))", []barg{f(hx)}, r1, []uint32{uint32(max(0, int64(hx)))}, false},
			ecase{"bitcast<u32>(vec2(f16($0), f16(i32($0))))", []barg{f(hx)}, r1, []uint32{h2(hx, float32(int32(hx)))}, false},
			ecase{"bitcast<u32>(vec2(round(f16($0)), fract(f16($0))))", []barg{f(hx)}, r1, []uint32{h2(float32(math.RoundToEven(float64(hx))), hx-float32(math.Floor(float64(hx))))}, false},
			ecase{"bitcast<u32>(vec2(abs(f16($0)), sign(f16($0))))", []barg{f(hx)}, r1, []uint32{h2(float32(math.Abs(float64(hx))), signOf(hx))}, false},
		)
	}
	runExprs(t, "enable f16;\n", cs)
}

func signOf(x float32) float32 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}
