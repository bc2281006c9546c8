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
// for both weight types, at widths that leave most invocations' vec4s empty
// (C 12 and 100) and at the widest the device's smallest subgroups hold
// (normRowsFit's bound), dispatched as the forward pass does (one row per
// subgroup) and with fewer workgroups than that, in one dimension and two
// (where a kernel that ignored wid.y would leave rows undone), so that each
// subgroup takes several rows in turn. A rerun and every dispatch give the
// same bits. Tolerance as TestLayerNorm's.
func TestNormRows(t *testing.T) {
	d := newTestDev(t)
	if !d.dev.HasFeature(wgpu.FeatureSubgroups) {
		t.Skipf("%s has no subgroup operations", d.info.Name)
	}
	l := d.dev.Limits()
	const rows = 300
	wg := min(256, int(l.MaxComputeInvocationsPerWorkgroup))
	widest := 4 * lnRowVec4s * int(l.MinSubgroupSize)
	for _, C := range []int{12, 100, widest} {
		perGroup, ok := normRowsFit(l, wg, C)
		if !ok {
			t.Fatalf("C %d: normRowsFit refuses it (limits %+v)", C, l)
		}
		x := randF32(uint64(C)+5, rows*C, 0.3, 2)
		for _, f16 := range d.weightTypes() {
			w, b := randF32(2, C, 1, 0.2), randF32(3, C, 0, 0.1)
			wb, bb := weightBytes(w, f16), weightBytes(b, f16)
			for _, file := range []string{"layernorm_rows.wgsl", "rmsnorm_rows.wgsl"} {
				t.Run(fmt.Sprintf("%s/C=%d/f16=%v", file, C, f16), func(t *testing.T) {
					k, err := NewKernel(d.dev, file, f16)
					if err != nil {
						t.Fatal(err)
					}
					p, err := k.Pipeline(map[string]float64{"WG": float64(wg)})
					if err != nil {
						t.Fatal(err)
					}
					bufs := map[string]Buf{"x": {Buffer: d.buffer(t, "x", f32Bytes(x))}, "w": {Buffer: d.buffer(t, "w", wb)}}
					eps := 1e-6
					want := refops.RMSNorm(f64(x), f64(w), rows, C, eps)
					if file == "layernorm_rows.wgsl" {
						eps = 1e-5
						bufs["b"] = Buf{Buffer: d.buffer(t, "b", bb)}
						want = refops.LayerNorm(f64(x), f64(w), f64(b), rows, C, eps)
					}
					var first []float32
					for _, groups := range [][3]uint32{grid(ceilDiv(rows, perGroup)), grid(ceilDiv(rows, perGroup)), {1, 1, 1}, {1, 2, 1}, {2, 3, 1}} {
						out := d.buffer(t, "out", make([]byte, 4*rows*C))
						bufs["out"] = Buf{Buffer: out}
						d.run(t, p, bufs, Params{"rows": rows, "C": float64(C), "eps": eps}, groups)
						got := d.readF32(t, out, rows*C)
						if first == nil {
							checkClose(t, file, got, want, 2e-5)
							first = got
							continue
						}
						checkClose(t, fmt.Sprintf("%s, groups %v", file, groups), got, f64(first), 0)
					}
				})
			}
		}
	}
}

// TestNormRowsFit checks which widths the _rows norm kernels take and the
// rows a workgroup holds: NVIDIA's subgroups of 32, AMD's of 32 or 64 (the
// smallest bounds the width, the usual one the rows per workgroup), and a
// CPU implementation's of 4.
func TestNormRowsFit(t *testing.T) {
	for _, c := range []struct {
		sg, minSG, wg, C int
		perGroup         int
		ok               bool
	}{
		{32, 32, 256, 768, 8, true},
		{32, 32, 256, 2048, 8, true},  // 512 vec4s: 16 per invocation
		{32, 32, 256, 2052, 0, false}, // one vec4 more
		{32, 32, 256, 1022, 0, false}, // not a multiple of 4
		{64, 32, 256, 2048, 4, true},  // wave64 usually: 4 rows, but 32 may come
		{64, 32, 256, 4096, 0, false}, // fits 64 invocations, not 32
		{4, 4, 128, 256, 32, true},    // SwiftShader
		{4, 4, 128, 260, 0, false},
	} {
		l := wgpu.Limits{SubgroupSize: uint32(c.sg), MinSubgroupSize: uint32(c.minSG), MaxSubgroupSize: uint32(max(c.sg, c.minSG))}
		perGroup, ok := normRowsFit(l, c.wg, c.C)
		if perGroup != c.perGroup || ok != c.ok {
			t.Errorf("subgroups %d (min %d), WG %d, C %d: %d rows per workgroup, %v; want %d, %v", c.sg, c.minSG, c.wg, c.C, perGroup, ok, c.perGroup, c.ok)
		}
	}
}

// TestNormFor: the forward pass's LayerNorm is layernorm_rows.wgsl where the
// row fits the device's smallest subgroups (dispatched for one row per
// subgroup), layernorm_subgroup.wgsl where it does not but fits 256
// invocations, layernorm.wgsl past that, and layernorm.wgsl always with the
// software kernel set.
func TestNormFor(t *testing.T) {
	d := newTestDev(t)
	if !d.dev.HasFeature(wgpu.FeatureSubgroups) {
		t.Skipf("%s has no subgroup operations", d.info.Name)
	}
	g, _, _ := newPeakedGPT2(t, d, func(model.Config) []model.Sequence { return nil })
	l := d.dev.Limits()
	widest := 4 * lnRowVec4s * int(l.MinSubgroupSize)
	wg := min(256, int(l.MaxComputeInvocationsPerWorkgroup))
	for _, hw := range []bool{true, false} {
		g.sharedMatmul = hw
		for _, c := range []struct {
			C    int
			want *Kernel
		}{
			{widest, g.layernormRows},
			{widest + 4, g.layernormSubgroup},
			{widest - 2, g.layernormSubgroup}, // not a multiple of 4
			{lnSubgroupValues*wg + 4, g.layernorm},
		} {
			want := c.want
			if !hw {
				want = g.layernorm
			}
			n := g.normFor(g.layernorm, g.layernormSubgroup, g.layernormRows, c.C)
			if n.k != want {
				t.Errorf("hardware %v, C %d: %s, want %s", hw, c.C, n.k.name, want.name)
			}
			if groups := n.groups(1000); n.k == g.layernormRows && groups.n != ceilDiv(1000, wg/int(l.SubgroupSize)) || n.k != g.layernormRows && groups.n != 1000 {
				t.Errorf("hardware %v, C %d: %d workgroups for 1000 rows", hw, c.C, groups.n)
			}
		}
	}
}
