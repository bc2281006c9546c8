package shaders

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/wgpu-eval/wgpu-eval/wgpu"
	"github.com/wgpu-eval/wgpu-eval/wgpu/wgsl"
)

// rowNorm is a norm kernel chosen for rows of a width (normFor): the kernel,
// its override constants and its dispatch for a number of rows.
type rowNorm struct {
	k      *Kernel
	consts constSet
	groups func(rows int) extent
}

// normFor picks the norm kernel for rows of C channels from one function's
// three: plain (layernorm.wgsl, rmsnorm.wgsl: a workgroup per row, no
// subgroup operations), sub (the _subgroup kernel: a workgroup per row with
// subgroup sums) and rows (the _rows kernel, compiled for a width: a
// subgroup per row, no barrier); sub and rows are nil without subgroup
// operations, rows also where the model's rows do not fit it. The hardware
// kernel set takes rows where C % 4 == 0 and a row fits its registers in
// the device's smallest subgroups (rowVec4s(C) <= rows.vec4s, within
// lnRowVec4s), dispatched for one row per subgroup at the device's usual
// subgroup size, else sub where the row fits 256 invocations' registers;
// the software set, and the rest, plain.
func (g *GPT2) normFor(plain, sub *Kernel, rows *rowsKernel, C int) rowNorm {
	l := g.dev.Limits()
	wg := min(256, int(l.MaxComputeInvocationsPerWorkgroup))
	if perGroup, ok := normRowsFit(l, wg, C); g.sharedMatmul && rows != nil && ok && rowVec4s(l, C) <= rows.vec4s {
		return rowNorm{k: rows.k, consts: consts("WG", float64(wg)),
			groups: func(n int) extent { return perWorkgroup(ceilDiv(n, perGroup)) }}
	}
	if g.sharedMatmul && sub != nil && C <= lnSubgroupValues*wg {
		return rowNorm{k: sub, consts: consts("WG", float64(wg)), groups: perWorkgroup}
	}
	return rowNorm{k: plain, groups: perWorkgroup}
}

// normRowsFit reports whether the _rows norm kernels, in workgroups of wg
// invocations, take rows of C channels on a device with limits l (C % 4 ==
// 0, and C/4 vec4s within lnRowVec4s per invocation of the smallest
// subgroups it may give), and how many rows a workgroup then holds at the
// device's usual subgroup size.
func normRowsFit(l wgpu.Limits, wg, C int) (perGroup int, ok bool) {
	if C%4 != 0 || rowVec4s(l, C) > lnRowVec4s {
		return 0, false
	}
	return max(wg/max(int(l.SubgroupSize), minSubgroup(l)), 1), true
}

// rowVec4s is how many vec4s of a row of C channels (C/4 vec4s) an
// invocation of the _rows norm kernels holds in the smallest subgroups the
// device may give: ceil(C/4 / MinSubgroupSize), the MAXV they need. In
// larger subgroups an invocation holds fewer, and the rest of its array
// stays zeros.
func rowVec4s(l wgpu.Limits, C int) int {
	return ceilDiv(C/4, minSubgroup(l))
}

// minSubgroup is the smallest subgroup size the device may give (1 where it
// reports none).
func minSubgroup(l wgpu.Limits) int { return max(int(l.MinSubgroupSize), 1) }

// rowsKernel is a _rows norm kernel (layernorm_rows.wgsl, rmsnorm_rows.wgsl)
// compiled for a width: its register array of an invocation's share of a
// row (include/row_subgroup.wgsl's MAXV) holds vec4s vec4s.
//
// The array's size must be a constant, and each of its vec4s costs 4
// registers of every invocation for the whole kernel (both passes over the
// row read it): at the file's MAXV, lnRowVec4s, AMD's compiler gives the
// kernels 96 VGPRs on RDNA (10 subgroups per SIMD) and 128 on GCN (2), where
// GPT-2's 768 channels need 6 vec4s in subgroups of 32 and 3 in subgroups
// of 64. So the host writes the model's MAXV into the text (rowsSource), as
// it writes the coop kernels' tiles (coopSource), and compiles one module
// per model. The sums are the same bits at any MAXV that holds the row:
// the vec4s past it are zeros added last to partial sums that start at +0,
// which adding +0 leaves unchanged.
type rowsKernel struct {
	k     *Kernel
	vec4s int // MAXV
}

// rowsConstLine matches include/row_subgroup.wgsl's line of MAXV, which
// rowsSource rewrites.
var rowsConstLine = regexp.MustCompile(`(?m)^const (MAXV): u32 = [0-9]+u;`)

// rowsSource is the text of the _rows norm kernel name for the weight type
// with MAXV = vec4s, every line where it was.
func rowsSource(name string, f16 bool, vec4s int) (wgsl.Expanded, error) {
	x, err := load(name, f16)
	if err != nil {
		return wgsl.Expanded{}, err
	}
	return rewriteConstLines(name, x, rowsConstLine, map[string]int{"MAXV": vec4s})
}

// newRowsKernel compiles the _rows norm kernel name ("layernorm_rows.wgsl")
// with f16 or f32 weights for rows of C channels on dev: MAXV rowVec4s(C).
// It is nil (and no error) where such rows do not fit the kernel
// (normRowsFit). The kernel's name says its MAXV: "layernorm_rows[MAXV
// 6][f16].wgsl".
func newRowsKernel(dev *wgpu.Device, name string, f16 bool, C int) (*rowsKernel, error) {
	l := dev.Limits()
	if _, ok := normRowsFit(l, 1, C); !ok {
		return nil, nil
	}
	v := rowVec4s(l, C)
	src, err := rowsSource(name, f16, v)
	if err != nil {
		return nil, err
	}
	label := fmt.Sprintf("%s[MAXV %d]", strings.TrimSuffix(name, ".wgsl"), v)
	if f16 && strings.HasPrefix(src.Text, "enable f16;") { // Variant made an f16 text
		label += "[f16]"
	}
	k, err := compileKernel(dev, label+".wgsl", src, 0)
	if err != nil {
		return nil, err
	}
	return &rowsKernel{k: k, vec4s: v}, nil
}
