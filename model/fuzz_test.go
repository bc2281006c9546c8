package model_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
)

// FuzzSafetensorsHeader feeds arbitrary bytes to the safetensors parser: it
// must never panic, and whatever it accepts must satisfy the format's
// invariants and be readable. Seeds are in testdata/fuzz/FuzzSafetensorsHeader.
func FuzzSafetensorsHeader(f *testing.F) {
	f.Add(rawSafetensors(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 8)))
	f.Add(rawSafetensors(`{"__metadata__":{"format":"pt"},"b":{"dtype":"BF16","shape":[],"data_offsets":[2,4]},"a":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}}  `, make([]byte, 4)))
	sizes := map[string]int64{
		"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "U16": 2, "I16": 2, "F16": 2, "BF16": 2,
		"U32": 4, "I32": 4, "F32": 4, "U64": 8, "I64": 8, "F64": 8,
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := model.ParseSafetensors(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		var pos int64
		for _, ti := range s.Tensors {
			if ti.Begin != pos || ti.End < ti.Begin {
				t.Fatalf("tensor %q at [%d, %d], previous ended at %d", ti.Name, ti.Begin, ti.End, pos)
			}
			size, ok := sizes[ti.DType]
			if !ok {
				t.Fatalf("tensor %q: accepted unknown dtype %q", ti.Name, ti.DType)
			}
			if ti.NumElements()*size != ti.End-ti.Begin {
				t.Fatalf("tensor %q: %v %s in %d bytes", ti.Name, ti.Shape, ti.DType, ti.End-ti.Begin)
			}
			pos = ti.End
			if got, ok := s.Tensor(ti.Name); !ok || got.Begin != ti.Begin {
				t.Fatalf("Tensor(%q) = %v, %v", ti.Name, got, ok)
			}
			x, err := s.ReadFloat32(ti.Name)
			switch ti.DType {
			case "F32", "F16", "BF16":
				if err != nil || int64(len(x)) != ti.NumElements() {
					t.Fatalf("ReadFloat32(%q): %d values, %v", ti.Name, len(x), err)
				}
			default:
				if err == nil {
					t.Fatalf("ReadFloat32(%q) of %s: no error", ti.Name, ti.DType)
				}
			}
		}
		if pos > int64(len(data)) {
			t.Fatalf("tensors end at %d of a %d-byte file", pos, len(data))
		}
	})
}

// FuzzOpenLLMC feeds arbitrary bytes to OpenCheckpoint as an llm.c file: it
// must never panic, and whatever it opens must read back tensor by tensor in
// every dtype (or fail with an error).
func FuzzOpenLLMC(f *testing.F) {
	const L, C, NH, T, V, Vp = 1, 2, 1, 2, 3, 4
	header := make([]int32, 256)
	copy(header, []int32{20240326, 5, T, V, L, NH, C, Vp})
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, header)
	n := Vp*C + T*C + L*(12*C*C+13*C) + 2*C
	for i := range n {
		binary.Write(&b, binary.LittleEndian, uint16(0x3f80+i%7))
	}
	f.Add(b.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "x.bin")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		ck, err := model.OpenCheckpoint(ctx, path)
		if err != nil {
			return
		}
		defer ck.Close()
		for _, s := range append(ck.Config().Tensors(), ck.Config().LMHeadSpec()) {
			for _, d := range []model.DType{model.F32, model.F16, model.BF16} {
				x, err := ck.ReadTensor(ctx, s, d)
				if err == nil && len(x) != s.NumElements()*d.Size() {
					t.Fatalf("%s as %v: %d bytes", s.Name, d, len(x))
				}
			}
		}
	})
}

// FuzzParseConfig: any config.json either parses into a Config that
// validates (and whose tensor table can be listed without a huge
// allocation) or gives an error; never a panic.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"model_type": "gpt2", "n_layer": 2, "n_head": 2, "n_embd": 16, "n_positions": 64, "vocab_size": 300}`))
	f.Add([]byte(`{"model_type": "llama", "hidden_size": 64, "intermediate_size": 176, "num_hidden_layers": 2,
		"num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 2048, "vocab_size": 320,
		"rope_scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4, "original_max_position_embeddings": 256}}`))
	f.Add([]byte(`{"model_type": "qwen3", "hidden_size": 64, "intermediate_size": 176, "num_hidden_layers": 2, "head_dim": 32,
		"num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 2048, "vocab_size": 320, "tie_word_embeddings": true}`))
	f.Add([]byte(`{"model_type": "mistral", "hidden_size": 64, "intermediate_size": 176, "num_hidden_layers": 2,
		"num_attention_heads": 4, "num_key_value_heads": 4, "max_position_embeddings": 2048, "vocab_size": 320, "sliding_window": 1024}`))
	f.Add([]byte(`{"model_type": "qwen2", "hidden_size": 64, "intermediate_size": 176, "num_hidden_layers": 2,
		"num_attention_heads": 4, "num_key_value_heads": 4, "max_position_embeddings": 2048, "vocab_size": 320, "use_sliding_window": true, "sliding_window": 100}`))
	f.Add([]byte(`{"model_type": "qwen3", "hidden_size": 64, "intermediate_size": 176, "num_hidden_layers": 2, "head_dim": 32,
		"num_attention_heads": 4, "num_key_value_heads": 4, "max_position_embeddings": 8192, "vocab_size": 320, "layer_types": ["full_attention"],
		"rope_parameters": {"full_attention": {"rope_type": "yarn", "rope_theta": 1e6, "factor": 4, "original_max_position_embeddings": 2048,
		"beta_fast": 16, "mscale": 0.7, "mscale_all_dim": 1, "truncate": false}}}`))
	f.Add([]byte(`{"model_type": "llama", "hidden_size": 64, "intermediate_size": 176, "num_hidden_layers": 2,
		"num_attention_heads": 4, "max_position_embeddings": 2048, "vocab_size": 320, "rope_theta": null,
		"rope_scaling": {"type": "linear", "factor": 2, "rope_theta": 5e5}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := model.ParseConfig(data)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("ParseConfig accepted %+v, which Validate refuses: %v", c, err)
		}
		if c.Arch == model.ArchLlama && c.HeadDim() <= 4096 {
			cos, sin := model.RopeTable(c, 3)
			for i := range cos {
				if math.IsNaN(float64(cos[i])) || math.IsInf(float64(cos[i]), 0) || math.IsNaN(float64(sin[i])) || math.IsInf(float64(sin[i]), 0) {
					t.Fatalf("rotary table of %+v: cos %v, sin %v at %d", c, cos[i], sin[i], i)
				}
			}
		}
		if c.Arch == model.ArchLlama && (c.QDim() <= 0 || c.KVDim() <= 0 || c.HeadDim()%2 != 0 || c.NHead%c.KVHeads() != 0) {
			t.Fatalf("accepted an impossible attention shape %+v", c)
		}
		if c.NLayer <= 64 {
			for _, s := range c.Tensors() {
				if s.NumElements() <= 0 {
					t.Fatalf("tensor %s of %+v has %d elements", s.Name, c, s.NumElements())
				}
			}
		}
	})
}
