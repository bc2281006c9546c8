package shaders

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// TestGPT2TopLogprobsVariants runs both top-K kernels, topk_logits.wgsl (one
// invocation per target: software adapters) and topk_logits_shared.wgsl (one
// workgroup per target: hardware GPUs, forced here), on random sequences of
// the peaked model against the CPU's top-K (model.CPU.LossTopLogprobs): the
// log-probabilities to 1e-4 nats, the ids equal where the CPU's neighbours are
// further apart than that. Cases: K = 1; K = 7 (not a power of two) with wte
// bound in ranges (the running top-K carried from dispatch to dispatch); K =
// 100 over a vocabulary of 104, in ranges of one tile (fewer ids than K for
// the shared kernel's); and exact ties (wte rows 0-3 copied to ids
// 300-303, wte bound in ranges of one vocabulary tile, which split the
// pairs), where a tied pair comes lower id first with equal
// log-probabilities, the higher id never without the lower.
func TestGPT2TopLogprobsVariants(t *testing.T) {
	d := newTestDev(t)
	ctx := context.Background()
	const tieOff = 300
	cases := []struct {
		name   string
		vocab  int
		k      int
		split  int // wte bound in ranges of this many vocabulary tiles; 0 for whole
		ties   bool
		seqs   int
		maxLen int
	}{
		{"k1", 0, 1, 0, false, 2, 10},
		{"k7-split", 0, 7, 3, false, 2, 8},
		{"k100-vocab104", 104, 100, 1, false, 2, 8},
		{"ties", 600, 6, 1, true, 3, 12},
	}
	for _, c := range cases {
		cfg := synth.TinyConfig()
		if c.vocab > 0 {
			cfg.VocabSize = c.vocab
		}
		m := synth.Peaked(cfg, 23)
		if c.ties {
			C := cfg.NEmbd
			for id := range 4 {
				copy(m.Weights.WTE[(tieOff+id)*C:(tieOff+id+1)*C], m.Weights.WTE[id*C:(id+1)*C])
			}
		}
		seqs := zipfSeqs(uint64(41+c.k), c.seqs, c.maxLen, cfg.VocabSize)
		_, _, want, err := model.NewCPU(m, 0).LossTopLogprobs(ctx, seqs, c.k)
		if err != nil {
			t.Fatal(err)
		}
		for _, shared := range []bool{false, true} {
			name := fmt.Sprintf("%s/shared=%v", c.name, shared)
			t.Run(name, func(t *testing.T) {
				g, err := NewGPT2(ctx, d.dev, m.Reader(), false, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				if shared {
					g.sharedMatmul, g.vt = true, sharedVocabTile // the kernels of hardware GPUs
				}
				if c.split > 0 {
					g.sliceTiles = 1 // ranges of single tiles for the LM head too
					g.bindLimit = c.split * g.vt * cfg.NEmbd * g.weightBytes()
					if n := len(g.wteRanges()); n < 2 && cfg.VocabSize > c.split*g.vt {
						t.Fatalf("%d wte ranges", n)
					}
				}
				p, err := g.SubmitWith(ctx, seqs, 0, SubmitOptions{PerToken: true, TopLogprobs: c.k})
				if err != nil {
					t.Fatal(err)
				}
				sums, err := p.Wait(ctx)
				if err != nil {
					t.Fatal(err)
				}
				top, k := p.TopLogprobs(), c.k
				if len(top) != len(want) || len(top) != k*sums.Count {
					t.Fatalf("%d top entries, CPU %d, targets %d", len(top), len(want), sums.Count)
				}
				worst := 0.0
				for i, x := range top {
					y, j := want[i], i%k
					diff := math.Abs(float64(x.Logprob - y.Logprob))
					worst = max(worst, diff)
					apart := (j == 0 || float64(want[i-1].Logprob-y.Logprob) > 1e-4) && (j == k-1 || float64(y.Logprob-want[i+1].Logprob) > 1e-4)
					if diff > 1e-4 || apart && x.ID != y.ID {
						t.Errorf("target %d top %d: GPU id %d %v, CPU id %d %v", i/k, j, x.ID, x.Logprob, y.ID, y.Logprob)
					}
				}
				t.Logf("%d targets x top-%d in %d dispatches of %d ids; largest |GPU - CPU| %.2e", sums.Count, k, g.topDispatches(g.wteRanges(), k), g.topSlice(k), worst)
				if c.ties {
					pairs := 0
					for i := 0; i < len(top); i += k {
						row := top[i : i+k]
						at := func(id int32) int {
							for j, e := range row {
								if e.ID == id {
									return j
								}
							}
							return -1
						}
						for id := range int32(4) {
							lo, hi := at(id), at(id+tieOff)
							switch {
							case hi >= 0 && (lo < 0 || lo > hi):
								t.Errorf("target %d: tied id %d at %d, id %d at %d: the lower id must come first", i/k, id+tieOff, hi, id, lo)
							case hi >= 0 && row[lo].Logprob != row[hi].Logprob:
								t.Errorf("target %d: tied ids %d and %d have log-probabilities %v and %v", i/k, id, id+tieOff, row[lo].Logprob, row[hi].Logprob)
							case hi >= 0:
								pairs++
							}
						}
					}
					if pairs == 0 {
						t.Errorf("no tied pair in any target's top-%d: the case tests nothing", k)
					}
				}
			})
		}
	}
}

// TestGPT2TopLogprobsNaN: both top-K kernels rank NaN logits as the CPU does
// (model.CPU.LossTopLogprobs: NaN below every number, NaNs tied, lower id
// first). wte rows of some ids are NaN, so their logits are NaN everywhere
// (on the GPU written over the loaded wte: the loader refuses NaN weights);
// one sequence starts with such an id, so its positions' logits are all NaN.
// The GPU's ids equal the CPU's, but for near ties of the finite logits (the
// same model without the NaN rows tells them, to 1e-4 nats); a position all
// NaN gives ids 0 to K-1. Cases: K = 7 of 600 ids, wte bound in ranges of one
// vocabulary tile (NaN entries carried between dispatches); K = 100 of 104
// ids, 6 of them NaN (NaN ids fill the last places). The log-probabilities
// are not checked: they rest on the loss's logsumexp, whose max() of a NaN
// WGSL leaves to the implementation (NaN on lavapipe, the other operand on
// SwiftShader).
func TestGPT2TopLogprobsNaN(t *testing.T) {
	d := newTestDev(t)
	ctx := context.Background()
	for _, c := range []struct {
		vocab int
		k     int
		split int // wte bound in ranges of this many vocabulary tiles; 0 for whole
	}{{600, 7, 1}, {104, 100, 0}} {
		cfg := synth.TinyConfig()
		cfg.VocabSize = c.vocab
		nanIDs := []int32{0, 2, 3, 40, 77, 103}
		isNaN := func(id int32) bool { return slices.Contains(nanIDs, id) }
		clean := synth.Peaked(cfg, 29)
		m := synth.Peaked(cfg, 29)
		C := cfg.NEmbd
		for _, id := range nanIDs {
			for c := range C {
				m.Weights.WTE[int(id)*C+c] = float32(math.NaN())
			}
		}
		seqs := zipfSeqs(61, 3, 10, cfg.VocabSize)
		for _, s := range seqs {
			for i, id := range s.Tokens {
				if isNaN(id) {
					s.Tokens[i] = 1
				}
			}
		}
		seqs = append(seqs, model.Sequence{Tokens: []int32{3, 8, 1, 50, 9}, First: 1})
		// rowNaN[i]: target i's prefix holds a NaN id, so its logits are all NaN.
		var rowNaN []bool
		for _, s := range seqs {
			for p := s.First; p < len(s.Tokens); p++ {
				rowNaN = append(rowNaN, slices.ContainsFunc(s.Tokens[:p], isNaN))
			}
		}
		_, _, want, err := model.NewCPU(m, 0).LossTopLogprobs(ctx, seqs, c.k)
		if err != nil {
			t.Fatal(err)
		}
		// The clean model's log-probabilities of every id at every target.
		_, _, all, err := model.NewCPU(clean, 0).LossTopLogprobs(ctx, seqs, cfg.VocabSize)
		if err != nil {
			t.Fatal(err)
		}
		for _, shared := range []bool{false, true} {
			t.Run(fmt.Sprintf("v%d/k%d/shared=%v", c.vocab, c.k, shared), func(t *testing.T) {
				// The loader refuses non-finite weights: load the clean
				// model and write the NaN rows over its wte (f32).
				g, err := NewGPT2(ctx, d.dev, clean.Reader(), false, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				nanRow := make([]byte, 4*C)
				for c := range C {
					binary.LittleEndian.PutUint32(nanRow[4*c:], math.Float32bits(float32(math.NaN())))
				}
				for _, id := range nanIDs {
					if err := d.dev.Queue().WriteBuffer(g.wte, uint64(4*C)*uint64(id), nanRow); err != nil {
						t.Fatal(err)
					}
				}
				if shared {
					g.sharedMatmul, g.vt = true, sharedVocabTile
				}
				if c.split > 0 {
					g.sliceTiles = 1
					g.bindLimit = c.split * g.vt * C * g.weightBytes()
					if n := len(g.wteRanges()); n < 2 && cfg.VocabSize > c.split*g.vt {
						t.Fatalf("%d wte ranges", n)
					}
				}
				p, err := g.SubmitWith(ctx, seqs, 0, SubmitOptions{PerToken: true, TopLogprobs: c.k})
				if err != nil {
					t.Fatal(err)
				}
				sums, err := p.Wait(ctx)
				if err != nil {
					t.Fatal(err)
				}
				top, k, V := p.TopLogprobs(), c.k, cfg.VocabSize
				if len(top) != len(want) || len(top) != k*sums.Count {
					t.Fatalf("%d top entries, CPU %d, targets %d", len(top), len(want), sums.Count)
				}
				t.Logf("%d targets x top-%d in %d dispatches of %d ids", sums.Count, k, g.topDispatches(g.wteRanges(), k), g.topSlice(k))
				if len(rowNaN) != sums.Count {
					t.Fatalf("%d targets, %d expected", sums.Count, len(rowNaN))
				}
				for i := range sums.Count {
					got, cpu := top[i*k:][:k], want[i*k:][:k]
					if rowNaN[i] {
						for j, x := range cpu {
							if x.ID != int32(j) {
								t.Fatalf("target %d all NaN: CPU ids %v, want 0 to %d", i, topIDs(cpu), k-1)
							}
						}
					}
					lp := map[int32]float32{} // the clean model's
					for _, x := range all[i*V:][:V] {
						lp[x.ID] = x.Logprob
					}
					for j, x := range got {
						y := cpu[j]
						near := !rowNaN[i] && !isNaN(x.ID) && !isNaN(y.ID) && math.Abs(float64(lp[x.ID]-lp[y.ID])) <= 1e-4
						if x.ID != y.ID && !near {
							t.Errorf("target %d top %d: GPU id %d %v, CPU id %d (GPU %v, CPU %v)", i, j, x.ID, x.Logprob, y.ID, topIDs(got), topIDs(cpu))
							break
						}
					}
				}
			})
		}
	}
}

// topIDs is the ids of top, in order.
func topIDs(top []model.TokenLogprob) []int32 {
	out := make([]int32, len(top))
	for i, x := range top {
		out[i] = x.ID
	}
	return out
}
