// Package synth makes synthetic GPT-2 and Llama-family models: deterministic pseudo-random
// weights of any shape, in memory (a *model.Model) or written in the file
// formats wgpu-eval reads (a Hugging Face folder of config.json and
// model.safetensors, or an llm.c checkpoint). The weights are not trained and
// the text they score means nothing; they are for benchmarks (the speed of a
// real shape without downloading it: `wgpu-eval bench`), examples, and tests of
// programs built on this module, where no real weights are at hand.
//
// Two kinds of weights: Random, drawn as GPT-2's initialisation draws them,
// predicts almost uniformly (a mean NLL of ln 50257 = 10.8249 nats, whatever
// the text); Peaked predicts far from uniformly and better than uniform on
// natural text, so a wrong kernel changes its scores visibly. TinyConfig, the
// GPT2* functions, TinyLlamaConfig and LlamaShape give shapes;
// WriteSafetensors and WriteLLMC (GPT-2 only) write files.
// The same shape and seed always give the same bits, on any number of cores.
//
// It imports model and nothing else of this module: the command, benchmarks
// and tests import it, and model itself does not.
package synth

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/wgpu-eval/wgpu-eval/model"
)

// TinyConfig is a GPT-2 small enough for any test: 2 layers, 2 heads, 16
// channels, 64 positions, and GPT-2's full vocabulary of 50257 tokens, so real
// token ids fit.
func TinyConfig() model.Config {
	return model.Config{NLayer: 2, NHead: 2, NEmbd: 16, NPositions: 64, VocabSize: 50257, LayerNormEps: 1e-5}
}

// GPT2Shape is the shape of a GPT-2 with the given layers, heads and channels,
// and GPT-2's 1024 positions, 50257-token vocabulary and LayerNorm epsilon.
func GPT2Shape(layers, heads, channels int) model.Config {
	return model.Config{NLayer: layers, NHead: heads, NEmbd: channels, NPositions: 1024, VocabSize: 50257, LayerNormEps: 1e-5}
}

// GPT2Small is the shape of OpenAI's GPT-2 (124M parameters): 12 layers, 12
// heads, 768 channels. GPT2Medium (355M), GPT2Large (774M) and GPT2XL (1558M)
// are the larger released models.
func GPT2Small() model.Config { return GPT2Shape(12, 12, 768) }

// GPT2Medium is the shape of gpt2-medium (355M): 24 layers, 16 heads, 1024 channels.
func GPT2Medium() model.Config { return GPT2Shape(24, 16, 1024) }

// GPT2Large is the shape of gpt2-large (774M): 36 layers, 20 heads, 1280 channels.
func GPT2Large() model.Config { return GPT2Shape(36, 20, 1280) }

// GPT2XL is the shape of gpt2-xl (1558M): 48 layers, 25 heads, 1600 channels.
func GPT2XL() model.Config { return GPT2Shape(48, 25, 1600) }

// Random returns a model of shape cfg with deterministic random weights: the
// same cfg and seed give the same bits. Weights are roughly normal as in
// GPT-2's initialisation (std 0.02 for embeddings and matrices, residual
// projections scaled by 1/sqrt(2 NLayer)); LayerNorm weights are near 1, and
// biases small but non-zero so that a dropped bias shows in a test. LMHead is
// WTE (tied). Large shapes are filled on all cores.
//
// A Llama-family cfg (Arch model.ArchLlama) gets weights of unit scale
// instead (randomLlama): N(0, 1/in) matrices, so activations stay of unit
// scale through RMSNorm and SwiGLU.
func Random(cfg model.Config, seed uint64) *model.Model {
	if cfg.Arch == model.ArchLlama {
		return randomLlama(cfg, seed)
	}
	f := &filler{seed: seed}
	C, V, T, I := cfg.NEmbd, cfg.VocabSize, cfg.NPositions, cfg.Inner()
	proj := 0.02 / math.Sqrt(2*float64(max(cfg.NLayer, 1)))
	m := &model.Model{Config: cfg, Source: "random"}
	w := &m.Weights
	w.WTE = f.normals(V*C, 0, 0.02)
	w.WPE = f.normals(T*C, 0, 0.01)
	w.Layers = make([]model.Layer, cfg.NLayer)
	for i := range w.Layers {
		l := &w.Layers[i]
		l.LN1W = f.normals(C, 1, 0.05)
		l.LN1B = f.normals(C, 0, 0.02)
		l.QKVW = f.normals(C*3*C, 0, 0.02)
		l.QKVB = f.normals(3*C, 0, 0.02)
		l.ProjW = f.normals(C*C, 0, proj)
		l.ProjB = f.normals(C, 0, 0.02)
		l.LN2W = f.normals(C, 1, 0.05)
		l.LN2B = f.normals(C, 0, 0.02)
		l.FCW = f.normals(C*I, 0, 0.02)
		l.FCB = f.normals(I, 0, 0.02)
		l.FCProjW = f.normals(I*C, 0, proj)
		l.FCProjB = f.normals(C, 0, 0.02)
	}
	w.LNFW = f.normals(C, 1, 0.05)
	w.LNFB = f.normals(C, 0, 0.02)
	w.LMHead = w.WTE
	f.run()
	return m
}

// filler hands out slices to fill with normal values and fills them, in
// blocks that each have their own random stream, so the result does not
// depend on how the blocks are spread over goroutines.
type filler struct {
	seed uint64
	jobs []fillJob
}

type fillJob struct {
	dst       []float32
	mean, std float64
}

const fillBlock = 1 << 18 // values per random stream

func (f *filler) normals(n int, mean, std float64) []float32 {
	x := make([]float32, n)
	for i := 0; i < n; i += fillBlock {
		f.jobs = append(f.jobs, fillJob{x[i:min(i+fillBlock, n)], mean, std})
	}
	return x
}

func (f *filler) run() {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(f.jobs)) {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= len(f.jobs) {
					return
				}
				j := f.jobs[k]
				r := &rng{state: mix(f.seed + 0x9e3779b97f4a7c15*uint64(k+1))}
				for i := range j.dst {
					j.dst[i] = float32(j.mean + j.std*r.normal())
				}
			}
		})
	}
	wg.Wait()
}

// rng is splitmix64: tiny, fast, and good enough for synthetic weights.
type rng struct{ state uint64 }

func (r *rng) next() uint64 {
	r.state += 0x9e3779b97f4a7c15
	return mix(r.state)
}

// mix is splitmix64's output function.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// normal returns an approximately standard normal value: the centred,
// scaled sum of the four 16-bit uniforms in one 64-bit draw (Irwin-Hall).
func (r *rng) normal() float64 {
	x := r.next()
	s := float64(x&0xffff + x>>16&0xffff + x>>32&0xffff + x>>48)
	// Each uniform has mean 65535/2 and variance (65536^2-1)/12.
	const mean, std = 2 * 65535, 65536 / 1.7320508075688772
	return (s - mean) / std
}

// Peaked returns a model of shape cfg whose predictions are far from uniform
// and better than uniform on natural text, for tests that must notice a wrong
// kernel (a random N(0, 0.02) GPT-2 predicts almost uniformly: its NLL is ln V
// to 1e-3, and a wrong GELU moves it by 1e-7). It is Random(cfg, seed) with two
// changes: channel 0 of every token embedding holds -ln(1+id), and ln_f passes
// a constant 1 on channel 0 (weight 0, bias 1), so every logit carries a
// Zipf-like prior over ids (GPT-2's BPE ids grow roughly with rarity); and the
// other embedding channels have std 0.3, so the context moves the logits by
// about a nat. Deterministic: the same cfg and seed give the same bits.
//
// For the Llama family, whose final norm has no bias, the prior rides on a
// constant residual channel instead (peakedLlama).
func Peaked(cfg model.Config, seed uint64) *model.Model {
	if cfg.Arch == model.ArchLlama {
		return peakedLlama(cfg, seed)
	}
	m := Random(cfg, seed)
	C := cfg.NEmbd
	w := &m.Weights
	for i := range w.WTE {
		if i%C == 0 {
			w.WTE[i] = float32(-math.Log1p(float64(i / C)))
		} else {
			w.WTE[i] *= 15
		}
	}
	w.LNFW[0], w.LNFB[0] = 0, 1
	m.Source = "peaked"
	return m
}

// PeakedScaled is Peaked with the embedding's context channels (all but
// channel 0) scaled by sqrt(16/C), so that at any width the context moves the
// logits by about a nat, as at Peaked's tiny width of 16; at real widths
// (768 channels and more) Peaked's std of 0.3 makes every logit so large that
// the mean NLL is far above ln V. At C = 16 it is Peaked.
// For the Llama family it is Peaked, whose scales do not grow with C.
func PeakedScaled(cfg model.Config, seed uint64) *model.Model {
	m := Peaked(cfg, seed)
	if cfg.Arch == model.ArchLlama {
		return m
	}
	s := float32(math.Sqrt(16.0 / float64(cfg.NEmbd)))
	for i := range m.Weights.WTE {
		if i%cfg.NEmbd != 0 {
			m.Weights.WTE[i] *= s
		}
	}
	return m
}
