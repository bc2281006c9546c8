package synth

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/x448/float16"

	"github.com/wgpu-eval/wgpu-eval/model"
)

// Tensor is one named tensor to write, in row-major order.
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32
}

// HFTensors returns m's parameters named and shaped as Hugging Face's
// GPT2LMHeadModel saves them, each name prefixed with prefix ("transformer."
// or ""), plus each layer's attn.bias causal-mask buffer (1, 1, T, T) as older
// files have. lm_head.weight (never prefixed) is included only when LMHead
// differs from WTE. The data slices are m's, not copies.
func HFTensors(m *model.Model, prefix string) []Tensor {
	c := m.Config
	C, V, T, I := c.NEmbd, c.VocabSize, c.NPositions, c.Inner()
	w := &m.Weights
	mask := make([]float32, T*T)
	for i := range T {
		for j := range i + 1 {
			mask[i*T+j] = 1
		}
	}
	ts := []Tensor{
		{prefix + "wte.weight", []int{V, C}, w.WTE},
		{prefix + "wpe.weight", []int{T, C}, w.WPE},
	}
	for i := range w.Layers {
		l := &w.Layers[i]
		p := fmt.Sprintf("%sh.%d.", prefix, i)
		ts = append(ts,
			Tensor{p + "ln_1.weight", []int{C}, l.LN1W},
			Tensor{p + "ln_1.bias", []int{C}, l.LN1B},
			Tensor{p + "attn.bias", []int{1, 1, T, T}, mask},
			Tensor{p + "attn.c_attn.weight", []int{C, 3 * C}, l.QKVW},
			Tensor{p + "attn.c_attn.bias", []int{3 * C}, l.QKVB},
			Tensor{p + "attn.c_proj.weight", []int{C, C}, l.ProjW},
			Tensor{p + "attn.c_proj.bias", []int{C}, l.ProjB},
			Tensor{p + "ln_2.weight", []int{C}, l.LN2W},
			Tensor{p + "ln_2.bias", []int{C}, l.LN2B},
			Tensor{p + "mlp.c_fc.weight", []int{C, I}, l.FCW},
			Tensor{p + "mlp.c_fc.bias", []int{I}, l.FCB},
			Tensor{p + "mlp.c_proj.weight", []int{I, C}, l.FCProjW},
			Tensor{p + "mlp.c_proj.bias", []int{C}, l.FCProjB},
		)
	}
	ts = append(ts,
		Tensor{prefix + "ln_f.weight", []int{C}, w.LNFW},
		Tensor{prefix + "ln_f.bias", []int{C}, w.LNFB},
	)
	if !slices.Equal(w.LMHead, w.WTE) {
		ts = append(ts, Tensor{"lm_head.weight", []int{V, C}, w.LMHead})
	}
	return ts
}

// WriteSafetensors writes dir/config.json and dir/model.safetensors for m, in
// dtype "F32", "F16" or "BF16" (rounded to nearest even), with the keys of
// Hugging Face's GPT2LMHeadModel ("transformer.h.0.attn.c_attn.weight", ...;
// lm_head.weight where it differs from wte, config.json then saying
// tie_word_embeddings false).
// dir is created if needed.
// A Llama-family model is written with the names transformers saves
// (model.layers.0.self_attn.q_proj.weight, ...; lm_head.weight when untied).
func WriteSafetensors(dir string, m *model.Model, dtype string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cfg := m.Config
	if cfg.Arch == model.ArchGPT2 && !slices.Equal(m.Weights.LMHead, m.Weights.WTE) {
		cfg.UntiedHead = true // HFTensors writes lm_head.weight: config.json must say it is used
	}
	if err := WriteConfig(dir, cfg); err != nil {
		return err
	}
	if m.Config.Arch == model.ArchLlama {
		return WriteSafetensorsFile(filepath.Join(dir, "model.safetensors"), llamaTensors(m), dtype)
	}
	return WriteSafetensorsFile(filepath.Join(dir, "model.safetensors"), HFTensors(m, "transformer."), dtype)
}

// WriteConfig writes dir/config.json for cfg as transformers' GPT2Config
// saves it (activation_function "gelu" where cfg.ExactGELU,
// tie_word_embeddings false where cfg.UntiedHead), or, for the Llama
// family, as the config class of cfg.ModelType does.
func WriteConfig(dir string, cfg model.Config) error {
	if cfg.Arch == model.ArchLlama {
		return writeLlamaConfig(dir, cfg)
	}
	c := struct {
		ActivationFunction string   `json:"activation_function"`
		Architectures      []string `json:"architectures"`
		BOSTokenID         int      `json:"bos_token_id"`
		EOSTokenID         int      `json:"eos_token_id"`
		LayerNormEpsilon   float64  `json:"layer_norm_epsilon"`
		ModelType          string   `json:"model_type"`
		NCtx               int      `json:"n_ctx"`
		NEmbd              int      `json:"n_embd"`
		NHead              int      `json:"n_head"`
		NInner             *int     `json:"n_inner"`
		NLayer             int      `json:"n_layer"`
		NPositions         int      `json:"n_positions"`
		ReorderUpcastAttn  *bool    `json:"reorder_and_upcast_attn,omitempty"`
		ScaleByLayerIdx    *bool    `json:"scale_attn_by_inverse_layer_idx,omitempty"`
		TieWordEmbeddings  *bool    `json:"tie_word_embeddings,omitempty"`
		VocabSize          int      `json:"vocab_size"`
	}{activation(cfg), []string{"GPT2LMHeadModel"}, 50256, 50256, cfg.LayerNormEps, "gpt2",
		cfg.NPositions, cfg.NEmbd, cfg.NHead, nil, cfg.NLayer, cfg.NPositions, nil, nil, nil, cfg.VocabSize}
	if cfg.UntiedHead {
		c.TieWordEmbeddings = new(bool)
	}
	if cfg.NInner != 0 {
		c.NInner = &cfg.NInner
	}
	if cfg.LayerScaledAttn { // as Stanford CRFM's GPT-2s say it
		yes := true
		c.ScaleByLayerIdx, c.ReorderUpcastAttn = &yes, &yes
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.json"), append(data, '\n'), 0o644)
}

// activation is cfg's activation_function: "gelu" with ExactGELU, else
// GPT-2's "gelu_new".
func activation(cfg model.Config) string {
	if cfg.ExactGELU {
		return "gelu"
	}
	return "gelu_new"
}

// WriteSafetensorsFile writes tensors to a safetensors file at path, all in
// dtype ("F32", "F16" or "BF16"), data in the order given. The header lists
// them by name (JSON object keys sorted, as encoding/json writes maps), with
// __metadata__ {"format": "pt"}, padded with spaces to a multiple of 8 bytes.
func WriteSafetensorsFile(path string, tensors []Tensor, dtype string) error {
	enc, size, err := encoder(dtype)
	if err != nil {
		return err
	}
	type entry struct {
		DType       string   `json:"dtype"`
		Shape       []int    `json:"shape"`
		DataOffsets [2]int64 `json:"data_offsets"`
	}
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var off int64
	for _, t := range tensors {
		n := int64(1)
		for _, d := range t.Shape {
			n *= int64(d)
		}
		if n != int64(len(t.Data)) {
			return fmt.Errorf("write %s: tensor %q has %d values, shape %v needs %d", path, t.Name, len(t.Data), t.Shape, n)
		}
		header[t.Name] = entry{dtype, t.Shape, [2]int64{off, off + n*int64(size)}}
		off += n * int64(size)
	}
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	return writeFile(path, func(w *bufio.Writer) error {
		binary.Write(w, binary.LittleEndian, uint64(len(h)))
		w.Write(h)
		for _, t := range tensors {
			for _, v := range t.Data {
				enc(w, v)
			}
		}
		return nil
	})
}

// WriteLLMC writes m as an llm.c checkpoint: version 3 (fp32) or 5 (bf16,
// rounded to nearest even), the vocabulary padded with zero rows to a multiple
// of 128 as llm.c does, matmul weights transposed to llm.c's (out, in).
func WriteLLMC(path string, m *model.Model, version int) error {
	var enc func(*bufio.Writer, float32)
	switch version {
	case 3:
		enc, _, _ = encoder("F32")
	case 5:
		enc, _, _ = encoder("BF16")
	default:
		return fmt.Errorf("write %s: llm.c version %d, want 3 or 5", path, version)
	}
	c := m.Config
	if c.Arch != model.ArchGPT2 || c.NInner != 0 || c.LayerScaledAttn || c.ExactGELU {
		return fmt.Errorf("write %s: llm.c's format holds GPT-2 only, with its 4C MLP, gelu_new and plain attention scaling", path)
	}
	C, V, L := c.NEmbd, c.VocabSize, c.NLayer
	vp := (V + 127) / 128 * 128
	var header [256]int32
	copy(header[:], []int32{20240326, int32(version), int32(c.NPositions), int32(V), int32(L), int32(c.NHead), int32(C), int32(vp)})
	w := &m.Weights
	return writeFile(path, func(b *bufio.Writer) error {
		binary.Write(b, binary.LittleEndian, header)
		vec := func(x []float32) {
			for _, v := range x {
				enc(b, v)
			}
		}
		// mat writes x, held (in, out), as (out, in).
		mat := func(x []float32, in, out int) {
			for o := range out {
				for i := range in {
					enc(b, x[i*out+o])
				}
			}
		}
		vec(w.WTE)
		vec(make([]float32, (vp-V)*C))
		vec(w.WPE)
		each := func(f func(l *model.Layer)) {
			for i := range w.Layers {
				f(&w.Layers[i])
			}
		}
		each(func(l *model.Layer) { vec(l.LN1W) })
		each(func(l *model.Layer) { vec(l.LN1B) })
		each(func(l *model.Layer) { mat(l.QKVW, C, 3*C) })
		each(func(l *model.Layer) { vec(l.QKVB) })
		each(func(l *model.Layer) { mat(l.ProjW, C, C) })
		each(func(l *model.Layer) { vec(l.ProjB) })
		each(func(l *model.Layer) { vec(l.LN2W) })
		each(func(l *model.Layer) { vec(l.LN2B) })
		each(func(l *model.Layer) { mat(l.FCW, C, 4*C) })
		each(func(l *model.Layer) { vec(l.FCB) })
		each(func(l *model.Layer) { mat(l.FCProjW, 4*C, C) })
		each(func(l *model.Layer) { vec(l.FCProjB) })
		vec(w.LNFW)
		vec(w.LNFB)
		return nil
	})
}

// writeFile creates path and runs fill on a buffered writer to it; write
// errors are sticky in bufio.Writer and surface at Flush.
func writeFile(path string, fill func(*bufio.Writer) error) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	if err := fill(w); err != nil {
		return err
	}
	return w.Flush()
}

// encoder returns a function writing one value in dtype, and the dtype's size.
func encoder(dtype string) (func(*bufio.Writer, float32), int, error) {
	var buf [4]byte
	switch dtype {
	case "F32":
		return func(w *bufio.Writer, v float32) {
			binary.LittleEndian.PutUint32(buf[:], math.Float32bits(v))
			w.Write(buf[:4])
		}, 4, nil
	case "F16":
		return func(w *bufio.Writer, v float32) {
			binary.LittleEndian.PutUint16(buf[:], float16.Fromfloat32(v).Bits())
			w.Write(buf[:2])
		}, 2, nil
	case "BF16":
		return func(w *bufio.Writer, v float32) {
			binary.LittleEndian.PutUint16(buf[:], bf16(v))
			w.Write(buf[:2])
		}, 2, nil
	}
	return nil, 0, fmt.Errorf("dtype %q, want F32, F16 or BF16", dtype)
}

// bf16 rounds v to bfloat16, to nearest even (NaN stays NaN).
func bf16(v float32) uint16 {
	u := math.Float32bits(v)
	if v != v {
		return uint16(u>>16) | 0x40
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}
