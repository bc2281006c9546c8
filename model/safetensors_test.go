package model_test

import (
	"bytes"
	"math"
	"path/filepath"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// TestSafetensorsDTypes round-trips values chosen to hit rounding ties,
// float16 subnormals and underflow through a file of each dtype.
func TestSafetensorsDTypes(t *testing.T) {
	x := []float32{
		0, float32(math.Copysign(0, -1)), 1, -2.5, 0.1, 1e-3, -0.02, 60000,
		math.Float32frombits(0x3F808000), // bf16 tie between 1 and 1+2^-7: to even (1)
		math.Float32frombits(0x3F818000), // bf16 tie: to even (up)
		1 + 1.0/2048, 1 + 3.0/2048,       // float16 ties
		1.0 / (1 << 20), 3e-8, 6e-8, -5e-6, // float16 subnormals and underflow
	}
	for _, dtype := range []string{"F32", "F16", "BF16"} {
		path := filepath.Join(t.TempDir(), "x.safetensors")
		ts := []synth.Tensor{{Name: "x", Shape: []int{len(x)}, Data: x}, {Name: "scalar", Shape: []int{}, Data: []float32{7}}}
		if err := synth.WriteSafetensorsFile(path, ts, dtype); err != nil {
			t.Fatal(err)
		}
		s, err := model.OpenSafetensors(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if s.Metadata["format"] != "pt" {
			t.Errorf("metadata %v", s.Metadata)
		}
		info, ok := s.Tensor("x")
		if !ok || info.DType != dtype || len(info.Shape) != 1 || info.Shape[0] != len(x) || info.NumElements() != int64(len(x)) {
			t.Fatalf("%s: tensor x: %+v, %v", dtype, info, ok)
		}
		got, err := s.ReadFloat32("x")
		if err != nil {
			t.Fatal(err)
		}
		for i := range x {
			if want := roundTo(dtype, x[i]); math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Errorf("%s: %g (%#x) read back as %g, want %g", dtype, x[i], math.Float32bits(x[i]), got[i], want)
			}
		}
		if got, err := s.ReadFloat32("scalar"); err != nil || len(got) != 1 || got[0] != 7 {
			t.Errorf("%s: scalar: %v, %v", dtype, got, err)
		}
		if _, err := s.ReadFloat32("nope"); err == nil {
			t.Error("no error reading a missing tensor")
		}
	}
}

func TestParseSafetensors(t *testing.T) {
	good := `{"b":{"dtype":"I64","shape":[1],"data_offsets":[4,12]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"__metadata__":{"k":"v"}}`
	s, err := model.ParseSafetensors(bytes.NewReader(rawSafetensors(good, make([]byte, 12))), int64(8+len(good)+12))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tensors) != 2 || s.Tensors[0].Name != "a" || s.Tensors[1].Name != "b" || s.Metadata["k"] != "v" {
		t.Fatalf("tensors %+v, metadata %v: want a then b (file order)", s.Tensors, s.Metadata)
	}
	_, err = s.ReadFloat32("b")
	wantErr(t, err, `"b"`, "I64")

	bad := []struct{ header, want string }{
		{`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, `"a" appears twice`},
		{`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}} x`, "after the JSON object"},
		{`{"a":{"shape":[1],"data_offsets":[0,4]}}`, "no dtype"},
		{`{"a":{"dtype":"F32","data_offsets":[0,4]}}`, "no shape"},
		{`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}}`, "data_offsets has 1 numbers"},
		{`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, "negative"},
		{`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,-4]}}`, `"a"`},
		{`{"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,8]}}`, "needs more than"},
		{`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, "gap"},
		{`{"__metadata__":{"k":1}}`, "__metadata__"},
		{`[]`, "not a JSON object"},
		{`{"a":1}`, `"a"`},
	}
	for _, c := range bad {
		file := rawSafetensors(c.header, make([]byte, 8))
		_, err := model.ParseSafetensors(bytes.NewReader(file), int64(len(file)))
		wantErr(t, err, c.want)
	}
}
