package model

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// llamaTypes are the model_type values of the Llama family this package
// runs, with the architecture transformers names for each.
var llamaTypes = map[string]string{
	"llama":   "LlamaForCausalLM",
	"mistral": "MistralForCausalLM",
	"qwen2":   "Qwen2ForCausalLM",
	"qwen3":   "Qwen3ForCausalLM",
}

// SupportedModelTypes names the model_type values ParseConfig accepts, for
// messages.
const SupportedModelTypes = `"gpt2", "llama", "mistral", "qwen2", "qwen3"`

// hfLlamaConfig is the part of a Llama-family config.json this package
// reads. Pointers tell a missing field from a zero one; json.RawMessage
// fields are checked by hand because they may be null or of several kinds.
type hfLlamaConfig struct {
	Architectures     []string        `json:"architectures"`
	HiddenSize        *int            `json:"hidden_size"`
	IntermediateSize  *int            `json:"intermediate_size"`
	NumHiddenLayers   *int            `json:"num_hidden_layers"`
	NumAttentionHeads *int            `json:"num_attention_heads"`
	NumKeyValueHeads  *int            `json:"num_key_value_heads"`
	HeadDim           *int            `json:"head_dim"`
	MaxPositions      *int            `json:"max_position_embeddings"`
	VocabSize         *int            `json:"vocab_size"`
	RMSNormEps        *float64        `json:"rms_norm_eps"`
	RopeTheta         *float64        `json:"rope_theta"`
	RopeScaling       json.RawMessage `json:"rope_scaling"`
	HiddenAct         *string         `json:"hidden_act"`
	TieWordEmbeddings *bool           `json:"tie_word_embeddings"`
	AttentionBias     *bool           `json:"attention_bias"`
	MLPBias           *bool           `json:"mlp_bias"`
	SlidingWindow     json.RawMessage `json:"sliding_window"`
	UseSlidingWindow  *bool           `json:"use_sliding_window"`
	PartialRotary     *float64        `json:"partial_rotary_factor"`
}

// hfRopeScaling is rope_scaling; transformers reads the kind from
// "rope_type", older files say "type".
type hfRopeScaling struct {
	RopeType      *string  `json:"rope_type"`
	Type          *string  `json:"type"`
	Factor        *float64 `json:"factor"`
	LowFreq       *float64 `json:"low_freq_factor"`
	HighFreq      *float64 `json:"high_freq_factor"`
	OrigPositions *int     `json:"original_max_position_embeddings"`
}

// parseLlamaConfig parses the config.json of a model_type in llamaTypes, with
// transformers' defaults: num_key_value_heads = num_attention_heads, head_dim
// = hidden_size / num_attention_heads, rms_norm_eps 1e-6, rope_theta 10000,
// tie_word_embeddings false (Llama, Mistral) or as the class defaults, no
// biases but Qwen2's q, k and v. A sliding window (Mistral, Qwen2) limits
// the positions to its width: within it the attention is the full causal
// one this package computes.
func parseLlamaConfig(data []byte, modelType string) (Config, error) {
	var h hfLlamaConfig
	if err := json.Unmarshal(data, &h); err != nil {
		return Config{}, fmt.Errorf("parse config: %w", err)
	}
	want := llamaTypes[modelType]
	for _, a := range h.Architectures {
		if a != want {
			return Config{}, fmt.Errorf("architecture %q is not supported for model_type %q: want %q", a, modelType, want)
		}
	}
	c := Config{Arch: ArchLlama, ModelType: modelType}
	for _, f := range []struct {
		name string
		src  *int
		dst  *int
	}{
		{"num_hidden_layers", h.NumHiddenLayers, &c.NLayer},
		{"num_attention_heads", h.NumAttentionHeads, &c.NHead},
		{"hidden_size", h.HiddenSize, &c.NEmbd},
		{"intermediate_size", h.IntermediateSize, &c.NInner},
		{"max_position_embeddings", h.MaxPositions, &c.NPositions},
		{"vocab_size", h.VocabSize, &c.VocabSize},
	} {
		if f.src == nil {
			return Config{}, fmt.Errorf("config has no %s", f.name)
		}
		*f.dst = *f.src
	}
	c.NKVHead = c.NHead
	if h.NumKeyValueHeads != nil {
		c.NKVHead = *h.NumKeyValueHeads
	}
	if h.HeadDim != nil {
		c.HeadSize = *h.HeadDim
	} else if c.NHead > 0 {
		c.HeadSize = c.NEmbd / c.NHead
		if c.NEmbd%c.NHead != 0 {
			return Config{}, fmt.Errorf("config hidden_size = %d is not divisible by num_attention_heads = %d and has no head_dim", c.NEmbd, c.NHead)
		}
	}
	c.LayerNormEps = 1e-6
	if h.RMSNormEps != nil {
		c.LayerNormEps = *h.RMSNormEps
	}
	c.RopeTheta = 10000
	if h.RopeTheta != nil {
		c.RopeTheta = *h.RopeTheta
	}
	if h.HiddenAct != nil && *h.HiddenAct != "silu" {
		return Config{}, fmt.Errorf("hidden_act %q is not supported: the Llama family uses \"silu\"", *h.HiddenAct)
	}
	if h.PartialRotary != nil && *h.PartialRotary != 1 {
		return Config{}, fmt.Errorf("partial_rotary_factor %v is not supported: only 1 (every channel rotated)", *h.PartialRotary)
	}
	if h.TieWordEmbeddings != nil {
		c.TiedEmbed = *h.TieWordEmbeddings
	}
	switch modelType {
	case "qwen2":
		c.QKVBias = true // Qwen2Attention: bias on q, k and v, none on o
	case "qwen3":
		c.QKNorm = true
		c.QKVBias, c.OBias = isTrue(h.AttentionBias), isTrue(h.AttentionBias)
	case "llama":
		c.QKVBias, c.OBias = isTrue(h.AttentionBias), isTrue(h.AttentionBias)
		c.MLPBias = isTrue(h.MLPBias)
	}
	if err := c.parseRopeScaling(h.RopeScaling); err != nil {
		return Config{}, err
	}
	if err := c.applySlidingWindow(h, modelType); err != nil {
		return Config{}, err
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

func isTrue(b *bool) bool { return b != nil && *b }

// parseRopeScaling reads rope_scaling: null, type "default", or "llama3"
// with its four parameters; any other type is refused.
func (c *Config) parseRopeScaling(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	var r hfRopeScaling
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("parse config rope_scaling: %w", err)
	}
	kind := ""
	switch {
	case r.RopeType != nil:
		kind = *r.RopeType
	case r.Type != nil:
		kind = *r.Type
	}
	switch kind {
	case "default":
		return nil
	case "llama3":
	default:
		return fmt.Errorf("rope_scaling type %q is not supported: only \"llama3\" (or none)", kind)
	}
	if r.Factor == nil || r.LowFreq == nil || r.HighFreq == nil || r.OrigPositions == nil {
		return fmt.Errorf("rope_scaling of type llama3 needs factor, low_freq_factor, high_freq_factor and original_max_position_embeddings")
	}
	s := RopeScaling{Factor: *r.Factor, LowFreq: *r.LowFreq, HighFreq: *r.HighFreq, OrigPositions: *r.OrigPositions}
	ok := func(v float64) bool { return v > 0 && v <= 1e6 && !math.IsInf(v, 0) }
	if !ok(s.Factor) || !ok(s.LowFreq) || !ok(s.HighFreq) || s.HighFreq <= s.LowFreq || s.OrigPositions <= 0 || s.OrigPositions > maxDim {
		return fmt.Errorf("rope_scaling %+v: want positive factors with high_freq_factor > low_freq_factor and original_max_position_embeddings in 1..%d", s, maxDim)
	}
	c.RopeScaling = s
	return nil
}

// applySlidingWindow limits NPositions to a sliding window the model uses
// (Mistral's sliding_window; Qwen2's when use_sliding_window is set).
func (c *Config) applySlidingWindow(h hfLlamaConfig, modelType string) error {
	if isNull(h.SlidingWindow) || (modelType != "mistral" && !isTrue(h.UseSlidingWindow)) {
		return nil
	}
	var w int
	if err := json.Unmarshal(h.SlidingWindow, &w); err != nil {
		return fmt.Errorf("parse config sliding_window: %w", err)
	}
	if w <= 0 {
		return fmt.Errorf("config sliding_window = %d, want a positive width or null", w)
	}
	c.NPositions = min(c.NPositions, w)
	return nil
}

// modelTypeOf reads config.json's model_type ("" when absent).
func modelTypeOf(data []byte) (string, error) {
	var h struct {
		ModelType *string `json:"model_type"`
	}
	if err := json.Unmarshal(data, &h); err != nil {
		return "", fmt.Errorf("parse config: %w", err)
	}
	if h.ModelType == nil {
		return "", nil
	}
	return strings.TrimSpace(*h.ModelType), nil
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}
