package model_test

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// llamaVariants are the decoder options the tests cover, one tiny model each.
var llamaVariants = []struct {
	name string
	cfg  func() model.Config
}{
	{"llama", func() model.Config { return synth.TinyLlamaConfig("llama") }},
	{"mistral", func() model.Config { return synth.TinyLlamaConfig("mistral") }},
	{"qwen2", func() model.Config { return synth.TinyLlamaConfig("qwen2") }},
	{"qwen3", func() model.Config { return synth.TinyLlamaConfig("qwen3") }},
	{"qwen2-yarn", func() model.Config {
		c := synth.TinyLlamaConfig("qwen2")
		c.RopeScaling = model.RopeScaling{Type: "yarn", Factor: 4, OrigPositions: 32}
		return c
	}},
	{"llama-linear", func() model.Config {
		c := synth.TinyLlamaConfig("llama")
		c.RopeScaling = model.RopeScaling{Type: "linear", Factor: 2}
		return c
	}},
	{"mha-no-scaling", func() model.Config {
		c := synth.TinyLlamaConfig("mistral")
		c.NKVHead, c.HeadSize, c.RopeScaling = c.NHead, c.NEmbd/c.NHead, model.RopeScaling{}
		return c
	}},
}

// randomTokens returns n deterministic ids below v, Zipf-like as in text
// (log-uniform: small ids common), which the peaked models predict well.
func randomTokens(seed uint64, n, v int) []int32 {
	r := rand.New(rand.NewPCG(seed, 1))
	ts := make([]int32, n)
	for i := range ts {
		ts[i] = int32(min(int(math.Exp(r.Float64()*math.Log(float64(v))))-1, v-1))
	}
	return ts
}

// TestLlamaMatchesReference checks every target's NLL of the CPU forward of
// each variant against the float64 reference written from transformers'
// definitions, on a peaked model (mean NLL far from ln V), for a sequence
// filling the model's positions, several sequences in one batch (positions
// restart in each), and the portable kernels.
func TestLlamaMatchesReference(t *testing.T) {
	for _, v := range llamaVariants {
		t.Run(v.name, func(t *testing.T) {
			cfg := v.cfg()
			m := synth.Peaked(cfg, 7)
			long := randomTokens(3, cfg.NPositions, cfg.VocabSize)
			short := randomTokens(4, 37, cfg.VocabSize)
			want := append(model.RefLlamaNLL(m, long), model.RefLlamaNLL(m, short)[9:]...)
			cpu := model.NewCPU(m, 2)
			_, got, err := cpu.LossPerToken(context.Background(), []model.Sequence{{Tokens: long, First: 1}, {Tokens: short, First: 10}})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d NLLs, want %d", len(got), len(want))
			}
			var sum, ref, worst float64
			for i := range want {
				d := math.Abs(float64(got[i]) - want[i])
				worst = max(worst, d)
				sum += float64(got[i])
				ref += want[i]
			}
			mean, refMean := sum/float64(len(want)), ref/float64(len(want))
			t.Logf("mean NLL %.6f (reference %.6f, ln V %.3f), worst token %.2e", mean, refMean, math.Log(float64(cfg.VocabSize)), worst)
			if math.Abs(mean-refMean) > 1e-5 || worst > 1e-4 {
				t.Errorf("mean NLL %v, reference %v (diff %.2e); worst token diff %.2e", mean, refMean, mean-refMean, worst)
			}
			if lnV := math.Log(float64(cfg.VocabSize)); refMean > lnV-0.5 {
				t.Errorf("reference mean NLL %v is not well below ln V %v: the test model predicts too little", refMean, lnV)
			}
		})
	}
}

// Every kernel set this build and CPU can run (the portable one, AVX2,
// AVX-512 natively or emulated) gives the reference's NLLs for every
// variant, bit-identical for 1 and 3 threads.
func TestLlamaKernelSetsThreads(t *testing.T) {
	for _, set := range model.KernelSets() {
		t.Run(set, func(t *testing.T) {
			model.UseKernels(t, set)
			for _, v := range llamaVariants {
				m := synth.Peaked(v.cfg(), 8)
				toks := randomTokens(5, 50, v.cfg().VocabSize)
				want := model.RefLlamaNLL(m, toks)
				seqs := []model.Sequence{{Tokens: toks, First: 1}}
				_, one, err := model.NewCPU(m, 1).LossPerToken(context.Background(), seqs)
				if err != nil {
					t.Fatal(err)
				}
				_, three, err := model.NewCPU(m, 3).LossPerToken(context.Background(), seqs)
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if math.Float32bits(one[i]) != math.Float32bits(three[i]) {
						t.Fatalf("%s: target %d: 1 thread %v, 3 threads %v", v.name, i, one[i], three[i])
					}
					if d := math.Abs(float64(one[i]) - want[i]); d > 1e-4 {
						t.Fatalf("%s: target %d: %v, reference %v", v.name, i, one[i], want[i])
					}
				}
			}
		})
	}
}

// TestLlamaLoadDTypes writes a model in each dtype and loads it straight
// into the CPU: the NLLs are bit-identical to those of the float32 model
// rounded to that dtype, and a tied model reads its lm_head from the
// embeddings whatever lm_head.weight the file holds.
func TestLlamaLoadDTypes(t *testing.T) {
	cfg := synth.TinyLlamaConfig("qwen2")
	m := synth.Peaked(cfg, 11)
	seq := []model.Sequence{{Tokens: randomTokens(5, 90, cfg.VocabSize), First: 1}}
	for _, dtype := range []string{"F32", "F16", "BF16"} {
		t.Run(dtype, func(t *testing.T) {
			dir := writeModel(t, m, dtype)
			loaded, err := model.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range append(m.Config.Tensors(), m.Config.LMHeadSpec()) {
				want, got := m.Tensor(s), loaded.Tensor(s)
				for i := range want {
					if r := roundTo(dtype, want[i]); math.Float32bits(got[i]) != math.Float32bits(r) {
						t.Fatalf("%s[%d] = %v, want %v", s.Name, i, got[i], r)
					}
				}
			}
			_, want, err := model.NewCPU(loaded, 2).LossPerToken(context.Background(), seq)
			if err != nil {
				t.Fatal(err)
			}
			ck, err := model.OpenCheckpoint(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			defer ck.Close()
			cpu, err := model.LoadCPU(context.Background(), ck, 2, model.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_, got, err := cpu.LossPerToken(context.Background(), seq)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("LoadCPU NLL[%d] = %v, Load+NewCPU %v", i, got[i], want[i])
				}
			}
		})
	}
}

// TestLlamaTiedIgnoresStoredHead: with tie_word_embeddings the embeddings
// are the LM head (transformers ties them after loading), even when the
// file also holds a different lm_head.weight.
func TestLlamaTiedIgnoresStoredHead(t *testing.T) {
	cfg := synth.TinyLlamaConfig("qwen3")
	m := synth.Peaked(cfg, 3) // untied
	dir := writeModel(t, m, "F32")
	cfg.TiedEmbed = true
	if err := synth.WriteConfig(dir, cfg); err != nil {
		t.Fatal(err)
	}
	loaded, err := model.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !loaded.Config.TiedEmbed || &loaded.Weights.LMHead[0] != &loaded.Weights.WTE[0] {
		t.Fatalf("tied model: LMHead is not WTE")
	}
	tied := *m
	tied.Config = cfg
	tok := randomTokens(8, 50, cfg.VocabSize)
	want := model.RefLlamaNLL(&tied, tok)
	ck, err := model.OpenCheckpoint(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	cpu, err := model.LoadCPU(context.Background(), ck, 1, model.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, got, err := cpu.LossPerToken(context.Background(), []model.Sequence{{Tokens: tok, First: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if math.Abs(float64(got[i])-want[i]) > 1e-4 {
			t.Fatalf("NLL[%d] = %v, tied reference %v", i, got[i], want[i])
		}
	}
}

// TestLlamaGenerator: the generator's prefill and its one-token steps give
// the logits of the loss forward: the log-softmax of the logits after each
// prefix equals the NLL the loss gives that target.
func TestLlamaGenerator(t *testing.T) {
	for _, v := range llamaVariants {
		t.Run(v.name, func(t *testing.T) {
			cfg := v.cfg()
			m := synth.Peaked(cfg, 5)
			cpu := model.NewCPU(m, 2)
			tok := randomTokens(9, 70, cfg.VocabSize)
			_, nll, err := cpu.LossPerToken(context.Background(), []model.Sequence{{Tokens: tok, First: 1}})
			if err != nil {
				t.Fatal(err)
			}
			g, err := cpu.NewGeneratorFor(len(tok))
			if err != nil {
				t.Fatal(err)
			}
			prefill := 40
			logits, err := g.Append(context.Background(), tok[:prefill])
			if err != nil {
				t.Fatal(err)
			}
			for i := prefill; i < len(tok); i++ {
				got := logSoftmaxNLL(logits, tok[i])
				if d := math.Abs(got - float64(nll[i-1])); d > 2e-5 {
					t.Fatalf("target %d: generator NLL %v, loss %v", i, got, nll[i-1])
				}
				if logits, err = g.Append(context.Background(), tok[i:i+1]); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// logSoftmaxNLL is -log softmax(logits)[id], in float64.
func logSoftmaxNLL(logits []float32, id int32) float64 {
	mx := math.Inf(-1)
	for _, z := range logits {
		mx = math.Max(mx, float64(z))
	}
	s := 0.0
	for _, z := range logits {
		s += math.Exp(float64(z) - mx)
	}
	return mx + math.Log(s) - float64(logits[id])
}

// TestParseLlamaConfigs parses config.json files shaped as the released
// models' (the fields that matter) and checks what each decoder option
// becomes.
func TestParseLlamaConfigs(t *testing.T) {
	for _, c := range []struct {
		name, json string
		check      func(c model.Config) bool
	}{
		{"llama-3.2", `{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192,
			"num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64, "max_position_embeddings": 131072,
			"vocab_size": 128256, "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "tie_word_embeddings": true, "hidden_act": "silu",
			"attention_bias": false, "mlp_bias": false, "pretraining_tp": 1,
			"rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"}}`,
			func(c model.Config) bool {
				return c.Arch == model.ArchLlama && c.KVHeads() == 8 && c.HeadDim() == 64 && c.TiedEmbed && c.RopeScaling.Factor == 32 &&
					c.RopeScaling.OrigPositions == 8192 && !c.QKVBias && c.NPositions == 131072
			}},
		{"llama-2", `{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
			"num_attention_heads": 32, "max_position_embeddings": 4096, "vocab_size": 32000, "rms_norm_eps": 1e-05, "rope_scaling": null}`,
			func(c model.Config) bool {
				return c.KVHeads() == 32 && c.HeadDim() == 128 && !c.TiedEmbed && c.RopeTheta == 10000 && c.RopeScaling == (model.RopeScaling{})
			}},
		{"mistral", `{"architectures": ["MistralForCausalLM"], "model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
			"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 32768,
			"vocab_size": 32000, "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "sliding_window": 4096}`,
			func(c model.Config) bool {
				return c.NPositions == 4096 && c.Window == 4096 && c.KVHeads() == 8 && !c.QKVBias &&
					strings.Contains(c.Describe(), "4096 positions (its sliding window)")
			}},
		{"qwen2.5", `{"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864,
			"num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2, "max_position_embeddings": 32768,
			"vocab_size": 151936, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "tie_word_embeddings": true,
			"use_sliding_window": false, "sliding_window": 32768, "max_window_layers": 21}`,
			func(c model.Config) bool {
				return c.QKVBias && !c.OBias && !c.QKNorm && c.HeadDim() == 64 && c.NPositions == 32768 && c.Window == 0 && c.LayerNormEps == 1e-6
			}},
		{"qwen3", `{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 1024, "intermediate_size": 3072,
			"num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 40960,
			"vocab_size": 151936, "rms_norm_eps": 1e-06, "rope_theta": 1000000, "tie_word_embeddings": true, "attention_bias": false,
			"sliding_window": null, "use_sliding_window": false}`,
			func(c model.Config) bool { return c.QKNorm && !c.QKVBias && c.QDim() == 2048 && c.KVDim() == 1024 }},
		{"swish", `{"model_type": "mistral", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
			"num_key_value_heads": 2, "max_position_embeddings": 64, "vocab_size": 100, "hidden_act": "swish"}`,
			func(c model.Config) bool { return c.Arch == model.ArchLlama && c.NInner == 128 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := model.ParseConfig([]byte(c.json))
			if err != nil {
				t.Fatal(err)
			}
			if !c.check(cfg) {
				t.Errorf("config %+v", cfg)
			}
		})
	}
}

// TestLlamaClassDefaults: a key config.json leaves out takes the default of
// transformers' config class for the model_type (MistralConfig,
// Qwen2Config, Qwen3Config, LlamaConfig), not "as the other sizes say":
// num_key_value_heads 8 (Mistral) or 32 (Qwen2, Qwen3), Qwen3's head_dim
// 128, sliding_window 4096 (Mistral always, the Qwen models with
// use_sliding_window). A null value means the sizes' own (LlamaConfig's
// None, MistralConfig's head_dim None).
func TestLlamaClassDefaults(t *testing.T) {
	base := `"hidden_size": 512, "intermediate_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 64, "max_position_embeddings": 32768, "vocab_size": 100`
	for _, c := range []struct {
		name, json          string
		kv, headDim, window int
	}{
		{"llama", `{"model_type": "llama", ` + base + `}`, 64, 8, 0},
		{"mistral", `{"model_type": "mistral", ` + base + `}`, 8, 8, 4096},
		{"mistral-null", `{"model_type": "mistral", ` + base + `, "num_key_value_heads": null, "head_dim": null, "sliding_window": null}`, 64, 8, 0},
		{"mistral-set", `{"model_type": "mistral", ` + base + `, "num_key_value_heads": 16, "head_dim": 32, "sliding_window": 8192}`, 16, 32, 8192},
		{"qwen2", `{"model_type": "qwen2", ` + base + `}`, 32, 8, 0},
		// Qwen2Config: the layers from max_window_layers (default 28) on slide, or those layer_types says.
		{"qwen2-sliding-no-layer", `{"model_type": "qwen2", ` + base + `, "use_sliding_window": true}`, 32, 8, 0},
		{"qwen2-sliding", `{"model_type": "qwen2", ` + base + `, "use_sliding_window": true, "max_window_layers": 1}`, 32, 8, 4096},
		{"qwen2-sliding-mwl-all", `{"model_type": "qwen2", ` + base + `, "use_sliding_window": true, "max_window_layers": 2}`, 32, 8, 0},
		{"qwen3-sliding-types", `{"model_type": "qwen3", ` + base + `, "use_sliding_window": true, "sliding_window": 1024,
			"layer_types": ["full_attention", "sliding_attention"]}`, 32, 128, 1024},
		{"qwen3-types-full", `{"model_type": "qwen3", ` + base + `, "use_sliding_window": true, "max_window_layers": 0,
			"layer_types": ["full_attention", "full_attention"]}`, 32, 128, 0},
		{"qwen3-types-unused", `{"model_type": "qwen3", ` + base + `, "sliding_window": 1024, "layer_types": ["sliding_attention", "sliding_attention"]}`, 32, 128, 0},
		{"qwen3", `{"model_type": "qwen3", ` + base + `}`, 32, 128, 0},
		{"qwen3-null", `{"model_type": "qwen3", ` + base + `, "head_dim": null, "num_key_value_heads": null}`, 64, 8, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := model.ParseConfig([]byte(c.json))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.KVHeads() != c.kv || cfg.HeadDim() != c.headDim || cfg.Window != c.window {
				t.Errorf("key/value heads %d, head_dim %d, window %d; want %d, %d, %d", cfg.KVHeads(), cfg.HeadDim(), cfg.Window, c.kv, c.headDim, c.window)
			}
		})
	}
	// A default that cannot hold for the config is named as such.
	_, err := model.ParseConfig([]byte(`{"model_type": "mistral", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
		"num_attention_heads": 4, "max_position_embeddings": 64, "vocab_size": 100}`))
	wantErr(t, err, "no num_key_value_heads", `"mistral"`, "8")
}

// TestParseLlamaConfigErrors: what this package cannot compute is refused
// with a message naming the field.
func TestParseLlamaConfigErrors(t *testing.T) {
	base := `"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4, "max_position_embeddings": 64, "vocab_size": 100`
	for _, c := range []struct{ json, want string }{
		{`{"model_type": "gemma", ` + base + `}`, `"qwen3"`},
		{`{"model_type": "llama", ` + base + `, "rope_scaling": {"rope_type": "longrope", "factor": 4}}`, `"longrope"`},
		{`{"model_type": "llama", ` + base + `, "rope_parameters": {"rope_type": "su", "rope_theta": 1e6}}`, "rope_parameters type \"su\""},
		{`{"model_type": "llama", ` + base + `, "rope_scaling": {"type": "linear"}}`, "factor"},
		{`{"model_type": "llama", ` + base + `, "rope_scaling": {"type": "linear", "factor": -2}}`, "factor"},
		{`{"model_type": "llama", ` + base + `, "rope_scaling": {"rope_type": "llama3", "factor": 4}}`, "low_freq_factor"},
		{`{"model_type": "llama", ` + base + `, "rope_scaling": {"rope_type": "yarn", "factor": 4, "attention_factor": 0}}`, "attention_factor"},
		{`{"model_type": "llama", ` + base + `, "rope_scaling": {"rope_type": "yarn", "factor": 4, "beta_fast": -1}}`, "beta_fast"},
		{`{"model_type": "llama", ` + base + `, "rope_scaling": {"rope_type": "yarn", "factor": 4, "truncate": "no"}}`, "truncate"},
		{`{"model_type": "llama", ` + base + `, "original_max_position_embeddings": 0, "rope_scaling": {"rope_type": "yarn", "factor": 4}}`, "original_max_position_embeddings"},
		{`{"model_type": "llama", ` + base + `, "rope_theta": null}`, "rope_theta is null"},
		{`{"model_type": "llama", ` + base + `, "rope_theta": null, "rope_parameters": {"rope_type": "default"}}`, "rope_theta is null"},
		{`{"model_type": "qwen3", ` + base + `, "rope_parameters": {"rope_theta": 1e6, "partial_rotary_factor": 0.5}}`, "partial_rotary_factor"},
		{`{"model_type": "qwen3", ` + base + `, "layer_types": ["full_attention", "sliding_attention"], "rope_parameters": {"full_attention": {"rope_theta": 1e6}, "sliding_attention": {"rope_theta": 1e4}}}`, "rotate differently"},
		{`{"model_type": "qwen3", ` + base + `, "layer_types": ["full_attention"], "rope_parameters": {"full_attention": 5}}`, "rope_parameters[\"full_attention\"]"},
		{`{"model_type": "qwen2", ` + base + `, "use_sliding_window": true, "layer_types": ["full_attention"]}`, "layer_types has 1 entries"},
		{`{"model_type": "qwen2", ` + base + `, "use_sliding_window": true, "layer_types": ["full_attention", "linear_attention"]}`, `layer_types[1] = "linear_attention"`},
		{`{"model_type": "qwen3", ` + base + `, "rope_parameters": [1, 2]}`, "parse config rope_parameters"},
		{`{"model_type": "llama", ` + base + `, "hidden_act": "gelu"}`, "hidden_act"},
		{`{"model_type": "llama", ` + base + `, "num_key_value_heads": 3}`, "num_key_value_heads"},
		{`{"model_type": "qwen3", ` + base + `, "num_key_value_heads": 2, "head_dim": 7}`, "head_dim"},
		{`{"model_type": "llama", ` + base + `, "rope_theta": -1}`, "rope_theta"},
		{`{"model_type": "llama", ` + base + `, "rms_norm_eps": 0}`, "rms_norm_eps"},
		{`{"model_type": "mistral", ` + base + `, "sliding_window": 0}`, "sliding_window"},
		{`{"model_type": "llama", "hidden_size": 64}`, "num_hidden_layers"},
		{`{"model_type": "qwen2", "architectures": ["Qwen2MoeForCausalLM"], ` + base + `}`, "Qwen2MoeForCausalLM"},
		{`{"model_type": "llama", ` + base + `, "partial_rotary_factor": 0.5}`, "partial_rotary_factor"},
		{`{"model_type": "llama", ` + base + `, "per_layer_config": {"0": {"intermediate_size": 64}}}`, "per_layer_config"},
		{`{"model_type": "qwen3", ` + base + `, "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}`, "quantization_config (quant_method fp8)"},
		{`{"model_type": "gpt2", "n_layer": 2, "n_head": 2, "n_embd": 16, "n_positions": 64, "vocab_size": 300, "quantization_config": {"bits": 4}}`, "quantized"},
		{`{"model_type": "llama", ` + base + `, "head_dim": 0}`, "head_dim = 0"},
		{`{"model_type": "llama", ` + base + `, "num_key_value_heads": 1e30}`, "num_key_value_heads: 1e30, where a whole number"},
		{`{"model_type": "llama", ` + base + `, "num_hidden_layers": 1e30}`, "parse config"},
	} {
		_, err := model.ParseConfig([]byte(c.json))
		wantErr(t, err, c.want)
	}
}

// TestLlamaBadFiles: a checkpoint that does not match its config is refused
// with the tensor named.
func TestLlamaBadFiles(t *testing.T) {
	cfg := synth.TinyLlamaConfig("qwen2")
	m := synth.Random(cfg, 1)
	open := func(dir string) error {
		ck, err := model.OpenCheckpoint(context.Background(), dir)
		if err == nil {
			ck.Close()
		}
		return err
	}
	// untied in config.json, but no lm_head.weight in the file
	dir := writeModel(t, m, "F32")
	c2 := cfg
	c2.TiedEmbed = true
	tiedDir := writeModel(t, synth.Random(c2, 1), "F32")
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tiedDir, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	wantErr(t, open(tiedDir), "lm_head.weight", "tie_word_embeddings")
	// a bias the config does not call for
	c3 := cfg
	c3.ModelType = "mistral"
	c3.QKVBias = false
	if err := synth.WriteConfig(dir, c3); err != nil {
		t.Fatal(err)
	}
	wantErr(t, open(dir), "q_proj.bias", "unexpected tensor")
	// a wrong shape
	c4 := cfg
	c4.NInner = 80
	if err := synth.WriteConfig(dir, c4); err != nil {
		t.Fatal(err)
	}
	wantErr(t, open(dir), "gate_proj.weight", "shape")
}

// TestLlamaBaseModelNames: a checkpoint whose tensors lack the "model."
// prefix (saved from the base model, LlamaModel/Qwen3Model; tied, so it
// needs no lm_head) loads as transformers loads it into the model with the
// LM head: the same weights as the prefixed file. A missing tensor is named
// with the family's prefix.
func TestLlamaBaseModelNames(t *testing.T) {
	cfg := synth.TinyLlamaConfig("qwen3")
	cfg.TiedEmbed = true
	m := synth.Random(cfg, 5)
	var ts []synth.Tensor
	for _, s := range cfg.Tensors() {
		ts = append(ts, synth.Tensor{Name: strings.TrimPrefix(s.Name, "model."), Shape: s.Shape, Data: m.Tensor(s)})
	}
	ts = append(ts, synth.Tensor{Name: "layers.1.self_attn.rotary_emb.inv_freq", Shape: []int{cfg.HeadDim() / 2}, Data: make([]float32, cfg.HeadDim()/2)})
	got, err := model.Load(writeTensors(t, cfg, ts, "F32"))
	if err != nil {
		t.Fatal(err)
	}
	wantEqualModels(t, got, m, "F32")
	_, err = model.Load(writeTensors(t, cfg, ts[1:], "F32"))
	wantErr(t, err, `"model.embed_tokens.weight"`, `"model." prefix`)
}

// TestLlamaOwnedAndBF16: NewCPUOwned gives NewCPU's bits; the bf16 mode
// (portable kernels) runs the family and stays within bf16's rounding of
// the f32 result; the AMX kernels, where they run (natively or emulated),
// within float32 error of the portable ones.
func TestLlamaOwnedAndBF16(t *testing.T) {
	cfg := synth.TinyLlamaConfig("qwen3")
	seq := []model.Sequence{{Tokens: randomTokens(2, 100, cfg.VocabSize), First: 1}}
	ctx := context.Background()
	_, want, err := model.NewCPU(synth.Peaked(cfg, 4), 2).LossPerToken(ctx, seq)
	if err != nil {
		t.Fatal(err)
	}
	_, owned, err := model.NewCPUOwned(synth.Peaked(cfg, 4), 1).LossPerToken(ctx, seq)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if math.Float32bits(owned[i]) != math.Float32bits(want[i]) {
			t.Fatalf("NewCPUOwned NLL[%d] = %v, NewCPU %v", i, owned[i], want[i])
		}
	}
	bf, err := model.NewCPUBF16(synth.Peaked(cfg, 4), 2, true)
	if err != nil {
		t.Fatal(err)
	}
	_, got, err := bf.LossPerToken(ctx, seq)
	if err != nil {
		t.Fatal(err)
	}
	var sum, ref float64
	for i := range want {
		sum += float64(got[i])
		ref += float64(want[i])
	}
	d := math.Abs(sum-ref) / float64(len(want))
	t.Logf("bf16 mean NLL %.5f, f32 %.5f", sum/float64(len(want)), ref/float64(len(want)))
	if d > 0.05 || d == 0 {
		t.Errorf("bf16 mean NLL differs from f32 by %v: want a bf16 rounding's difference (0, 0.05]", d)
	}
	// The AMX kernels (another order of float32 sums, the same bf16
	// operands) agree with the portable ones to float32 accumulation error.
	t.Setenv("WGPU_EVAL_CPU_KERNELS", "")
	if !model.AMXAsm(t) {
		return
	}
	amx, err := model.NewCPUBF16(synth.Peaked(cfg, 4), 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(amx.Kernels(), "bf16-amx") {
		t.Fatalf("kernels %q, want bf16-amx", amx.Kernels())
	}
	_, gotAMX, err := amx.LossPerToken(ctx, seq)
	if err != nil {
		t.Fatal(err)
	}
	var dAMX float64
	for i := range got {
		dAMX = max(dAMX, math.Abs(float64(gotAMX[i]-got[i])))
	}
	t.Logf("bf16-amx against bf16-generic: max |NLL diff| %.2g", dAMX)
	if dAMX > 1e-4 {
		t.Errorf("bf16-amx NLLs differ from bf16-generic's by up to %.3g, want float32 accumulation error (<= 1e-4)", dAMX)
	}
}

// TestDescribeLlama: the model line names the rotary base and scaling, read
// from transformers 5's rope_parameters as from the older fields.
func TestDescribeLlama(t *testing.T) {
	cfg, err := model.ParseConfig([]byte(`{"model_type": "qwen3", "hidden_size": 64, "intermediate_size": 128,
		"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4, "head_dim": 16, "max_position_embeddings": 4096,
		"vocab_size": 100, "rope_parameters": {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 1024, "rope_theta": 1000000}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := "qwen3 (2 layers, 4 heads, 4 key/value heads of 16, 64 channels, MLP 128, 4096 positions, rotary base 1e+06, yarn scaling x4)"
	if got := cfg.Describe(); got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
}
