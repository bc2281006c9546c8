package model_test

import (
	"context"
	"slices"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// NewCPUOwned packs m in place: every block matrix is released from m (its
// Layer field nil), the vectors and embeddings are shared, and the loss, the
// per-token NLLs and the generator's logits are bit-identical to NewCPU's on a
// copy of the same model, for any thread count. The shape has 4C = 320 rows in
// its c_proj matrix, more than one band of the parallel transpose.
func TestNewCPUOwnedReleasesAndMatches(t *testing.T) {
	cfg := model.Config{NLayer: 2, NHead: 4, NEmbd: 80, NPositions: 48, VocabSize: 300, LayerNormEps: 1e-5}
	ctx := context.Background()
	seqs := []model.Sequence{
		{Tokens: []int32{1, 7, 42, 299, 0, 13, 8, 8, 150, 3}, First: 1},
		{Tokens: []int32{5, 6, 7, 8, 9}, First: 2},
	}
	ref := model.NewCPU(synth.Random(cfg, 9), 2)
	wantSums, wantNLL, err := ref.LossPerToken(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	wantLogits := generate(t, ref, seqs[0].Tokens)

	for _, threads := range []int{1, 3} {
		m := synth.Random(cfg, 9)
		l0 := m.Weights.Layers[0]
		c := model.NewCPUOwned(m, threads)
		for i, l := range m.Weights.Layers {
			if l.QKVW != nil || l.ProjW != nil || l.FCW != nil || l.FCProjW != nil {
				t.Errorf("threads %d: layer %d: a block matrix is still held by the Model", threads, i)
			}
			if l.LN1W == nil || l.QKVB == nil || l.FCProjB == nil {
				t.Errorf("threads %d: layer %d: a vector was released", threads, i)
			}
		}
		if !sameSlice(m.Weights.Layers[0].LN1W, l0.LN1W) {
			t.Errorf("threads %d: LN1W was copied, want it shared", threads)
		}
		sums, nll, err := c.LossPerToken(ctx, seqs)
		if err != nil {
			t.Fatal(err)
		}
		if sums != wantSums || !slices.Equal(nll, wantNLL) {
			t.Errorf("threads %d: owned loss %+v, NewCPU %+v", threads, sums, wantSums)
		}
		if got := generate(t, c, seqs[0].Tokens); !slices.Equal(got, wantLogits) {
			t.Errorf("threads %d: owned generator's logits differ from NewCPU's", threads)
		}
	}
}

// A model whose weights do not match its Config is not consumed: Loss reports
// it, and the Model keeps its matrices.
func TestNewCPUOwnedBadModel(t *testing.T) {
	cfg := synth.TinyConfig()
	m := synth.Random(cfg, 1)
	m.Weights.Layers[1].FCB = m.Weights.Layers[1].FCB[:3]
	c := model.NewCPUOwned(m, 2)
	if _, err := c.Loss(context.Background(), []model.Sequence{{Tokens: []int32{1, 2}, First: 1}}); err == nil {
		t.Fatal("Loss of a bad model: no error")
	}
	if m.Weights.Layers[0].QKVW == nil {
		t.Error("a bad model was consumed")
	}
}

// generate returns the logits of every step of feeding tokens one at a time.
func generate(t *testing.T, c *model.CPU, tokens []int32) []float32 {
	t.Helper()
	g, err := c.NewGenerator()
	if err != nil {
		t.Fatal(err)
	}
	var all []float32
	for _, tok := range tokens {
		logits, err := g.Append(context.Background(), []int32{tok})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, logits...)
	}
	return all
}
