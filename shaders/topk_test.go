package shaders

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// TestGPT2TopLogprobs: topk_logits.wgsl's log-probabilities with f32 weights
// equal the CPU's (model.CPU.LossTopLogprobs) to 1e-4 nats on random
// sequences of the peaked model, the ids in the same order where the CPU's
// neighbours are further apart; with wte bound in ranges, and profiled, the
// result is bit-identical; with f16 weights (where the adapter has them) near
// f32; the NLLs and sums are a plain batch's; a K out of
// range or without per-token NLLs is refused.
func TestGPT2TopLogprobs(t *testing.T) {
	d := newTestDev(t)
	m := synth.Peaked(synth.TinyConfig(), 17)
	g, err := NewGPT2(context.Background(), d.dev, m.Reader(), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	seqs := zipfSeqs(5, 3, 20, m.Config.VocabSize)
	const k = 9
	ctx := context.Background()
	run := func() (model.LossSums, []float32, []model.TokenLogprob) {
		t.Helper()
		p, err := g.SubmitWith(ctx, seqs, 0, SubmitOptions{PerToken: true, TopLogprobs: k})
		if err != nil {
			t.Fatal(err)
		}
		sums, err := p.Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return sums, p.PerToken(), p.TopLogprobs()
	}
	sums, nll, top := run()
	plain, err := g.SubmitWith(ctx, seqs, 0, SubmitOptions{PerToken: true})
	if err != nil {
		t.Fatal(err)
	}
	plainSums, err := plain.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sums != plainSums || !slices.Equal(nll, plain.PerToken()) || plain.TopLogprobs() != nil {
		t.Errorf("with top-k: sums %+v; without %+v (NLLs equal %v)", sums, plainSums, slices.Equal(nll, plain.PerToken()))
	}
	_, _, want, err := model.NewCPU(m, 0).LossTopLogprobs(ctx, seqs, k)
	if err != nil {
		t.Fatal(err)
	}
	if len(top) != len(want) || len(top) != k*sums.Count {
		t.Fatalf("%d top entries, CPU %d, targets %d", len(top), len(want), sums.Count)
	}
	worst := 0.0
	for i, x := range top {
		y := want[i]
		j := i % k
		d := math.Abs(float64(x.Logprob - y.Logprob))
		worst = max(worst, d)
		apart := (j == 0 || float64(want[i-1].Logprob-y.Logprob) > 1e-4) && (j == k-1 || float64(y.Logprob-want[i+1].Logprob) > 1e-4)
		if d > 1e-4 || apart && x.ID != y.ID {
			t.Errorf("target %d top %d: GPU id %d %v, CPU id %d %v", i/k, j, x.ID, x.Logprob, y.ID, y.Logprob)
		}
	}
	t.Logf("%d targets x top-%d in %d dispatches of %d ids; largest |GPU - CPU| %.2e", sums.Count, k, g.topDispatches(g.wteRanges(), k), g.topSlice(k), worst)

	g.bindLimit = 3 * g.vt * m.Config.NEmbd * g.weightBytes()
	if n := len(g.wteRanges()); n < 10 {
		t.Fatalf("%d wte ranges", n)
	}
	_, _, split := run()
	g.bindLimit = 0
	if !slices.Equal(split, top) {
		t.Errorf("wte in ranges gave other top log-probabilities")
	}
	if err := g.SetProfiling(true); err == nil {
		_, _, profiled := run()
		g.SetProfiling(false)
		if !slices.Equal(profiled, top) {
			t.Errorf("profiled: other top log-probabilities")
		}
	}
	if d.f16 { // f16 weights: near the f32 result
		h, err := NewGPT2(ctx, d.dev, m.Reader(), true, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		p, err := h.SubmitWith(ctx, seqs, 0, SubmitOptions{PerToken: true, TopLogprobs: k})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		top16, same := p.TopLogprobs(), 0
		for i := 0; i < len(top); i += k {
			if top16[i].ID == top[i].ID {
				same++
			}
			if d := math.Abs(float64(top16[i].Logprob - top[i].Logprob)); d > 0.05 {
				t.Errorf("f16 target %d: best log-probability %v, f32 %v", i/k, top16[i].Logprob, top[i].Logprob)
			}
		}
		if same < sums.Count*9/10 {
			t.Errorf("f16: the same best token as f32 at %d of %d targets", same, sums.Count)
		}
	}
	for _, bad := range []SubmitOptions{{PerToken: true, TopLogprobs: MaxTopLogprobs + 1}, {PerToken: true, TopLogprobs: -1}, {TopLogprobs: 3}} {
		if _, err := g.SubmitWith(ctx, seqs, 0, bad); err == nil || !strings.Contains(err.Error(), "top log-probabilities") {
			t.Errorf("%+v: err = %v", bad, err)
		}
	}
}
