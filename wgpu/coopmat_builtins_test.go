package wgpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// matrixCase is one configuration the subgroup-matrix builtins run in:
// operand and result component types (WGSL's names) and the shape.
type matrixCase struct {
	comp, res string
	m, n, k   int
}

// loweredMatrixCases are the configurations run where the device has no
// matrix units (the lowered code takes any shape): every operand type with
// the results Tint's overloads allow.
var loweredMatrixCases = []matrixCase{
	{"f16", "f32", 8, 8, 16}, {"f16", "f16", 8, 4, 8}, {"f32", "f32", 4, 8, 8},
	{"i32", "i32", 8, 4, 8}, {"u32", "u32", 4, 4, 8}, {"i32", "u32", 4, 8, 4},
	{"i8", "i32", 8, 8, 16}, {"u8", "u32", 4, 8, 16}, {"i8", "i8", 8, 4, 8}, {"u8", "u8", 8, 8, 8}, {"u8", "i32", 4, 4, 16},
}

// elemBytes is the size of a component of WGSL type c in memory.
func elemBytes(c string) int {
	switch c {
	case "f16":
		return 2
	case "i8", "u8":
		return 1
	}
	return 4
}

// narrow reports whether component type c is 8-bit (i8, u8: 4 to an array element).
func narrow(c string) bool { return c == "i8" || c == "u8" }

// shaderType is the WGSL type of the arrays holding components of type c.
func shaderType(c string) string {
	switch c {
	case "i8":
		return "i32"
	case "u8":
		return "u32"
	}
	return c
}

// wrap is x as a value of integer type c (two's complement wrapping), or x
// rounded to c for the float types (f16 results are exact in these tests).
func wrap(c string, x float64) float64 {
	switch c {
	case "i8":
		return float64(int8(int64(x)))
	case "u8":
		return float64(uint8(int64(x)))
	case "i32":
		return float64(int32(int64(x)))
	case "u32":
		return float64(uint32(int64(x)))
	case "f32":
		return float64(float32(x))
	}
	return x
}

// clampTo is scalar s clamped to the range of 8-bit component type c (the
// builtins' rule for fill values and scalars), s itself for other types.
func clampTo(c string, s float64) float64 {
	switch c {
	case "i8":
		return math.Max(-128, math.Min(127, s))
	case "u8":
		return math.Max(0, math.Min(255, s))
	}
	return s
}

// matrixMemory is a buffer's bytes holding components of type c.
type matrixMemory struct {
	c string
	b []byte
}

func (mm matrixMemory) set(i int, v float64) {
	switch mm.c {
	case "f16":
		binary.LittleEndian.PutUint16(mm.b[2*i:], f16bits(float32(v)))
	case "f32":
		binary.LittleEndian.PutUint32(mm.b[4*i:], math.Float32bits(float32(v)))
	case "i32", "u32":
		binary.LittleEndian.PutUint32(mm.b[4*i:], uint32(int64(v)))
	default:
		mm.b[i] = uint8(int64(v))
	}
}

func (mm matrixMemory) get(i int) float64 {
	switch mm.c {
	case "f16":
		return float64(f16val(binary.LittleEndian.Uint16(mm.b[2*i:])))
	case "f32":
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(mm.b[4*i:])))
	case "i32":
		return float64(int32(binary.LittleEndian.Uint32(mm.b[4*i:])))
	case "u32":
		return float64(binary.LittleEndian.Uint32(mm.b[4*i:]))
	case "i8":
		return float64(int8(mm.b[i]))
	}
	return float64(mm.b[i])
}

// TestCooperativeMatrixBuiltins runs the subgroup-matrix builtins, each
// operand and result type, on the device: natively on an adapter with
// matrix units (every configuration it offers WGSL), lowered elsewhere (a
// set of shapes). A left matrix loaded row-major at an offset, plus a scalar
// (ScalarAdd; for i8 and u8 one past their range, clamped); a right matrix
// loaded column-major; their product accumulated onto a filled result
// (clamped likewise), times a scalar, minus 1 (ScalarMultiply, Subtract);
// the result stored row-major and the left matrix column-major, both with
// padded strides. Values are small integers, so that every float result is
// exact, and integers wrap as the component type does: the results must
// equal Go's bit for bit, and no component outside the stored matrices may
// change.
func TestCooperativeMatrixBuiltins(t *testing.T) {
	probe, _ := realAdapters(t)
	ad, err := probe.RequestAdapter(os.Getenv("WGPU_ADAPTER")) // the adapter newEnv opens
	native := err == nil && ad.HasFeature(FeatureCooperativeMatrix)
	f16 := err == nil && ad.HasFeature(FeatureShaderF16) // SwiftShader has none: its f16 cases are skipped
	probe.Close()
	feats := []FeatureName{FeatureSubgroups}
	if native {
		feats = []FeatureName{FeatureCooperativeMatrix}
	}
	if f16 {
		feats = append(feats, FeatureShaderF16)
	}
	env := newEnv(t, feats...)
	d := env.dev
	cases := loweredMatrixCases
	sg := d.Limits().MaxSubgroupSize
	var required uint32
	if d.HasFeature(FeatureCooperativeMatrix) {
		cases = nil
		for _, c := range d.CooperativeMatrixConfigs() {
			if c.SubgroupMatrix {
				cases = append(cases, matrixCase{string(c.AType), string(c.ResultType), int(c.M), int(c.N), int(c.K)})
			}
		}
		if l := d.Limits(); l.MinSubgroupSize < l.MaxSubgroupSize {
			if !d.HasFeature(FeatureSubgroupSizeControl) {
				t.Skipf("%s: the subgroup size varies and the device has no subgroup-size control", env.ad.Info().Name)
			}
			required = max(l.MinSubgroupSize, min(32, l.MaxSubgroupSize))
			sg = required
		}
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s_%s_%dx%dx%d", c.comp, c.res, c.m, c.n, c.k), func(t *testing.T) {
			if (c.comp == "f16" || c.res == "f16") && !f16 {
				t.Skipf("%s lacks shader-f16", env.ad.Info().Name)
			}
			runMatrixBuiltins(t, d, c, sg, required)
		})
	}
}

func runMatrixBuiltins(t *testing.T, d *Device, c matrixCase, wg, required uint32) {
	signed := func(ty string) bool { return ty == "i8" || ty == "i32" || ty == "f16" || ty == "f32" }
	// Scalars: the left matrix's addend (past the 8-bit range: clamped), the
	// fill, the factor.
	sa, fill, mul := 2.0, 3.0, -3.0
	switch c.comp {
	case "i8":
		sa = -300
	case "u8":
		sa = 300
	}
	if !signed(c.res) {
		mul = 3
	}
	if narrow(c.res) {
		fill = 1000
	}
	// Offsets and strides in components: multiples of 4 (so that i8 and u8
	// rows start at whole array elements), strides padded by 4.
	offA, strA := 4, c.k+4 // left, row-major
	offB, strB := 8, c.k+4 // right, column-major
	offR, strR := 4, c.n+4 // result, row-major
	offL, strL := 0, c.m+4 // left again, column-major
	size := func(off, stride, major int) int { return (off + stride*major + 7) / 4 * 4 }
	nA, nB, nR, nL := size(offA, strA, c.m), size(offB, strB, c.n), size(offR, strR, c.m), size(offL, strL, c.k)
	buf := func(ty string, n int) matrixMemory { return matrixMemory{ty, make([]byte, max(4, n*elemBytes(ty)))} }
	a, b, r, l := buf(c.comp, nA), buf(c.comp, nB), buf(c.res, nR), buf(c.comp, nL)
	val := func(i int) float64 { // small values of the component type
		v := float64((i*7+3)%9 - 4)
		if !signed(c.comp) {
			v += 4
		}
		return v
	}
	for i := range nA {
		a.set(i, val(i))
	}
	for i := range nB {
		b.set(i, val(i*3+1))
	}
	for i := range nR { // what the store must leave alone
		v := float64(i % 5)
		if c.res == "f32" || c.res == "f16" {
			v += 0.5
		}
		r.set(i, v)
	}
	for i := range nL {
		l.set(i, val(i+11))
	}
	rBefore := append([]byte(nil), r.b...)
	lBefore := append([]byte(nil), l.b...)
	enables := "enable chromium_experimental_subgroup_matrix;\n"
	if c.comp == "f16" || c.res == "f16" {
		enables += "enable f16;\n"
	}
	// The layout-template form counts array elements: for i8 and u8, 4
	// components to one.
	units := func(ty string, off, stride int) (int, int) {
		if narrow(ty) {
			return off / 4, stride / 4
		}
		return off, stride
	}
	oa, sa4 := units(c.comp, offA, strA)
	ob, sb4 := units(c.comp, offB, strB)
	or, sr4 := units(c.res, offR, strR)
	ol, sl4 := units(c.comp, offL, strL)
	src := enables + fmt.Sprintf(`@group(0) @binding(0) var<storage, read> a: array<%[1]s>;
@group(0) @binding(1) var<storage, read> b: array<%[1]s>;
@group(0) @binding(2) var<storage, read_write> r: array<%[2]s>;
@group(0) @binding(3) var<storage, read_write> l: array<%[1]s>;
@compute @workgroup_size(%[3]d)
fn main() {
	let x = subgroupMatrixScalarAdd(subgroupMatrixLoad<subgroup_matrix_left<%[4]s, %[7]d, %[5]d>, row_major>(&a, %[9]du, %[10]du), %[17]v);
	let y = subgroupMatrixLoad<subgroup_matrix_right<%[4]s, %[6]d, %[7]d>, col_major>(&b, %[11]du, %[12]du);
	let acc = subgroupMatrixMultiplyAccumulate(x, y, subgroup_matrix_result<%[8]s, %[6]d, %[5]d>(%[18]v));
	let z = subgroupMatrixScalarSubtract(subgroupMatrixScalarMultiply(acc, %[19]v), 1);
	subgroupMatrixStore<row_major>(&r, %[13]du, z, %[14]du);
	subgroupMatrixStore<col_major>(&l, %[15]du, x, %[16]du);
}
`, shaderType(c.comp), shaderType(c.res), wg, c.comp, c.m, c.n, c.k, c.res, oa, sa4, ob, sb4, or, sr4, ol, sl4, sa, fill, mul)
	m, err := d.CreateShaderModule(&ShaderModuleDescriptor{Label: "builtins.wgsl", WGSL: src})
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	defer m.Close()
	p, err := d.CreateComputePipeline(&ComputePipelineDescriptor{Label: "builtins", Module: m, EntryPoint: "main", RequiredSubgroupSize: required})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	bgl, err := p.GetBindGroupLayout(0)
	if err != nil {
		t.Fatal(err)
	}
	var bufs []*Buffer
	var entries []BindGroupEntry
	for i, mm := range []matrixMemory{a, b, r, l} {
		g := newBuffer(t, d, uint64(len(mm.b)), storageRW)
		defer g.Close()
		if err := d.Queue().WriteBuffer(g, 0, mm.b); err != nil {
			t.Fatal(err)
		}
		bufs = append(bufs, g)
		entries = append(entries, BindGroupEntry{Binding: uint32(i), Buffer: g})
	}
	g, err := d.CreateBindGroup(&BindGroupDescriptor{Layout: bgl, Entries: entries})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	run(t, d, func(cp *ComputePass) {
		cp.SetPipeline(p)
		cp.SetBindGroup(0, g)
		cp.DispatchWorkgroups(1, 1, 1)
	})
	read := func(buf *Buffer, ty string) matrixMemory {
		out := make([]byte, buf.Size())
		if err := d.Queue().ReadBuffer(buf, 0, out); err != nil {
			t.Fatal(err)
		}
		return matrixMemory{ty, out}
	}
	gotR, gotL := read(bufs[2], c.res), read(bufs[3], c.comp)

	// The reference: x = left + sa, acc = fill + x·y, z = acc*mul - 1, each
	// in its component type.
	x := make([]float64, c.m*c.k)
	for i := range c.m {
		for k := range c.k {
			x[i*c.k+k] = wrap(c.comp, a.get(offA+i*strA+k)+clampTo(c.comp, sa))
		}
	}
	wantR := matrixMemory{c.res, append([]byte(nil), rBefore...)}
	for i := range c.m {
		for j := range c.n {
			acc := clampTo(c.res, fill)
			for k := range c.k {
				acc = wrap(c.res, acc+wrap(c.res, x[i*c.k+k]*b.get(offB+j*strB+k)))
			}
			wantR.set(offR+i*strR+j, wrap(c.res, wrap(c.res, acc*mul)-1))
		}
	}
	wantL := matrixMemory{c.comp, append([]byte(nil), lBefore...)}
	for i := range c.m {
		for k := range c.k {
			wantL.set(offL+k*strL+i, x[i*c.k+k])
		}
	}
	var bad []string
	for _, cmp := range []struct {
		what      string
		got, want matrixMemory
		n         int
	}{{"result", gotR, wantR, nR}, {"left", gotL, wantL, nL}} {
		for i := range cmp.n {
			if g, w := cmp.got.get(i), cmp.want.get(i); g != w && len(bad) < 8 {
				bad = append(bad, fmt.Sprintf("%s component %d = %v, want %v", cmp.what, i, g, w))
			}
		}
	}
	if len(bad) > 0 {
		t.Errorf("%s\n%s", strings.Join(bad, "\n"), src)
	}
}
