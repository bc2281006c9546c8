package exectest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// A bcase is one builtin call checked three ways against Go: computed at run
// time from a buffer, const-evaluated by the compiler from literals, and
// the Go value want. Arguments are given as bit patterns; outs are the
// result's components (accessors on r) written out as u32 bits.
type bcase struct {
	fn   string
	args []barg
	outs []string
	want []uint32
}

type barg struct {
	typ  string // i32, u32, f32, vecN<i32|u32|f32>
	bits []uint32
}

func u(v ...uint32) barg { return barg{vecOf("u32", len(v)), v} }
func i(v ...int32) barg {
	b := make([]uint32, len(v))
	for k, x := range v {
		b[k] = uint32(x)
	}
	return barg{vecOf("i32", len(v)), b}
}
func f(v ...float32) barg {
	b := make([]uint32, len(v))
	for k, x := range v {
		b[k] = math.Float32bits(x)
	}
	return barg{vecOf("f32", len(v)), b}
}

func vecOf(s string, n int) string {
	if n == 1 {
		return s
	}
	return fmt.Sprintf("vec%d<%s>", n, s)
}

// components: "r" for a scalar result, r.x, r.y, ... for vectors.
func comps(n int) []string {
	if n == 1 {
		return []string{"r"}
	}
	return []string{"r.x", "r.y", "r.z", "r.w"}[:n]
}

func (a barg) elem() string {
	if strings.HasPrefix(a.typ, "vec") {
		return a.typ[5:8]
	}
	return a.typ
}

// expr spells the argument from buffer words (runtime) or as a literal.
func (a barg) expr(runtime bool, base int) string {
	parts := make([]string, len(a.bits))
	for k, b := range a.bits {
		if runtime {
			parts[k] = fmt.Sprintf("bitcast<%s>(in[%d])", a.elem(), base+k)
		} else {
			parts[k] = fmt.Sprintf("bitcast<%s>(0x%xu)", a.elem(), b)
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return a.typ + "(" + strings.Join(parts, ", ") + ")"
}

// runCases runs every case at run time and as a constant in one kernel.
func runCases(t *testing.T, cases []bcase) {
	t.Helper()
	var in []uint32
	var body strings.Builder
	nout := 0
	for _, runtime := range []bool{true, false} {
		for ci, c := range cases {
			if !runtime && !constValid(c) {
				continue
			}
			var as []string
			for _, a := range c.args {
				as = append(as, a.expr(runtime, len(in)))
				if runtime {
					in = append(in, a.bits...)
				}
			}
			fmt.Fprintf(&body, "\t{ // case %d\n\t\tlet r = %s(%s);\n", ci, c.fn, strings.Join(as, ", "))
			for k, o := range c.outs {
				fmt.Fprintf(&body, "\t\to[%d] = bitcast<u32>(%s);\n", nout+k, o)
			}
			body.WriteString("\t}\n")
			nout += len(c.outs)
		}
	}
	src := "@group(0) @binding(0) var<storage, read> in: array<u32>;\n" +
		"@group(0) @binding(1) var<storage, read_write> o: array<u32>;\n" +
		"@compute @workgroup_size(1)\nfn main() {\n" + body.String() + "}\n"
	validate(t, src)
	d := newDevice(t)
	out := getU32(d.run(t, src, nil, nil, one, u32s(append(in, 0)...), make([]byte, 4*nout))[1])
	k := 0
	for _, how := range []string{"runtime", "const"} {
		for _, c := range cases {
			if how == "const" && !constValid(c) {
				continue
			}
			for j, w := range c.want {
				if out[k+j] != w {
					var as []string
					for _, a := range c.args {
						as = append(as, a.expr(false, 0))
					}
					t.Errorf("%s %s(%s)%s = %#x, want %#x", how, c.fn, strings.Join(as, ", "), c.outs[j], out[k+j], w)
				}
			}
			k += len(c.outs)
		}
	}
}

// constValid reports whether the case is a valid const-expression: a
// constant offset + count past bit 31 of extractBits or insertBits is a
// shader-creation error, so those ranges run only at run time.
func constValid(c bcase) bool {
	n := map[string]int{"extractBits": 1, "insertBits": 2}[c.fn]
	if n == 0 {
		return true
	}
	return uint64(c.args[n].bits[0])+uint64(c.args[n+1].bits[0]) <= 32
}

// validate compiles src and checks the SPIR-V with spirv-val when installed.
func validate(t *testing.T, src string) {
	t.Helper()
	m, err := wgsl.Compile(t.Name()+".wgsl", src, wgsl.Options{})
	if err != nil {
		if l, ok := err.(wgsl.ErrorList); ok {
			t.Fatal(l.Pretty())
		}
		t.Fatal(err)
	}
	validateWords(t, m.SPIRV)
}

// validateWords checks a module with spirv-val when installed.
func validateWords(t *testing.T, words []uint32) {
	t.Helper()
	path := prereq.Tool(t, "spirv-val", "spirv-tools")
	buf := make([]byte, 4*len(words))
	for k, w := range words {
		binary.LittleEndian.PutUint32(buf[4*k:], w)
	}
	file := filepath.Join(t.TempDir(), "m.spv")
	if err := os.WriteFile(file, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(path, "--target-env", "vulkan1.1", file).CombinedOutput(); err != nil {
		t.Fatalf("spirv-val: %v\n%s", err, out)
	}
}

var bitEdges = []uint32{0, 1, 0xffffffff, 0x80000000, 0x7fffffff, 0x00f0f000, 0x12345678, 0xffff0000, 0x80000001, 0x100}

// Go references, from the WGSL specification's definitions.
func goFirstLeadingBit(x uint32, signed bool) uint32 {
	if signed && int32(x) < 0 {
		x = ^x
	}
	if x == 0 {
		return math.MaxUint32
	}
	return uint32(31 - bits.LeadingZeros32(x))
}

func goFirstTrailingBit(x uint32) uint32 {
	if x == 0 {
		return math.MaxUint32
	}
	return uint32(bits.TrailingZeros32(x))
}

func goExtractBits(x, off, cnt uint32, signed bool) uint32 {
	o := min(off, 32)
	c := min(cnt, 32-o)
	var r uint32
	for b := uint32(0); b < c; b++ {
		r |= (x >> (o + b) & 1) << b
	}
	if signed && c > 0 && r>>(c-1)&1 == 1 {
		for b := c; b < 32; b++ {
			r |= 1 << b
		}
	}
	return r
}

func goInsertBits(x, nb, off, cnt uint32) uint32 {
	o := min(off, 32)
	c := min(cnt, 32-o)
	for b := uint32(0); b < c; b++ {
		x = x&^(1<<(o+b)) | (nb>>b&1)<<(o+b)
	}
	return x
}

func TestIntegerBitBuiltins(t *testing.T) {
	var cases []bcase
	one1 := comps(1)
	for _, x := range bitEdges {
		cases = append(cases,
			bcase{"countLeadingZeros", []barg{u(x)}, one1, []uint32{uint32(bits.LeadingZeros32(x))}},
			bcase{"countTrailingZeros", []barg{u(x)}, one1, []uint32{uint32(bits.TrailingZeros32(x))}},
			bcase{"countLeadingZeros", []barg{i(int32(x))}, one1, []uint32{uint32(bits.LeadingZeros32(x))}},
			bcase{"countTrailingZeros", []barg{i(int32(x), int32(^x))}, comps(2), []uint32{uint32(bits.TrailingZeros32(x)), uint32(bits.TrailingZeros32(^x))}},
			bcase{"firstLeadingBit", []barg{u(x)}, one1, []uint32{goFirstLeadingBit(x, false)}},
			bcase{"firstLeadingBit", []barg{i(int32(x))}, one1, []uint32{goFirstLeadingBit(x, true)}},
			bcase{"firstTrailingBit", []barg{u(x)}, one1, []uint32{goFirstTrailingBit(x)}},
			bcase{"firstTrailingBit", []barg{i(int32(x), 0, -1)}, comps(3), []uint32{goFirstTrailingBit(x), math.MaxUint32, 0}},
			bcase{"countOneBits", []barg{u(x)}, one1, []uint32{uint32(bits.OnesCount32(x))}},
			bcase{"reverseBits", []barg{i(int32(x))}, one1, []uint32{bits.Reverse32(x)}},
		)
	}
	ranges := [][2]uint32{{0, 0}, {0, 32}, {4, 8}, {28, 8}, {31, 1}, {40, 4}, {8, 40}, {0, 31}, {16, 16}, {1, 0xffffffff}}
	for _, x := range []uint32{0x12345678, 0x80000000, 0xffffffff, 0x0ff00ff0} {
		for _, r := range ranges {
			nb := bits.RotateLeft32(x, 7) ^ 0xa5a5a5a5
			cases = append(cases,
				bcase{"extractBits", []barg{u(x), u(r[0]), u(r[1])}, one1, []uint32{goExtractBits(x, r[0], r[1], false)}},
				bcase{"extractBits", []barg{i(int32(x), int32(nb)), u(r[0]), u(r[1])}, comps(2),
					[]uint32{goExtractBits(x, r[0], r[1], true), goExtractBits(nb, r[0], r[1], true)}},
				bcase{"insertBits", []barg{u(x), u(nb), u(r[0]), u(r[1])}, one1, []uint32{goInsertBits(x, nb, r[0], r[1])}},
				bcase{"insertBits", []barg{i(int32(x), 7), i(int32(nb), -1), u(r[0]), u(r[1])}, comps(2),
					[]uint32{goInsertBits(x, nb, r[0], r[1]), goInsertBits(7, 0xffffffff, r[0], r[1])}},
			)
		}
	}
	runCases(t, cases)
}

func goPackNorm(xs []float32, bitsPer int, norm float64, signed bool) uint32 {
	var r uint32
	lo := 0.0
	if signed {
		lo = -1
	}
	for k, x := range xs {
		c := float32(math.Min(1, math.Max(lo, float64(x)))) // f32 arithmetic, as the spec's f32 overload
		v := int32(math.Floor(float64(0.5 + float32(norm)*c)))
		r |= uint32(v) & (1<<bitsPer - 1) << (k * bitsPer)
	}
	return r
}

func goUnpackNorm(x uint32, n, bitsPer int, norm float64, signed bool) []uint32 {
	out := make([]uint32, n)
	for k := range out {
		b := x >> (k * bitsPer) & (1<<bitsPer - 1)
		v := float64(b) / norm
		if signed {
			v = math.Max(float64(int32(b<<(32-bitsPer))>>(32-bitsPer))/norm, -1)
		}
		out[k] = math.Float32bits(float32(v))
	}
	return out
}

func goPackBytes(xs []int64, signed, clamp bool) uint32 {
	var r uint32
	for k, v := range xs {
		if clamp && signed {
			v = min(max(v, -128), 127)
		} else if clamp {
			v = min(v, 255)
		}
		r |= uint32(v) & 0xff << (8 * k)
	}
	return r
}

func goDotBytes(a, b uint32, signed bool) uint32 {
	var s int32
	for k := 0; k < 32; k += 8 {
		x, y := a>>k&0xff, b>>k&0xff
		if signed {
			s += int32(int8(x)) * int32(int8(y))
		} else {
			s += int32(x * y)
		}
	}
	return uint32(s)
}

func TestPackingBuiltins(t *testing.T) {
	var cases []bcase
	// 0.3 * 255 is a tie in f32 (76.5): the spec's floor(0.5 + x) gives 77.
	fv := [][]float32{{0, 1, -1, 0.3}, {2, -2, 0.7, -0.2}, {0.01, -0.99, 0.49, 0.123}}
	norms := []struct {
		name   string
		n, b   int
		norm   float64
		signed bool
	}{{"4x8snorm", 4, 8, 127, true}, {"4x8unorm", 4, 8, 255, false}, {"2x16snorm", 2, 16, 32767, true}, {"2x16unorm", 2, 16, 65535, false}}
	for _, p := range norms {
		for _, v := range fv {
			cases = append(cases, bcase{"pack" + p.name, []barg{f(v[:p.n]...)}, comps(1), []uint32{goPackNorm(v[:p.n], p.b, p.norm, p.signed)}})
		}
		for _, x := range []uint32{0, 0xffffffff, 0x80808080, 0x7f017f01, 0x12345678} {
			cases = append(cases, bcase{"unpack" + p.name, []barg{u(x)}, comps(p.n), goUnpackNorm(x, p.n, p.b, p.norm, p.signed)})
		}
	}
	cases = append(cases,
		bcase{"pack2x16float", []barg{f(1.5, -0.25)}, comps(1), []uint32{0xb4003e00}},
		bcase{"unpack2x16float", []barg{u(0xb4003e00)}, comps(2), []uint32{math.Float32bits(1.5), math.Float32bits(-0.25)}})
	iv := [][]int64{{0, -1, 127, -128}, {300, -300, 5, -5}, {1, 2, 3, 4}}
	uv := [][]int64{{0, 255, 256, 1000}, {1, 2, 3, 0xffffffff}}
	for _, clamp := range []bool{false, true} {
		sfx := map[bool]string{false: "", true: "Clamp"}[clamp]
		for _, v := range iv {
			cases = append(cases, bcase{"pack4xI8" + sfx, []barg{i(int32(v[0]), int32(v[1]), int32(v[2]), int32(v[3]))}, comps(1), []uint32{goPackBytes(v, true, clamp)}})
		}
		for _, v := range uv {
			cases = append(cases, bcase{"pack4xU8" + sfx, []barg{u(uint32(v[0]), uint32(v[1]), uint32(v[2]), uint32(v[3]))}, comps(1), []uint32{goPackBytes(v, false, clamp)}})
		}
	}
	packed := []uint32{0, 0xffffffff, 0x80808080, 0x7f017f01, 0x12345678, 0xff80017f}
	for _, x := range packed {
		var si, ui []uint32
		for k := 0; k < 32; k += 8 {
			si = append(si, uint32(int32(int8(x>>k))))
			ui = append(ui, x>>k&0xff)
		}
		cases = append(cases, bcase{"unpack4xI8", []barg{u(x)}, comps(4), si}, bcase{"unpack4xU8", []barg{u(x)}, comps(4), ui})
		for _, y := range packed {
			cases = append(cases, bcase{"dot4I8Packed", []barg{u(x), u(y)}, comps(1), []uint32{goDotBytes(x, y, true)}},
				bcase{"dot4U8Packed", []barg{u(x), u(y)}, comps(1), []uint32{goDotBytes(x, y, false)}})
		}
	}
	runCases(t, cases)
}

func fb(x float64) uint32 { return math.Float32bits(float32(x)) }

func TestFloatSplitBuiltins(t *testing.T) {
	var cases []bcase
	for _, c := range []struct {
		x float32
		e int32
	}{{1.5, 3}, {-0.75, -2}, {0, 10}, {3, 100}, {1, -126}, {-1.25, 0}} {
		cases = append(cases, bcase{"ldexp", []barg{f(c.x, -c.x), i(c.e, 1)}, comps(2), []uint32{fb(math.Ldexp(float64(c.x), int(c.e))), fb(math.Ldexp(-float64(c.x), 1))}})
	}
	for _, x := range []float32{1, -3.5, 0.1, 1024, 0, 7.75e-5, -1e30} {
		fr, ex := math.Frexp(float64(x))
		w, fp := math.Modf(float64(x))
		cases = append(cases,
			bcase{"frexp", []barg{f(x)}, []string{"r.fract", "r.exp"}, []uint32{fb(fr), uint32(int32(ex))}},
			bcase{"frexp", []barg{f(x, 2)}, []string{"r.fract.x", "r.exp.x", "r.exp.y"}, []uint32{fb(fr), uint32(int32(ex)), 2}},
			bcase{"modf", []barg{f(x)}, []string{"r.fract", "r.whole"}, []uint32{fb(fp), fb(w)}},
			bcase{"modf", []barg{f(-2.25, x)}, []string{"r.fract.x", "r.whole.x", "r.whole.y"}, []uint32{fb(-0.25), fb(-2), fb(w)}})
	}
	for _, x := range []float32{1.0 / 3, 65504, 1e-3, -2.5, 0, 1.00048828125, 6.1035156e-05} {
		q := fromF16(toF16(x))
		cases = append(cases, bcase{"quantizeToF16", []barg{f(x, -x)}, comps(2), []uint32{math.Float32bits(q), math.Float32bits(-q)}})
	}
	runCases(t, cases)
}
