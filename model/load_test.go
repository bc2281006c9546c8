package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

func TestLoadSafetensorsRoundTrip(t *testing.T) {
	want := synth.Random(synth.TinyConfig(), 1)
	// n_inner and scale_attn_by_inverse_layer_idx, through config.json and
	// the MLP's tensor shapes.
	cfg := synth.TinyConfig()
	cfg.NInner, cfg.LayerScaledAttn = 24, true
	variant := synth.Random(cfg, 2)
	for _, dtype := range []string{"F32", "F16", "BF16", "F32 n_inner"} {
		t.Run(dtype, func(t *testing.T) {
			want := want
			if dtype == "F32 n_inner" {
				want, dtype = variant, "F32"
			}
			dir := writeModel(t, want, dtype)
			for _, path := range []string{dir, filepath.Join(dir, "model.safetensors")} {
				got, err := model.Load(path)
				if err != nil {
					t.Fatal(err)
				}
				wantEqualModels(t, got, want, dtype)
				if !sameSlice(got.Weights.LMHead, got.Weights.WTE) {
					t.Error("LMHead is not WTE in a file without lm_head.weight")
				}
				if got.Source != path {
					t.Errorf("Source %q, want %q", got.Source, path)
				}
				if err := got.Validate(); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestLoadSafetensorsNames checks the name -> field mapping against files
// written without synth.HFTensors: each tensor holds one value that
// identifies it.
func TestLoadSafetensorsNames(t *testing.T) {
	cfg := smallConfig()
	ref := synth.Random(cfg, 2)
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range namedTensors(ref) {
			if n != "lm_head.weight" && !yield(n) {
				return
			}
		}
	})
	shapes := map[string][]int{}
	for _, ts := range synth.HFTensors(ref, "") {
		shapes[ts.Name] = ts.Shape
	}
	var ts []synth.Tensor
	for i, n := range names {
		x := make([]float32, len(namedTensors(ref)[n]))
		for j := range x {
			x[j] = float32(i + 1)
		}
		ts = append(ts, synth.Tensor{Name: n, Shape: shapes[n], Data: x})
	}
	m, err := model.Load(writeTensors(t, cfg, ts, "F32"))
	if err != nil {
		t.Fatal(err)
	}
	got := namedTensors(m)
	for i, n := range names {
		if got[n][0] != float32(i+1) || got[n][len(got[n])-1] != float32(i+1) {
			t.Errorf("%s holds %v, want %d", n, got[n][0], i+1)
		}
	}
}

func TestLoadSafetensorsPrefixAndBuffers(t *testing.T) {
	want := synth.Random(smallConfig(), 3)
	for _, prefix := range []string{"", "transformer."} {
		ts := append(synth.HFTensors(want, prefix),
			synth.Tensor{Name: prefix + "h.1.attn.masked_bias", Shape: []int{}, Data: []float32{-1e4}})
		got, err := model.Load(writeTensors(t, want.Config, ts, "F32"))
		if err != nil {
			t.Fatalf("prefix %q: %v", prefix, err)
		}
		wantEqualModels(t, got, want, "F32")
	}
}

func TestLoadLMHead(t *testing.T) {
	cfg := smallConfig()
	t.Run("untied", func(t *testing.T) {
		want := synth.Random(cfg, 4)
		want.Config.UntiedHead = true // config.json: tie_word_embeddings false
		want.Weights.LMHead = synth.Random(cfg, 5).Weights.WTE
		got, err := model.Load(writeModel(t, want, "BF16"))
		if err != nil {
			t.Fatal(err)
		}
		wantEqualModels(t, got, want, "BF16")
		if sameSlice(got.Weights.LMHead, got.Weights.WTE) {
			t.Error("LMHead shares WTE but the file has a different lm_head.weight")
		}
	})
	t.Run("tied-present", func(t *testing.T) {
		want := synth.Random(cfg, 4)
		ts := append(synth.HFTensors(want, "transformer."),
			synth.Tensor{Name: "lm_head.weight", Shape: []int{cfg.VocabSize, cfg.NEmbd}, Data: want.Weights.WTE})
		got, err := model.Load(writeTensors(t, cfg, ts, "F16"))
		if err != nil {
			t.Fatal(err)
		}
		wantEqualModels(t, got, want, "F16")
		if !sameSlice(got.Weights.LMHead, got.Weights.WTE) {
			t.Error("lm_head.weight equal to wte was not tied")
		}
	})
	// A tied config (transformers' default) with a different lm_head.weight:
	// transformers ties lm_head to wte after loading, so the stored one is
	// not used.
	t.Run("tied-config-different", func(t *testing.T) {
		want := synth.Random(cfg, 4)
		ts := append(synth.HFTensors(want, "transformer."),
			synth.Tensor{Name: "lm_head.weight", Shape: []int{cfg.VocabSize, cfg.NEmbd}, Data: synth.Random(cfg, 6).Weights.WTE})
		got, err := model.Load(writeTensors(t, cfg, ts, "F32"))
		if err != nil {
			t.Fatal(err)
		}
		wantEqualModels(t, got, want, "F32")
		if !sameSlice(got.Weights.LMHead, got.Weights.WTE) {
			t.Error("a stored lm_head.weight was used though config.json ties it")
		}
	})
	t.Run("untied-missing", func(t *testing.T) {
		untied := cfg
		untied.UntiedHead = true
		_, err := model.Load(writeTensors(t, untied, synth.HFTensors(synth.Random(cfg, 4), ""), "F32"))
		wantErr(t, err, "lm_head.weight", "tie_word_embeddings is false")
	})
}

func TestLoadSharded(t *testing.T) {
	want := synth.Random(smallConfig(), 6)
	dir := t.TempDir()
	if err := synth.WriteConfig(dir, want.Config); err != nil {
		t.Fatal(err)
	}
	ts := synth.HFTensors(want, "transformer.")
	shards := [][]synth.Tensor{ts[:len(ts)/2], ts[len(ts)/2:]}
	weightMap := map[string]string{}
	for i, s := range shards {
		name := []string{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}[i]
		if err := synth.WriteSafetensorsFile(filepath.Join(dir, name), s, "F32"); err != nil {
			t.Fatal(err)
		}
		for _, x := range s {
			weightMap[x.Name] = name
		}
	}
	writeIndex := func(m map[string]string) {
		b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"total_size": 1}, "weight_map": m})
		if err := os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeIndex(weightMap)
	idx := filepath.Join(dir, "model.safetensors.index.json")
	for _, path := range []string{dir, idx} {
		got, err := model.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		wantEqualModels(t, got, want, "F32")
	}

	// A model.safetensors beside the index (other weights) is what
	// transformers loads, and so what Load loads.
	single := synth.Random(smallConfig(), 7)
	if err := synth.WriteSafetensorsFile(filepath.Join(dir, "model.safetensors"), synth.HFTensors(single, ""), "F32"); err != nil {
		t.Fatal(err)
	}
	got, err := model.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	wantEqualModels(t, got, single, "F32")
	if err := os.Remove(filepath.Join(dir, "model.safetensors")); err != nil {
		t.Fatal(err)
	}

	// An index that puts a tensor in the wrong shard.
	bad := maps.Clone(weightMap)
	bad["transformer.wte.weight"] = "model-00002-of-00002.safetensors"
	writeIndex(bad)
	_, err = model.Load(dir)
	wantErr(t, err, "model-00002-of-00002.safetensors", `"transformer.wte.weight"`, "missing")

	// A tensor in both shards (the index lists one of them).
	writeIndex(weightMap)
	dup := append(slices.Clone(shards[1]), shards[0][0])
	if err := synth.WriteSafetensorsFile(filepath.Join(dir, "model-00002-of-00002.safetensors"), dup, "F32"); err != nil {
		t.Fatal(err)
	}
	_, err = model.Load(dir)
	wantErr(t, err, "model-00002-of-00002.safetensors", fmt.Sprintf("%q", shards[0][0].Name), "not listed for this file")
	if err := synth.WriteSafetensorsFile(filepath.Join(dir, "model-00002-of-00002.safetensors"), shards[1], "F32"); err != nil {
		t.Fatal(err)
	}

	// An index that names a shard the folder lacks.
	bad = maps.Clone(weightMap)
	bad["transformer.wte.weight"] = "model-00003-of-00003.safetensors"
	writeIndex(bad)
	_, err = model.Load(dir)
	wantErr(t, err, "model.safetensors.index.json", "shard model-00003-of-00003.safetensors is missing")

	// An index that points outside the folder.
	bad = maps.Clone(weightMap)
	bad["transformer.wte.weight"] = "../model.safetensors"
	writeIndex(bad)
	_, err = model.Load(dir)
	wantErr(t, err, "model.safetensors.index.json", "../model.safetensors")
}

func TestLoadContext(t *testing.T) {
	dir := writeModel(t, synth.Random(smallConfig(), 7), "F16")
	var last, total, calls int64
	m, err := model.LoadContext(context.Background(), dir, model.LoadOptions{Progress: func(d, tot int64) {
		if d < last || d > tot {
			t.Errorf("progress %d of %d after %d", d, tot, last)
		}
		last, total = d, tot
		calls++
	}})
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 || last != total {
		t.Errorf("progress ended at %d of %d after %d calls", last, total, calls)
	}
	var want int64
	for name, x := range namedTensors(m) {
		if name != "lm_head.weight" {
			want += 2 * int64(len(x)) // F16
		}
	}
	if total != want {
		t.Errorf("progress total %d bytes, want %d", total, want)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := model.LoadContext(ctx, dir, model.LoadOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled load: %v", err)
	}
}

func TestModelValidate(t *testing.T) {
	m := synth.Random(smallConfig(), 8)
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	m.Weights.Layers[1].FCProjW = m.Weights.Layers[1].FCProjW[1:]
	wantErr(t, m.Validate(), "h.1.mlp.c_proj.weight", "values")
	m = synth.Random(smallConfig(), 8)
	m.Weights.LNFB[2] = float32(math.Inf(-1))
	wantErr(t, m.Validate(), "ln_f.bias", "-Inf", "index 2")
}
