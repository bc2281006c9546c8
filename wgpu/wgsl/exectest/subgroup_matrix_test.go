package exectest

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// sgmCase is one subgroup matrix program: C' = A*B + C of shape M x N x K
// with each operand's layout, stride and offset, run by wg invocations.
type sgmCase struct {
	m, n, k   int
	f16       bool    // A and B are f16 (else f32); the result is f32
	cm        [3]bool // column-major A, B, C
	pad       [3]int  // stride minus the minimal stride of A, B, C
	off       [3]int  // offsets of A, B, C in elements
	wg        int     // workgroup size
	perSubgrp bool    // each subgroup stores to its own region (subgroup_id)
	noAccum   bool    // subgroupMatrixMultiply, then + C as I*(A*B) + C
	viaShared bool    // the product goes through workgroup memory first
}

// layout gives the stride and the memory index of element [r, c] of a
// rows x cols operand in the given layout.
func layout(rows, cols int, colMajor bool, pad, off int) (stride int, at func(r, c int) int) {
	stride = cols + pad
	if colMajor {
		stride = rows + pad
		return stride, func(r, c int) int { return off + c*stride + r }
	}
	return stride, func(r, c int) int { return off + r*stride + c }
}

func (c sgmCase) source() string {
	el := "f32"
	if c.f16 {
		el = "f16"
	}
	sa, _ := layout(c.m, c.k, c.cm[0], c.pad[0], c.off[0])
	sb, _ := layout(c.k, c.n, c.cm[1], c.pad[1], c.off[1])
	sc, _ := layout(c.m, c.n, c.cm[2], c.pad[2], c.off[2])
	var b strings.Builder
	b.WriteString("enable chromium_experimental_subgroup_matrix;\n")
	if c.f16 {
		b.WriteString("enable f16;\n")
	}
	param, region := "", "0u"
	if c.perSubgrp {
		b.WriteString("enable subgroups;\n") // subgroup_id is subgroup-uniform
		param, region = "@builtin(subgroup_id) sid: u32", fmt.Sprintf("sid * %du", c.region())
	}
	fmt.Fprintf(&b, `@group(0) @binding(0) var<storage, read> a: array<%[1]s>;
@group(0) @binding(1) var<storage, read> b: array<%[1]s>;
@group(0) @binding(2) var<storage, read> cin: array<f32>;
@group(0) @binding(3) var<storage, read_write> cout: array<f32>;
var<workgroup> tile: array<f32, %[15]d>;
@compute @workgroup_size(%[2]d)
fn main(%[3]s) {
	let l = subgroupMatrixLoad<subgroup_matrix_left<%[1]s, %[6]d, %[4]d>, %[8]s>(&a, %[7]du, %[9]di);
	let r = subgroupMatrixLoad<subgroup_matrix_right<%[1]s, %[5]d, %[6]d>>(&b, %[10]d, %[11]v, %[12]d);
	let acc = subgroupMatrixLoad<subgroup_matrix_result<f32, %[5]d, %[4]d>, %[14]s>(&cin, %[13]di, %[16]du);
`, el, c.wg, param, c.m, c.n, c.k, c.off[0], major(c.cm[0]), sa, c.off[1], c.cm[1], sb, c.off[2], major(c.cm[2]), c.sharedLen(), sc)
	res := "subgroupMatrixMultiplyAccumulate(l, r, acc)"
	if c.noAccum {
		// A*B by subgroupMatrixMultiply, then + C as I*(A*B) + C: the product
		// goes through workgroup memory to become a right operand, I comes
		// from cin; a multiply by a filled zero matrix adds nothing.
		fmt.Fprintf(&b, `	let p = subgroupMatrixMultiply<f32>(l, r);
	subgroupMatrixStore(&tile, 0u, p, false, %[1]du);
	workgroupBarrier();
	let back = subgroupMatrixLoad<subgroup_matrix_right<f32, %[1]d, %[2]d>>(&tile, 0u, false, %[1]du);
	let id = subgroupMatrixLoad<subgroup_matrix_left<f32, %[2]d, %[2]d>>(&cin, %[3]du, false, %[2]du);
	let same = subgroupMatrixMultiplyAccumulate(subgroup_matrix_left<f32, %[2]d, %[2]d>(0.0), back, acc);
	workgroupBarrier();
`, c.n, c.m, c.identityAt())
		res = "subgroupMatrixMultiplyAccumulate(id, back, same)"
	}
	if c.viaShared {
		fmt.Fprintf(&b, "\tsubgroupMatrixStore<col_major>(&tile, 0u, %s, %du);\n\tworkgroupBarrier();\n", res, c.m)
		res = fmt.Sprintf("subgroupMatrixLoad<subgroup_matrix_result<f32, %d, %d>>(&tile, 0u, true, %du)", c.n, c.m, c.m)
	}
	fmt.Fprintf(&b, "\tsubgroupMatrixStore(&cout, %du + %s, %s, %v, %du);\n}\n", c.off[2], region, res, c.cm[2], sc)
	return b.String()
}

// major spells a layout as subgroupMatrixLoad's template argument.
func major(colMajor bool) string {
	if colMajor {
		return "col_major"
	}
	return "row_major"
}

// region is the element count one subgroup's output takes (perSubgrp).
func (c sgmCase) region() int {
	_, at := layout(c.m, c.n, c.cm[2], c.pad[2], 0)
	return at(c.m-1, c.n-1) + 1
}

func (c sgmCase) sharedLen() int { return max(c.m*c.n, 1) }

// identityAt is where the M x M identity matrix sits in cin (noAccum).
func (c sgmCase) identityAt() int {
	_, at := layout(c.m, c.n, c.cm[2], c.pad[2], c.off[2])
	return at(c.m-1, c.n-1) + 1
}

// sgmCases are the programs of the subgroup matrix tests.
var sgmCases = map[string]sgmCase{
	"8x8x8_rows":         {m: 8, n: 8, k: 8, wg: 32},
	"8x8x8_cols":         {m: 8, n: 8, k: 8, cm: [3]bool{true, true, true}, wg: 32},
	"4x16x8_mixed_pad":   {m: 4, n: 16, k: 8, cm: [3]bool{false, true, false}, pad: [3]int{3, 1, 5}, off: [3]int{7, 2, 9}, wg: 16},
	"16x8x16_f16":        {m: 16, n: 8, k: 16, f16: true, cm: [3]bool{true, false, true}, pad: [3]int{0, 4, 2}, off: [3]int{1, 0, 3}, wg: 64},
	"3x5x7_partial":      {m: 3, n: 5, k: 7, cm: [3]bool{false, false, true}, pad: [3]int{2, 0, 1}, off: [3]int{0, 5, 1}, wg: 3},
	"single_invocation":  {m: 8, n: 8, k: 4, f16: true, pad: [3]int{1, 1, 1}, wg: 1},
	"per_subgroup":       {m: 8, n: 8, k: 8, cm: [3]bool{true, false, false}, pad: [3]int{0, 0, 2}, wg: 64, perSubgrp: true},
	"via_workgroup":      {m: 8, n: 16, k: 8, cm: [3]bool{false, true, true}, wg: 32, viaShared: true},
	"multiply_then_add":  {m: 4, n: 8, k: 8, wg: 16, noAccum: true},
	"multiply_f16_cols":  {m: 8, n: 4, k: 16, f16: true, cm: [3]bool{true, true, false}, pad: [3]int{1, 2, 0}, wg: 8, noAccum: true},
	"16x16x16_wg_shared": {m: 16, n: 16, k: 16, f16: true, cm: [3]bool{false, false, false}, pad: [3]int{0, 0, 0}, wg: 32, viaShared: true},
}

// TestSubgroupMatrixLowered runs load, multiply(-accumulate) and store of
// subgroup matrices, lowered to invocation code (Options.CooperativeMatrix
// false), over shapes, layouts, strides, offsets and workgroup sizes (a
// partial subgroup, several subgroups), against a float64 reference, and
// checks that no element outside the stored matrix changed.
func TestSubgroupMatrixLowered(t *testing.T) {
	// f16 operands need a device with shader-f16 (SwiftShader has none):
	// those cases run under their own subtest, skipped without it.
	run := func(t *testing.T, f16 bool, features ...wgpu.FeatureName) {
		d := newDevice(t, features...)
		for name, c := range sgmCases {
			if c.f16 == f16 {
				t.Run(name, func(t *testing.T) { runSGM(t, d, c) })
			}
		}
	}
	t.Run("f32", func(t *testing.T) { run(t, false, wgpu.FeatureSubgroups) })
	t.Run("f16", func(t *testing.T) { run(t, true, wgpu.FeatureSubgroups, wgpu.FeatureShaderF16) })
}

func runSGM(t *testing.T, d *device, c sgmCase) {
	_, atA := layout(c.m, c.k, c.cm[0], c.pad[0], c.off[0])
	_, atB := layout(c.k, c.n, c.cm[1], c.pad[1], c.off[1])
	_, atC := layout(c.m, c.n, c.cm[2], c.pad[2], c.off[2])
	lenA, lenB := atA(c.m-1, c.k-1)+1+3, atB(c.k-1, c.n-1)+1+2
	a := make([]float32, lenA)
	b := make([]float32, lenB)
	for i := range a {
		a[i] = float32((i*7+3)%23-11) / 8 // exact in f16
	}
	for i := range b {
		b[i] = float32((i*5+1)%19-9) / 4
	}
	cinLen := c.identityAt() + c.m*c.m
	cin := make([]float32, cinLen)
	for i := range cin {
		cin[i] = float32(i%17) / 3
	}
	if c.noAccum {
		for i := range c.m * c.m {
			cin[c.identityAt()+i] = 0
			if i%(c.m+1) == 0 {
				cin[c.identityAt()+i] = 1
			}
		}
	}
	subgroups := 1
	if c.perSubgrp {
		subgroups = c.wg // at most one subgroup per invocation
	}
	const sentinel = -12345
	outLen := c.off[2] + subgroups*c.region() + 4
	out := make([]float32, outLen)
	for i := range out {
		out[i] = sentinel
	}
	bytesOf := func(v []float32, half bool) []byte {
		if half {
			return f16s(v...)
		}
		return f32s(v...)
	}
	src := c.source()
	res := d.run(t, src, nil, nil, [3]uint32{1, 1, 1}, bytesOf(a, c.f16), bytesOf(b, c.f16), f32s(cin...), f32s(out...))
	got := getF32s(res[3])
	want := make([]float64, outLen)
	written := make([]bool, outLen)
	for i := range want {
		want[i] = sentinel
	}
	// The subgroups that ran: with perSubgrp, the regions of subgroup ids
	// 0..num_subgroups-1 are written; find how many from the output.
	nsub := 1
	if c.perSubgrp {
		nsub = 0
		for s := range subgroups {
			if got[c.off[2]+s*c.region()] != sentinel {
				nsub = s + 1
			}
		}
		if nsub == 0 {
			t.Fatalf("no subgroup stored its result\n%s", src)
		}
	}
	for s := range nsub {
		for i := range c.m {
			for j := range c.n {
				sum := float64(cin[atC(i, j)])
				for k := range c.k {
					sum += float64(a[atA(i, k)]) * float64(b[atB(k, j)])
				}
				p := atC(i, j) + s*c.region()
				want[p], written[p] = sum, true
			}
		}
	}
	bad := 0
	for i := range want {
		tol := 0.0
		if written[i] {
			tol = 1e-5 * math.Max(1, math.Abs(want[i]))
		}
		if math.Abs(float64(got[i])-want[i]) > tol {
			if bad++; bad <= 5 {
				t.Errorf("cout[%d] = %g, want %g (written by the store: %v)", i, got[i], want[i], written[i])
			}
		}
	}
	if bad > 0 {
		t.Logf("%d wrong elements; program:\n%s", bad, src)
	}
}

func getF32s(b []byte) []float32 {
	u := getU32(b)
	v := make([]float32, len(u))
	for i, x := range u {
		v[i] = math.Float32frombits(x)
	}
	return v
}
