package model_test

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// The panel layout in use: a CPU built by NewCPU or LoadCPU keeps its
// matrices in panels exactly where the kernel set has panel kernels and the
// mode is f32, and the bf16 mode keeps its own layout.
func TestPanelsWhereTheKernelsHaveThem(t *testing.T) {
	cfg := synth.TinyConfig()
	m := synth.Peaked(cfg, 3)
	want := model.Kernels() == "avx512" || model.Kernels() == "avx2" || model.Kernels() == "neon"
	if got := model.NewCPU(m, 1).Panels(); got != want {
		t.Errorf("NewCPU with %s kernels: panels %v, want %v", model.Kernels(), got, want)
	}
	if got := loadCPU(t, writeModel(t, m, "F16"), 1).Panels(); got != want {
		t.Errorf("LoadCPU (F16) with %s kernels: panels %v, want %v", model.Kernels(), got, want)
	}
	model.NoPanels(t)
	if model.NewCPU(m, 1).Panels() {
		t.Error("NewCPU without panel kernels keeps panels")
	}
	c, err := model.NewCPUBF16(m, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	if c.Panels() {
		t.Error("the bf16 mode keeps panels")
	}
}

// TestPanelAccuracy measures (with $WGPU_EVAL_PANEL_MEASURE set to a window
// length, e.g. 128: two minutes or more, the float64 reference is slow) the
// f32 mode's accuracy at the GPT-2 124M shape (synth.Peaked, stored F16 as
// .scratch/mk124 writes it, on uniformly random ids; with ",scaled" after
// the length synth.PeakedScaled on log-uniform ids, whose mean NLL is near
// a real model's) with the panel kernels and with the dot-product kernels:
// each one window's mean NLL against the float64 reference forward on the
// same (widened) weights. It fails beyond 1e-4.
func TestPanelAccuracy(t *testing.T) {
	spec := os.Getenv("WGPU_EVAL_PANEL_MEASURE")
	if spec == "" {
		t.Skip("a measurement: set WGPU_EVAL_PANEL_MEASURE to a window length")
	}
	scaled := strings.HasSuffix(spec, ",scaled")
	T, err := strconv.Atoi(strings.TrimSuffix(spec, ",scaled"))
	if err != nil || T < 2 || T > 1024 {
		t.Fatalf("$WGPU_EVAL_PANEL_MEASURE %q: want a window length, 2 to 1024", spec)
	}
	m := synth.Peaked(synth.GPT2Small(), 3)
	if scaled {
		m = synth.PeakedScaled(synth.GPT2Small(), 3)
	}
	dir := writeModel(t, m, "F16")
	widened, err := model.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(124, 1))
	tokens := make([]int32, T)
	for i := range tokens {
		tokens[i] = int32(r.IntN(widened.Config.VocabSize))
		if scaled {
			tokens[i] = int32(math.Exp(r.Float64()*math.Log(float64(widened.Config.VocabSize)))) - 1
		}
	}
	ref := model.RefNLL(widened, tokens)
	var refMean float64
	for _, x := range ref {
		refMean += x
	}
	refMean /= float64(len(ref))
	measure := func(name string) {
		c := loadCPU(t, dir, 0)
		_, nll, err := c.LossPerToken(context.Background(), []model.Sequence{{Tokens: tokens, First: 1}})
		if err != nil {
			t.Fatal(err)
		}
		var mean, maxAbs float64
		for i, x := range nll {
			mean += float64(x)
			maxAbs = max(maxAbs, math.Abs(float64(x)-ref[i]))
		}
		mean /= float64(len(nll))
		t.Logf("%s (panels %v, %s kernels): mean NLL %.7f, minus the float64 reference's %+.3g; largest |difference| of a token %.3g",
			name, c.Panels(), model.Kernels(), mean, mean-refMean, maxAbs)
		if math.Abs(mean-refMean) > 1e-4 {
			t.Errorf("%s: mean NLL off the reference by %.3g", name, mean-refMean)
		}
	}
	name := "synth.Peaked"
	if scaled {
		name = "synth.PeakedScaled"
	}
	t.Logf("GPT-2 124M shape, %s F16 weights, one window of %d: float64 reference mean NLL %.7f", name, T, refMean)
	measure("in use")
	model.NoPanels(t)
	measure("dot-product kernels")
}
