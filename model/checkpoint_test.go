package model_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/x448/float16"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// f32Bytes is x as little-endian float32 bytes.
func f32Bytes(x []float32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// f16Bytes is x rounded by float16.Fromfloat32, as little-endian bytes.
func f16Bytes(x []float32) []byte {
	b := make([]byte, 2*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint16(b[2*i:], float16.Fromfloat32(v).Bits())
	}
	return b
}

// storedBytes returns the raw data of tensor name in the safetensors file at path.
func storedBytes(t *testing.T, path, name string) []byte {
	t.Helper()
	st, err := model.OpenSafetensors(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	info, ok := st.Tensor(name)
	if !ok {
		t.Fatalf("%s: no tensor %q", path, name)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data := 8 + int64(binary.LittleEndian.Uint64(b))
	return b[data+info.Begin : data+info.End]
}

// TestCheckpointReadTensor reads every tensor of checkpoints of each format
// and stored dtype in each dtype and compares with Load's float32 values.
func TestCheckpointReadTensor(t *testing.T) {
	ctx := context.Background()
	m := synth.Random(smallConfig(), 31)
	dir := t.TempDir()
	cases := []struct {
		name, path, stored string
	}{
		{"safetensors F32", filepath.Join(dir, "f32"), "F32"},
		{"safetensors F16", filepath.Join(dir, "f16"), "F16"},
		{"safetensors BF16", filepath.Join(dir, "bf16"), "BF16"},
		{"llm.c v3", filepath.Join(dir, "v3.bin"), "F32"},
		{"llm.c v5", filepath.Join(dir, "v5.bin"), "BF16"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			switch c.name {
			case "llm.c v3":
				err = synth.WriteLLMC(c.path, m, 3)
			case "llm.c v5":
				err = synth.WriteLLMC(c.path, m, 5)
			default:
				err = synth.WriteSafetensors(c.path, m, c.stored)
			}
			if err != nil {
				t.Fatal(err)
			}
			loaded, err := model.Load(c.path)
			if err != nil {
				t.Fatal(err)
			}
			ck, err := model.OpenCheckpoint(ctx, c.path)
			if err != nil {
				t.Fatal(err)
			}
			defer ck.Close()
			if ck.Config() != m.Config || ck.Source() != c.path || ck.StoredDType() != c.stored {
				t.Fatalf("Config %+v, Source %q, StoredDType %q", ck.Config(), ck.Source(), ck.StoredDType())
			}
			want := namedTensors(loaded)
			file := filepath.Join(c.path, "model.safetensors")
			for _, s := range append(ck.Config().Tensors(), ck.Config().LMHeadSpec()) {
				f32, err := ck.ReadTensor(ctx, s, model.F32)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(f32, f32Bytes(want[s.Name])) {
					t.Fatalf("%s: F32 read differs from Load", s.Name)
				}
				f16, err := ck.ReadTensor(ctx, s, model.F16)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(f16, f16Bytes(want[s.Name])) {
					t.Fatalf("%s: F16 read differs from float16.Fromfloat32 of Load's values", s.Name)
				}
				if c.name == "safetensors "+c.stored && c.stored != "F32" && s.Role != model.RoleLMHead {
					dt := map[string]model.DType{"F16": model.F16, "BF16": model.BF16}[c.stored]
					same, err := ck.ReadTensor(ctx, s, dt)
					if err != nil {
						t.Fatal(err)
					}
					if raw := storedBytes(t, file, "transformer."+s.Name); !bytes.Equal(same, raw) {
						t.Fatalf("%s: %s read of a %s file is not the file's bytes", s.Name, dt, c.stored)
					}
				}
				// A loaded Model reads the same through its TensorReader.
				var r model.TensorReader = loaded.Reader()
				mb, err := r.ReadTensor(ctx, s, model.F16)
				if err != nil || !bytes.Equal(mb, f16) {
					t.Fatalf("%s: Model.Reader F16 read differs (%v)", s.Name, err)
				}
			}
			if tied, err := ck.LMHeadTied(ctx); err != nil || !tied {
				t.Errorf("LMHeadTied = %v, %v; want true", tied, err)
			}
		})
	}
}

func TestCheckpointBadSpec(t *testing.T) {
	ctx := context.Background()
	m := synth.Random(smallConfig(), 32)
	ck, err := model.OpenCheckpoint(ctx, writeModel(t, m, "F32"))
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	s := ck.Config().Tensors()[3]
	s.Shape = []int{1}
	_, err = ck.ReadTensor(ctx, s, model.F16)
	wantErr(t, err, s.Name, "shape")
	_, err = ck.ReadTensor(ctx, model.TensorSpec{Name: "h.9.ln_1.weight", Shape: []int{16}, Role: model.RoleLN1W, Layer: 9}, model.F32)
	wantErr(t, err, "h.9.ln_1.weight")
	_, err = ck.ReadTensor(ctx, ck.Config().Tensors()[0], model.DType(9))
	wantErr(t, err, "dtype")
}

// TestReadTensorF16Range: a finite value beyond float16's range is an error
// naming the tensor, never a silent infinity; 65519 still rounds to 65504.
func TestReadTensorF16Range(t *testing.T) {
	ctx := context.Background()
	m := synth.Random(smallConfig(), 33)
	m.Weights.Layers[1].FCB[7] = 70000
	m.Weights.Layers[0].FCB[2] = 65519
	for _, dtype := range []string{"F32", "BF16"} {
		ck, err := model.OpenCheckpoint(ctx, writeModel(t, m, dtype))
		if err != nil {
			t.Fatal(err)
		}
		defer ck.Close()
		specs := ck.Config().Tensors()
		find := func(name string) model.TensorSpec {
			for _, s := range specs {
				if s.Name == name {
					return s
				}
			}
			t.Fatalf("no %s", name)
			return model.TensorSpec{}
		}
		_, err = ck.ReadTensor(ctx, find("h.1.mlp.c_fc.bias"), model.F16)
		wantErr(t, err, ck.Source(), `"transformer.h.1.mlp.c_fc.bias"`, "float16", "index 7")
		if _, err := ck.ReadTensor(ctx, find("h.1.mlp.c_fc.bias"), model.F32); err != nil {
			t.Error(err)
		}
		if dtype != "F32" {
			continue // bfloat16 rounds 65519 to 65536, beyond float16
		}
		b, err := ck.ReadTensor(ctx, find("h.0.mlp.c_fc.bias"), model.F16)
		if err != nil {
			t.Fatal(err)
		}
		if v := float16.Frombits(binary.LittleEndian.Uint16(b[4:])).Float32(); v != 65504 {
			t.Errorf("65519 read as %v in float16, want 65504", v)
		}
	}
	// The same from a loaded Model.
	_, err := m.Reader().ReadTensor(ctx, m.Config.Tensors()[2+12+9], model.F16)
	wantErr(t, err, "h.1.mlp.c_fc.bias", "float16")
}

func TestReadTensorNaN(t *testing.T) {
	ctx := context.Background()
	m := synth.Random(smallConfig(), 34)
	m.Weights.Layers[1].QKVW[40] = float32(math.NaN())
	spec := m.Config.Tensors()[2+12+2]
	if spec.Name != "h.1.attn.c_attn.weight" {
		t.Fatalf("spec %s", spec.Name)
	}
	ck, err := model.OpenCheckpoint(ctx, writeModel(t, m, "F16"))
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	for _, d := range []model.DType{model.F16, model.F32, model.BF16} {
		_, err = ck.ReadTensor(ctx, spec, d)
		wantErr(t, err, `"transformer.h.1.attn.c_attn.weight"`, "NaN", "index 40")
	}
	// llm.c stores the matrix transposed; the index is still Hugging Face's.
	path := filepath.Join(t.TempDir(), "nan.bin")
	if err := synth.WriteLLMC(path, m, 3); err != nil {
		t.Fatal(err)
	}
	ck2, err := model.OpenCheckpoint(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ck2.Close()
	_, err = ck2.ReadTensor(ctx, spec, model.F16)
	wantErr(t, err, path, "qkvw (layer 1)", "h.1.attn.c_attn.weight", "NaN", "index 40")
	_, err = m.Reader().ReadTensor(ctx, spec, model.F32)
	wantErr(t, err, "h.1.attn.c_attn.weight", "NaN", "index 40")
}

func TestCheckpointLMHeadTied(t *testing.T) {
	ctx := context.Background()
	cfg := smallConfig()
	m := synth.Random(cfg, 35)
	lmSpec := cfg.LMHeadSpec()
	tiedPresent := append(synth.HFTensors(m, "transformer."),
		synth.Tensor{Name: "lm_head.weight", Shape: lmSpec.Shape, Data: m.Weights.WTE})
	untied := synth.Random(cfg, 35)
	untied.Weights.LMHead = synth.Random(cfg, 36).Weights.WTE
	for _, c := range []struct {
		name string
		dir  string
		want bool
	}{
		{"absent", writeModel(t, m, "F16"), true},
		{"present and equal", writeTensors(t, cfg, tiedPresent, "BF16"), true},
		{"different", writeModel(t, untied, "F16"), false},
	} {
		ck, err := model.OpenCheckpoint(ctx, c.dir)
		if err != nil {
			t.Fatal(err)
		}
		defer ck.Close()
		if got, err := ck.LMHeadTied(ctx); err != nil || got != c.want {
			t.Errorf("%s: LMHeadTied = %v, %v; want %v", c.name, got, err, c.want)
		}
		lm, err := ck.ReadTensor(ctx, lmSpec, model.F32)
		if err != nil {
			t.Fatal(err)
		}
		wte, err := ck.ReadTensor(ctx, cfg.Tensors()[0], model.F32)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(lm, wte) != c.want {
			t.Errorf("%s: lm_head read equal to wte: %v", c.name, !c.want)
		}
	}
	for _, c := range []struct {
		name string
		m    *model.Model
		want bool
	}{{"model tied", m, true}, {"model untied", untied, false}} {
		if got, err := c.m.Reader().LMHeadTied(ctx); err != nil || got != c.want {
			t.Errorf("%s: LMHeadTied = %v, %v", c.name, got, err)
		}
	}
}

// TestCheckpointChangedFile: a file cut short after it was opened gives
// errors naming the tensor, not panics.
func TestCheckpointChangedFile(t *testing.T) {
	ctx := context.Background()
	m := synth.Random(smallConfig(), 37)
	bin := filepath.Join(t.TempDir(), "m.bin")
	if err := synth.WriteLLMC(bin, m, 5); err != nil {
		t.Fatal(err)
	}
	dir := writeModel(t, m, "F16")
	for _, path := range []string{bin, filepath.Join(dir, "model.safetensors")} {
		ck, err := model.OpenCheckpoint(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer ck.Close()
		if err := os.Truncate(path, 2000); err != nil {
			t.Fatal(err)
		}
		last := ck.Config().Tensors()[len(ck.Config().Tensors())-1]
		_, err = ck.ReadTensor(ctx, last, model.F16)
		wantErr(t, err, path, "EOF")
	}
}

func TestCheckpointOpenErrors(t *testing.T) {
	ctx := context.Background()
	_, err := model.OpenCheckpoint(ctx, filepath.Join(t.TempDir(), "nope"))
	wantErr(t, err, "nope")
	dir := writeModel(t, synth.Random(smallConfig(), 38), "F32")
	editHeader(t, filepath.Join(dir, "model.safetensors"), func(h map[string]map[string]any) {
		h["transformer.h.1.ln_2.bias"]["shape"] = []int{4, 4}
	})
	_, err = model.OpenCheckpoint(ctx, dir)
	wantErr(t, err, dir, `"transformer.h.1.ln_2.bias"`, "shape [4 4], want [16]")
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := model.OpenCheckpoint(cctx, dir); err == nil {
		t.Error("cancelled open: no error")
	}
}

// TestReadTensorF16Memory: uploading an F16 checkpoint tensor by tensor as
// F16 allocates about the tensors' bytes, never a whole-model float32 copy.
func TestReadTensorF16Memory(t *testing.T) {
	ctx := context.Background()
	cfg := model.Config{NLayer: 2, NHead: 2, NEmbd: 64, NPositions: 256, VocabSize: 24000, LayerNormEps: 1e-5}
	dir := writeModel(t, synth.Random(cfg, 39), "F16")
	fi, err := os.Stat(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ck, err := model.OpenCheckpoint(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, s := range ck.Config().Tensors() {
		b, err := ck.ReadTensor(ctx, s, model.F16)
		if err != nil {
			t.Fatal(err)
		}
		n += int64(len(b))
	}
	ck.Close()
	runtime.ReadMemStats(&after)
	alloc := int64(after.TotalAlloc - before.TotalAlloc)
	t.Logf("file %d bytes, read %d bytes, allocated %d bytes", fi.Size(), n, alloc)
	if alloc >= 2*fi.Size() {
		t.Errorf("allocated %d bytes reading a %d-byte F16 checkpoint as F16, want < %d", alloc, fi.Size(), 2*fi.Size())
	}
}
