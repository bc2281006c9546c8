package shaders

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/refops"
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
