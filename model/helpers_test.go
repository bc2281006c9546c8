package model_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// smallConfig is TinyConfig with a small vocabulary (not a multiple of 128,
// so llm.c files are padded) to keep the many files of these tests small.
func smallConfig() model.Config {
	c := synth.TinyConfig()
	c.VocabSize = 300
	return c
}

// namedTensors lists every parameter of m by its Hugging Face name.
func namedTensors(m *model.Model) map[string][]float32 {
	w := &m.Weights
	ts := map[string][]float32{
		"wte.weight": w.WTE, "wpe.weight": w.WPE, "ln_f.weight": w.LNFW, "ln_f.bias": w.LNFB,
		"lm_head.weight": w.LMHead,
	}
	for i := range w.Layers {
		l := &w.Layers[i]
		p := fmt.Sprintf("h.%d.", i)
		for k, v := range map[string][]float32{
			"ln_1.weight": l.LN1W, "ln_1.bias": l.LN1B,
			"attn.c_attn.weight": l.QKVW, "attn.c_attn.bias": l.QKVB,
			"attn.c_proj.weight": l.ProjW, "attn.c_proj.bias": l.ProjB,
			"ln_2.weight": l.LN2W, "ln_2.bias": l.LN2B,
			"mlp.c_fc.weight": l.FCW, "mlp.c_fc.bias": l.FCB,
			"mlp.c_proj.weight": l.FCProjW, "mlp.c_proj.bias": l.FCProjB,
		} {
			ts[p+k] = v
		}
	}
	return ts
}

// roundTo rounds x to the nearest value of dtype, ties to even, computed from
// the formats' definitions in float64 rather than by bit manipulation.
func roundTo(dtype string, x float32) float32 {
	var mant, minExp int // stored mantissa bits; smallest normal exponent
	switch dtype {
	case "F32":
		return x
	case "F16":
		mant, minExp = 10, -14
	case "BF16":
		mant, minExp = 7, -126
	default:
		panic("dtype " + dtype)
	}
	if x == 0 {
		return x
	}
	a := math.Abs(float64(x))
	_, exp := math.Frexp(a) // a = f * 2^exp, f in [0.5, 1)
	e := max(exp-1, minExp)
	ulp := math.Ldexp(1, e-mant)
	return float32(math.Copysign(math.RoundToEven(a/ulp)*ulp, float64(x)))
}

// wantEqualModels checks that got holds want's config and weights, each
// rounded to dtype.
func wantEqualModels(t *testing.T, got, want *model.Model, dtype string) {
	t.Helper()
	if got.Config != want.Config {
		t.Fatalf("config %+v, want %+v", got.Config, want.Config)
	}
	gt, wt := namedTensors(got), namedTensors(want)
	for name, w := range wt {
		g := gt[name]
		if len(g) != len(w) {
			t.Fatalf("%s: %d values, want %d", name, len(g), len(w))
		}
		for i := range w {
			if r := roundTo(dtype, w[i]); math.Float32bits(g[i]) != math.Float32bits(r) {
				t.Fatalf("%s[%d] = %v, want %v (%v rounded to %s)", name, i, g[i], r, w[i], dtype)
			}
		}
	}
}

func sameSlice(a, b []float32) bool { return len(a) > 0 && len(b) > 0 && &a[0] == &b[0] }

// rawSafetensors builds a safetensors file from a header and data.
func rawSafetensors(header string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(header)))
	b.WriteString(header)
	b.Write(data)
	return b.Bytes()
}

// editHeader rewrites the JSON header of the safetensors file at path with
// edit, keeping the data section as it is.
func editHeader(t *testing.T, path string, edit func(h map[string]map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(b)
	var h map[string]map[string]any
	if err := json.Unmarshal(b[8:8+n], &h); err != nil {
		t.Fatal(err)
	}
	edit(h)
	hb, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, rawSafetensors(string(hb), b[8+n:]), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeModel writes m as a Hugging Face folder with dtype F32 and returns it.
func writeModel(t *testing.T, m *model.Model, dtype string) string {
	t.Helper()
	dir := t.TempDir()
	if err := synth.WriteSafetensors(dir, m, dtype); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeTensors writes config.json for cfg and tensors as model.safetensors.
func writeTensors(t *testing.T, cfg model.Config, ts []synth.Tensor, dtype string) string {
	t.Helper()
	dir := t.TempDir()
	if err := synth.WriteConfig(dir, cfg); err != nil {
		t.Fatal(err)
	}
	if err := synth.WriteSafetensorsFile(filepath.Join(dir, "model.safetensors"), ts, dtype); err != nil {
		t.Fatal(err)
	}
	return dir
}

// wantErr checks that err is not nil and mentions every one of parts.
func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one mentioning %q", parts)
	}
	t.Logf("error: %v", err)
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
}
