package shaders

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/refops"
)

// TestLoss runs lmhead_loss.wgsl then nll_combine.wgsl and compares nll with
// refops.NLL, for both weight types, VT 64 and 256 (V = 1000 is a multiple of
// neither) and wte bound whole or in two ranges (v0 = 0 and v0 = 512).
// Tolerance 1e-5 relative to max(1, |want|) (f32 dots of C = 24 terms, exp and
// log of sums over up to 1000 tokens). A second run must give bit-identical
// NLLs (the host adds them exactly).
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
		red := newLossReducer(t, d)
		wte := randF32(13, V*C, 0, 0.5)
		wb := weightBytes(wte, f16)
		want := refops.NLL(f64(h), f64(wte), targets, P, C, V)
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
					hBuf, wBuf := d.buffer(t, "h", f32Bytes(h)), d.buffer(t, "wte", wb)
					tBuf := d.buffer(t, "targets", append(tb, make([]byte, 4*P)...)) // the ids, then their logits
					part := d.buffer(t, "part", make([]byte, 8*tiles*P))
					var nlls [2][]float32
					for run := range nlls {
						for _, rg := range ranges {
							d.run(t, lp, map[string]Buf{
								"h": {Buffer: hBuf}, "wte": {Buffer: wBuf, Offset: uint64(rg[0]) * wsize, Size: uint64(rg[1]) * wsize},
								"targets": {Buffer: tBuf}, "part": {Buffer: part},
							}, Params{"P": P, "C": C, "V": float64(rg[1]), "v0": float64(rg[0])},
								[3]uint32{uint32(ceilDiv(ceilDiv(P, 4), int(lp.WorkgroupSize[0]))), uint32(ceilDiv(rg[1], vt)), 1})
						}
						nlls[run] = red.run(t, d, Buf{Buffer: part}, Buf{Buffer: tBuf}, P, tiles)
					}
					checkClose(t, "nll", nlls[0], want, 1e-5)
					if !bitsEqual(nlls[0], nlls[1]) {
						t.Errorf("nll: second run differs from the first: not bit-identical")
					}
				})
			}
		}
	}
}

// lossReducer is nll_combine.wgsl with its default workgroup: the reduction
// after either LM head.
type lossReducer struct{ combine *Pipeline }

func newLossReducer(t *testing.T, d *testDev) lossReducer {
	t.Helper()
	k, err := NewKernel(d.dev, "nll_combine.wgsl", false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := k.Pipeline(nil)
	if err != nil {
		t.Fatal(err)
	}
	return lossReducer{p}
}

// run reduces part (tiles, P) and the target logits (targets' second P
// words) to the per-position NLLs:
// nll_combine.wgsl over ceil(P/WG) workgroups. The guard after the last
// position must stay as it was.
func (lr lossReducer) run(t *testing.T, d *testDev, part, targets Buf, P, tiles int) []float32 {
	t.Helper()
	wg := int(lr.combine.WorkgroupSize[0])
	init := f32Bytes(make([]float32, P+guard))
	for i := range guard {
		binary.LittleEndian.PutUint32(init[4*(P+i):], math.Float32bits(guardOut))
	}
	nllBuf := d.buffer(t, "nll", init)
	d.run(t, lr.combine, map[string]Buf{"part": part, "targets": targets, "nll": {Buffer: nllBuf, Size: uint64(4 * P)}},
		Params{"P": float64(P), "tiles": float64(tiles)}, grid(ceilDiv(P, wg)))
	out := d.readF32(t, nllBuf, P+guard)
	for i, v := range out[P:] {
		if v != guardOut {
			t.Errorf("nll: guard %d after the end = %v: written out of bounds", i, v)
		}
	}
	return out[:P]
}

// TestLossReduction checks nll_combine.wgsl alone against a float64
// computation on random partials, for P of 1, a workgroup less one, a
// workgroup, and several with a partial last (nothing written past P), and
// that reruns are bit-identical. Tolerance: 1e-6 relative to max(1, |nll|).
func TestLossReduction(t *testing.T) {
	d := newTestDev(t)
	red := newLossReducer(t, d)
	wg := int(red.combine.WorkgroupSize[0])
	const tiles = 7
	for _, P := range []int{1, wg - 1, wg, 3*wg + 17} {
		t.Run(fmt.Sprint("P=", P), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(P), 77))
			part := make([]float32, 2*tiles*P)
			tgt := make([]float32, P)
			want := make([]float64, P)
			for i := range P {
				m, s := -3.0e38, 0.0
				for k := range tiles {
					pm, ps := float32(r.NormFloat64()*3), float32(1+r.Float64()*50)
					part[2*(k*P+i)], part[2*(k*P+i)+1] = pm, ps
					mn := math.Max(m, float64(pm))
					s = s*math.Exp(m-mn) + float64(ps)*math.Exp(float64(pm)-mn)
					m = mn
				}
				tgt[i] = float32(r.NormFloat64() * 2)
				want[i] = m + math.Log(s) - float64(tgt[i])
			}
			ids := make([]byte, 4*P) // the target ids, which nll_combine.wgsl does not read: not logits
			for i := range P {
				binary.LittleEndian.PutUint32(ids[4*i:], math.Float32bits(1e6))
			}
			pb, tb := d.buffer(t, "part", f32Bytes(part)), d.buffer(t, "targets", append(ids, f32Bytes(tgt)...))
			nll := red.run(t, d, Buf{Buffer: pb}, Buf{Buffer: tb}, P, tiles)
			checkClose(t, "nll", nll, want, 1e-6)
			if again := red.run(t, d, Buf{Buffer: pb}, Buf{Buffer: tb}, P, tiles); !bitsEqual(again, nll) {
				t.Errorf("rerun: not bit-identical")
			}
		})
	}
}
