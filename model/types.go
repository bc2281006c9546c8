package model

import (
	"math"

	"github.com/wgpu-eval/wgpu-eval/model/exactsum"
)

// Config is the shape of a GPT-2 model, as in Hugging Face's config.json.
type Config struct {
	NLayer       int     // transformer blocks
	NHead        int     // attention heads per block
	NEmbd        int     // channels C
	NPositions   int     // maximum sequence length (learned positions)
	VocabSize    int     // tokens V (50257 for GPT-2)
	LayerNormEps float64 // 1e-5 for GPT-2
}

// HeadDim is the channels per attention head, C / NHead.
func (c Config) HeadDim() int { return c.NEmbd / c.NHead }

// Layer holds one transformer block's weights, float32, in Hugging Face's Conv1D
// layout: a matrix W of shape (in, out) computes y = x W + b.
type Layer struct {
	LN1W, LN1B []float32 // (C)
	QKVW       []float32 // (C, 3C): c_attn, q|k|v along the output axis
	QKVB       []float32 // (3C)
	ProjW      []float32 // (C, C): attn.c_proj
	ProjB      []float32 // (C)
	LN2W, LN2B []float32 // (C)
	FCW        []float32 // (C, 4C): mlp.c_fc
	FCB        []float32 // (4C)
	FCProjW    []float32 // (4C, C): mlp.c_proj
	FCProjB    []float32 // (C)
}

// Weights holds all of a GPT-2 model's parameters as float32 on the host.
type Weights struct {
	WTE        []float32 // (V, C) token embeddings
	WPE        []float32 // (NPositions, C) position embeddings
	Layers     []Layer   // NLayer blocks
	LNFW, LNFB []float32 // (C) final LayerNorm
	LMHead     []float32 // (V, C); the same slice as WTE when tied (GPT-2 always ties)
}

// Model is a GPT-2 configuration with its weights.
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
