package model_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// TestLoadBadSafetensors breaks a good model folder in one way per case and
// checks that Load's error names the file and the tensor or the problem.
func TestLoadBadSafetensors(t *testing.T) {
	cfg := smallConfig()
	good := synth.Random(cfg, 21)
	const st = "model.safetensors"
	// rewrite replaces the file's bytes.
	rewrite := func(t *testing.T, path string, f func([]byte) []byte) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setEntry := func(name, key string, v any) func(dir string, t *testing.T) {
		return func(dir string, t *testing.T) {
			editHeader(t, filepath.Join(dir, st), func(h map[string]map[string]any) { h[name][key] = v })
		}
	}
	without := func(name string) []synth.Tensor {
		return slices.DeleteFunc(synth.HFTensors(good, "transformer."), func(x synth.Tensor) bool { return x.Name == name })
	}
	with := func(extra ...synth.Tensor) []synth.Tensor {
		return append(synth.HFTensors(good, "transformer."), extra...)
	}
	withNaN := func(set func(m *model.Model)) []synth.Tensor {
		m := synth.Random(cfg, 21)
		set(m)
		return synth.HFTensors(m, "transformer.")
	}
	cases := []struct {
		name    string
		tensors []synth.Tensor // default: good's
		dtype   string         // default: F32
		edit    func(dir string, t *testing.T)
		want    []string // besides the file name
	}{
		{name: "truncated", edit: func(dir string, t *testing.T) {
			rewrite(t, filepath.Join(dir, st), func(b []byte) []byte { return b[:len(b)-10] })
		}, want: []string{"truncated"}},
		{name: "trailing bytes", edit: func(dir string, t *testing.T) {
			rewrite(t, filepath.Join(dir, st), func(b []byte) []byte { return append(b, 1, 2, 3) })
		}, want: []string{"tensors end at byte"}},
		{name: "header longer than file", edit: func(dir string, t *testing.T) {
			rewrite(t, filepath.Join(dir, st), func(b []byte) []byte {
				binary.LittleEndian.PutUint64(b, uint64(len(b)))
				return b
			})
		}, want: []string{"header length", "truncated"}},
		{name: "huge header length", edit: func(dir string, t *testing.T) {
			rewrite(t, filepath.Join(dir, st), func(b []byte) []byte {
				binary.LittleEndian.PutUint64(b, 1<<62)
				return b
			})
		}, want: []string{"header length 4611686018427387904", "limit"}},
		{name: "short file", edit: func(dir string, t *testing.T) {
			rewrite(t, filepath.Join(dir, st), func(b []byte) []byte { return b[:5] })
		}, want: []string{"too short"}},
		{name: "header not JSON", edit: func(dir string, t *testing.T) {
			rewrite(t, filepath.Join(dir, st), func(b []byte) []byte { return rawSafetensors("{nope", nil) })
		}, want: []string{"header"}},
		{name: "offsets out of range", edit: setEntry("transformer.ln_f.bias", "data_offsets", []int64{1 << 40, 1<<40 + 64}),
			want: []string{`"transformer.ln_f.bias"`, "run past"}},
		{name: "offsets reversed", edit: setEntry("transformer.ln_f.bias", "data_offsets", []int64{64, 0}),
			want: []string{`"transformer.ln_f.bias"`, "end before begin"}},
		{name: "overlapping", edit: func(dir string, t *testing.T) {
			editHeader(t, filepath.Join(dir, st), func(h map[string]map[string]any) {
				h["transformer.ln_f.bias"]["data_offsets"] = h["transformer.ln_f.weight"]["data_offsets"]
			})
		}, want: []string{"transformer.ln_f", "overlap"}},
		{name: "size not shape", edit: setEntry("transformer.ln_f.bias", "shape", []int{17}),
			want: []string{`"transformer.ln_f.bias"`, "shape [17]"}},
		{name: "unknown dtype", edit: setEntry("transformer.h.0.ln_1.weight", "dtype", "F33"),
			want: []string{`"transformer.h.0.ln_1.weight"`, `unknown dtype "F33"`}},
		{name: "integer dtype", edit: setEntry("transformer.h.0.ln_1.weight", "dtype", "I32"),
			want: []string{`"transformer.h.0.ln_1.weight"`, "dtype I32"}},
		{name: "wrong shape", edit: setEntry("transformer.h.1.ln_2.bias", "shape", []int{4, 4}),
			want: []string{`"transformer.h.1.ln_2.bias"`, "shape [4 4], want [16]"}},
		{name: "missing tensor", tensors: without("transformer.h.1.mlp.c_proj.bias"),
			want: []string{`missing tensor "h.1.mlp.c_proj.bias"`}},
		{name: "unexpected tensor", tensors: with(synth.Tensor{Name: "transformer.h.2.ln_1.weight", Shape: []int{16}, Data: make([]float32, 16)}),
			want: []string{`"transformer.h.2.ln_1.weight"`, "unexpected"}},
		{name: "buffer of a missing layer", tensors: with(synth.Tensor{Name: "h.7.attn.bias", Shape: []int{1}, Data: []float32{1}}),
			want: []string{`"h.7.attn.bias"`, "unexpected"}},
		{name: "duplicate", tensors: with(synth.Tensor{Name: "wpe.weight", Shape: []int{cfg.NPositions, cfg.NEmbd}, Data: good.Weights.WPE}),
			want: []string{`"wpe.weight"`, `"transformer.wpe.weight"`}},
		{name: "NaN", tensors: withNaN(func(m *model.Model) { m.Weights.Layers[1].FCB[3] = float32(math.NaN()) }),
			dtype: "F16", want: []string{`"transformer.h.1.mlp.c_fc.bias"`, "NaN", "index 3"}},
		{name: "Inf", tensors: withNaN(func(m *model.Model) { m.Weights.WPE[100] = float32(math.Inf(1)) }),
			dtype: "BF16", want: []string{`"transformer.wpe.weight"`, "+Inf", "index 100"}},
		{name: "config disagrees", edit: func(dir string, t *testing.T) {
			c := cfg
			c.NPositions = 32
			if err := synth.WriteConfig(dir, c); err != nil {
				t.Fatal(err)
			}
		}, want: []string{`"transformer.wpe.weight"`, "shape [64 16], want [32 16]"}},
		{name: "no config", edit: func(dir string, t *testing.T) {
			os.Remove(filepath.Join(dir, "config.json"))
		}, want: []string{"config.json"}},
		{name: "bad config", edit: func(dir string, t *testing.T) {
			os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model_type": "bert", "n_layer": 2}`), 0o644)
		}, want: []string{"config.json", `model_type "bert"`, `"qwen3"`}},
		{name: "no weights", edit: func(dir string, t *testing.T) {
			os.Remove(filepath.Join(dir, st))
		}, want: []string{"neither model.safetensors nor model.safetensors.index.json"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := c.tensors
			if ts == nil {
				ts = synth.HFTensors(good, "transformer.")
			}
			dtype := c.dtype
			if dtype == "" {
				dtype = "F32"
			}
			dir := writeTensors(t, cfg, ts, dtype)
			if c.edit != nil {
				c.edit(dir, t)
			}
			_, err := model.Load(dir)
			file := filepath.Join(dir, st)
			if c.name == "no weights" || c.name == "no config" || c.name == "bad config" {
				file = dir
			}
			wantErr(t, err, append([]string{file}, c.want...)...)
		})
	}
}

// TestLoadHugeJSON: a config.json or model.safetensors.index.json larger
// than MaxJSONFile (a wrong file, or a damaged one) is refused by its size,
// before it is read into memory. The files are sparse: nothing is written.
func TestLoadHugeJSON(t *testing.T) {
	for _, name := range []string{"config.json", "model.safetensors.index.json"} {
		t.Run(name, func(t *testing.T) {
			dir := writeTensors(t, smallConfig(), synth.HFTensors(synth.Random(smallConfig(), 1), ""), "F32")
			path := filepath.Join(dir, name)
			if name != "config.json" { // model.safetensors would be read first
				os.Remove(filepath.Join(dir, "model.safetensors"))
			}
			f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			err = f.Truncate(model.MaxJSONFile + 1)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			_, err = model.Load(dir)
			wantErr(t, err, name, "more than the limit")
		})
	}
}

func TestParseConfig(t *testing.T) {
	gpt2 := `{"activation_function": "gelu_new", "model_type": "gpt2", "n_ctx": 1024, "n_embd": 768,
		"n_head": 12, "n_inner": null, "n_layer": 12, "n_positions": 1024, "vocab_size": 50257,
		"layer_norm_epsilon": 1e-05, "architectures": ["GPT2LMHeadModel"]}`
	want124M := model.Config{NLayer: 12, NHead: 12, NEmbd: 768, NPositions: 1024, VocabSize: 50257, LayerNormEps: 1e-5}
	good := []struct {
		name, json string
		want       model.Config
	}{
		{"gpt2", gpt2, want124M},
		{"n_ctx only, defaults", `{"n_ctx": 1024, "n_embd": 768, "n_head": 12, "n_layer": 12, "vocab_size": 50257}`, want124M},
		{"xl", `{"n_positions": 1024, "n_embd": 1600, "n_head": 25, "n_layer": 48, "vocab_size": 50257, "layer_norm_epsilon": 1e-6}`,
			model.Config{NLayer: 48, NHead: 25, NEmbd: 1600, NPositions: 1024, VocabSize: 50257, LayerNormEps: 1e-6}},
		{"gelu_pytorch_tanh", strings.Replace(gpt2, `"gelu_new"`, `"gelu_pytorch_tanh"`, 1), want124M},
		{"gelu_fast", strings.Replace(gpt2, `"gelu_new"`, `"gelu_fast"`, 1), want124M},
		{"gelu (erf)", strings.Replace(gpt2, `"gelu_new"`, `"gelu"`, 1),
			model.Config{NLayer: 12, NHead: 12, NEmbd: 768, NPositions: 1024, VocabSize: 50257, LayerNormEps: 1e-5, ExactGELU: true}},
		{"gelu_python (erf)", strings.Replace(gpt2, `"gelu_new"`, `"gelu_python"`, 1),
			model.Config{NLayer: 12, NHead: 12, NEmbd: 768, NPositions: 1024, VocabSize: 50257, LayerNormEps: 1e-5, ExactGELU: true}},
		{"gelu_accurate", strings.Replace(gpt2, `"gelu_new"`, `"gelu_accurate"`, 1), want124M},
		{"tied", strings.Replace(gpt2, `"n_inner": null`, `"n_inner": null, "tie_word_embeddings": true`, 1), want124M},
		{"untied", strings.Replace(gpt2, `"n_inner": null`, `"n_inner": null, "tie_word_embeddings": false`, 1),
			model.Config{NLayer: 12, NHead: 12, NEmbd: 768, NPositions: 1024, VocabSize: 50257, LayerNormEps: 1e-5, UntiedHead: true}},
		{"n_inner 4C", strings.Replace(gpt2, `"n_inner": null`, `"n_inner": 3072`, 1), want124M},
		{"n_inner", strings.Replace(gpt2, `"n_inner": null`, `"n_inner": 2000`, 1),
			model.Config{NLayer: 12, NHead: 12, NEmbd: 768, NPositions: 1024, VocabSize: 50257, LayerNormEps: 1e-5, NInner: 2000}},
		// GPT2Config's attribute_map: the other names of the sizes, which
		// transformers sets last.
		{"aliases", `{"hidden_size": 768, "num_attention_heads": 12, "num_hidden_layers": 12, "max_position_embeddings": 1024, "vocab_size": 50257}`, want124M},
		{"alias wins", strings.Replace(gpt2, `"n_inner": null`, `"n_inner": null, "hidden_size": 1600, "num_attention_heads": 25, "num_hidden_layers": 48, "max_position_embeddings": 512`, 1),
			model.Config{NLayer: 48, NHead: 25, NEmbd: 1600, NPositions: 512, VocabSize: 50257, LayerNormEps: 1e-5}},
		// Stanford CRFM's GPT-2s (stanford-crfm/alias-gpt2-small-x21 and kin).
		{"scaled by layer", strings.Replace(gpt2, `"n_inner": null`, `"n_inner": null, "scale_attn_by_inverse_layer_idx": true, "reorder_and_upcast_attn": true`, 1),
			model.Config{NLayer: 12, NHead: 12, NEmbd: 768, NPositions: 1024, VocabSize: 50257, LayerNormEps: 1e-5, LayerScaledAttn: true}},
	}
	for _, c := range good {
		got, err := model.ParseConfig([]byte(c.json))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
		} else if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	base := `"n_positions": 64, "n_embd": 16, "n_head": 2, "n_layer": 2, "vocab_size": 300`
	bad := []struct{ json, want string }{
		{`{` + base + `, "model_type": "gpt_neox"}`, `model_type "gpt_neox"`},
		{`{` + base + `, "activation_function": "relu"}`, `activation_function "relu"`},
		{`{` + base + `, "activation_function": "gelu_10"}`, `activation_function "gelu_10"`}, // clipped to [-10, 10]
		{`{` + base + `, "activation_function": "quick_gelu"}`, `activation_function "quick_gelu"`},
		{`{` + base + `, "n_inner": -3}`, "n_inner = -3"},
		{`{` + base + `, "n_inner": 99999999}`, "n_inner = 99999999"},
		{`{` + base + `, "scale_attn_weights": false}`, "scale_attn_weights"},
		{`{` + base + `, "add_cross_attention": true}`, "add_cross_attention"},
		{`{` + base + `, "layer_norm_epsilon": -1}`, "layer_norm_epsilon"},
		{`{"n_embd": 16, "n_head": 2, "n_layer": 2, "vocab_size": 300}`, "n_positions"},
		{`{"n_positions": 64, "n_head": 2, "n_layer": 2, "vocab_size": 300}`, "n_embd"},
		{`{"n_positions": 64, "n_embd": 16, "n_head": 3, "n_layer": 2, "vocab_size": 300}`, "not divisible"},
		{`{"n_positions": 64, "n_embd": 16, "n_head": 2, "n_layer": 0, "vocab_size": 300}`, "n_layer = 0"},
		{`{"n_positions": 64, "n_embd": 16, "n_head": 2, "n_layer": 2, "vocab_size": -5}`, "vocab_size = -5"},
		{`{"n_positions": 64, "n_embd": "16"}`, "parse config"},
		{`[1]`, "parse config"},
	}
	for _, c := range bad {
		_, err := model.ParseConfig([]byte(c.json))
		wantErr(t, err, c.want)
	}
	path := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(path, []byte(`{"model_type": "bert"}`), 0o644)
	_, err := model.LoadConfig(path)
	wantErr(t, err, path, `model_type "bert"`)
}
