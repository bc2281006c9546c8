package model

import (
	"math"
	"testing"
)

// TestRopeTable: RopeTable gives n positions x HeadDim/2 values, cos and sin
// of p·invFreq[i] (the float64 reference's frequencies, llama3 scaling
// included) rounded once to float32: within one float32 rounding (6e-8) of
// the float64 values, and the CPU's own table's values exactly.
func TestRopeTable(t *testing.T) {
	cfg := Config{Arch: ArchLlama, NHead: 2, HeadSize: 12, RopeTheta: 10000,
		RopeScaling: RopeScaling{Type: "llama3", Factor: 4, LowFreq: 1, HighFreq: 4, OrigPositions: 32}}
	const n = 300
	cos, sin := RopeTable(cfg, n)
	half := cfg.HeadDim() / 2
	if len(cos) != n*half || len(sin) != n*half {
		t.Fatalf("%d and %d values, want %d", len(cos), len(sin), n*half)
	}
	inv := refInvFreq(cfg)
	c2, s2 := newRope(cfg).table(n)
	for p := range n {
		for i := range half {
			j := p*half + i
			wc, ws := math.Cos(float64(p)*inv[i]), math.Sin(float64(p)*inv[i])
			if math.Abs(float64(cos[j])-wc) > 6e-8 || math.Abs(float64(sin[j])-ws) > 6e-8 {
				t.Fatalf("position %d, frequency %d: (%v, %v), want (%v, %v)", p, i, cos[j], sin[j], wc, ws)
			}
			if cos[j] != c2[j] || sin[j] != s2[j] {
				t.Fatalf("position %d, frequency %d: not the CPU's table", p, i)
			}
		}
	}
}
