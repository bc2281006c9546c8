package shaders

import (
	"context"
	"math"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// TestSessionMatchesCPUGenerator: a decode session on the device (prompt
// prefilled in one Append, then one token per step, sampled so that the
// context varies) gives, at every step, the log-probabilities of the CPU
// generator's KV-cache decode within 1e-5 (f32 weights), for the chosen
// token and the likeliest ones; both stop at the model's positions.
func TestSessionMatchesCPUGenerator(t *testing.T) {
	d := newTestDev(t)
	m := synth.Peaked(synth.TinyConfig(), 11)
	ctx := context.Background()
	g, err := NewGPT2(ctx, d.dev, m.Reader(), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s, err := g.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cpuGen, err := model.NewCPU(m, 0).NewGenerator()
	if err != nil {
		t.Fatal(err)
	}
	sampler, err := model.NewSampler(model.SampleOptions{Temperature: 1.5, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	prompt := zipfSeqs(60, 1, 40, m.Config.VocabSize)[0].Tokens
	next := prompt
	worst := 0.0
	for step := 0; s.Len()+len(next) <= m.Config.NPositions; step++ {
		gl, err := s.Append(ctx, next)
		if err != nil {
			t.Fatal(err)
		}
		cl, err := cpuGen.Append(ctx, next)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := sampler.Sample(cl)
		for _, v := range []int32{id, model.Argmax(cl), model.Argmax(gl), 0, int32(m.Config.VocabSize - 1)} {
			dg, dc := model.LogSoftmax(gl, v), model.LogSoftmax(cl, v)
			worst = max(worst, math.Abs(dg-dc))
			if math.Abs(dg-dc) > 1e-5 {
				t.Fatalf("step %d (%d positions): log p(%d) on the GPU %.7f, CPU %.7f", step, s.Len(), v, dg, dc)
			}
		}
		next = []int32{id}
	}
	if s.Len() != m.Config.NPositions {
		t.Errorf("decoded to %d positions, want %d", s.Len(), m.Config.NPositions)
	}
	t.Logf("worst log-probability difference over %d positions: %.2g", s.Len(), worst)
	if _, err := s.Append(ctx, []int32{1}); err == nil {
		t.Error("a token past the positions was accepted")
	}
	if _, err := s.Append(ctx, []int32{int32(m.Config.VocabSize)}); err == nil {
		t.Error("a token outside the vocabulary was accepted")
	}
}

// TestSessionCapIsDevicePositions: a session holds the positions it was
// asked for, and at most the device's Positions, which may be fewer than
// the model's (a GPU's binding or loop limit): Cap says how many, so that a
// generation stops there instead of failing at the next Append.
func TestSessionCapIsDevicePositions(t *testing.T) {
	d := newTestDev(t)
	m := synth.Peaked(synth.TinyConfig(), 11)
	ctx := context.Background()
	g, err := NewGPT2(ctx, d.dev, m.Reader(), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	n := m.Config.NPositions
	g.capPositions(n-5, "a test's cap")
	for _, c := range []struct{ ask, want int }{{0, n - 5}, {n, n - 5}, {10, 10}} {
		s, err := g.NewSessionFor(c.ask)
		if err != nil {
			t.Fatal(err)
		}
		if s.Cap() != c.want {
			t.Errorf("NewSessionFor(%d).Cap() = %d, want %d", c.ask, s.Cap(), c.want)
		}
		toks := make([]int32, s.Cap())
		if _, err := s.Append(ctx, toks); err != nil {
			t.Errorf("NewSessionFor(%d): %d tokens: %v", c.ask, len(toks), err)
		}
		if _, err := s.Append(ctx, []int32{0}); err == nil {
			t.Errorf("NewSessionFor(%d): a token past Cap was accepted", c.ask)
		}
		s.Close()
	}
}
