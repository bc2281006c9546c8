package model_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/alloctest"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// setConfig rewrites one field of dir's config.json.
func setConfig(t *testing.T, dir, key string, v any) {
	t.Helper()
	path := filepath.Join(dir, "config.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m[key] = v
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A config.json whose n_layer (or another size) disagrees with a small file's
// tensors is refused from the tensor list, before anything is allocated by
// the config's sizes.
func TestLoadHugeConfigSizes(t *testing.T) {
	for _, c := range []struct {
		key  string
		v    int
		want string
	}{
		{"n_layer", 1 << 24, `missing tensor "h.2.ln_1.weight"`},
		{"n_layer", 1 << 20, `missing tensor "h.2.ln_1.weight"`},
		{"n_embd", 1 << 24, "wte.weight"},
		{"vocab_size", 1 << 24, "wte.weight"},
		{"n_positions", 1 << 24, "wpe.weight"},
	} {
		dir := writeModel(t, synth.Random(smallConfig(), 1), "F32")
		setConfig(t, dir, c.key, c.v)
		if c.key == "n_embd" {
			setConfig(t, dir, "n_head", 1)
		}
		var errOpen, errLoad error
		alloc := alloctest.During(t, func() {
			var ck *model.Checkpoint
			if ck, errOpen = model.OpenCheckpoint(context.Background(), dir); ck != nil {
				ck.Close()
			}
			_, errLoad = model.Load(dir)
		})
		wantErr(t, errOpen, dir, c.want)
		wantErr(t, errLoad, dir, c.want)
		if alloc > 16<<20 {
			t.Errorf("%s %d: opening and loading a small model allocated %d bytes", c.key, c.v, alloc)
		}
	}
}

// Config values outside what GPT-2 could mean are refused with the field.
func TestParseConfigRanges(t *testing.T) {
	base := `"n_positions": 64, "n_embd": 16, "n_head": 2, "n_layer": 2, "vocab_size": 300`
	for _, c := range []struct{ json, want string }{
		{`{` + base + `, "layer_norm_epsilon": 1e300}`, "layer_norm_epsilon"},
		{`{` + base + `, "layer_norm_epsilon": 0.5}`, "layer_norm_epsilon"},
		{`{` + base + `, "layer_norm_epsilon": 0}`, "layer_norm_epsilon"},
		{`{` + base + `, "layer_norm_epsilon": 1e-300}`, "layer_norm_epsilon"},
		{`{` + base + `, "layer_norm_epsilon": -1e-5}`, "layer_norm_epsilon"},
		{`{"n_positions": 64, "n_embd": 16, "n_head": 32, "n_layer": 2, "vocab_size": 300}`, "n_head"},
	} {
		_, err := model.ParseConfig([]byte(c.json))
		wantErr(t, err, c.want)
	}
	for _, eps := range []string{"1e-5", "1e-6", "1e-12", "0.01"} {
		if _, err := model.ParseConfig([]byte(`{` + base + `, "layer_norm_epsilon": ` + eps + `}`)); err != nil {
			t.Errorf("layer_norm_epsilon %s: %v", eps, err)
		}
	}
}
