package model

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
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
	NumKeyValueHeads  json.RawMessage `json:"num_key_value_heads"`
	HeadDim           json.RawMessage `json:"head_dim"`
	MaxPositions      *int            `json:"max_position_embeddings"`
	VocabSize         *int            `json:"vocab_size"`
	RMSNormEps        *float64        `json:"rms_norm_eps"`
	RopeTheta         json.RawMessage `json:"rope_theta"`
	RopeScaling       json.RawMessage `json:"rope_scaling"`
	RopeParameters    json.RawMessage `json:"rope_parameters"`
	LayerTypes        []string        `json:"layer_types"`
	OrigPositions     *int            `json:"original_max_position_embeddings"`
	HiddenAct         *string         `json:"hidden_act"`
	TieWordEmbeddings *bool           `json:"tie_word_embeddings"`
	AttentionBias     *bool           `json:"attention_bias"`
	MLPBias           *bool           `json:"mlp_bias"`
	SlidingWindow     json.RawMessage `json:"sliding_window"`
	UseSlidingWindow  *bool           `json:"use_sliding_window"`
	MaxWindowLayers   *int            `json:"max_window_layers"`
	PartialRotary     *float64        `json:"partial_rotary_factor"`
	PerLayerConfig    json.RawMessage `json:"per_layer_config"`
}

// classDefaults are what transformers' config class of a model_type gives
// the keys this package reads where config.json leaves them out (a key
// present but null is another case: see parseLlamaConfig). Every class
// defaults num_key_value_heads, and MistralConfig and the Qwen configs
// sliding_window, to a number, not to "as the other sizes say".
type classDefaults struct {
	kvHeads       int // num_key_value_heads; 0: num_attention_heads (LlamaConfig's None)
	headDim       int // head_dim; 0: hidden_size / num_attention_heads
	slidingWindow int // sliding_window; 0: none
}

var llamaClassDefaults = map[string]classDefaults{
	"llama":   {},
	"mistral": {kvHeads: 8, slidingWindow: 4096},
	"qwen2":   {kvHeads: 32, slidingWindow: 4096},
	"qwen3":   {kvHeads: 32, headDim: 128, slidingWindow: 4096},
}

// hfRope is rope_scaling (transformers 4) or rope_parameters (5). The kind
// is "rope_type", in older files "type"; transformers 5 also keeps
// rope_theta and partial_rotary_factor here. Truncate stays raw: absent
// means true, null false (Python's truthiness).
type hfRope struct {
	RopeType        *string         `json:"rope_type"`
	Type            *string         `json:"type"`
	RopeTheta       *float64        `json:"rope_theta"`
	PartialRotary   *float64        `json:"partial_rotary_factor"`
	Factor          *float64        `json:"factor"`
	LowFreq         *float64        `json:"low_freq_factor"`
	HighFreq        *float64        `json:"high_freq_factor"`
	OrigPositions   *int            `json:"original_max_position_embeddings"`
	AttentionFactor *float64        `json:"attention_factor"`
	Mscale          *float64        `json:"mscale"`
	MscaleAllDim    *float64        `json:"mscale_all_dim"`
	BetaFast        *float64        `json:"beta_fast"`
	BetaSlow        *float64        `json:"beta_slow"`
	Truncate        json.RawMessage `json:"truncate"`
}

// parseLlamaConfig parses the config.json of a model_type in llamaTypes, with
// the defaults of transformers' config class for that model_type where a key
// is absent: num_key_value_heads num_attention_heads (Llama), 8 (Mistral) or
// 32 (Qwen2, Qwen3); head_dim hidden_size / num_attention_heads, 128 for
// Qwen3; rms_norm_eps 1e-6, rope_theta 10000, tie_word_embeddings false, no
// biases but Qwen2's q, k and v; sliding_window 4096 (Mistral; Qwen2 and
// Qwen3 where use_sliding_window is set and a layer slides: see
// qwenLayersSlide). A null num_key_value_heads or head_dim means
// num_attention_heads, hidden_size / num_attention_heads. A sliding window
// that some layer uses limits the positions to its width: within it the
// attention is the full causal one this package computes. Per-layer overrides
// (transformers' per_layer_config) are refused.
func parseLlamaConfig(data []byte, modelType string) (Config, error) {
	var h hfLlamaConfig
	if err := json.Unmarshal(data, &h); err != nil {
		return Config{}, fmt.Errorf("parse config: %w", jsonError(err))
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
	def := llamaClassDefaults[modelType]
	if !isNull(h.PerLayerConfig) && !isEmptyObject(h.PerLayerConfig) {
		return Config{}, errors.New("config per_layer_config (layers of different shapes or options) is not supported: this package runs every layer alike")
	}
	kv, err := optionalInt(h.NumKeyValueHeads, "num_key_value_heads", def.kvHeads)
	if err != nil {
		return Config{}, err
	}
	c.NKVHead = cmp.Or(kv, c.NHead)
	hd, err := optionalInt(h.HeadDim, "head_dim", def.headDim)
	switch {
	case err != nil:
		return Config{}, err
	case hd != 0:
		c.HeadSize = hd
	case c.NHead > 0:
		c.HeadSize = c.NEmbd / c.NHead
		if c.NEmbd%c.NHead != 0 {
			return Config{}, fmt.Errorf("config hidden_size = %d is not divisible by num_attention_heads = %d and has no head_dim", c.NEmbd, c.NHead)
		}
	}
	c.LayerNormEps = 1e-6
	if h.RMSNormEps != nil {
		c.LayerNormEps = *h.RMSNormEps
	}
	if h.HiddenAct != nil && *h.HiddenAct != "silu" && *h.HiddenAct != "swish" { // transformers' ACT2FN: both nn.SiLU
		return Config{}, fmt.Errorf("hidden_act %q is not supported: the Llama family uses \"silu\"", *h.HiddenAct)
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
	if err := c.parseRope(h); err != nil {
		return Config{}, err
	}
	if err := c.applySlidingWindow(h, modelType, def.slidingWindow); err != nil {
		return Config{}, err
	}
	if len(h.NumKeyValueHeads) == 0 && c.NHead > 0 && c.NHead%c.NKVHead != 0 {
		return Config{}, fmt.Errorf("config has no num_key_value_heads, and transformers' default for model_type %q, %d, does not divide num_attention_heads = %d",
			modelType, c.NKVHead, c.NHead)
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

func isTrue(b *bool) bool { return b != nil && *b }

// optionalInt reads an integer key of config.json: absent gives def, null
// gives 0 (the caller's "as the other sizes say").
func optionalInt(raw json.RawMessage, name string, def int) (int, error) {
	if len(raw) == 0 {
		return def, nil
	}
	if isNull(raw) {
		return 0, nil
	}
	var v int
	if err := json.Unmarshal(raw, &v); err != nil {
		s := strings.TrimSpace(string(raw))
		if len(s) > 40 {
			s = s[:40] + "..."
		}
		return 0, fmt.Errorf("parse config %s: %s, where a whole number is wanted", name, s)
	}
	if v == 0 {
		return 0, fmt.Errorf("config %s = 0, want 1..%d", name, maxDim)
	}
	return v, nil
}

// parseRope sets RopeTheta and RopeScaling as transformers 5 resolves them
// (RotaryEmbeddingConfigMixin), which also reads transformers 4's files:
// the parameters are rope_scaling where that is set, else rope_parameters;
// their own rope_theta comes first, then the top-level one, then 10000; a
// top-level original_max_position_embeddings comes before theirs, and
// max_position_embeddings stands in for both. rope_parameters with one entry
// per layer type (keys from layer_types) are taken when every entry is the
// same. The kinds: default, linear, dynamic (which changes nothing at
// positions below max_position_embeddings, so it is stored as none), llama3
// and yarn; any other is refused, as is a partial_rotary_factor other than 1.
func (c *Config) parseRope(h hfLlamaConfig) error {
	raw, field := h.RopeScaling, "rope_scaling"
	if isNull(raw) || isEmptyObject(raw) {
		raw, field = h.RopeParameters, "rope_parameters"
	}
	var r hfRope
	if !isNull(raw) {
		var err error
		if r, err = ropeEntry(raw, field, h.LayerTypes); err != nil {
			return err
		}
	}
	switch {
	case r.RopeTheta != nil:
		c.RopeTheta = *r.RopeTheta
	case len(h.RopeTheta) == 0:
		c.RopeTheta = 10000
	case isNull(h.RopeTheta):
		return fmt.Errorf("config rope_theta is null and %s has none", field)
	default:
		if err := json.Unmarshal(h.RopeTheta, &c.RopeTheta); err != nil {
			return fmt.Errorf("parse config rope_theta: %w", err)
		}
	}
	for _, p := range []*float64{h.PartialRotary, r.PartialRotary} {
		if p != nil && *p != 1 {
			return fmt.Errorf("partial_rotary_factor %v is not supported: only 1 (every channel rotated)", *p)
		}
	}
	kind := "default"
	switch {
	case r.RopeType != nil:
		kind = *r.RopeType
	case r.Type != nil:
		kind = *r.Type
	}
	orig := c.NPositions
	switch {
	case h.OrigPositions != nil:
		orig = *h.OrigPositions
	case r.OrigPositions != nil:
		orig = *r.OrigPositions
	}
	if (kind == "llama3" || kind == "yarn") && (orig <= 0 || orig > maxDim) {
		return fmt.Errorf("config %s: original_max_position_embeddings = %d, want 1..%d", field, orig, maxDim)
	}
	factor := func() (float64, error) {
		if r.Factor == nil || !factorOK(*r.Factor) {
			return 0, fmt.Errorf("config %s of type %s needs a factor in (0, 1e6]", field, kind)
		}
		return *r.Factor, nil
	}
	switch kind {
	case "default", "dynamic":
		return nil
	case "linear":
		f, err := factor()
		if err != nil {
			return err
		}
		c.RopeScaling = RopeScaling{Type: kind, Factor: f}
	case "llama3":
		f, err := factor()
		if err != nil {
			return err
		}
		if r.LowFreq == nil || r.HighFreq == nil {
			return fmt.Errorf("config %s of type llama3 needs low_freq_factor and high_freq_factor", field)
		}
		s := RopeScaling{Type: kind, Factor: f, LowFreq: *r.LowFreq, HighFreq: *r.HighFreq, OrigPositions: orig}
		if !factorOK(s.LowFreq) || !factorOK(s.HighFreq) || s.HighFreq <= s.LowFreq {
			return fmt.Errorf("config %s %+v: want positive factors with high_freq_factor > low_freq_factor", field, s)
		}
		c.RopeScaling = s
	case "yarn":
		y, err := yarnScaling(r, field, orig, c.NPositions)
		if err != nil {
			return err
		}
		c.RopeScaling = y
	default:
		return fmt.Errorf("config %s type %q is not supported: only \"linear\", \"dynamic\", \"llama3\" and \"yarn\" (or none)", field, kind)
	}
	return nil
}

// factorOK reports whether v is a rope_scaling factor this package takes:
// in (0, 1e6] (NaN is not).
func factorOK(v float64) bool { return v > 0 && v <= 1e6 }

// yarnScaling reads rope_scaling (or rope_parameters, field) of type yarn,
// with orig the original context and positions max_position_embeddings.
func yarnScaling(r hfRope, field string, orig, positions int) (RopeScaling, error) {
	s := RopeScaling{Type: "yarn", OrigPositions: orig}
	// The factor as given, as transformers 5 takes it (some 4.x releases
	// took max_position_embeddings / original_max_position_embeddings
	// wherever the latter was set); without one, that ratio.
	if r.Factor == nil {
		s.Factor = float64(positions) / float64(orig)
	} else {
		s.Factor = *r.Factor
	}
	if !factorOK(s.Factor) {
		return RopeScaling{}, fmt.Errorf("config %s of type yarn: factor = %v, want a number in (0, 1e6]", field, s.Factor)
	}
	for _, v := range []struct {
		name string
		src  *float64
		dst  *float64
	}{
		{"attention_factor", r.AttentionFactor, &s.AttentionFactor},
		{"mscale", r.Mscale, &s.Mscale},
		{"mscale_all_dim", r.MscaleAllDim, &s.MscaleAllDim},
		{"beta_fast", r.BetaFast, &s.BetaFast},
		{"beta_slow", r.BetaSlow, &s.BetaSlow},
	} {
		if v.src == nil {
			continue
		}
		if *v.src != 0 && !factorOK(*v.src) {
			return RopeScaling{}, fmt.Errorf("config %s of type yarn: %s = %v, want a number in (0, 1e6]", field, v.name, *v.src)
		}
		*v.dst = *v.src
	}
	if r.AttentionFactor != nil && *r.AttentionFactor == 0 {
		return RopeScaling{}, fmt.Errorf("config %s of type yarn: attention_factor = 0 would make every attention score 0", field)
	}
	if len(r.Truncate) > 0 {
		var t *bool
		if err := json.Unmarshal(r.Truncate, &t); err != nil {
			return RopeScaling{}, fmt.Errorf("parse config %s truncate: %w", field, err)
		}
		s.NoTruncate = t == nil || !*t
	}
	if a := s.Amplitude(); !(a > 0) || math.IsInf(a, 0) {
		return RopeScaling{}, fmt.Errorf("config %s of type yarn: attention factor %v, want a positive number", field, a)
	}
	return s, nil
}

// ropeEntry decodes rope_scaling or rope_parameters. Where every key is one
// of layer_types, the value holds an entry per layer type: they must agree,
// as this package rotates every layer alike.
func ropeEntry(raw json.RawMessage, field string, layerTypes []string) (hfRope, error) {
	var r hfRope
	var perType map[string]json.RawMessage
	if len(layerTypes) > 0 && json.Unmarshal(raw, &perType) == nil && len(perType) > 0 && allIn(perType, layerTypes) {
		first := ""
		for name, e := range perType {
			var x hfRope
			if err := json.Unmarshal(e, &x); err != nil {
				return hfRope{}, fmt.Errorf("parse config %s[%q]: %w", field, name, err)
			}
			switch {
			case first == "":
				first, r = name, x
			case !sameRope(r, x):
				return hfRope{}, fmt.Errorf("config %s: layer types %q and %q rotate differently; this package rotates every layer alike", field, first, name)
			}
		}
		return r, nil
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return hfRope{}, fmt.Errorf("parse config %s: %w", field, err)
	}
	return r, nil
}

// allIn reports whether every key of m is one of names.
func allIn(m map[string]json.RawMessage, names []string) bool {
	for k := range m {
		if !slices.Contains(names, k) {
			return false
		}
	}
	return true
}

// sameRope reports whether two rope entries hold the same values.
func sameRope(a, b hfRope) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// applySlidingWindow limits NPositions to a sliding window the model uses
// (Mistral's sliding_window; Qwen2's and Qwen3's when use_sliding_window is
// set and some layer slides), def where config.json has no sliding_window
// (0: none).
func (c *Config) applySlidingWindow(h hfLlamaConfig, modelType string, def int) error {
	if modelType != "mistral" && !isTrue(h.UseSlidingWindow) {
		return nil
	}
	if modelType != "mistral" {
		slides, err := qwenLayersSlide(h, c.NLayer)
		if err != nil || !slides {
			return err
		}
	}
	w := def
	switch {
	case len(h.SlidingWindow) == 0:
		if w == 0 {
			return nil
		}
	case isNull(h.SlidingWindow):
		return nil
	default:
		if err := json.Unmarshal(h.SlidingWindow, &w); err != nil {
			return fmt.Errorf("parse config sliding_window: %w", err)
		}
	}
	if w <= 0 {
		return fmt.Errorf("config sliding_window = %d, want a positive width or null", w)
	}
	if w < c.NPositions {
		c.NPositions, c.Window = w, w
	}
	return nil
}

// qwenDefaultMaxWindowLayers is Qwen2Config's and Qwen3Config's
// max_window_layers default.
const qwenDefaultMaxWindowLayers = 28

// qwenLayersSlide reports whether any of a Qwen2 or Qwen3 model's nLayer
// layers uses the sliding window (given use_sliding_window), as
// transformers' config classes decide: from layer_types where config.json
// has it (a layer "sliding_attention"), else the layers from
// max_window_layers (default 28) on. A model with 28 layers or fewer and no
// max_window_layers has none: every layer attends to every position.
func qwenLayersSlide(h hfLlamaConfig, nLayer int) (bool, error) {
	if h.LayerTypes != nil {
		if len(h.LayerTypes) != nLayer {
			return false, fmt.Errorf("config layer_types has %d entries, want one per layer (num_hidden_layers = %d)", len(h.LayerTypes), nLayer)
		}
		for i, t := range h.LayerTypes {
			switch t {
			case "sliding_attention":
				return true, nil
			case "full_attention":
			default:
				return false, fmt.Errorf("config layer_types[%d] = %q is not supported: want \"full_attention\" or \"sliding_attention\"", i, t)
			}
		}
		return false, nil
	}
	mwl := qwenDefaultMaxWindowLayers
	if h.MaxWindowLayers != nil {
		mwl = *h.MaxWindowLayers
	}
	return mwl < nLayer, nil
}

// modelTypeOf reads config.json's model_type ("" when absent).
func modelTypeOf(data []byte) (string, error) {
	var h struct {
		ModelType *string `json:"model_type"`
	}
	if err := json.Unmarshal(data, &h); err != nil {
		return "", fmt.Errorf("parse config: %w", jsonError(err))
	}
	if h.ModelType == nil {
		return "", nil
	}
	return strings.TrimSpace(*h.ModelType), nil
}

// isEmptyObject reports whether raw is {} (falsy in Python, as transformers
// tests rope_scaling).
func isEmptyObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && len(m) == 0
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}
