package model

import (
	"errors"
	"fmt"
)

// maxDim bounds every size of a Config, so that no product of two of them
// overflows and a corrupt file cannot ask for an absurd allocation.
const maxDim = 1 << 24

// The LayerNorm epsilons Validate accepts. Above the largest, epsilon swamps
// the variance of the normalized rows (1e300 gives a uniform model); below the
// smallest it vanishes in float32 (and in float16 far sooner).
const (
	minLayerNormEps = 1e-30
	maxLayerNormEps = 0.1
)

// Validate reports whether c describes a GPT-2 this package can run: every
// size positive and at most 2^24, n_embd divisible by n_head, and a LayerNorm
// epsilon in [1e-30, 0.1].
func (c Config) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{
		{"n_layer", c.NLayer},
		{"n_head", c.NHead},
		{"n_embd", c.NEmbd},
		{"n_positions", c.NPositions},
		{"vocab_size", c.VocabSize},
	} {
		if f.v <= 0 || f.v > maxDim {
			return fmt.Errorf("config %s = %d, want 1..%d", f.name, f.v, maxDim)
		}
	}
	if c.NEmbd%c.NHead != 0 {
		return fmt.Errorf("config n_embd = %d is not divisible by n_head = %d", c.NEmbd, c.NHead)
	}
	if !(c.LayerNormEps >= minLayerNormEps && c.LayerNormEps <= maxLayerNormEps) {
		return fmt.Errorf("config layer_norm_epsilon = %v, want %g..%g (GPT-2 uses 1e-5)", c.LayerNormEps, minLayerNormEps, maxLayerNormEps)
	}
	return nil
}

// Validate checks that m's configuration is valid and that every weight has
// the length its shape implies and holds only finite values. The error names
// the tensor as Hugging Face does ("h.3.mlp.c_fc.weight").
func (m *Model) Validate() error {
	if err := m.Config.Validate(); err != nil {
		return err
	}
	if len(m.Weights.Layers) != m.Config.NLayer {
		return fmt.Errorf("model has %d layers, config says %d", len(m.Weights.Layers), m.Config.NLayer)
	}
	for _, s := range append(m.Config.Tensors(), m.Config.LMHeadSpec()) {
		x := *m.Weights.slot(s)
		if len(x) != s.NumElements() {
			return fmt.Errorf("tensor %s has %d values, want %d for shape %v", s.Name, len(x), s.NumElements(), s.Shape)
		}
		if i := firstNonFinite(x); i >= 0 {
			return fmt.Errorf("tensor %s: %w", s.Name, nonFinite(x[i], i))
		}
	}
	return nil
}

// CheckSequences reports the first sequence of a batch that a model of shape
// cfg cannot score: an empty batch, an empty sequence, one longer than the
// model's positions, a first target outside [1, len], or a token id outside
// the vocabulary. Every backend calls it before any work, so all of them refuse
// the same input with the same message.
func CheckSequences(cfg Config, seqs []Sequence) error {
	if len(seqs) == 0 {
		return errors.New("empty batch")
	}
	for i, s := range seqs {
		switch {
		case len(s.Tokens) == 0:
			return fmt.Errorf("sequence %d is empty", i)
		case len(s.Tokens) > cfg.NPositions:
			return fmt.Errorf("sequence %d has %d tokens, the model takes at most %d", i, len(s.Tokens), cfg.NPositions)
		case s.First < 1 || s.First > len(s.Tokens):
			return fmt.Errorf("sequence %d: first target %d outside [1, %d]", i, s.First, len(s.Tokens))
		}
		for t, id := range s.Tokens {
			if id < 0 || int(id) >= cfg.VocabSize {
				return fmt.Errorf("sequence %d: token %d at position %d outside the vocabulary [0, %d)", i, id, t, cfg.VocabSize)
			}
		}
	}
	return nil
}
