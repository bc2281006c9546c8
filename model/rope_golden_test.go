package model

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestRopeGolden: for each config.json of testdata/rope_golden.json (written
// by gen_rope_golden.py, a Python transcription of transformers 5's rotary
// code: rope_scaling and rope_parameters resolved as its config classes do;
// default, linear, dynamic, llama3 and yarn frequencies, yarn's attention
// factor), ParseConfig gives the same rotary base, ropeInvFreq the same
// frequencies (within 1e-13 relative: both float64, the formulas evaluated
// in another order) and Amplitude the same attention factor.
func TestRopeGolden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "rope_golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []struct {
			Name            string          `json:"name"`
			Config          json.RawMessage `json:"config"`
			RopeTheta       float64         `json:"rope_theta"`
			InvFreq         []float64       `json:"inv_freq"`
			AttentionFactor float64         `json:"attention_factor"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) < 10 {
		t.Fatalf("%d cases in the golden file", len(g.Cases))
	}
	kinds := map[string]int{}
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			cfg, err := ParseConfig(c.Config)
			if err != nil {
				t.Fatal(err)
			}
			kinds[cfg.RopeScaling.Type]++
			if cfg.RopeTheta != c.RopeTheta {
				t.Errorf("rope_theta %v, want %v", cfg.RopeTheta, c.RopeTheta)
			}
			got := ropeInvFreq(cfg)
			if len(got) != len(c.InvFreq) {
				t.Fatalf("%d frequencies, want %d", len(got), len(c.InvFreq))
			}
			for i, w := range c.InvFreq {
				if math.Abs(got[i]-w) > 1e-13*w {
					t.Errorf("inv_freq[%d] = %v, want %v", i, got[i], w)
				}
			}
			if a := cfg.RopeScaling.Amplitude(); math.Abs(a-c.AttentionFactor) > 1e-15 {
				t.Errorf("attention factor %v, want %v", a, c.AttentionFactor)
			}
		})
	}
	for _, k := range []string{"", "linear", "llama3", "yarn"} {
		if kinds[k] == 0 {
			t.Errorf("no case of rope_scaling type %q", k)
		}
	}
}
