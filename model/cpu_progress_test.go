package model

import (
	"context"
	"testing"
)

// TestLossProgress: with WithLossProgress, a loss reports after every layer
// of every chunk and after each chunk's LM head, so a display moves during a
// batch: done never decreases, passes values strictly between two chunk ends,
// and ends at the batch's targets; the sums are those of a call without it.
func TestLossProgress(t *testing.T) {
	cfg := Config{NLayer: 4, NHead: 2, NEmbd: 32, NPositions: 64, VocabSize: 64, LayerNormEps: 1e-5}
	cpu := NewCPU(randomModel(cfg, 3, false), 2)
	cpu.maxRows = 2 * cfg.NPositions // two full sequences a chunk
	seqs := make([]Sequence, 6)
	for i := range seqs { // full length, so the chunks are known: 3 of 2
		seqs[i] = randomSeqs(cfg, 1, uint64(10+i))[0]
		seqs[i].First = 1 + i
	}
	want, err := cpu.Loss(context.Background(), seqs)
	if err != nil {
		t.Fatal(err)
	}
	var calls [][2]int
	ctx := WithLossProgress(context.Background(), func(done, total int) { calls = append(calls, [2]int{done, total}) })
	for _, name := range []string{"Loss", "LossTopLogprobs"} {
		calls = nil
		var got LossSums
		if name == "Loss" {
			got, err = cpu.Loss(ctx, seqs)
		} else {
			got, _, _, err = cpu.LossTopLogprobs(ctx, seqs, 3)
		}
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: sums with progress %+v, without %+v", name, got, want)
		}
		const chunks = 3
		if len(calls) != chunks*(cfg.NLayer+1) {
			t.Fatalf("%s: %d progress calls, want %d (a call per layer and per LM head, %d chunks): %v", name, len(calls), chunks*(cfg.NLayer+1), chunks, calls)
		}
		prev, between := 0, 0
		for i, c := range calls {
			if c[1] != want.Count || c[0] < prev || c[0] > want.Count {
				t.Errorf("%s: call %d: %v after %d; want done rising to the total %d", name, i, c, prev, want.Count)
			}
			if (i+1)%(cfg.NLayer+1) != 0 && c[0] > prev {
				between++ // a layer moved done inside a chunk
			}
			prev = c[0]
		}
		if prev != want.Count || between < chunks*(cfg.NLayer-1) {
			t.Errorf("%s: last done %d of %d, %d layer reports moved it; want the total and at least %d", name, prev, want.Count, between, chunks*(cfg.NLayer-1))
		}
	}
}

// TestLossProgressNone: without the hook no meter is made.
func TestLossProgressNone(t *testing.T) {
	if m := newLossMeter(context.Background(), 10); m != nil {
		t.Errorf("meter %+v without a hook", m)
	}
	var m *lossMeter // a nil meter does nothing
	m.chunk(Config{NLayer: 1, NEmbd: 4, VocabSize: 8}, nil, 2, 1)
	m.layerDone(1)
	m.chunkDone()
}
