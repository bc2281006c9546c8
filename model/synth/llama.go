package synth

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/wgpu-eval/wgpu-eval/model"
)

// The shapes of released models of the Llama family, from their config.json
// files (the weights are synthetic). Each is a model.Config with Arch
// model.ArchLlama.
var llamaShapes = map[string]model.Config{
	// Qwen/Qwen2.5-0.5B: 494M parameters, tied.
	"qwen2.5-0.5b": {Arch: model.ArchLlama, ModelType: "qwen2", NLayer: 24, NHead: 14, NKVHead: 2, HeadSize: 64, NEmbd: 896,
		NInner: 4864, NPositions: 32768, VocabSize: 151936, LayerNormEps: 1e-6, RopeTheta: 1e6, QKVBias: true, TiedEmbed: true},
	// Qwen/Qwen3-0.6B: 596M parameters, tied, q/k norms, head_dim 128 over 1024 channels.
	"qwen3-0.6b": {Arch: model.ArchLlama, ModelType: "qwen3", NLayer: 28, NHead: 16, NKVHead: 8, HeadSize: 128, NEmbd: 1024,
		NInner: 3072, NPositions: 40960, VocabSize: 151936, LayerNormEps: 1e-6, RopeTheta: 1e6, QKNorm: true, TiedEmbed: true},
	// HuggingFaceTB/SmolLM2-360M: 362M parameters, tied.
	"smollm2-360m": {Arch: model.ArchLlama, ModelType: "llama", NLayer: 32, NHead: 15, NKVHead: 5, HeadSize: 64, NEmbd: 960,
		NInner: 2560, NPositions: 8192, VocabSize: 49152, LayerNormEps: 1e-5, RopeTheta: 100000, TiedEmbed: true},
	// meta-llama/Llama-3.2-1B: 1236M parameters, tied, llama3 rope scaling.
	"llama-3.2-1b": {Arch: model.ArchLlama, ModelType: "llama", NLayer: 16, NHead: 32, NKVHead: 8, HeadSize: 64, NEmbd: 2048,
		NInner: 8192, NPositions: 131072, VocabSize: 128256, LayerNormEps: 1e-5, RopeTheta: 500000, TiedEmbed: true,
		RopeScaling: model.RopeScaling{Type: "llama3", Factor: 32, LowFreq: 1, HighFreq: 4, OrigPositions: 8192}},
	// TinyLlama/TinyLlama_v1.1: 1100M parameters, untied.
	"tinyllama-1.1b": {Arch: model.ArchLlama, ModelType: "llama", NLayer: 22, NHead: 32, NKVHead: 4, HeadSize: 64, NEmbd: 2048,
		NInner: 5632, NPositions: 2048, VocabSize: 32000, LayerNormEps: 1e-5, RopeTheta: 10000},
}

// LlamaShapeNames lists the names LlamaShape knows, sorted.
func LlamaShapeNames() []string {
	return []string{"llama-3.2-1b", "qwen2.5-0.5b", "qwen3-0.6b", "smollm2-360m", "tinyllama-1.1b"}
}

// LlamaShape returns the shape of a released Llama-family model by its name
// in LlamaShapeNames ("qwen2.5-0.5b", "llama-3.2-1b", ...).
func LlamaShape(name string) (model.Config, bool) {
	c, ok := llamaShapes[name]
	return c, ok
}

// TinyLlamaConfig is a Llama-family model small enough for any test, with
// every option this package's decoder has switched on where it can be: 2
// layers, 4 query heads over 2 key/value heads of 12 channels (more than
// hidden/heads, as Qwen3's), 32 channels, an MLP of 72, 128 positions, a
// vocabulary of 300, rope_scaling llama3 over an original context of 32, q/k/v
// biases, q/k norms, an untied lm_head. modelType picks what config.json says
// ("llama", "mistral", "qwen2", "qwen3"); options that model_type cannot
// express are switched off (qwen2: no norms; llama: no norms; mistral: no
// biases, no norms).
func TinyLlamaConfig(modelType string) model.Config {
	c := model.Config{Arch: model.ArchLlama, ModelType: modelType, NLayer: 2, NHead: 4, NKVHead: 2, HeadSize: 12, NEmbd: 32,
		NInner: 72, NPositions: 128, VocabSize: 300, LayerNormEps: 1e-5, RopeTheta: 10000,
		RopeScaling: model.RopeScaling{Type: "llama3", Factor: 4, LowFreq: 1, HighFreq: 4, OrigPositions: 32}}
	switch modelType {
	case "qwen3":
		c.QKNorm = true
	case "qwen2":
		c.QKVBias = true
	case "llama":
		c.QKVBias, c.OBias, c.MLPBias = true, true, true
	}
	return c
}

// randomLlama is Random for the Llama family: embeddings and norms of unit
// scale, every matrix N(0, 1/in) so activations stay of unit scale, the
// residual projections scaled by 1/sqrt(2 NLayer), small biases; lm_head
// WTE when tied, else its own draw.
func randomLlama(cfg model.Config, seed uint64) *model.Model {
	f := &filler{seed: seed}
	C, V, I, QD, KV, hd := cfg.NEmbd, cfg.VocabSize, cfg.Inner(), cfg.QDim(), cfg.KVDim(), cfg.HeadDim()
	std := func(in int) float64 { return 1 / math.Sqrt(float64(in)) }
	proj := 1 / math.Sqrt(2*float64(max(cfg.NLayer, 1)))
	m := &model.Model{Config: cfg, Source: "random"}
	w := &m.Weights
	w.WTE = f.normals(V*C, 0, 1)
	w.Layers = make([]model.Layer, cfg.NLayer)
	bias := func(on bool, n int) []float32 {
		if !on {
			return nil
		}
		return f.normals(n, 0, 0.1)
	}
	for i := range w.Layers {
		l := &w.Layers[i]
		l.LN1W = f.normals(C, 1, 0.1)
		l.QW, l.KW, l.VW = f.normals(QD*C, 0, std(C)), f.normals(KV*C, 0, std(C)), f.normals(KV*C, 0, std(C))
		l.QB, l.KB, l.VB = bias(cfg.QKVBias, QD), bias(cfg.QKVBias, KV), bias(cfg.QKVBias, KV)
		if cfg.QKNorm {
			l.QNormW, l.KNormW = f.normals(hd, 1, 0.1), f.normals(hd, 1, 0.1)
		}
		l.OW, l.OB = f.normals(C*QD, 0, proj*std(QD)), bias(cfg.OBias, C)
		l.LN2W = f.normals(C, 1, 0.1)
		l.GateW, l.GateB = f.normals(I*C, 0, std(C)), bias(cfg.MLPBias, I)
		l.UpW, l.UpB = f.normals(I*C, 0, std(C)), bias(cfg.MLPBias, I)
		l.DownW, l.DownB = f.normals(C*I, 0, proj*std(I)), bias(cfg.MLPBias, C)
	}
	w.LNFW = f.normals(C, 1, 0.1)
	w.LMHead = w.WTE
	if !cfg.TiedEmbed {
		w.LMHead = f.normals(V*C, 0, std(C))
	}
	f.run()
	return m
}

// peakedLlama is Peaked for the Llama family. Channel 0 of the residual
// stream holds a constant 4 for every token (the embeddings' channel 0, and
// no o_proj or down_proj row writes to it, nor their biases), so after the
// final RMSNorm it carries nearly the same value at every position, and
// lm_head's channel 0 turns it into a Zipf-like prior of about -ln(1+id)
// nats; lm_head's other channels (std 0.5/sqrt(C)) let the context move the
// logits by about half a nat. A tied lm_head is untied for this: the prior needs
// lm_head's channel 0 to differ from the embeddings'.
func peakedLlama(cfg model.Config, seed uint64) *model.Model {
	cfg.TiedEmbed = false
	m := randomLlama(cfg, seed)
	C, V := cfg.NEmbd, cfg.VocabSize
	w := &m.Weights
	for v := range V {
		w.WTE[v*C] = 4
	}
	for i := range w.Layers {
		l := &w.Layers[i]
		clear(l.OW[:cfg.QDim()])     // row 0 of (C, QDim)
		clear(l.DownW[:cfg.Inner()]) // row 0 of (C, Inner)
		if l.OB != nil {
			l.OB[0] = 0
		}
		if l.DownB != nil {
			l.DownB[0] = 0
		}
	}
	// After the RMSNorm channel 0 is about 4/rms(x) with rms(x) near
	// sqrt((16 + C-1)/C): scale the prior by its inverse.
	h0 := 4 / math.Sqrt((16+float64(C-1))/float64(C)) * float64(w.LNFW[0])
	for v := range V {
		w.LMHead[v*C] = float32(-math.Log1p(float64(v)) / h0)
		for j := 1; j < C; j++ {
			w.LMHead[v*C+j] *= 0.5
		}
	}
	m.Source = "peaked"
	return m
}

// llamaTensors returns m's parameters named and shaped as transformers
// saves a Llama-family model (its Tensors, and lm_head.weight when untied).
// The data slices are m's, not copies.
func llamaTensors(m *model.Model) []Tensor {
	specs := m.Config.Tensors()
	if !m.Config.TiedEmbed {
		specs = append(specs, m.Config.LMHeadSpec())
	}
	ts := make([]Tensor, 0, len(specs))
	for _, s := range specs {
		ts = append(ts, Tensor{s.Name, s.Shape, m.Tensor(s)})
	}
	return ts
}

// writeLlamaConfig writes dir/config.json for cfg as transformers' config
// class of its model_type saves it (the fields this module reads, and the
// ones that must be there for transformers to load it).
func writeLlamaConfig(dir string, cfg model.Config) error {
	arch := map[string]string{"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM",
		"qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM"}[cfg.ModelType]
	if arch == "" {
		return fmt.Errorf("write config: model_type %q is not of the Llama family", cfg.ModelType)
	}
	c := map[string]any{
		"architectures":           []string{arch},
		"model_type":              cfg.ModelType,
		"hidden_size":             cfg.NEmbd,
		"intermediate_size":       cfg.Inner(),
		"num_hidden_layers":       cfg.NLayer,
		"num_attention_heads":     cfg.NHead,
		"num_key_value_heads":     cfg.KVHeads(),
		"head_dim":                cfg.HeadDim(),
		"max_position_embeddings": cfg.NPositions,
		"vocab_size":              cfg.VocabSize,
		"rms_norm_eps":            cfg.LayerNormEps,
		"rope_theta":              cfg.RopeTheta,
		"hidden_act":              "silu",
		"tie_word_embeddings":     cfg.TiedEmbed,
		"torch_dtype":             "float32",
	}
	if rs := ropeScalingJSON(cfg.RopeScaling); rs != nil {
		c["rope_scaling"] = rs
	}
	switch cfg.ModelType {
	case "llama":
		c["attention_bias"], c["mlp_bias"] = cfg.QKVBias, cfg.MLPBias
		if cfg.QKVBias != cfg.OBias || cfg.QKNorm {
			return fmt.Errorf("write config: a llama config cannot say q/k/v bias %v with o bias %v, or q/k norms", cfg.QKVBias, cfg.OBias)
		}
	case "qwen3":
		c["attention_bias"] = cfg.QKVBias
		if cfg.QKVBias != cfg.OBias || !cfg.QKNorm || cfg.MLPBias {
			return fmt.Errorf("write config: a qwen3 config has q/k norms and one attention_bias")
		}
	case "qwen2":
		if !cfg.QKVBias || cfg.OBias || cfg.MLPBias || cfg.QKNorm {
			return fmt.Errorf("write config: a qwen2 config has q/k/v biases only")
		}
	case "mistral":
		c["sliding_window"] = nil
		if cfg.QKVBias || cfg.OBias || cfg.MLPBias || cfg.QKNorm {
			return fmt.Errorf("write config: a mistral config has no biases and no q/k norms")
		}
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.json"), append(data, '\n'), 0o644)
}

// ropeScalingJSON is s as config.json's rope_scaling says it (nil for none),
// each optional yarn field written only where s sets it.
func ropeScalingJSON(s model.RopeScaling) map[string]any {
	if s.Type == "" {
		return nil
	}
	rs := map[string]any{"rope_type": s.Type, "factor": s.Factor}
	switch s.Type {
	case "llama3":
		rs["low_freq_factor"], rs["high_freq_factor"] = s.LowFreq, s.HighFreq
		rs["original_max_position_embeddings"] = s.OrigPositions
	case "yarn":
		rs["original_max_position_embeddings"] = s.OrigPositions
		for k, v := range map[string]float64{"attention_factor": s.AttentionFactor, "mscale": s.Mscale,
			"mscale_all_dim": s.MscaleAllDim, "beta_fast": s.BetaFast, "beta_slow": s.BetaSlow} {
			if v != 0 {
				rs[k] = v
			}
		}
		if s.NoTruncate {
			rs["truncate"] = false
		}
	}
	return rs
}
