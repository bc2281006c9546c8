package model

import (
	"errors"
	"fmt"
	"math"
)

// maxDim bounds every size of a Config, so that no product of two of them
// overflows and a corrupt file cannot ask for an absurd allocation.
const maxDim = 1 << 24

// Validate reports whether c describes a GPT-2 this package can run: every
// size positive and at most 2^24, n_embd divisible by n_head, and a positive
// finite LayerNorm epsilon.
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
	if !(c.LayerNormEps > 0) || math.IsInf(c.LayerNormEps, 0) {
		return fmt.Errorf("config layer_norm_epsilon = %v, want a positive number", c.LayerNormEps)
	}
	return nil
}

// tensorSlot is one parameter of a Model: its Hugging Face name (without the
// "transformer." prefix), its shape there (Conv1D weights are (in, out)), and
// where it lives in Weights.
type tensorSlot struct {
	name  string
	shape []int
	dst   *[]float32
}

func (s tensorSlot) numel() int {
	n := 1
	for _, d := range s.shape {
		n *= d
	}
	return n
}

// slots lists every parameter of m in Hugging Face's order, except lm_head.
// m.Weights.Layers must have NLayer entries.
func (m *Model) slots() []tensorSlot {
	c := m.Config
	C, V, T := c.NEmbd, c.VocabSize, c.NPositions
	w := &m.Weights
	s := []tensorSlot{
		{"wte.weight", []int{V, C}, &w.WTE},
		{"wpe.weight", []int{T, C}, &w.WPE},
	}
	for i := range w.Layers {
		l := &w.Layers[i]
		p := fmt.Sprintf("h.%d.", i)
		s = append(s,
			tensorSlot{p + "ln_1.weight", []int{C}, &l.LN1W},
			tensorSlot{p + "ln_1.bias", []int{C}, &l.LN1B},
			tensorSlot{p + "attn.c_attn.weight", []int{C, 3 * C}, &l.QKVW},
			tensorSlot{p + "attn.c_attn.bias", []int{3 * C}, &l.QKVB},
			tensorSlot{p + "attn.c_proj.weight", []int{C, C}, &l.ProjW},
			tensorSlot{p + "attn.c_proj.bias", []int{C}, &l.ProjB},
			tensorSlot{p + "ln_2.weight", []int{C}, &l.LN2W},
			tensorSlot{p + "ln_2.bias", []int{C}, &l.LN2B},
			tensorSlot{p + "mlp.c_fc.weight", []int{C, 4 * C}, &l.FCW},
			tensorSlot{p + "mlp.c_fc.bias", []int{4 * C}, &l.FCB},
			tensorSlot{p + "mlp.c_proj.weight", []int{4 * C, C}, &l.FCProjW},
			tensorSlot{p + "mlp.c_proj.bias", []int{C}, &l.FCProjB},
		)
	}
	return append(s,
		tensorSlot{"ln_f.weight", []int{C}, &w.LNFW},
		tensorSlot{"ln_f.bias", []int{C}, &w.LNFB},
	)
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
	lm := tensorSlot{"lm_head.weight", []int{m.Config.VocabSize, m.Config.NEmbd}, &m.Weights.LMHead}
	for _, s := range append(m.slots(), lm) {
		if len(*s.dst) != s.numel() {
			return fmt.Errorf("tensor %s has %d values, want %d for shape %v", s.name, len(*s.dst), s.numel(), s.shape)
		}
		if err := checkFinite(*s.dst); err != nil {
			return fmt.Errorf("tensor %s: %w", s.name, err)
		}
	}
	return nil
}

// checkFinite reports the first NaN or infinity in x.
func checkFinite(x []float32) error {
	for i, v := range x {
		// v-v is 0 for finite v and NaN for NaN and ±Inf.
		if v-v != 0 {
			return fmt.Errorf("value %v at index %d: weights must be finite", v, i)
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
