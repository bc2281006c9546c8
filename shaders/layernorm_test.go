package shaders

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/refops"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// TestLayerNorm compares layernorm.wgsl with refops.LayerNorm for both weight
// types and several workgroup sizes (1: the barrier-free form), on channel
// counts that no workgroup size divides: at C 100 the row fits the registers
// of 32 and 64 invocations (MAXE 16 each) but not of one, at C 600 it fits
// those of 64 only, so the channels read again past MAXE * WG are covered
// too. A rerun gives the same bits. Tolerance 2e-5 relative: f32 sums of up
// to 600 values and inverseSqrt.
func TestLayerNorm(t *testing.T) {
	d := newTestDev(t)
	const rows, eps = 37, 1e-5
	for _, C := range []int{100, 600} {
		x := randF32(uint64(C), rows*C, 0.3, 2)
		for _, f16 := range d.weightTypes() {
			k, err := NewKernel(d.dev, "layernorm.wgsl", f16)
			if err != nil {
				t.Fatal(err)
			}
			w, b := randF32(2, C, 1, 0.2), randF32(3, C, 0, 0.1)
			wb, bb := weightBytes(w, f16), weightBytes(b, f16)
			want := refops.LayerNorm(f64(x), f64(w), f64(b), rows, C, eps)
			for _, wg := range []float64{1, 32, 64} {
				t.Run(fmt.Sprintf("C=%d/f16=%v/WG=%v", C, f16, wg), func(t *testing.T) {
					p, err := k.Pipeline(map[string]float64{"WG": wg})
					if err != nil {
						t.Fatal(err)
					}
					var got [2][]float32
					for i := range got {
						out := d.buffer(t, "out", make([]byte, 4*rows*C))
						d.run(t, p, map[string]Buf{
							"x": {Buffer: d.buffer(t, "x", f32Bytes(x))}, "w": {Buffer: d.buffer(t, "w", wb)},
							"b": {Buffer: d.buffer(t, "b", bb)}, "out": {Buffer: out},
						}, Params{"rows": rows, "C": float64(C), "eps": eps}, [3]uint32{rows, 1, 1})
						got[i] = d.readF32(t, out, rows*C)
					}
					checkClose(t, "layernorm", got[0], want, 2e-5)
					checkClose(t, "rerun", got[1], f64(got[0]), 0)
				})
			}
		}
	}
}

// TestLayerNormSubgroup compares layernorm_subgroup.wgsl with
// refops.LayerNorm on devices with subgroup operations, for both weight
// types, workgroups of 32 to 256 invocations (one to several subgroups of any
// size) and channel counts that fill some invocations' registers only
// partly, and checks that a rerun gives the same bits. Tolerance as
// TestLayerNorm's.
func TestLayerNormSubgroup(t *testing.T) {
	d := newTestDev(t)
	if !d.dev.HasFeature(wgpu.FeatureSubgroups) {
		t.Skipf("%s has no subgroup operations", d.info.Name)
	}
	const rows, eps = 13, 1e-5
	for _, C := range []int{100, 768} {
		x := randF32(uint64(C), rows*C, 0.3, 2)
		for _, f16 := range d.weightTypes() {
			k, err := NewKernel(d.dev, "layernorm_subgroup.wgsl", f16)
			if err != nil {
				t.Fatal(err)
			}
			w, b := randF32(2, C, 1, 0.2), randF32(3, C, 0, 0.1)
			wb, bb := weightBytes(w, f16), weightBytes(b, f16)
			want := refops.LayerNorm(f64(x), f64(w), f64(b), rows, C, eps)
			for _, wg := range []int{32, 128, 256} {
				if C > 8*wg || wg > int(d.dev.Limits().MaxComputeInvocationsPerWorkgroup) {
					continue
				}
				t.Run(fmt.Sprintf("C=%d/f16=%v/WG=%v", C, f16, wg), func(t *testing.T) {
					p, err := k.Pipeline(map[string]float64{"WG": float64(wg)})
					if err != nil {
						t.Fatal(err)
					}
					var got [2][]float32
					for i := range got {
						out := d.buffer(t, "out", make([]byte, 4*rows*C))
						d.run(t, p, map[string]Buf{
							"x": {Buffer: d.buffer(t, "x", f32Bytes(x))}, "w": {Buffer: d.buffer(t, "w", wb)},
							"b": {Buffer: d.buffer(t, "b", bb)}, "out": {Buffer: out},
						}, Params{"rows": rows, "C": float64(C), "eps": eps}, [3]uint32{rows, 1, 1})
						got[i] = d.readF32(t, out, rows*C)
					}
					checkClose(t, "layernorm_subgroup", got[0], want, 2e-5)
					checkClose(t, "rerun", got[1], f64(got[0]), 0)
				})
			}
		}
	}
}

// TestPushAndBindErrors checks that a missing or unknown binding or push
// constant is refused with the kernel named.
func TestPushAndBindErrors(t *testing.T) {
	d := newTestDev(t)
	k, err := NewKernel(d.dev, "layernorm.wgsl", false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := k.Pipeline(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Pipeline(map[string]float64{"WGX": 4}); err == nil || !strings.Contains(err.Error(), `no override "WGX"`) {
		t.Errorf("unknown override: %v", err)
	}
	if _, err := p.Push(Params{"rows": 1, "C": 2}); err == nil {
		t.Error("missing push constant eps accepted")
	}
	if _, err := p.Push(Params{"rows": 1, "C": 2, "eps": 1, "extra": 3}); err == nil {
		t.Error("unknown push constant accepted")
	}
	if _, err := p.Push(Params{"rows": -1, "C": 2, "eps": 1}); err == nil {
		t.Error("negative u32 accepted")
	}
	buf := d.buffer(t, "x", make([]byte, 64))
	if _, err := p.Bind(map[string]Buf{"x": {Buffer: buf}}); err == nil {
		t.Error("bind group with bindings missing accepted")
	}
	if _, err := k.Pipeline(map[string]float64{"NOPE": 1}); err == nil {
		t.Error("unknown override accepted")
	}
}

// TestNormRows compares layernorm_rows.wgsl with refops.LayerNorm and
// rmsnorm_rows.wgsl with refops.RMSNorm on devices with subgroup operations,
// for both weight types, each compiled as the forward pass compiles it for
// the width (newRowsKernel: MAXV rowVec4s), at every MAXV up to lnRowVec4s
// (normRowsWidths: the width that fills it in the device's smallest
// subgroups, the width one vec4 past the MAXV below, and one between, C/4
// not a multiple of the subgroup size), so a MAXV too small for its width
// would leave channels out. Each is dispatched as the forward pass does (one
// row per subgroup) and with fewer workgroups than that, in one dimension
// and two (where a kernel that ignored wid.y would leave rows undone), so
// that each subgroup takes several rows in turn. A rerun and every dispatch
// give the same bits, and the file's own MAXV (lnRowVec4s: the kernel before
// the host sized it) the same within 5e-7 (a driver's fused multiply-adds
// differ between the two modules: see there). Tolerance as TestLayerNorm's.
func TestNormRows(t *testing.T) {
	d := newTestDev(t)
	if !d.dev.HasFeature(wgpu.FeatureSubgroups) {
		t.Skipf("%s has no subgroup operations", d.info.Name)
	}
	l := d.dev.Limits()
	const rows = 300
	wg := min(256, int(l.MaxComputeInvocationsPerWorkgroup))
	for _, file := range []string{"layernorm_rows.wgsl", "rmsnorm_rows.wgsl"} {
		for _, f16 := range d.weightTypes() {
			full, err := NewKernel(d.dev, file, f16)
			if err != nil {
				t.Fatal(err)
			}
			fullP, err := full.Pipeline(map[string]float64{"WG": float64(wg)})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range normRowsWidths(int(l.MinSubgroupSize)) {
				C := c.C
				t.Run(fmt.Sprintf("%s/f16=%v/C=%d", file, f16, C), func(t *testing.T) {
					perGroup, ok := normRowsFit(l, wg, C)
					if !ok {
						t.Fatalf("normRowsFit refuses it (limits %+v)", l)
					}
					k, err := newRowsKernel(d.dev, file, f16, C)
					if err != nil {
						t.Fatal(err)
					}
					if k == nil || k.vec4s != c.vec4s {
						t.Fatalf("newRowsKernel: %+v, want MAXV %d", k, c.vec4s)
					}
					p, err := k.k.Pipeline(map[string]float64{"WG": float64(wg)})
					if err != nil {
						t.Fatal(err)
					}
					x := randF32(uint64(C)+5, rows*C, 0.3, 2)
					w, b := randF32(2, C, 1, 0.2), randF32(3, C, 0, 0.1)
					bufs := map[string]Buf{"x": {Buffer: d.buffer(t, "x", f32Bytes(x))}, "w": {Buffer: d.buffer(t, "w", weightBytes(w, f16))}}
					eps := 1e-6
					want := refops.RMSNorm(f64(x), f64(w), rows, C, eps)
					if file == "layernorm_rows.wgsl" {
						eps = 1e-5
						bufs["b"] = Buf{Buffer: d.buffer(t, "b", weightBytes(b, f16))}
						want = refops.LayerNorm(f64(x), f64(w), f64(b), rows, C, eps)
					}
					run := func(p *Pipeline, groups [3]uint32) []float32 {
						out := d.buffer(t, "out", make([]byte, 4*rows*C))
						bufs["out"] = Buf{Buffer: out}
						d.run(t, p, bufs, Params{"rows": rows, "C": float64(C), "eps": eps}, groups)
						return d.readF32(t, out, rows*C)
					}
					forward := grid(ceilDiv(rows, perGroup))
					first := run(p, forward)
					checkClose(t, file, first, want, 2e-5)
					for _, groups := range [][3]uint32{forward, {1, 1, 1}, {2, 3, 1}} {
						sameBits(t, fmt.Sprintf("%s, groups %v", k.k.Name(), groups), run(p, groups), first)
					}
					// The file's own MAXV: the same sums in the same order, but
					// q += v·v (and LayerNorm's d·d) is a product and a sum that a
					// driver may fuse into one fma, and where it does depends on the
					// module: lavapipe fuses differently at MAXV 1 and 2 than at 16
					// (an ulp or two in some values), and for layernorm_rows.wgsl at
					// 1024-bit vectors on a Xeon with AVX512-FP16 (2.5 ulps at
					// C 68 and 128, where it had matched bit for bit elsewhere).
					checkClose(t, full.Name(), run(fullP, forward), f64(first), 5e-7)
				})
			}
		}
	}
}

// normRowsWidth is a row width of TestNormRows and the MAXV its kernel
// must have.
type normRowsWidth struct{ C, vec4s int }

// normRowsWidths are the widths TestNormRows runs on a device whose
// smallest subgroups have sg invocations, MAXV 1 to lnRowVec4s: for each
// MAXV v the width that fills it (C/4 = v·sg), the width one vec4 past
// MAXV v-1 (C/4 = (v-1)·sg + 1) and one halfway (C/4 = (v-1)·sg + sg/2 + 1),
// each width once.
func normRowsWidths(sg int) []normRowsWidth {
	var ws []normRowsWidth
	seen := map[int]bool{}
	for v := 1; v <= lnRowVec4s; v++ {
		for _, c4 := range []int{(v-1)*sg + 1, (v-1)*sg + sg/2 + 1, v * sg} {
			if !seen[c4] {
				seen[c4] = true
				ws = append(ws, normRowsWidth{C: 4 * c4, vec4s: v})
			}
		}
	}
	return ws
}

// TestNormRowsFit checks which widths the _rows norm kernels take, the rows
// a workgroup holds and the MAXV a width gets (rowVec4s): NVIDIA's subgroups
// of 32, AMD's of 32 or 64 (the smallest bounds the width and sizes MAXV,
// the usual one the rows per workgroup) and GCN's of 64 only, and a CPU
// implementation's of 4 and 8.
func TestNormRowsFit(t *testing.T) {
	for _, c := range []struct {
		sg, minSG, wg, C int
		perGroup         int
		ok               bool
		vec4s            int
	}{
		{32, 32, 256, 768, 8, true, 6},   // GPT-2 124M: 192 vec4s
		{32, 32, 256, 1600, 8, true, 13}, // GPT-2 XL: 400 vec4s
		{32, 32, 256, 2048, 8, true, 16}, // 512 vec4s: 16 per invocation
		{32, 32, 256, 2052, 0, false, 0}, // one vec4 more
		{32, 32, 256, 1022, 0, false, 0}, // not a multiple of 4
		{64, 32, 256, 768, 4, true, 6},   // wave64 usually: 4 rows, but 32 may come
		{64, 32, 256, 2048, 4, true, 16},
		{64, 32, 256, 4096, 0, false, 0}, // fits 64 invocations, not 32
		{64, 64, 256, 768, 4, true, 3},   // GCN
		{64, 64, 256, 4096, 4, true, 16}, // Llama 3 8B on GCN
		{64, 64, 256, 4100, 0, false, 0},
		{4, 4, 128, 256, 32, true, 16}, // SwiftShader
		{4, 4, 128, 260, 0, false, 0},
		{4, 4, 128, 20, 32, true, 2},
		{8, 8, 256, 4, 32, true, 1}, // lavapipe
		{8, 8, 256, 100, 32, true, 4},
		{8, 8, 256, 128, 32, true, 4},
		{8, 8, 256, 132, 32, true, 5},
	} {
		l := wgpu.Limits{SubgroupSize: uint32(c.sg), MinSubgroupSize: uint32(c.minSG), MaxSubgroupSize: uint32(max(c.sg, c.minSG))}
		perGroup, ok := normRowsFit(l, c.wg, c.C)
		if perGroup != c.perGroup || ok != c.ok {
			t.Errorf("subgroups %d (min %d), WG %d, C %d: %d rows per workgroup, %v; want %d, %v", c.sg, c.minSG, c.wg, c.C, perGroup, ok, c.perGroup, c.ok)
		}
		if v := rowVec4s(l, c.C); ok && v != c.vec4s {
			t.Errorf("subgroups %d (min %d), C %d: MAXV %d, want %d", c.sg, c.minSG, c.C, v, c.vec4s)
		}
	}
}

// TestNormFor: the forward pass's LayerNorm is layernorm_rows.wgsl, compiled
// for the model's width, where the row fits the registers the kernel was
// sized for in the device's smallest subgroups (dispatched for one row per
// subgroup), layernorm_subgroup.wgsl where it does not (wider than the
// kernel's MAXV, than lnRowVec4s, or C not a multiple of 4) but fits 256
// invocations, layernorm.wgsl past that, and layernorm.wgsl always with the
// software kernel set.
func TestNormFor(t *testing.T) {
	d := newTestDev(t)
	if !d.dev.HasFeature(wgpu.FeatureSubgroups) {
		t.Skipf("%s has no subgroup operations", d.info.Name)
	}
	g, _, _ := newPeakedGPT2(t, d, func(model.Config) []model.Sequence { return nil })
	if g.cfg.NEmbd != 16 || g.layernormRows == nil || g.layernormRows.vec4s != 1 {
		t.Fatalf("C %d: the model's layernorm_rows.wgsl is %+v, want MAXV 1 for C 16 (4 vec4s, subgroups of at least 4)", g.cfg.NEmbd, g.layernormRows)
	}
	l := d.dev.Limits()
	sg := int(l.MinSubgroupSize)
	widest := 4 * lnRowVec4s * sg
	wg := min(256, int(l.MaxComputeInvocationsPerWorkgroup))
	rowsFor := func(C int) *rowsKernel {
		k, err := newRowsKernel(d.dev, "layernorm_rows.wgsl", false, C)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	wide, narrow := rowsFor(widest), rowsFor(4*2*sg) // MAXV lnRowVec4s and 2
	if wide.vec4s != lnRowVec4s || narrow.vec4s != 2 {
		t.Fatalf("MAXV %d and %d, want %d and 2", wide.vec4s, narrow.vec4s, lnRowVec4s)
	}
	if k := rowsFor(widest + 4); k != nil {
		t.Errorf("C %d: newRowsKernel gave %s, want none (past lnRowVec4s)", widest+4, k.k.Name())
	}
	// Past the _rows kernels, layernorm_subgroup.wgsl up to lnSubgroupValues
	// channels per invocation: at a smallest subgroup of 32 (NVIDIA's, AMD's
	// wave32) the widest row for the _rows kernels is that limit already.
	pastRows := g.layernorm
	if widest+4 <= lnSubgroupValues*wg {
		pastRows = g.layernormSubgroup
	}
	for _, hw := range []bool{true, false} {
		g.sharedMatmul = hw
		for _, c := range []struct {
			rows *rowsKernel
			C    int
			want *Kernel
		}{
			{wide, widest, wide.k},
			{wide, widest + 4, pastRows},
			{wide, widest - 2, g.layernormSubgroup}, // not a multiple of 4
			{wide, lnSubgroupValues*wg + 4, g.layernorm},
			{wide, 12, wide.k}, // more registers than the row needs: still right
			{narrow, 4 * 2 * sg, narrow.k},
			{narrow, 4*2*sg + 4, g.layernormSubgroup}, // one vec4 past the kernel's MAXV
			{nil, 12, g.layernormSubgroup},
			{g.layernormRows, g.cfg.NEmbd, g.layernormRows.k},
		} {
			want := c.want
			if !hw {
				want = g.layernorm
			}
			n := g.normFor(g.layernorm, g.layernormSubgroup, c.rows, c.C)
			if n.k != want {
				t.Errorf("hardware %v, C %d: %s, want %s", hw, c.C, n.k.name, want.name)
			}
			if groups := n.groups(1000); c.rows != nil && n.k == c.rows.k && groups.n != ceilDiv(1000, wg/int(l.SubgroupSize)) || (c.rows == nil || n.k != c.rows.k) && groups.n != 1000 {
				t.Errorf("hardware %v, C %d: %d workgroups for 1000 rows", hw, c.C, groups.n)
			}
		}
	}
}
