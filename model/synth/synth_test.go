package synth

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
)

func TestRandom(t *testing.T) {
	cfg := TinyConfig()
	a, b, c := Random(cfg, 1), Random(cfg, 1), Random(cfg, 2)
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Weights.Layers[1].FCW, b.Weights.Layers[1].FCW) || !slices.Equal(a.Weights.WTE, b.Weights.WTE) {
		t.Error("the same seed gave different weights")
	}
	prev := runtime.GOMAXPROCS(1)
	one := Random(cfg, 1)
	runtime.GOMAXPROCS(prev)
	if !slices.Equal(a.Weights.WTE, one.Weights.WTE) || !slices.Equal(a.Weights.LNFB, one.Weights.LNFB) {
		t.Error("weights depend on GOMAXPROCS")
	}
	if slices.Equal(a.Weights.WTE, c.Weights.WTE) {
		t.Error("different seeds gave the same weights")
	}
	if &a.Weights.LMHead[0] != &a.Weights.WTE[0] {
		t.Error("LMHead is not tied to WTE")
	}
	for _, s := range []struct {
		name      string
		x         []float32
		mean, std float64
	}{
		{"wte", a.Weights.WTE, 0, 0.02},
		{"ln_1.weight", slices.Concat(a.Weights.Layers[0].LN1W, a.Weights.Layers[1].LN1W, a.Weights.LNFW), 1, 0.05},
		{"c_fc.weight", a.Weights.Layers[0].FCW, 0, 0.02},
		{"c_proj.weight", a.Weights.Layers[0].ProjW, 0, 0.02 / 2},
	} {
		var sum, sq float64
		for _, v := range s.x {
			sum += float64(v)
		}
		mean := sum / float64(len(s.x))
		for _, v := range s.x {
			sq += (float64(v) - mean) * (float64(v) - mean)
		}
		std := math.Sqrt(sq / float64(len(s.x)))
		// The sampling error of the mean is std/sqrt(n); allow 5 of them.
		if tol := 5 * s.std / math.Sqrt(float64(len(s.x))); math.Abs(mean-s.mean) > tol {
			t.Errorf("%s: mean %.5f, want %.5f ± %.5f", s.name, mean, s.mean, tol)
		}
		if math.Abs(std-s.std) > 0.2*s.std {
			t.Errorf("%s: std %.5f, want %.5f", s.name, std, s.std)
		}
	}
}

func TestHFTensors(t *testing.T) {
	cfg := TinyConfig()
	m := Random(cfg, 3)
	ts := HFTensors(m, "transformer.")
	// 2 embeddings + 13 per layer (with attn.bias) + final LayerNorm; tied: no lm_head.
	if want := 2 + 13*cfg.NLayer + 2; len(ts) != want {
		t.Fatalf("%d tensors, want %d", len(ts), want)
	}
	var params int
	for _, x := range ts {
		n := 1
		for _, d := range x.Shape {
			n *= d
		}
		if n != len(x.Data) {
			t.Errorf("%s: shape %v, %d values", x.Name, x.Shape, len(x.Data))
		}
		if strings.HasSuffix(x.Name, ".attn.bias") {
			if x.Data[0] != 1 || x.Data[1] != 0 || x.Data[cfg.NPositions] != 1 || x.Data[cfg.NPositions+1] != 1 {
				t.Errorf("attn.bias is not a lower-triangular mask: %v", x.Data[:cfg.NPositions+2])
			}
			continue
		}
		if !strings.HasPrefix(x.Name, "transformer.") {
			t.Errorf("name %q has no prefix", x.Name)
		}
		params += n
	}
	C, V, T, L := cfg.NEmbd, cfg.VocabSize, cfg.NPositions, cfg.NLayer
	if want := V*C + T*C + L*(12*C*C+13*C) + 2*C; params != want {
		t.Errorf("%d parameters, want %d", params, want)
	}
	m.Weights.LMHead = slices.Clone(m.Weights.WTE)
	if n := len(HFTensors(m, "")); n != 2+13*cfg.NLayer+2 {
		t.Errorf("an lm_head equal to wte was written (%d tensors)", n)
	}
	m.Weights.LMHead[0]++
	if ts := HFTensors(m, ""); ts[len(ts)-1].Name != "lm_head.weight" {
		t.Errorf("untied lm_head not written: last tensor %s", ts[len(ts)-1].Name)
	}
}

func TestWriteErrors(t *testing.T) {
	m := Random(model.Config{NLayer: 1, NHead: 1, NEmbd: 4, NPositions: 4, VocabSize: 8, LayerNormEps: 1e-5}, 1)
	dir := t.TempDir()
	if err := WriteSafetensors(dir, m, "F64"); err == nil {
		t.Error("WriteSafetensors accepted dtype F64")
	}
	if err := WriteLLMC(filepath.Join(dir, "x.bin"), m, 4); err == nil {
		t.Error("WriteLLMC accepted version 4")
	}
	wide := Random(model.Config{NLayer: 1, NHead: 1, NEmbd: 4, NPositions: 4, VocabSize: 8, LayerNormEps: 1e-5, NInner: 6}, 1)
	if err := WriteLLMC(filepath.Join(dir, "x.bin"), wide, 3); err == nil {
		t.Error("WriteLLMC accepted an n_inner, which llm.c's format cannot say")
	}
	bad := []Tensor{{Name: "x", Shape: []int{3}, Data: make([]float32, 2)}}
	if err := WriteSafetensorsFile(filepath.Join(dir, "x.safetensors"), bad, "F32"); err == nil {
		t.Error("WriteSafetensorsFile accepted 2 values for shape [3]")
	}
	if err := WriteLLMC(filepath.Join(dir, "x.bin"), m, 5); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "x.bin"))
	if err != nil {
		t.Fatal(err)
	}
	// Header, then bf16 parameters with the vocabulary padded to 128 rows.
	if want := int64(1024 + 2*(128*4+4*4+(12*16+13*4)+2*4)); fi.Size() != want {
		t.Errorf("llm.c file is %d bytes, want %d", fi.Size(), want)
	}
}

// The GPT-2 shapes have the parameter counts of the released models (tied
// head, no attention-mask buffers): 124M, 355M, 774M and 1558M.
func TestGPT2Shapes(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  model.Config
		want int // millions, rounded
	}{
		{"small", GPT2Small(), 124},
		{"medium", GPT2Medium(), 355},
		{"large", GPT2Large(), 774},
		{"xl", GPT2XL(), 1558},
	} {
		C, V, T, L := c.cfg.NEmbd, c.cfg.VocabSize, c.cfg.NPositions, c.cfg.NLayer
		n := V*C + T*C + L*(12*C*C+13*C) + 2*C
		if got := (n + 500_000) / 1_000_000; got != c.want {
			t.Errorf("%s: %d parameters, want %dM", c.name, n, c.want)
		}
		if c.cfg.NEmbd%c.cfg.NHead != 0 {
			t.Errorf("%s: %d channels do not split into %d heads", c.name, C, c.cfg.NHead)
		}
	}
}
