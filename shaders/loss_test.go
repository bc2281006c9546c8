package shaders

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/refops"
)

// TestLoss runs lmhead_loss.wgsl then nll_sums.wgsl and compares nll with
// refops.NLL and the sums with refops.Sums, for both weight types, VT 64 and
// 256 (V = 1000 is a multiple of neither) and wte bound whole or in two ranges
// (v0 = 0 and v0 = 512). Tolerance 1e-5 relative to max(1, |want|) for nll
// (f32 dots of C = 24 terms, exp and log of sums over up to 1000 tokens) and
// 1e-5 relative for the sums. A second run must give bit-identical sums.
func TestLoss(t *testing.T) {
	d := newTestDev(t)
	const P, C, V = 37, 24, 1000
	h := randF32(11, P*C, 0, 1)
	r := rand.New(rand.NewPCG(12, 0x5eed))
	targets := make([]int32, P)
	for i := range targets {
		targets[i] = int32(r.IntN(V))
	}
	targets[0], targets[1], targets[2], targets[P-1] = 0, V-1, 255, 256
	tb := make([]byte, 4*P)
	for i, v := range targets {
		binary.LittleEndian.PutUint32(tb[4*i:], uint32(v))
	}
	for _, f16 := range d.weightTypes() {
		lk, err := NewKernel(d.dev, "lmhead_loss.wgsl", f16)
		if err != nil {
			t.Fatal(err)
		}
		sk, err := NewKernel(d.dev, "nll_sums.wgsl", false)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := sk.Pipeline(nil)
		if err != nil {
			t.Fatal(err)
		}
		wte := randF32(13, V*C, 0, 0.5)
		wb := weightBytes(wte, f16)
		want := refops.NLL(f64(h), f64(wte), targets, P, C, V)
		wantSum, wantSq := refops.Sums(want)
		wsize := uint64(len(wb) / V) // bytes per wte row
		for _, vt := range []int{64, 256} {
			for _, split := range []bool{false, true} {
				t.Run(fmt.Sprintf("f16=%v/VT=%d/split=%v", f16, vt, split), func(t *testing.T) {
					lp, err := lk.Pipeline(map[string]float64{"VT": float64(vt)})
					if err != nil {
						t.Fatal(err)
					}
					// ranges of wte: [v0, v0+n)
					ranges := [][2]int{{0, V}}
					if split {
						ranges = [][2]int{{0, 512}, {512, V - 512}}
					}
					last := ranges[len(ranges)-1]
					tiles := last[0]/vt + ceilDiv(last[1], vt) // global tiles
					hBuf, wBuf, tBuf := d.buffer(t, "h", f32Bytes(h)), d.buffer(t, "wte", wb), d.buffer(t, "targets", tb)
					part := d.buffer(t, "part", make([]byte, 8*tiles*P))
					tgt := d.buffer(t, "tgt", make([]byte, 4*P))
					nll := d.buffer(t, "nll", make([]byte, 4*P))
					out := d.buffer(t, "out", make([]byte, 8))
					var sums [2][]float32
					for run := range sums {
						for _, rg := range ranges {
							d.run(t, lp, map[string]Buf{
								"h": {Buffer: hBuf}, "wte": {Buffer: wBuf, Offset: uint64(rg[0]) * wsize, Size: uint64(rg[1]) * wsize},
								"targets": {Buffer: tBuf}, "part": {Buffer: part}, "tgt": {Buffer: tgt},
							}, Params{"P": P, "C": C, "V": float64(rg[1]), "v0": float64(rg[0])},
								[3]uint32{uint32(ceilDiv(ceilDiv(P, 4), int(lp.WorkgroupSize[0]))), uint32(ceilDiv(rg[1], vt)), 1})
						}
						d.run(t, sp, map[string]Buf{"part": {Buffer: part}, "tgt": {Buffer: tgt}, "nll": {Buffer: nll}, "out": {Buffer: out}},
							Params{"P": P, "tiles": float64(tiles)}, [3]uint32{1, 1, 1})
						if run == 0 {
							checkClose(t, "nll", d.readF32(t, nll, P), want, 1e-5)
						}
						sums[run] = d.readF32(t, out, 2)
					}
					for i, w := range []float64{wantSum, wantSq} {
						if g := float64(sums[0][i]); !(math.Abs(g-w) <= 1e-5*math.Abs(w)) {
							t.Errorf("sums[%d] = %v, want %v (rel diff %.3g)", i, g, w, math.Abs(g-w)/math.Abs(w))
						}
						if math.Float32bits(sums[0][i]) != math.Float32bits(sums[1][i]) {
							t.Errorf("sums[%d]: second run %v, first %v: not bit-identical", i, sums[1][i], sums[0][i])
						}
					}
				})
			}
		}
	}
}
