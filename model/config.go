package model

import (
	"encoding/json"
	"fmt"

	"github.com/wgpu-eval/wgpu-eval/internal/infile"
)

// hfConfig is the part of a Hugging Face GPT-2 config.json this package reads.
// Pointers tell a missing field from a zero one.
type hfConfig struct {
	ModelType          *string  `json:"model_type"`
	NLayer             *int     `json:"n_layer"`
	NHead              *int     `json:"n_head"`
	NEmbd              *int     `json:"n_embd"`
	NPositions         *int     `json:"n_positions"`
	NCtx               *int     `json:"n_ctx"`
	VocabSize          *int     `json:"vocab_size"`
	LayerNormEpsilon   *float64 `json:"layer_norm_epsilon"`
	ActivationFunction *string  `json:"activation_function"`
	NInner             *int     `json:"n_inner"`

	// GPT2Config's attribute_map: transformers sets these after the n_*
	// fields, so each one, where present, is the value.
	HiddenSize   *int `json:"hidden_size"`
	NumHeads     *int `json:"num_attention_heads"`
	NumLayers    *int `json:"num_hidden_layers"`
	MaxPositions *int `json:"max_position_embeddings"`

	// Switches of transformers' GPT2Config that change the math; this package
	// computes only the defaults.
	ScaleAttnWeights           *bool `json:"scale_attn_weights"`
	ScaleAttnByInverseLayerIdx *bool `json:"scale_attn_by_inverse_layer_idx"`
	AddCrossAttention          *bool `json:"add_cross_attention"`
	TieWordEmbeddings          *bool `json:"tie_word_embeddings"`
}

// tanhGELU are transformers' names (ACT2FN) for GPT-2's GELU, the tanh
// approximation 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))): gelu_new, and
// gelu_pytorch_tanh, gelu_fast and gelu_accurate, which compute the same
// function another way.
var tanhGELU = map[string]bool{"gelu_new": true, "gelu_pytorch_tanh": true, "gelu_fast": true, "gelu_accurate": true}

// exactGELU are transformers' names for the exact GELU x·Φ(x): gelu
// (PyTorch's), and gelu_python, x·0.5·(1 + erf(x/√2)) written out.
var exactGELU = map[string]bool{"gelu": true, "gelu_python": true}

// ParseConfig parses a Hugging Face config.json. For GPT-2 (model_type
// "gpt2" or none) it requires n_layer, n_head, n_embd, vocab_size and
// n_positions (or the older n_ctx), each of the four sizes also under the
// name GPT2Config maps to it (hidden_size, num_attention_heads,
// num_hidden_layers, max_position_embeddings), which transformers lets win;
// layer_norm_epsilon defaults to 1e-5.
// n_inner sets the MLP's width (NInner, where it is not 4*n_embd), and
// scale_attn_by_inverse_layer_idx divides block l's attention scores by l+1
// (LayerScaledAttn; reorder_and_upcast_attn, which goes with it in Stanford
// CRFM's GPT-2s, only asks for float32 scores, which every path computes).
// Refused: an activation_function other than "gelu_new" (or the same
// function by another name, tanhGELU) or "gelu" (ExactGELU, or its other
// name exactGELU), unscaled attention, cross-attention.
//
// A model_type of the Llama family ("llama", "mistral", "qwen2", "qwen3") is
// parsed by its own rules (parseLlamaConfig); any other is refused, naming
// the supported ones.
func ParseConfig(data []byte) (Config, error) {
	mt, err := modelTypeOf(data)
	if err != nil {
		return Config{}, err
	}
	if err := checkNotQuantized(data); err != nil {
		return Config{}, err
	}
	if _, ok := llamaTypes[mt]; ok {
		return parseLlamaConfig(data, mt)
	}
	if mt != "" && mt != "gpt2" {
		return Config{}, fmt.Errorf("model_type %q is not supported: want one of %s", mt, SupportedModelTypes)
	}
	var h hfConfig
	if err := json.Unmarshal(data, &h); err != nil {
		return Config{}, fmt.Errorf("parse config: %w", jsonError(err))
	}
	exact := h.ActivationFunction != nil && exactGELU[*h.ActivationFunction]
	if h.ActivationFunction != nil && !tanhGELU[*h.ActivationFunction] && !exact {
		return Config{}, fmt.Errorf("activation_function %q is not supported: want \"gelu_new\" (GPT-2's tanh approximation; \"gelu_pytorch_tanh\", \"gelu_fast\" and \"gelu_accurate\" are the same function) or \"gelu\" (erf; \"gelu_python\" is the same)", *h.ActivationFunction)
	}
	if h.ScaleAttnWeights != nil && !*h.ScaleAttnWeights {
		return Config{}, fmt.Errorf("scale_attn_weights false is not supported")
	}
	if h.AddCrossAttention != nil && *h.AddCrossAttention {
		return Config{}, fmt.Errorf("add_cross_attention true is not supported")
	}
	var c Config
	for _, a := range []struct{ alias, field **int }{
		{&h.HiddenSize, &h.NEmbd}, {&h.NumHeads, &h.NHead}, {&h.NumLayers, &h.NLayer}, {&h.MaxPositions, &h.NPositions},
	} {
		if *a.alias != nil {
			*a.field = *a.alias
		}
	}
	for _, f := range []struct {
		name string
		src  *int
		dst  *int
	}{
		{"n_layer", h.NLayer, &c.NLayer},
		{"n_head", h.NHead, &c.NHead},
		{"n_embd", h.NEmbd, &c.NEmbd},
		{"vocab_size", h.VocabSize, &c.VocabSize},
	} {
		if f.src == nil {
			return Config{}, fmt.Errorf("config has no %s", f.name)
		}
		*f.dst = *f.src
	}
	switch {
	case h.NPositions != nil:
		c.NPositions = *h.NPositions
	case h.NCtx != nil:
		c.NPositions = *h.NCtx
	default:
		return Config{}, fmt.Errorf("config has neither n_positions nor n_ctx")
	}
	c.LayerNormEps = 1e-5
	if h.LayerNormEpsilon != nil {
		c.LayerNormEps = *h.LayerNormEpsilon
	}
	c.UntiedHead = h.TieWordEmbeddings != nil && !*h.TieWordEmbeddings
	c.ExactGELU = exact
	c.LayerScaledAttn = h.ScaleAttnByInverseLayerIdx != nil && *h.ScaleAttnByInverseLayerIdx
	if h.NInner != nil && *h.NInner != 4*c.NEmbd {
		if *h.NInner <= 0 || *h.NInner > maxDim {
			return Config{}, fmt.Errorf("config n_inner = %d, want 1..%d (or null: 4*n_embd)", *h.NInner, maxDim)
		}
		c.NInner = *h.NInner
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// MaxJSONFile is the largest config.json or model.safetensors.index.json
// this package reads (64 MiB; the index of a model of 100,000 tensors is
// about 10 MB), so that a wrong or damaged file is refused before it is
// read into memory.
const MaxJSONFile = 64 << 20

// checkNotQuantized refuses a config.json with a quantization_config
// (GPTQ, AWQ, bitsandbytes, FP8, ...): transformers loads such a model
// through its quantizer, weights stored in other tensors and dtypes, or
// quantized as they load, which this package does not do.
func checkNotQuantized(data []byte) error {
	var h struct {
		Q json.RawMessage `json:"quantization_config"`
	}
	if err := json.Unmarshal(data, &h); err != nil {
		return fmt.Errorf("parse config: %w", jsonError(err))
	}
	if isNull(h.Q) {
		return nil
	}
	var q struct {
		Method any `json:"quant_method"`
	}
	_ = json.Unmarshal(h.Q, &q) // only for the message
	method := ""
	if q.Method != nil {
		method = fmt.Sprintf(" (quant_method %v)", q.Method)
	}
	return fmt.Errorf("config has a quantization_config%s: quantized checkpoints are not supported; use the model's float (F32, F16 or BF16) weights", method)
}

// LoadConfig reads and parses the Hugging Face config.json at path.
func LoadConfig(path string) (Config, error) {
	if err := checkRegular(path); err != nil {
		return Config{}, err
	}
	data, err := infile.ReadFile(path, MaxJSONFile)
	if err != nil {
		return Config{}, err // names the file
	}
	c, err := ParseConfig(data)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}
