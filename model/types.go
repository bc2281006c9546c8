package model

import (
	"fmt"
	"math"

	"github.com/wgpu-eval/wgpu-eval/model/exactsum"
)

// Arch is the decoder a Config describes.
type Arch uint8

// The decoders this package runs.
const (
	// ArchGPT2 is GPT-2 (the zero value): learned positions, LayerNorm, GELU,
	// Conv1D weights, lm_head tied to wte.
	ArchGPT2 Arch = iota
	// ArchLlama is the Llama family (Llama 2/3.x, Mistral, Qwen2/2.5, Qwen3):
	// rotary positions, RMSNorm, grouped-query attention, a SwiGLU MLP,
	// nn.Linear weights; Config's Llama fields say which options a model has.
	ArchLlama
)

// String names the decoder: "gpt2" or "llama".
func (a Arch) String() string {
	switch a {
	case ArchGPT2:
		return "gpt2"
	case ArchLlama:
		return "llama"
	}
	return fmt.Sprintf("Arch(%d)", uint8(a))
}

// Config is the shape of a model, as in Hugging Face's config.json. The zero
// Arch is GPT-2, whose configs leave the Llama family's fields zero.
type Config struct {
	Arch         Arch    // the decoder
	ModelType    string  // config.json's model_type ("llama", "mistral", "qwen2", "qwen3"); "" for GPT-2
	NLayer       int     // transformer blocks
	NHead        int     // attention (query) heads per block
	NEmbd        int     // channels C (hidden_size)
	NPositions   int     // maximum sequence length (GPT-2's learned positions; the Llama family's max_position_embeddings)
	VocabSize    int     // tokens V (50257 for GPT-2)
	LayerNormEps float64 // LayerNorm's epsilon (1e-5 for GPT-2), or RMSNorm's (rms_norm_eps)

	// The Llama family's options; zero for GPT-2.
	NKVHead     int         // key/value heads (grouped-query attention); 0: NHead
	HeadSize    int         // channels per head (head_dim); 0: NEmbd/NHead
	NInner      int         // the MLP's width (intermediate_size; GPT-2's n_inner where not 4*n_embd); 0: 4*NEmbd
	RopeTheta   float64     // the rotary embedding's base
	RopeScaling RopeScaling // rope_scaling (rope_parameters); zero: none
	QKVBias     bool        // q_proj, k_proj and v_proj have biases (Qwen2; attention_bias)
	OBias       bool        // o_proj has a bias (attention_bias)
	MLPBias     bool        // gate_proj, up_proj and down_proj have biases (mlp_bias)
	QKNorm      bool        // an RMSNorm over head_dim on q and k before the rotation (Qwen3)
	TiedEmbed   bool        // lm_head is embed_tokens (tie_word_embeddings)
	// Window is the sliding window that limits NPositions (Mistral's
	// sliding_window, Qwen2's and Qwen3's with use_sliding_window where a
	// layer slides), where it is below
	// max_position_embeddings; 0 otherwise. It is for messages only:
	// NPositions already holds the limit.
	Window int

	// UntiedHead is GPT-2's tie_word_embeddings false: lm_head.weight is its
	// own matrix. transformers' default (false here) ties lm_head to wte
	// after loading, a stored lm_head.weight then unused.
	UntiedHead bool
	// ExactGELU is GPT-2's activation_function "gelu": the MLP's GELU is
	// x·Φ(x) = 0.5·x·(1 + erf(x/√2)) (Cerebras-GPT's, nanoGPT's), where the
	// default is gelu_new, the tanh approximation GPT-2 was trained with.
	ExactGELU bool
	// LayerScaledAttn is GPT-2's scale_attn_by_inverse_layer_idx (Stanford
	// CRFM's GPT-2s): the attention scores of block l (from 0) are divided
	// by l+1 as well as by √head_dim.
	LayerScaledAttn bool
}

// RopeScaling is a rotary embedding's scaling, rope_scaling in config.json
// (rope_parameters since transformers 5), as transformers computes it. A
// zero RopeScaling (Type "") means none; "dynamic" NTK scaling is stored as
// none, since it changes nothing at positions below max_position_embeddings,
// the most this package evaluates.
//
//   - "linear": every frequency divided by Factor.
//   - "llama3" (Llama 3.1 and later): the frequencies below the original
//     context's divided by Factor, smoothly between the two wavelength bounds
//     OrigPositions/LowFreq and OrigPositions/HighFreq.
//   - "yarn": the frequencies below the original context's divided by
//     Factor, those the original context turns more than BetaFast times
//     kept, a linear ramp between; cos and sin scaled by Amplitude().
type RopeScaling struct {
	Type            string  // "linear", "llama3" or "yarn"; "": none
	Factor          float64 // factor
	LowFreq         float64 // llama3: low_freq_factor
	HighFreq        float64 // llama3: high_freq_factor
	OrigPositions   int     // llama3, yarn: original_max_position_embeddings
	AttentionFactor float64 // yarn: attention_factor; 0: derived from Factor (and Mscale, MscaleAllDim)
	Mscale          float64 // yarn: mscale; with MscaleAllDim, the derived attention factor's
	MscaleAllDim    float64 // yarn: mscale_all_dim
	BetaFast        float64 // yarn: beta_fast; 0: 32
	BetaSlow        float64 // yarn: beta_slow; 0: 1
	NoTruncate      bool    // yarn: truncate false, the ramp's ends not rounded to whole dimensions
}

// Amplitude is what the rotation's cos and sin are multiplied by
// (transformers' attention_scaling): yarn's attention factor, else 1. For
// yarn without an explicit attention_factor it is 0.1·ln(Factor) + 1 (1 for
// Factor <= 1), or with mscale and mscale_all_dim both set the ratio of that
// form with each of them multiplying the logarithm.
func (s RopeScaling) Amplitude() float64 {
	if s.Type != "yarn" {
		return 1
	}
	if s.AttentionFactor != 0 {
		return s.AttentionFactor
	}
	mscale := func(m float64) float64 {
		if s.Factor <= 1 {
			return 1
		}
		return 0.1*m*math.Log(s.Factor) + 1
	}
	if s.Mscale != 0 && s.MscaleAllDim != 0 {
		return mscale(s.Mscale) / mscale(s.MscaleAllDim)
	}
	return mscale(1)
}

// HeadDim is the channels per attention head: head_dim where the config sets
// it, else C / NHead.
func (c Config) HeadDim() int {
	if c.HeadSize > 0 {
		return c.HeadSize
	}
	return c.NEmbd / c.NHead
}

// KVHeads is the number of key/value heads: NKVHead, or NHead without
// grouped-query attention.
func (c Config) KVHeads() int {
	if c.NKVHead > 0 {
		return c.NKVHead
	}
	return c.NHead
}

// AttnLayerDivisor is what block l's (from 0) attention scores q·k are
// divided by besides √head_dim: l+1 where LayerScaledAttn is set, else 1.
func (c Config) AttnLayerDivisor(l int) float32 {
	if c.LayerScaledAttn {
		return float32(l + 1)
	}
	return 1
}

// Inner is the MLP's hidden width: NInner, else GPT-2's 4C.
func (c Config) Inner() int {
	if c.NInner > 0 {
		return c.NInner
	}
	return 4 * c.NEmbd
}

// QDim is the width of the attention's queries and output, NHead * HeadDim
// (C for GPT-2).
func (c Config) QDim() int { return c.NHead * c.HeadDim() }

// KVDim is the width of the keys and of the values, KVHeads * HeadDim.
func (c Config) KVDim() int { return c.KVHeads() * c.HeadDim() }

// Describe names the model's shape for messages: "GPT-2 (12 layers, 12
// heads, 768 channels, 1024 positions)" (with ", MLP N" where n_inner is
// not 4C, ", exact GELU", ", attention scaled by layer" and ", untied LM
// head" where the config says so) or, for the Llama family, its
// model_type with the key/value heads, MLP width, rotary base and rope
// scaling ("..., rotary base 500000, llama3 scaling x32)"), so that a user
// can see the config was read as meant.
func (c Config) Describe() string {
	if c.Arch == ArchGPT2 {
		extra := ""
		if c.NInner != 0 {
			extra += fmt.Sprintf(", MLP %d", c.NInner)
		}
		if c.ExactGELU {
			extra += ", exact GELU"
		}
		if c.LayerScaledAttn {
			extra += ", attention scaled by layer"
		}
		if c.UntiedHead {
			extra += ", untied LM head"
		}
		return fmt.Sprintf("GPT-2 (%d layers, %d heads, %d channels, %d positions%s)", c.NLayer, c.NHead, c.NEmbd, c.NPositions, extra)
	}
	positions := fmt.Sprintf("%d positions", c.NPositions)
	if c.Window > 0 {
		positions = fmt.Sprintf("%d positions (its sliding window)", c.NPositions)
	}
	scaling := ""
	if s := c.RopeScaling; s.Type != "" {
		scaling = fmt.Sprintf(", %s scaling x%g", s.Type, s.Factor)
	}
	return fmt.Sprintf("%s (%d layers, %d heads, %d key/value heads of %d, %d channels, MLP %d, %s, rotary base %g%s)",
		c.ModelType, c.NLayer, c.NHead, c.KVHeads(), c.HeadDim(), c.NEmbd, c.Inner(), positions, c.RopeTheta, scaling)
}

// Layer holds one transformer block's weights, float32. GPT-2's are in
// Hugging Face's Conv1D layout: a matrix W of shape (in, out) computes
// y = x W + b. The Llama family's are nn.Linear's (out, in): y = x Wᵀ + b;
// absent biases and norms are nil.
type Layer struct {
	LN1W, LN1B []float32 // (C) GPT-2's ln_1; the Llama family's input_layernorm weight (LN1B nil)
	QKVW       []float32 // (C, 3C): c_attn, q|k|v along the output axis
	QKVB       []float32 // (3C)
	ProjW      []float32 // (C, C): attn.c_proj
	ProjB      []float32 // (C)
	LN2W, LN2B []float32 // (C) GPT-2's ln_2; the Llama family's post_attention_layernorm weight (LN2B nil)
	FCW        []float32 // (C, Inner): mlp.c_fc (Inner 4C but for n_inner)
	FCB        []float32 // (Inner)
	FCProjW    []float32 // (Inner, C): mlp.c_proj
	FCProjB    []float32 // (C)

	// The Llama family's attention and MLP, (out, in).
	QW, KW, VW     []float32 // (QDim, C), (KVDim, C), (KVDim, C): q_proj, k_proj, v_proj
	QB, KB, VB     []float32 // their biases (QKVBias)
	OW             []float32 // (C, QDim): o_proj
	OB             []float32 // (C) (OBias)
	QNormW, KNormW []float32 // (HeadDim): q_norm, k_norm (QKNorm)
	GateW, UpW     []float32 // (Inner, C): gate_proj, up_proj
	GateB, UpB     []float32 // (Inner) (MLPBias)
	DownW          []float32 // (C, Inner): down_proj
	DownB          []float32 // (C) (MLPBias)
}

// Weights holds all of a model's parameters as float32 on the host.
type Weights struct {
	WTE        []float32 // (V, C) token embeddings (the Llama family's embed_tokens)
	WPE        []float32 // (NPositions, C) GPT-2's position embeddings; nil for the Llama family
	Layers     []Layer   // NLayer blocks
	LNFW, LNFB []float32 // (C) final LayerNorm (the Llama family's norm: LNFB nil)
	LMHead     []float32 // (V, C); the same slice as WTE when tied (GPT-2 always ties)
}

// Model is a configuration with its weights.
type Model struct {
	Config  Config
	Weights Weights
	Source  string // where it was loaded from, for messages and results
}

// Sequence is one window of token ids to score. Every token Tokens[t] with
// t >= First is a target, predicted from Tokens[:t]; earlier tokens are context
// only. First >= 1 (the first token has no prefix) and len(Tokens) <= NPositions.
type Sequence struct {
	Tokens []int32
	First  int
}

// Scored is the number of targets the sequence scores.
func (s Sequence) Scored() int { return max(len(s.Tokens)-s.First, 0) }

// LossSums is what a backend returns for a batch of sequences: over every scored
// target, the sum of NLL = -ln p(target | prefix) in nats, the sum of its squares,
// and their count. The sums are exact (exactsum): batches, shards and resumed
// sessions add up to the same bits in any grouping and order.
type LossSums struct {
	Sum   exactsum.Sum
	SumSq exactsum.Sum
	Count int
}

// AddNLL adds one target's NLL (its square is exact for an f32 NLL).
func (s *LossSums) AddNLL(x float64) {
	s.Sum.Add(x)
	s.SumSq.Add(x * x)
	s.Count++
}

// Finite reports whether both sums are finite float64 numbers: no NaN or
// infinite NLL was added, and the sums are within float64's range.
func (s LossSums) Finite() bool {
	a, b := s.Sum.Float64(), s.SumSq.Float64()
	return !math.IsNaN(a) && !math.IsInf(a, 0) && !math.IsNaN(b) && !math.IsInf(b, 0)
}

// Add accumulates o into s.
func (s *LossSums) Add(o LossSums) {
	s.Sum.AddSum(o.Sum)
	s.SumSq.AddSum(o.SumSq)
	s.Count += o.Count
}
