package shaders

import (
	"fmt"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/refops"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// TestRopeKVWrite compares rope_kv_write.wgsl with refops: for B = 2
// sequences of a chunk of T = 5 rows at positions 3 .. 7 of a cache of 10,
// 4 query heads over 2 key/value heads of head size 12 and 128, with and
// without Qwen3's q/k norms (refops.RMSNorm over the head, weights f32 and
// f16, the second layer's of a rotary buffer as uploadLlama lays it out:
// the table, then each layer's norms, appendNormPairs), the queries in qkv are rotated in place as refops.Rotate turns them
// with float64 angles (refops.RopeInvFreq with llama3 scaling, not the
// kernel's table), the keys rotated into kc and the values copied into vc at
// their positions, exactly; qkv's key and value columns and the cache's other
// positions are left as they were. The workgroups, of ropeWG's size (at
// head size 12, 11 heads of 6 pairs: the last workgroup only partly live,
// its other invocations at the q/k norm's barrier all the same), are spread
// over a 2D grid.
// Tolerance 2e-6 relative to max(1, |want|): cos and sin rounded once to
// f32, f32 products, inverseSqrt.
func TestRopeKVWrite(t *testing.T) {
	d := newTestDev(t)
	const B, T, pos0, S, H, KV, eps = 2, 5, 3, 10, 4, 2, 1e-6
	for _, hd := range []int{12, 128} {
		cfg := synth.TinyLlamaConfig("qwen3")
		cfg.HeadSize, cfg.NHead, cfg.NKVHead = hd, H, KV
		table := ropeTableBytes(model.RopeTable(cfg, S))
		inv, _ := refRope(cfg) // llama3: no amplitude
		ld := (H + 2*KV) * hd
		qkv := randF32(uint64(hd), B*T*ld, 0, 1)
		sentinel := make([]float32, B*KV*S*hd)
		for i := range sentinel {
			sentinel[i] = -7
		}
		for _, norm := range []bool{false, true} {
			for _, f16 := range d.weightTypes() {
				if f16 && !norm {
					continue // no weights read
				}
				t.Run(fmt.Sprintf("hd=%d/qknorm=%v/f16=%v", hd, norm, f16), func(t *testing.T) {
					qn, kn := randF32(1, hd, 1, 0.2), randF32(2, hd, 1, 0.2)
					qnb, knb := weightBytes(qn, f16), weightBytes(kn, f16) // qn, kn rounded as the weights are
					dt := model.F32
					if f16 {
						dt = model.F16
					}
					// The rotary buffer as uploadLlama makes it for a model of 2 layers; this is
					// layer 1 (layer 0's norms are other weights, which must not be read).
					rope := appendNormPairs(table, weightBytes(randF32(3, hd, -5, 1), f16), weightBytes(randF32(4, hd, 5, 1), f16), dt)
					rope = appendNormPairs(rope, qnb, knb, dt)
					normAt := len(table)/8 + hd
					// The reference: every head of every row, in float64.
					wantQKV := f64(qkv)
					wantK, wantV := f64(sentinel), f64(sentinel)
					for row := range B * T {
						b, pos := row/T, pos0+row%T
						r := wantQKV[row*ld:][:ld]
						for j := range H + KV {
							head := r[j*hd:][:hd]
							if norm {
								w := qn
								if j >= H {
									w = kn
								}
								copy(head, refops.RMSNorm(head, f64(w), 1, hd, eps))
							}
							refops.Rotate(head, pos, inv)
						}
						for g := range KV {
							dst := ((b*KV+g)*S + pos) * hd
							copy(wantK[dst:dst+hd], r[(H+g)*hd:])
							copy(wantV[dst:dst+hd], r[(H+KV+g)*hd:])
						}
						copy(r[H*hd:], f64(qkv[row*ld+H*hd:(row+1)*ld])) // k and v stay as they were in qkv
					}
					k, err := NewKernel(d.dev, "rope_kv_write.wgsl", f16)
					if err != nil {
						t.Fatal(err)
					}
					qk := 0.0
					if norm {
						qk = 1
					}
					wg := ropeWG(hd)
					p, err := k.Pipeline(map[string]float64{"QKNORM": qk, "WG": float64(wg)})
					if err != nil {
						t.Fatal(err)
					}
					qb := d.buffer(t, "qkv", f32Bytes(qkv))
					kcb, vcb := d.buffer(t, "kc", f32Bytes(sentinel)), d.buffer(t, "vc", f32Bytes(sentinel))
					groups := ceilDiv(B*T*(H+2*KV)*hd/2, wg)
					d.run(t, p, map[string]Buf{"qkv": {Buffer: qb}, "kc": {Buffer: kcb}, "vc": {Buffer: vcb},
						"rope": {Buffer: d.buffer(t, "rope", rope)}},
						Params{"B": B, "T": T, "H": H, "KV": KV, "hd": float64(hd), "S": S, "pos0": pos0, "eps": eps, "norm": float64(normAt)},
						[3]uint32{uint32(ceilDiv(groups, 3)), 3, 1})
					checkClose(t, "qkv", d.readF32(t, qb, B*T*ld), wantQKV, 2e-6)
					checkClose(t, "kc", d.readF32(t, kcb, len(sentinel)), wantK, 2e-6)
					checkClose(t, "vc", d.readF32(t, vcb, len(sentinel)), wantV, 0)
				})
			}
		}
	}
}

// TestRopeWG: rope_kv_write.wgsl's workgroups take whole heads (a multiple
// of hd/2 invocations, which its q/k norm's sums rely on) of at least 64
// invocations, and at most 128 for the head sizes attention takes.
func TestRopeWG(t *testing.T) {
	for hd := 2; hd <= maxHeadDim; hd += 2 {
		wg := ropeWG(hd)
		if wg%(hd/2) != 0 || wg < 64 || wg > 128 {
			t.Errorf("hd %d: WG %d", hd, wg)
		}
	}
}

// TestLlamaPositions: the rotary buffer (the table of llamaPositions
// positions and, with QKNorm, every layer's q/k norm pairs) stays within
// maxRopeBytes, the binding every device allows, and holds all of a
// model's positions where they fit.
func TestLlamaPositions(t *testing.T) {
	for _, c := range []struct {
		positions, hd, layers int
		qkNorm                bool
		all                   bool // all the model's positions fit
	}{
		{40960, 128, 36, true, true},   // Qwen3-8B
		{131072, 128, 32, false, true}, // Llama 3.1 8B: 64 MiB of table
		{1 << 20, 128, 36, true, false},
		{1 << 20, 256, 100, true, false},
	} {
		cfg := synth.TinyLlamaConfig("qwen3")
		cfg.NPositions, cfg.HeadSize, cfg.NLayer, cfg.QKNorm = c.positions, c.hd, c.layers, c.qkNorm
		n := llamaPositions(cfg)
		bytes := n*8*(c.hd/2) + ropeNormBytes(cfg)
		if bytes > maxRopeBytes || (n == c.positions) != c.all || n > c.positions || n < 1 {
			t.Errorf("%+v: %d positions, %d bytes with the norms (cap %d)", c, n, bytes, maxRopeBytes)
		}
		if !c.all && bytes+8*(c.hd/2) <= maxRopeBytes {
			t.Errorf("%+v: %d positions, where one more fits", c, n)
		}
	}
}
