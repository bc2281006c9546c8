package model_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/refops"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// The CPU forward at the edges of its shapes, against the float64 references
// (RefNLL, RefLlamaNLL): sizes that are not multiples of any vector width,
// register tile, panel or vocabulary tile, the smallest heads and
// vocabularies the configs accept, every grouped-query ratio down to one
// key/value head. The other tests run a few middling shapes.

// edgeModel is one model shape of the edge tests.
type edgeModel struct {
	name string
	m    func() *model.Model
}

// edgeGPT2 are GPT-2 shapes: one channel (LayerNorm's variance always 0),
// head sizes 1, 2, 3, 7, 17 and 33, vocabularies of 1, 2 and 3 tokens and
// one short of, one past and two tiles past the 128-token vocabulary tile,
// an odd MLP width, the exact GELU, an untied head.
var edgeGPT2 = []edgeModel{
	{"c1h1v2", gpt2Edge(model.Config{NHead: 1, NEmbd: 1, VocabSize: 2}, false)},
	{"c6h3v1", gpt2Edge(model.Config{NHead: 3, NEmbd: 6, VocabSize: 1}, false)},
	{"c3h1v3i7", gpt2Edge(model.Config{NHead: 1, NEmbd: 3, VocabSize: 3, NInner: 7}, false)},
	{"c21h3v129untied", gpt2Edge(model.Config{NHead: 3, NEmbd: 21, VocabSize: 129}, true)},
	{"c34h2v127", gpt2Edge(model.Config{NHead: 2, NEmbd: 34, VocabSize: 127}, false)},
	{"c33h1v257gelu", gpt2Edge(model.Config{NHead: 1, NEmbd: 33, VocabSize: 257, ExactGELU: true}, false)},
}

// gpt2Edge completes cfg (2 layers, 40 positions) and returns its model's
// maker: synth.Random's weights, with its own LM head when untied.
func gpt2Edge(cfg model.Config, untied bool) func() *model.Model {
	cfg.NLayer, cfg.NPositions, cfg.LayerNormEps = 2, 40, 1e-5
	cfg.UntiedHead = untied
	return func() *model.Model {
		m := synth.Random(cfg, 31)
		if untied {
			m.Weights.LMHead = synth.Random(cfg, 32).Weights.WTE
		}
		return m
	}
}

// edgeLlama are Llama-family shapes: query heads per key/value head 8 (one
// key/value head), 4, 2 and 1; head sizes 2 (one rotated pair), 4, 6, 18
// and 34; query widths other than the hidden size; vocabularies of 1, 2 and
// 129 tokens; tied and untied heads; biases on q, k, v, o and the MLP
// (llama), on q, k, v only (qwen2) and none (mistral, qwen3 with its q/k
// norms); no rope scaling, linear, llama3 and yarn.
var edgeLlama = []edgeModel{
	{"llama-h8kv1-hd2-v2-tied", llamaEdge("llama", 8, 1, 2, 2, true, model.RopeScaling{})},
	{"mistral-h4kv1-hd6-v129", llamaEdge("mistral", 4, 1, 6, 129, false, model.RopeScaling{Type: "linear", Factor: 3})},
	{"qwen2-h8kv2-hd4-v1", llamaEdge("qwen2", 8, 2, 4, 1, false, model.RopeScaling{Type: "yarn", Factor: 4, OrigPositions: 16})},
	{"qwen3-h3kv3-hd34-v129-tied", llamaEdge("qwen3", 3, 3, 34, 129, true, model.RopeScaling{})},
	{"qwen3-h2kv1-hd18-v33", llamaEdge("qwen3", 2, 1, 18, 33, false,
		model.RopeScaling{Type: "llama3", Factor: 8, LowFreq: 1, HighFreq: 4, OrigPositions: 16})},
}

// llamaEdge is a 2-layer model of modelType (synth.TinyLlamaConfig's
// options) with 15 channels, an MLP of 17, 40 positions, the rope_theta of
// the family's released models (Llama 3's 500000, Qwen's 1e6, Mistral's
// 10000) and the given heads, vocabulary, tying and rope scaling:
// synth.Peaked's weights, or synth.Random's where tied (Peaked unties the
// head: its prior needs an lm_head of its own).
func llamaEdge(modelType string, heads, kvHeads, headDim, vocab int, tied bool, rope model.RopeScaling) func() *model.Model {
	cfg := synth.TinyLlamaConfig(modelType)
	cfg.NHead, cfg.NKVHead, cfg.HeadSize, cfg.VocabSize, cfg.TiedEmbed = heads, kvHeads, headDim, vocab, tied
	cfg.NEmbd, cfg.NInner, cfg.NPositions, cfg.RopeScaling = 15, 17, 40, rope
	cfg.RopeTheta = map[string]float64{"llama": 500000, "qwen2": 1e6, "qwen3": 1e6, "mistral": 10000}[modelType]
	return func() *model.Model {
		if tied {
			return synth.Random(cfg, 33)
		}
		return synth.Peaked(cfg, 33)
	}
}

// refOf is the float64 reference forward of m's architecture.
func refOf(m *model.Model) func(*model.Model, []int32) []float64 {
	if m.Config.Arch == model.ArchLlama {
		return model.RefLlamaNLL
	}
	return model.RefNLL
}

// edgeBatch is a batch of sequences of 1, 2, 3, all and 33 of m's
// positions (the first two score nothing and one target), scored from
// positions 1, 1, 2, 1 and 7, and the reference's NLLs of its targets in
// batch order.
func edgeBatch(m *model.Model) ([]model.Sequence, []float64) {
	cfg := m.Config
	var seqs []model.Sequence
	var want []float64
	for i, s := range []struct{ n, first int }{{1, 1}, {2, 1}, {3, 2}, {cfg.NPositions, 1}, {33, 7}} {
		toks := randomTokens(uint64(40+i), s.n, cfg.VocabSize)
		seqs = append(seqs, model.Sequence{Tokens: toks, First: s.first})
		if s.n > 1 {
			want = append(want, refOf(m)(m, toks)[s.first-1:]...)
		}
	}
	return seqs, want
}

// checkNLLs fails unless got are want's NLLs within 1e-4 nats each (float32
// against float64; the errors seen are below 1e-5).
func checkNLLs(t *testing.T, what string, got []float32, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d NLLs, want %d", what, len(got), len(want))
	}
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); !(d <= 1e-4) {
			t.Fatalf("%s: target %d: NLL %v, reference %v", what, i, got[i], want[i])
		}
	}
}

// sameNLLs fails unless a and b are the same bits.
func sameNLLs(t *testing.T, what string, a, b []float32) {
	t.Helper()
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("%s: target %d: %v and %v", what, i, a[i], b[i])
		}
	}
}

// TestCPUEdgeShapes: for every edge shape, kernel set, layout (panels where
// the set has them, and rows) and 1 or 3 threads, every target's NLL is the
// reference's, bit-identical between the thread counts, and each sequence
// scored alone gives the bits it gets in the batch. Where a set runs in the
// emulator only the batch at 3 threads in its default layout runs.
func TestCPUEdgeShapes(t *testing.T) {
	ctx := context.Background()
	for _, em := range append(append([]edgeModel(nil), edgeGPT2...), edgeLlama...) {
		t.Run(em.name, func(t *testing.T) {
			m := em.m()
			seqs, want := edgeBatch(m)
			for _, set := range model.KernelSets() {
				emulated := model.KernelSetEmulated(set)
				for _, rows := range []bool{false, true} {
					if rows && emulated {
						continue
					}
					t.Run(fmt.Sprintf("%s/rows=%v", set, rows), func(t *testing.T) {
						model.UseKernels(t, set)
						if rows {
							model.NoPanels(t)
						}
						cpu := model.NewCPU(m, 3)
						_, got, err := cpu.LossPerToken(ctx, seqs)
						if err != nil {
							t.Fatal(err)
						}
						checkNLLs(t, "3 threads", got, want)
						if emulated {
							return
						}
						_, one, err := model.NewCPU(m, 1).LossPerToken(ctx, seqs)
						if err != nil {
							t.Fatal(err)
						}
						sameNLLs(t, "1 thread against 3", one, got)
						off := 0
						for i, s := range seqs {
							_, alone, err := cpu.LossPerToken(ctx, []model.Sequence{s})
							if err != nil {
								t.Fatal(err)
							}
							sameNLLs(t, fmt.Sprintf("sequence %d alone against in the batch", i), alone, got[off:])
							off += len(alone)
						}
					})
				}
			}
		})
	}
}

// TestGeneratorEdgeShapes: the KV-cache generator, prefilled with 5 tokens
// and then stepped one token at a time to the last position, gives at every
// step logits whose log-softmax at the next token is the reference's NLL,
// for every edge shape and kernel set (the emulated set on the first
// GPT-2 and Llama shapes only).
func TestGeneratorEdgeShapes(t *testing.T) {
	ctx := context.Background()
	for _, em := range append(append([]edgeModel(nil), edgeGPT2...), edgeLlama...) {
		t.Run(em.name, func(t *testing.T) {
			m := em.m()
			n := m.Config.NPositions
			toks := randomTokens(50, n, m.Config.VocabSize)
			want := refOf(m)(m, toks)
			for _, set := range model.KernelSets() {
				if model.KernelSetEmulated(set) && em.name != edgeGPT2[0].name && em.name != edgeLlama[0].name {
					continue
				}
				t.Run(set, func(t *testing.T) {
					model.UseKernels(t, set)
					g, err := model.NewCPU(m, 2).NewGenerator()
					if err != nil {
						t.Fatal(err)
					}
					const prefill = 5
					logits, err := g.Append(ctx, toks[:prefill])
					if err != nil {
						t.Fatal(err)
					}
					for i := prefill; i < n; i++ {
						lp := refops.LogSoftmax(logits)
						if d := math.Abs(-lp[toks[i]] - want[i-1]); !(d <= 1e-4) {
							t.Fatalf("position %d: -log p = %v, reference %v", i, -lp[toks[i]], want[i-1])
						}
						if i+1 < n {
							if logits, err = g.Append(ctx, toks[i:i+1]); err != nil {
								t.Fatal(err)
							}
						}
					}
				})
			}
		})
	}
}

// TestCPULongContext: sequences of 1100 and 1040 tokens, past the 1024
// keys at which attention's p·v products (K = keys) run split along k on
// AVX-512 (gemmChunked), match the reference for every kernel set run
// natively, GPT-2 and a Qwen3 model with one key/value head.
func TestCPULongContext(t *testing.T) {
	if testing.Short() {
		t.Skip("long sequences")
	}
	ctx := context.Background()
	lc := synth.TinyLlamaConfig("qwen3")
	lc.NLayer, lc.NHead, lc.NKVHead, lc.HeadSize, lc.NEmbd, lc.NInner, lc.NPositions, lc.VocabSize = 1, 4, 1, 6, 10, 12, 1100, 40
	for _, m := range []*model.Model{
		synth.Random(model.Config{NLayer: 1, NHead: 2, NEmbd: 10, NPositions: 1100, VocabSize: 40, LayerNormEps: 1e-5}, 5),
		synth.Peaked(lc, 5),
	} {
		var seqs []model.Sequence
		var want []float64
		for i, n := range []int{1100, 1040} {
			toks := randomTokens(uint64(60+i), n, m.Config.VocabSize)
			seqs = append(seqs, model.Sequence{Tokens: toks, First: 1})
			want = append(want, refOf(m)(m, toks)...)
		}
		for _, set := range model.KernelSets() {
			if model.KernelSetEmulated(set) {
				continue
			}
			t.Run(fmt.Sprintf("%v/%s", m.Config.Arch, set), func(t *testing.T) {
				model.UseKernels(t, set)
				_, got, err := model.NewCPU(m, 2).LossPerToken(ctx, seqs)
				if err != nil {
					t.Fatal(err)
				}
				checkNLLs(t, "long", got, want)
			})
		}
	}
}

// TestCPUUniformLogits: with ln_f's weight and bias zero every logit is 0:
// each NLL is ln V (0 for a one-token vocabulary), and the top-k
// log-probabilities are -ln V for ids 0..k-1 in order (ties go to the lower
// id, within a vocabulary tile and across tiles), for every kernel set.
func TestCPUUniformLogits(t *testing.T) {
	ctx := context.Background()
	for _, V := range []int{1, 2, 129, 300} {
		cfg := model.Config{NLayer: 1, NHead: 2, NEmbd: 6, NPositions: 20, VocabSize: V, LayerNormEps: 1e-5}
		m := synth.Random(cfg, 5)
		clear(m.Weights.LNFW)
		clear(m.Weights.LNFB)
		seqs := []model.Sequence{{Tokens: randomTokens(1, 20, V), First: 1}, {Tokens: randomTokens(2, 7, V), First: 3}}
		lnV := math.Log(float64(V))
		for _, set := range model.KernelSets() {
			t.Run(fmt.Sprintf("V%d/%s", V, set), func(t *testing.T) {
				model.UseKernels(t, set)
				for _, k := range []int{1, min(3, V), V} {
					_, nll, top, err := model.NewCPU(m, 2).LossTopLogprobs(ctx, seqs, k)
					if err != nil {
						t.Fatal(err)
					}
					for i, x := range nll {
						if math.Abs(float64(x)-lnV) > 1e-6 {
							t.Fatalf("k=%d: NLL[%d] = %v, want ln %d = %v", k, i, x, V, lnV)
						}
						for j, tl := range top[i*k:][:k] {
							if tl.ID != int32(j) || math.Abs(float64(tl.Logprob)+lnV) > 1e-6 {
								t.Fatalf("k=%d: target %d's top %d = %+v, want id %d, log-probability %v", k, i, j, tl, j, -lnV)
							}
						}
					}
				}
			})
		}
	}
}
