package model_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

func TestLLMCRoundTrip(t *testing.T) {
	want := synth.Random(smallConfig(), 11)
	for _, c := range []struct {
		version int
		dtype   string
	}{{3, "F32"}, {5, "BF16"}} {
		// Load tells the format by its magic number, not by the name.
		path := filepath.Join(t.TempDir(), "checkpoint.weights")
		if err := synth.WriteLLMC(path, want, c.version); err != nil {
			t.Fatal(err)
		}
		for _, load := range []func(string) (*model.Model, error){model.Load, model.LoadLLMC} {
			got, err := load(path)
			if err != nil {
				t.Fatal(err)
			}
			wantEqualModels(t, got, want, c.dtype)
			if !sameSlice(got.Weights.LMHead, got.Weights.WTE) {
				t.Error("LMHead is not WTE")
			}
		}
	}
}

// TestLLMCLayout reads a file written here, by llm.c's documented layout,
// whose every value is its own index in the parameter stream.
func TestLLMCLayout(t *testing.T) {
	const L, C, NH, T, V, Vp = 2, 4, 2, 3, 5, 8
	sizes := []int{Vp * C, T * C, L * C, L * C, L * 3 * C * C, L * 3 * C, L * C * C, L * C, L * C, L * C,
		L * 4 * C * C, L * 4 * C, L * C * 4 * C, L * C, C, C}
	off := make([]int, len(sizes)) // start of each tensor
	n := 0
	for i, s := range sizes {
		off[i] = n
		n += s
	}
	var b bytes.Buffer
	header := make([]int32, 256)
	copy(header, []int32{20240326, 3, T, V, L, NH, C, Vp})
	binary.Write(&b, binary.LittleEndian, header)
	for i := range n {
		binary.Write(&b, binary.LittleEndian, float32(i))
	}
	path := filepath.Join(t.TempDir(), "gpt2.bin")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := model.LoadLLMC(path)
	if err != nil {
		t.Fatal(err)
	}
	wantCfg := model.Config{NLayer: L, NHead: NH, NEmbd: C, NPositions: T, VocabSize: V, LayerNormEps: 1e-5}
	if m.Config != wantCfg {
		t.Fatalf("config %+v, want %+v", m.Config, wantCfg)
	}
	check := func(name string, got []float32, want func(i int) int) {
		t.Helper()
		for i, v := range got {
			if v != float32(want(i)) {
				t.Fatalf("%s[%d] = %v, want %d", name, i, v, want(i))
			}
		}
	}
	w := &m.Weights
	if len(w.WTE) != V*C {
		t.Fatalf("wte has %d values, want %d (padding dropped)", len(w.WTE), V*C)
	}
	check("wte", w.WTE, func(i int) int { return i })
	check("wpe", w.WPE, func(i int) int { return off[1] + i })
	// vec: a per-layer vector; mat: an (out, in) matrix seen as (in, out).
	vec := func(k, l, size int) func(int) int {
		return func(i int) int { return off[k] + l*size + i }
	}
	mat := func(k, l, in, out int) func(int) int {
		return func(j int) int { i, o := j/out, j%out; return off[k] + l*in*out + o*in + i }
	}
	for l := range L {
		y := &w.Layers[l]
		check("ln1w", y.LN1W, vec(2, l, C))
		check("ln1b", y.LN1B, vec(3, l, C))
		check("qkvw", y.QKVW, mat(4, l, C, 3*C))
		check("qkvb", y.QKVB, vec(5, l, 3*C))
		check("attprojw", y.ProjW, mat(6, l, C, C))
		check("attprojb", y.ProjB, vec(7, l, C))
		check("ln2w", y.LN2W, vec(8, l, C))
		check("ln2b", y.LN2B, vec(9, l, C))
		check("fcw", y.FCW, mat(10, l, C, 4*C))
		check("fcb", y.FCB, vec(11, l, 4*C))
		check("fcprojw", y.FCProjW, mat(12, l, 4*C, C))
		check("fcprojb", y.FCProjB, vec(13, l, C))
	}
	check("lnfw", w.LNFW, vec(14, 0, C))
	check("lnfb", w.LNFB, vec(15, 0, C))
	if err := m.Validate(); err != nil {
		t.Error(err)
	}
}

func TestLLMCBadFiles(t *testing.T) {
	good := synth.Random(smallConfig(), 12)
	// write returns the path of good written as version 3, after edit.
	write := func(t *testing.T, edit func(b []byte) []byte) string {
		path := filepath.Join(t.TempDir(), "gpt2_tiny.bin")
		if err := synth.WriteLLMC(path, good, 3); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, edit(b), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	setHeader := func(i int, v int32) func([]byte) []byte {
		return func(b []byte) []byte { binary.LittleEndian.PutUint32(b[4*i:], uint32(v)); return b }
	}
	cases := []struct {
		name string
		edit func([]byte) []byte
		want []string
	}{
		{"bad magic", setHeader(0, 20240520), []string{"bad magic 20240520"}},
		{"version 4", setHeader(1, 4), []string{"version 4"}},
		{"truncated", func(b []byte) []byte { return b[:len(b)-4] }, []string{"needs exactly"}},
		{"trailing bytes", func(b []byte) []byte { return append(b, 0, 0, 0, 0) }, []string{"needs exactly"}},
		{"header only", func(b []byte) []byte { return b[:1024] }, []string{"truncated"}},
		{"short header", func(b []byte) []byte { return b[:100] }, []string{"shorter than its 1024-byte header"}},
		{"padded vocab too small", setHeader(7, 200), []string{"padded vocab size 200"}},
		{"zero heads", setHeader(5, 0), []string{"n_head = 0"}},
		{"heads do not divide", setHeader(5, 3), []string{"not divisible"}},
		{"negative layers", setHeader(4, -1), []string{"n_layer = -1"}},
		{"absurd sizes", func(b []byte) []byte {
			setHeader(4, 1<<24)(b)
			setHeader(6, 1<<24)(b)
			return setHeader(5, 1)(b)
		}, []string{"truncated"}},
		{"version 5 size", setHeader(1, 5), []string{"version 5", "needs exactly"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := write(t, c.edit)
			_, err := model.LoadLLMC(path)
			wantErr(t, err, append([]string{path}, c.want...)...)
		})
	}

	t.Run("pytorch_model.bin", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "pytorch_model.bin")
		b := append([]byte("PK\x03\x04"), make([]byte, 2000)...)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := model.Load(path)
		wantErr(t, err, path, "bad magic", "PyTorch")
	})

	t.Run("NaN", func(t *testing.T) {
		bad := synth.Random(smallConfig(), 12)
		bad.Weights.Layers[1].FCB[5] = float32(math.NaN())
		path := filepath.Join(t.TempDir(), "nan.bin")
		if err := synth.WriteLLMC(path, bad, 5); err != nil {
			t.Fatal(err)
		}
		_, err := model.Load(path)
		wantErr(t, err, path, "fcb (layer 1)", "NaN", "index 5")
	})
}
