package model_test

import (
	"context"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// genPrompt is an arbitrary prompt of GPT-2 ids ("The quick brown fox jumps over the").
var genPrompt = []int32{464, 2068, 7586, 21831, 18045, 625, 262}

// topIDs returns the n ids of the largest logits, largest first.
func topIDs(logits []float32, n int) []int32 {
	ids := make([]int32, len(logits))
	for i := range ids {
		ids[i] = int32(i)
	}
	slices.SortFunc(ids, func(a, b int32) int {
		switch {
		case logits[a] > logits[b]:
			return -1
		case logits[a] < logits[b]:
			return 1
		}
		return int(a - b)
	})
	return ids[:n]
}

// TestGeneratorGreedyMatchesRecompute decodes with the KV cache up to the
// model's last position, greedily and sampled, and checks every step against
// the CPU forward over the whole prefix (CPU.LossPerToken, which knows nothing
// of the cache): the log-probabilities of the step's 8 most likely tokens and
// of the chosen one agree within 1e-5, and the greedy token is the one the
// full recompute likes best.
func TestGeneratorGreedyMatchesRecompute(t *testing.T) {
	ctx := context.Background()
	tiny := synth.TinyConfig()
	// GPT-2's n_inner and scale_attn_by_inverse_layer_idx: the cache's
	// attention divides by the layer's divisor as the forward does.
	scaled := tiny
	scaled.NInner, scaled.LayerScaledAttn = 40, true
	for _, c := range []struct {
		chunk int
		temp  float64
		cfg   model.Config
	}{
		{256, 0, tiny}, // greedy, the prompt in one pass
		{3, 0, tiny},   // greedy, the prompt prefilled 3 rows at a time
		{256, 1, tiny}, // sampled (the tiny model's greedy choice hardly varies), one pass
		{5, 1, tiny},
		{3, 1, scaled},
	} {
		chunk, cfg := c.chunk, c.cfg
		cpu := model.NewCPU(synth.Peaked(cfg, 11), 0)
		sampler, err := model.NewSampler(model.SampleOptions{Temperature: c.temp, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		g, err := cpu.NewGenerator()
		if err != nil {
			t.Fatal(err)
		}
		g.SetChunk(chunk)
		seq := slices.Clone(genPrompt)
		logits, err := g.Append(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		distinct := map[int32]bool{}
		for step := 0; ; step++ {
			if len(seq) == cfg.NPositions { // the recompute takes no longer sequence
				break
			}
			cand := topIDs(logits, 8)
			var seqs []model.Sequence
			for _, id := range cand {
				seqs = append(seqs, model.Sequence{Tokens: append(slices.Clone(seq), id), First: len(seq)})
			}
			next, lpNext := sampler.Sample(logits)
			if !slices.Contains(cand, next) {
				cand = append(cand, next)
				seqs = append(seqs, model.Sequence{Tokens: append(slices.Clone(seq), next), First: len(seq)})
			}
			_, nll, err := cpu.LossPerToken(ctx, seqs)
			if err != nil {
				t.Fatal(err)
			}
			best := 0
			for i, id := range cand {
				lp := model.LogSoftmax(logits, id)
				if d := math.Abs(lp + float64(nll[i])); d > 1e-5 {
					t.Fatalf("chunk %d step %d: token %d: logprob %.7f with the cache, %.7f recomputed (diff %.2g)", chunk, step, id, lp, -nll[i], d)
				}
				if id == next && lp != lpNext {
					t.Fatalf("step %d: Sample's logprob %g, LogSoftmax's %g", step, lpNext, lp)
				}
				if nll[i] < nll[best] {
					best = i
				}
			}
			if c.temp == 0 && next != cand[best] {
				t.Fatalf("chunk %d step %d: greedy token %d, the full recompute prefers %d", chunk, step, next, cand[best])
			}
			distinct[next] = true
			seq = append(seq, next)
			if logits, err = g.Append(ctx, []int32{next}); err != nil {
				t.Fatal(err)
			}
		}
		if g.Len() != cfg.NPositions {
			t.Errorf("chunk %d: %d tokens in the cache in the end, want %d", chunk, g.Len(), cfg.NPositions)
		}
		if c.temp > 0 && len(distinct) < 3 {
			t.Errorf("chunk %d: greedy decoding produced only %d distinct tokens: the model is too flat for this test", chunk, len(distinct))
		}
		if _, err := g.Append(ctx, []int32{1}); err == nil {
			t.Error("appending past the model's positions gave no error")
		}
	}
}

// TestGeneratorPrefillEqualsSteps: a prompt prefilled at once and fed one
// token at a time leave the same next-token logits (within float32 rounding:
// attention sums over different block widths).
func TestGeneratorPrefillEqualsSteps(t *testing.T) {
	ctx := context.Background()
	cpu := model.NewCPU(synth.Peaked(synth.TinyConfig(), 3), 0)
	a, _ := cpu.NewGenerator()
	b, _ := cpu.NewGenerator()
	la, err := a.Append(ctx, genPrompt)
	if err != nil {
		t.Fatal(err)
	}
	var lb []float32
	for _, id := range genPrompt {
		if lb, err = b.Append(ctx, []int32{id}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range la {
		if d := math.Abs(float64(la[i] - lb[i])); d > 1e-5 {
			t.Fatalf("logit %d: %g prefilled, %g step by step", i, la[i], lb[i])
		}
	}
	b.Reset()
	if _, err := b.Append(ctx, []int32{-1}); err == nil {
		t.Error("token -1 accepted")
	}
	if b.Len() != 0 {
		t.Errorf("Len %d after a refused Append, want 0", b.Len())
	}
}

// TestGeneratorStepAllocs: a decode step allocates only a few closures
// (bytes, not the cache or the 200 KB of logits): the cache and the scratch
// are the Generator's from the start.
func TestGeneratorStepAllocs(t *testing.T) {
	ctx := context.Background()
	cpu := model.NewCPU(synth.Peaked(synth.TinyConfig(), 3), 1)
	g, _ := cpu.NewGenerator()
	if _, err := g.Append(ctx, genPrompt); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	const steps = 20
	runtime.ReadMemStats(&before)
	for range steps {
		if _, err := g.Append(ctx, []int32{262}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / steps; per > 4096 {
		t.Errorf("%d bytes allocated per decode step, want at most 4096", per)
	}
}

func TestSampler(t *testing.T) {
	logits := []float32{0, 2, 1, 3, -1, 2.5}
	greedy, _ := model.NewSampler(model.SampleOptions{})
	if id, lp := greedy.Sample(logits); id != 3 || math.Abs(lp-model.LogSoftmax(logits, 3)) > 0 {
		t.Errorf("greedy: %d (%g), want 3", id, lp)
	}
	draw := func(o model.SampleOptions, n int) []int32 {
		s, err := model.NewSampler(o)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int32
		for range n {
			id, _ := s.Sample(logits)
			ids = append(ids, id)
		}
		return ids
	}
	a := draw(model.SampleOptions{Temperature: 1, Seed: 5}, 200)
	if b := draw(model.SampleOptions{Temperature: 1, Seed: 5}, 200); !slices.Equal(a, b) {
		t.Error("the same seed gave different samples")
	}
	if b := draw(model.SampleOptions{Temperature: 1, Seed: 6}, 200); slices.Equal(a, b) {
		t.Error("different seeds gave the same samples")
	}
	// Frequencies at temperature 1 follow the softmax.
	count := make([]int, len(logits))
	const n = 20000
	for _, id := range draw(model.SampleOptions{Temperature: 1, Seed: 1}, n) {
		count[id]++
	}
	for id := range logits {
		p := math.Exp(model.LogSoftmax(logits, int32(id)))
		if got := float64(count[id]) / n; math.Abs(got-p) > 5*math.Sqrt(p*(1-p)/n)+1e-3 {
			t.Errorf("token %d drawn %.4f of the time, softmax %.4f", id, got, p)
		}
	}
	for _, c := range []struct {
		opt     model.SampleOptions
		allowed []int32
	}{
		{model.SampleOptions{Temperature: 1, TopK: 1}, []int32{3}},
		{model.SampleOptions{Temperature: 5, TopK: 2}, []int32{3, 5}},
		{model.SampleOptions{Temperature: 1, TopP: 1e-9}, []int32{3}},
		// softmax of {3, 2.5, 2, 2}: 0.35, 0.21, 0.13, 0.13: 0.5 needs the top two
		{model.SampleOptions{Temperature: 1, TopP: 0.5}, []int32{3, 5}},
		{model.SampleOptions{Temperature: 1e-3}, []int32{3}},
	} {
		for _, id := range draw(c.opt, 500) {
			if !slices.Contains(c.allowed, id) {
				t.Errorf("%+v drew %d, allowed %v", c.opt, id, c.allowed)
				break
			}
		}
	}
	for _, bad := range []model.SampleOptions{{Temperature: -1}, {TopK: -1}, {TopP: 1.5}, {Temperature: math.NaN()}} {
		if _, err := model.NewSampler(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// BenchmarkGeneratorStep times one decode step (Append of one token: the
// forward pass and the 50257 logits) on all cores, the scale for
// BenchmarkSample's sampler per token: the tiny model (positions 1-64), and
// GPT-2 124M's shape (random weights, positions 64-128; setup, about 1 GB,
// untimed).
//
//	go test ./model -run '^$' -bench 'Sample$|GeneratorStep' -benchtime 300x
func BenchmarkGeneratorStep(b *testing.B) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		cfg    model.Config
		from   int // positions from..to-1
		to     int
		random bool
	}{
		{"tiny", synth.TinyConfig(), 0, 64, false},
		{"124M", shape124M, 64, 128, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			m := synth.Peaked(c.cfg, 3)
			if c.random {
				m = synth.Random(c.cfg, 3)
			}
			g, err := model.NewCPU(m, 0).NewGeneratorFor(c.to)
			if err != nil {
				b.Fatal(err)
			}
			prefix := make([]int32, c.from)
			for i := range prefix {
				prefix[i] = int32(i * 7)
			}
			for b.Loop() {
				if g.Len() == c.to || g.Len() == 0 {
					b.StopTimer()
					g.Reset()
					if len(prefix) > 0 {
						if _, err := g.Append(ctx, prefix); err != nil {
							b.Fatal(err)
						}
					}
					b.StartTimer()
				}
				if _, err := g.Append(ctx, []int32{262}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
