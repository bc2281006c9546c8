package shaders

import (
	"math"
	"os"
	"sync"
	"testing"

	"github.com/x448/float16"

	"github.com/wgpu-eval/wgpu-eval/internal/refops"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// refNLL is every target's NLL of s under GPT-2 m, in float64 (refops), with
// the weights (f16W) and the input of every matmul and of the LM head (f16X)
// rounded to f16 first: the numerics of the GPU's f16 weights (f16W) and of
// the coop kernels (both), without the f32 rounding of either.
func refNLL(m *model.Model, s model.Sequence, f16W, f16X bool) []float64 {
	cfg, w := m.Config, &m.Weights
	C, T := cfg.NEmbd, len(s.Tokens)
	wt := func(x []float32) []float64 {
		if f16W {
			return roundF16s(x)
		}
		return f64(x)
	}
	act := func(x []float64) []float64 {
		if !f16X {
			return x
		}
		out := make([]float64, len(x))
		for i, v := range x {
			out[i] = float64(float16.Fromfloat32(float32(math.Max(-65504, math.Min(65504, v)))).Float32())
		}
		return out
	}
	pos := make([]int32, T)
	for i := range pos {
		pos[i] = int32(i)
	}
	wte := wt(w.WTE)
	x := refops.Embed(s.Tokens, pos, wte, wt(w.WPE), C)
	add := func(y []float64) {
		for i := range x {
			x[i] += y[i]
		}
	}
	for _, l := range w.Layers {
		ln := refops.LayerNorm(x, wt(l.LN1W), wt(l.LN1B), T, C, cfg.LayerNormEps)
		qkv := refops.Matmul(act(ln), wt(l.QKVW), wt(l.QKVB), T, C, 3*C)
		q, k, v := make([]float64, T*C), make([]float64, T*C), make([]float64, T*C)
		for t := range T {
			copy(q[t*C:], qkv[t*3*C:t*3*C+C])
			copy(k[t*C:], qkv[t*3*C+C:t*3*C+2*C])
			copy(v[t*C:], qkv[t*3*C+2*C:t*3*C+3*C])
		}
		att := refops.Attention(q, k, v, T, C, cfg.NHead)
		add(refops.Matmul(act(att), wt(l.ProjW), wt(l.ProjB), T, C, C))
		ln = refops.LayerNorm(x, wt(l.LN2W), wt(l.LN2B), T, C, cfg.LayerNormEps)
		h := refops.Matmul(act(ln), wt(l.FCW), wt(l.FCB), T, C, 4*C)
		for i := range h {
			h[i] = refops.GELU(h[i])
		}
		add(refops.Matmul(act(h), wt(l.FCProjW), wt(l.FCProjB), T, 4*C, C))
	}
	lnf := refops.LayerNorm(x, wt(w.LNFW), wt(w.LNFB), T, C, cfg.LayerNormEps)
	return refops.NLL(act(lnf[(s.First-1)*C:(T-1)*C]), wte, s.Tokens[s.First:], T-s.First, C, cfg.VocabSize)
}

// TestCoopNumericsEmulated measures (with $WGPU_EVAL_COOP_EMULATE set: a
// minute or two) what rounding the activations to f16 at every matmul input
// costs on the GPT-2 124M shape, where lavapipe cannot run the lowered coop
// kernels (its loop limit): the mean NLL of two windows of 64 positions of
// a peaked model (synth.PeakedScaled), in float64 with f16 weights (the SIMT
// kernels' numerics) and with f16 weights and activations (the coop
// kernels'), each minus the float64 run with the f32 weights. First the 12
// layer, 96 channel model on TestCoopAccuracy's windows, to compare with
// what the lowered kernels gave there (the emulation leaves out only their
// f32 rounding).
func TestCoopNumericsEmulated(t *testing.T) {
	if os.Getenv("WGPU_EVAL_COOP_EMULATE") == "" {
		t.Skip("a measurement: set WGPU_EVAL_COOP_EMULATE=1")
	}
	for _, c := range []struct{ layers, heads, channels, width int }{{12, 4, 96, 128}, {12, 12, 768, 64}} {
		m := synth.PeakedScaled(synth.GPT2Shape(c.layers, c.heads, c.channels), 124)
		seqs := twoWindows(c.width, m.Config.VocabSize)
		var means [3]float64 // f32 weights; f16 weights; f16 weights and activations
		var wg sync.WaitGroup
		for i, fl := range [][2]bool{{false, false}, {true, false}, {true, true}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var sum float64
				n := 0
				for _, s := range seqs {
					for _, v := range refNLL(m, s, fl[0], fl[1]) {
						sum += v
						n++
					}
				}
				means[i] = sum / float64(n)
			}()
		}
		wg.Wait()
		t.Logf("GPT-2 %d layers, %d heads, %d channels, peaked, 2 windows of %d, float64 emulation: mean NLL %.6f; f16 weights %+.3g; f16 weights and activations %+.3g (activations alone %+.3g)",
			c.layers, c.heads, c.channels, c.width, means[0], means[1]-means[0], means[2]-means[0], means[2]-means[1])
	}
}
