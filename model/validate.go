package model

import (
	"errors"
	"fmt"
	"math"
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

// Validate reports whether c describes a model this package can run: every
// size positive and at most 2^24, a LayerNorm (or RMSNorm) epsilon in
// [1e-30, 0.1]; for GPT-2 n_embd divisible by n_head; for the Llama family
// the query heads a multiple of the key/value heads, an even head_dim (the
// rotation pairs its halves), a finite positive rope_theta.
func (c Config) Validate() error {
	if c.Arch != ArchGPT2 && c.Arch != ArchLlama {
		return fmt.Errorf("config: unknown decoder %v", c.Arch)
	}
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
	if !(c.LayerNormEps >= minLayerNormEps && c.LayerNormEps <= maxLayerNormEps) {
		if c.Arch == ArchLlama {
			return fmt.Errorf("config rms_norm_eps = %v, want %g..%g", c.LayerNormEps, minLayerNormEps, maxLayerNormEps)
		}
		return fmt.Errorf("config layer_norm_epsilon = %v, want %g..%g (GPT-2 uses 1e-5)", c.LayerNormEps, minLayerNormEps, maxLayerNormEps)
	}
	if c.Window != 0 && (c.Arch != ArchLlama || c.Window != c.NPositions) {
		return fmt.Errorf("config: sliding window %d: want none (GPT-2) or the positions it limits, %d", c.Window, c.NPositions)
	}
	if c.Arch == ArchLlama {
		if c.UntiedHead || c.ExactGELU || c.LayerScaledAttn {
			return errors.New("config: UntiedHead, ExactGELU and LayerScaledAttn are GPT-2's (the Llama family says TiedEmbed, and uses SiLU)")
		}
		return c.validateLlama()
	}
	if c.NInner < 0 || c.NInner > maxDim {
		return fmt.Errorf("config n_inner = %d, want 1..%d (or 0: 4*n_embd)", c.NInner, maxDim)
	}
	if c.NEmbd%c.NHead != 0 {
		return fmt.Errorf("config n_embd = %d is not divisible by n_head = %d", c.NEmbd, c.NHead)
	}
	return nil
}

// validateLlama checks the Llama family's fields (the common sizes are checked).
func (c Config) validateLlama() error {
	for _, f := range []struct {
		name string
		v    int
	}{
		{"num_key_value_heads", c.NKVHead},
		{"head_dim", c.HeadSize},
		{"intermediate_size", c.NInner},
	} {
		if f.v <= 0 || f.v > maxDim {
			return fmt.Errorf("config %s = %d, want 1..%d", f.name, f.v, maxDim)
		}
	}
	if c.NHead%c.NKVHead != 0 {
		return fmt.Errorf("config num_attention_heads = %d is not a multiple of num_key_value_heads = %d", c.NHead, c.NKVHead)
	}
	if c.HeadSize%2 != 0 {
		return fmt.Errorf("config head_dim = %d is odd: the rotary embedding rotates pairs of its halves", c.HeadSize)
	}
	if c.QDim() > maxDim {
		return fmt.Errorf("config num_attention_heads * head_dim = %d * %d is above %d", c.NHead, c.HeadSize, maxDim)
	}
	if !(c.RopeTheta > 1 && c.RopeTheta <= 1e12) {
		return fmt.Errorf("config rope_theta = %v, want a number in (1, 1e12]", c.RopeTheta)
	}
	return c.RopeScaling.validate()
}

// validate checks that s is none or a kind of rope_scaling this package
// computes, with the parameters it needs.
func (s RopeScaling) validate() error {
	switch s.Type {
	case "":
		if s != (RopeScaling{}) {
			return fmt.Errorf("config rope_scaling %+v has no type", s)
		}
		return nil
	case "linear", "llama3", "yarn":
	default:
		return fmt.Errorf("config rope_scaling type %q is not one of linear, llama3 and yarn", s.Type)
	}
	if !(s.Factor > 0) || math.IsInf(s.Factor, 0) {
		return fmt.Errorf("config rope_scaling %+v: want a positive factor", s)
	}
	if s.Type != "linear" && (s.OrigPositions <= 0 || s.OrigPositions > maxDim) {
		return fmt.Errorf("config rope_scaling %+v: want original_max_position_embeddings in 1..%d", s, maxDim)
	}
	if s.Type == "llama3" && !(s.LowFreq > 0 && s.HighFreq > s.LowFreq && !math.IsInf(s.HighFreq, 0)) {
		return fmt.Errorf("config rope_scaling %+v: want positive factors with high_freq_factor > low_freq_factor", s)
	}
	if a := s.Amplitude(); !(a > 0) || math.IsInf(a, 0) || s.BetaFast < 0 || s.BetaSlow < 0 {
		return fmt.Errorf("config rope_scaling %+v: want a positive attention factor and betas", s)
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
