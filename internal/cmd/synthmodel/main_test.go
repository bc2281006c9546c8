package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// TestRun writes the tiny shape and reads it back through the checkpoint
// reader: the configuration and every tensor are PeakedScaled's for the
// seed, bit for bit (F32); bad arguments are errors that say what is wrong.
func TestRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "m")
	var stderr bytes.Buffer
	if err := run([]string{"-shape", "tiny", "-seed", "7", dir}, &stderr); err != nil {
		t.Fatal(err, stderr.String())
	}
	ctx := context.Background()
	ck, err := model.OpenCheckpoint(ctx, filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	want := synth.PeakedScaled(synth.TinyConfig(), 7)
	if got := ck.Config(); got.NLayer != want.Config.NLayer || got.NEmbd != want.Config.NEmbd || got.VocabSize != want.Config.VocabSize {
		t.Fatalf("config %+v, want %+v", got, want.Config)
	}
	byName := map[string][]float32{}
	for _, ts := range synth.HFTensors(want, "") {
		byName[ts.Name] = ts.Data
	}
	for _, s := range ck.Config().Tensors() {
		data, err := ck.ReadTensor(ctx, s, model.F32)
		if err != nil {
			t.Fatal(err)
		}
		w, ok := byName[s.Name]
		if !ok {
			t.Fatalf("tensor %s not written by synth", s.Name)
		}
		for i, v := range w {
			if got := math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:])); got != v {
				t.Fatalf("%s[%d] = %v, want %v", s.Name, i, got, v)
			}
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-shape", "nope", dir}, `unknown shape "nope"`},
		{[]string{"-shape", "qwen2.5-0.5b", dir}, "Llama family"},
		{[]string{"-dtype", "F8", dir}, `dtype "F8"`},
		{[]string{}, "want one folder"},
		{[]string{"a", "b"}, "want one folder"},
	} {
		if err := run(c.args, &stderr); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error with %q", c.args, err, c.want)
		}
	}
}
