package shaders

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/x448/float16"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// llamaTol is the bound on |mean NLL(gpu) - mean NLL(reference)| with f32
// weights and with f16 weights (f32 activations and accumulation in both).
func llamaTol(f16 bool) float64 {
	if f16 {
		return 3e-4
	}
	return 1e-5
}

// kernelSets are both kernel sets, each forced through KernelsEnv, so that
// what GPUs run also runs on the CPU drivers of the tests.
var kernelSets = []KernelSet{KernelsSoftware, KernelsHardware}

// newLlama puts m on the test device with the kernel set set (forced through
// the environment, as the pipeline's tests do) and f16 or f32 weights.
func newLlama(t *testing.T, d *testDev, m *model.Model, set KernelSet, f16 bool) *GPT2 {
	t.Helper()
	t.Setenv(KernelsEnv, string(set))
	g, err := NewGPT2(context.Background(), d.dev, m.Reader(), f16, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if g.Kernels() != set {
		t.Fatalf("%s: runs the %s kernels", set, g.Kernels())
	}
	return g
}

// llamaCheck scores seqs on g with per-token NLLs and checks them against
// the CPU path's (each target within 20 times tol relative to max(1, NLL),
// the mean within tol) and the mean against the float64 reference refMean
// (within tol); a rerun and the LM head bound in ranges give the same bits.
// It returns the largest per-target and the mean differences from the CPU,
// and the mean's from the reference.
func llamaCheck(t *testing.T, g *GPT2, seqs []model.Sequence, wantNLL []float32, want model.LossSums, refMean, tol float64) (maxTok, meanCPU, meanRef float64) {
	t.Helper()
	ctx := context.Background()
	p, err := g.SubmitWith(ctx, seqs, 0, SubmitOptions{PerToken: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Count != want.Count {
		t.Fatalf("%d targets, CPU %d", got.Count, want.Count)
	}
	for i, x := range p.PerToken() {
		d := math.Abs(float64(x) - float64(wantNLL[i]))
		maxTok = max(maxTok, d)
		if !(d <= 20*tol*math.Max(1, float64(wantNLL[i]))) {
			t.Fatalf("target %d: NLL %.7f, CPU %.7f (|diff| %.2g)", i, x, wantNLL[i], d)
		}
	}
	gm := got.Sum.Float64() / float64(got.Count)
	meanCPU = math.Abs(gm - want.Sum.Float64()/float64(want.Count))
	meanRef = math.Abs(gm - refMean)
	if meanCPU > tol || meanRef > tol {
		t.Errorf("mean NLL %.7f: CPU's differs by %.2g, the float64 reference's (%.7f) by %.2g; tolerance %g", gm, meanCPU, refMean, meanRef, tol)
	}
	again, err := g.Loss(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	if again != got {
		t.Errorf("rerun gave %+v, first run %+v", again, got)
	}
	// wte and the LM head bound in ranges (as when they exceed the binding limit): the same sums.
	g.bindLimit = 3 * g.vt * g.lmSlice() * g.cfg.NEmbd * g.weightBytes()
	split, err := g.Loss(ctx, seqs)
	n := len(g.wteRanges())
	g.bindLimit = 0
	if err != nil {
		t.Fatal(err)
	}
	if n < 2 && g.cfg.VocabSize > 3*g.vt*g.lmSlice() {
		t.Errorf("%d ranges", n)
	}
	if split != got {
		t.Errorf("in %d ranges: %+v, whole %+v", n, split, got)
	}
	return maxTok, meanCPU, meanRef
}

// cpuNLL is the CPU path's sums and per-target NLLs of seqs.
func cpuNLL(t *testing.T, m *model.Model, seqs []model.Sequence) (model.LossSums, []float32) {
	t.Helper()
	want, nll, err := model.NewCPU(m, 0).LossPerToken(context.Background(), seqs)
	if err != nil {
		t.Fatal(err)
	}
	return want, nll
}

// roundF16 rounds every weight of m to its nearest f16 value, in place, so
// that f16 and f32 weights on the device hold the same values (as a
// checkpoint stored in F16 or BF16 does: bf16 values are f16 values in f16's
// range) and the f16 runs measure the arithmetic, not the rounding of the
// weights. It returns m.
func roundF16(m *model.Model) *model.Model {
	for _, s := range append(m.Config.Tensors(), m.Config.LMHeadSpec()) {
		x := m.Tensor(s)
		for i, v := range x {
			x[i] = float16.Fromfloat32(v).Float32()
		}
	}
	return m
}

// TestLlamaMatchesCPU: the GPU forward and loss of every Llama-family
// variant (synth.TinyLlamaConfig: llama with q/k/v, o and MLP biases;
// mistral with none; qwen2 with q/k/v biases; qwen3 with q/k norms; all with
// 4 query heads over 2 key/value heads of 12 channels, llama3 rope scaling,
// an untied LM head), peaked and random with a tied head, with both kernel
// sets and f32 and f16 weights, against the CPU path per target and against
// the float64 reference (llamaRefNLL) in the mean: 1e-5 with f32 weights,
// 3e-4 with f16 (llamaTol); bit-identical reruns and LM heads in ranges.
// The f16 runs take the model with its weights rounded to f16 (roundF16),
// the CPU and the reference too; what rounding f32 weights to f16 costs on
// these synthetic models (a property of the model, some 1e-4 to 1e-3 nats
// here, the random ones having NLLs of 28 nats) is logged, not bounded.
func TestLlamaMatchesCPU(t *testing.T) {
	d := newTestDev(t)
	type worst struct{ tok, cpu, ref, rounding float64 }
	var w [2]worst
	for i, mt := range []string{"llama", "mistral", "qwen2", "qwen3"} {
		tiedCfg := synth.TinyLlamaConfig(mt)
		tiedCfg.TiedEmbed = true
		for _, mk := range []struct {
			name string
			new  func() *model.Model
		}{
			{"peaked", func() *model.Model { return synth.Peaked(synth.TinyLlamaConfig(mt), uint64(40+i)) }},
			{"random-tied", func() *model.Model { return synth.Random(tiedCfg, uint64(50+i)) }},
		} {
			seqs := zipfSeqs(uint64(60+i), 4, tiedCfg.NPositions, tiedCfg.VocabSize)
			var f32Ref float64
			for _, f16 := range d.weightTypes() {
				m := mk.new()
				if f16 {
					m = roundF16(m)
				}
				want, wantNLL := cpuNLL(t, m, seqs)
				ref := llamaRefMean(m, seqs)
				if !f16 {
					f32Ref = ref
				}
				for _, set := range kernelSets {
					t.Run(fmt.Sprintf("%s/%s/%s/f16=%v", mt, mk.name, set, f16), func(t *testing.T) {
						g := newLlama(t, d, m, set, f16)
						tok, cpu, rf := llamaCheck(t, g, seqs, wantNLL, want, ref, llamaTol(f16))
						t.Logf("max per-target diff %.2g, mean diff vs CPU %.2g, vs float64 %.2g", tok, cpu, rf)
						x := &w[btoi(f16)]
						x.tok, x.cpu, x.ref = max(x.tok, tok), max(x.cpu, cpu), max(x.ref, rf)
						if f16 {
							x.rounding = max(x.rounding, math.Abs(ref-f32Ref))
						}
					})
				}
			}
		}
	}
	for i, x := range w {
		t.Logf("f16=%v: worst max per-target diff %.2g, mean vs CPU %.2g, mean vs float64 %.2g", i == 1, x.tok, x.cpu, x.ref)
	}
	t.Logf("rounding the weights to f16 moves the float64 reference's mean NLL by up to %.2g", w[1].rounding)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestLlamaShapes: shapes beyond the tiny default, each with both kernel
// sets and f32 weights against the CPU and the float64 reference (1e-5):
// head size 16 with one key/value head for 4 query heads; head size 128
// (Qwen3's) over 32 channels, with q/k norms; an odd MLP width (the SwiGLU
// epilogue's last pair of columns alone in its vec4, element loads) and an
// odd vocabulary; channels past the registers rmsnorm.wgsl holds
// (C 1100 > 16 x 64: read twice); and yarn (cos and sin of the table
// scaled by its attention factor, 1.14) and linear rope scaling.
func TestLlamaShapes(t *testing.T) {
	d := newTestDev(t)
	base := synth.TinyLlamaConfig("llama")
	for i, c := range []struct {
		name string
		edit func(*model.Config)
	}{
		{"hd16-gqa4", func(c *model.Config) { c.NLayer, c.NHead, c.NKVHead, c.HeadSize = 1, 4, 1, 16 }},
		{"hd128-qknorm", func(c *model.Config) {
			c.NLayer, c.NHead, c.NKVHead, c.HeadSize, c.QKNorm, c.ModelType = 1, 2, 1, 128, true, "qwen3"
			c.QKVBias, c.OBias, c.MLPBias = false, false, false
		}},
		{"odd-mlp-vocab", func(c *model.Config) { c.NInner, c.VocabSize = 71, 293 }},
		{"wide", func(c *model.Config) { c.NLayer, c.NEmbd, c.NInner, c.NPositions, c.VocabSize = 1, 1100, 64, 24, 64 }},
		{"yarn", func(c *model.Config) {
			c.RopeScaling = model.RopeScaling{Type: "yarn", Factor: 4, OrigPositions: 32, BetaFast: 16}
		}},
		{"linear", func(c *model.Config) { c.RopeScaling = model.RopeScaling{Type: "linear", Factor: 2} }},
	} {
		cfg := base
		c.edit(&cfg)
		m := synth.Peaked(cfg, uint64(70+i))
		seqs := zipfSeqs(uint64(80+i), 3, min(cfg.NPositions, 40), cfg.VocabSize)
		want, wantNLL := cpuNLL(t, m, seqs)
		ref := llamaRefMean(m, seqs)
		for _, set := range kernelSets {
			t.Run(c.name+"/"+string(set), func(t *testing.T) {
				g := newLlama(t, d, m, set, false)
				tok, cpu, rf := llamaCheck(t, g, seqs, wantNLL, want, ref, llamaTol(false))
				t.Logf("max per-target diff %.2g, mean diff vs CPU %.2g, vs float64 %.2g", tok, cpu, rf)
			})
		}
	}
}

// TestLlamaLongContext: one sequence of 2048 tokens, the model's positions,
// through a minute model (1 layer, 32 channels, 2 heads of 16 over one
// key/value head) with both kernel sets: per target against the CPU, the mean
// against the float64 reference (1e-5), a bit-identical rerun; and scored in
// chunks of 500 positions (chunked prefill over the KV cache) within 1e-5.
func TestLlamaLongContext(t *testing.T) {
	d := newTestDev(t)
	cfg := synth.TinyLlamaConfig("mistral")
	cfg.NLayer, cfg.NHead, cfg.NKVHead, cfg.HeadSize, cfg.NPositions = 1, 2, 1, 16, 2048
	cfg.RopeScaling.OrigPositions = 512
	m := synth.Peaked(cfg, 90)
	seqs := zipfSeqs(91, 1, 2, cfg.VocabSize)
	toks := zipfSeqs(92, 1, cfg.NPositions, cfg.VocabSize)[0].Tokens
	for len(toks) < cfg.NPositions {
		toks = append(toks, toks...)
	}
	seqs[0] = model.Sequence{Tokens: toks[:cfg.NPositions], First: 1}
	want, wantNLL := cpuNLL(t, m, seqs)
	ref := llamaRefMean(m, seqs)
	for _, set := range kernelSets {
		t.Run(string(set), func(t *testing.T) {
			g := newLlama(t, d, m, set, false)
			tok, cpu, rf := llamaCheck(t, g, seqs, wantNLL, want, ref, llamaTol(false))
			t.Logf("2048 positions: max per-target diff %.2g, mean diff vs CPU %.2g, vs float64 %.2g", tok, cpu, rf)
			g.SetChunk(500)
			chunked, err := g.Loss(context.Background(), seqs)
			g.SetChunk(0)
			if err != nil {
				t.Fatal(err)
			}
			if diff := meanDiff(chunked, want); diff > 1e-5 {
				t.Errorf("in chunks of 500: mean NLL differs from the CPU's by %.2g", diff)
			}
		})
	}
}

// TestLlamaChunkedPrefill: the tiny qwen3 model (q/k norms, grouped heads)
// scored in chunks of 1, 7 and 50 positions, each chunk rotating its rows at
// their positions and attending over the earlier chunks' cached keys, gives
// the whole window's mean NLL within 1e-5, with both kernel sets.
func TestLlamaChunkedPrefill(t *testing.T) {
	d := newTestDev(t)
	m := synth.Peaked(synth.TinyLlamaConfig("qwen3"), 100)
	seqs := zipfSeqs(101, 3, m.Config.NPositions, m.Config.VocabSize)
	want, _ := cpuNLL(t, m, seqs)
	ctx := context.Background()
	for _, set := range kernelSets {
		t.Run(string(set), func(t *testing.T) {
			g := newLlama(t, d, m, set, false)
			for _, chunk := range []int{1, 7, 50} {
				g.SetChunk(chunk)
				got, err := g.Loss(ctx, seqs)
				if err != nil {
					t.Fatal(err)
				}
				if got.Count != want.Count || meanDiff(got, want) > 1e-5 {
					t.Errorf("chunk %d: %+v, cpu %+v (mean differs by %.2g)", chunk, got, want, meanDiff(got, want))
				}
			}
			g.SetChunk(0)
		})
	}
}

// TestLlamaSession: a decode session on the GPU (prompt, then one token at a
// time, through the KV cache of every layer) gives the CPU generator's
// logits within 1e-4, for the tiny qwen2 model with both kernel sets, its
// cache sized for the 40 positions used (NewSessionFor), past which it
// refuses tokens.
func TestLlamaSession(t *testing.T) {
	d := newTestDev(t)
	m := synth.Peaked(synth.TinyLlamaConfig("qwen2"), 110)
	toks := zipfSeqs(111, 1, 40, m.Config.VocabSize)[0].Tokens
	for len(toks) < 40 {
		toks = append(toks, toks...)
	}
	ctx := context.Background()
	gen, err := model.NewCPU(m, 0).NewGenerator()
	if err != nil {
		t.Fatal(err)
	}
	var want [][]float32
	steps := [][]int32{toks[:30], toks[30:31], toks[31:32], toks[32:40]}
	for _, s := range steps {
		l, err := gen.Append(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, slices.Clone(l))
	}
	for _, set := range kernelSets {
		t.Run(string(set), func(t *testing.T) {
			g := newLlama(t, d, m, set, false)
			s, err := g.NewSessionFor(40)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for i, st := range steps {
				got, err := s.Append(ctx, st)
				if err != nil {
					t.Fatal(err)
				}
				checkClose(t, fmt.Sprintf("step %d logits", i), got, f64(want[i]), 1e-4)
			}
			if _, err := s.Append(ctx, toks[:1]); err == nil || !strings.Contains(err.Error(), "session's 40 positions") || s.Len() != 40 {
				t.Errorf("a 41st token: error %v, %d positions in the cache", err, s.Len())
			}
		})
	}
}

// TestLlamaTopLogprobs: the top-K log-probabilities of the tiny mistral
// model (untied LM head) with both kernel sets equal the CPU's to 1e-4 nats,
// ids and all.
func TestLlamaTopLogprobs(t *testing.T) {
	d := newTestDev(t)
	m := synth.Peaked(synth.TinyLlamaConfig("mistral"), 120)
	seqs := zipfSeqs(121, 3, 20, m.Config.VocabSize)
	const k = 5
	ctx := context.Background()
	_, _, want, err := model.NewCPU(m, 0).LossTopLogprobs(ctx, seqs, k)
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range kernelSets {
		t.Run(string(set), func(t *testing.T) {
			g := newLlama(t, d, m, set, false)
			p, err := g.SubmitWith(ctx, seqs, 0, SubmitOptions{PerToken: true, TopLogprobs: k})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			got := p.TopLogprobs()
			if len(got) != len(want) {
				t.Fatalf("%d top log-probabilities, CPU %d", len(got), len(want))
			}
			for i := range got {
				if got[i].ID != want[i].ID || math.Abs(float64(got[i].Logprob-want[i].Logprob)) > 1e-4 {
					t.Fatalf("entry %d: %+v, CPU %+v", i, got[i], want[i])
				}
			}
		})
	}
}

// TestLlamaLargeVocab: Qwen2's vocabulary of 151936 ids (1 layer, 32
// channels, an untied LM head) with both kernel sets and f32 weights: per
// target against the CPU, the mean against the float64 reference (1e-5);
// llamaCheck binds wte and the LM head in ranges too (dozens of them), as a
// real model's f32 LM head (151936 x 896 x 4 bytes = 544 MB) is bound on a
// device with lavapipe's 128 MiB binding limit.
func TestLlamaLargeVocab(t *testing.T) {
	d := newTestDev(t)
	cfg := synth.TinyLlamaConfig("qwen2")
	cfg.NLayer, cfg.VocabSize, cfg.NPositions = 1, 151936, 64
	m := synth.Peaked(cfg, 150)
	seqs := zipfSeqs(151, 3, cfg.NPositions, cfg.VocabSize)
	want, wantNLL := cpuNLL(t, m, seqs)
	ref := llamaRefMean(m, seqs)
	for _, set := range kernelSets {
		t.Run(string(set), func(t *testing.T) {
			g := newLlama(t, d, m, set, false)
			tok, cpu, rf := llamaCheck(t, g, seqs, wantNLL, want, ref, llamaTol(false))
			t.Logf("V %d: max per-target diff %.2g, mean diff vs CPU %.2g, vs float64 %.2g", cfg.VocabSize, tok, cpu, rf)
		})
	}
}

// TestLlamaProfile: a profiled batch of the tiny llama model (where the
// adapter has timestamps) gives the plain batch's sums, and its profile
// names the family's kernels, each dispatched as forwardLlama says: embed,
// rmsnorm (2 per block and the final one), rope_kv_write (one per block),
// attention and one matmul row per weight shape (q|k|v, o_proj, gate|up,
// down_proj), with time and bytes.
func TestLlamaProfile(t *testing.T) {
	d := newTestDev(t)
	m := synth.Peaked(synth.TinyLlamaConfig("llama"), 160)
	g := newLlama(t, d, m, KernelsSoftware, false)
	seqs := zipfSeqs(161, 3, 40, m.Config.VocabSize)
	ctx := context.Background()
	plain, err := g.Loss(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SetProfiling(true); err != nil {
		t.Skip(err) // the adapter has no timestamps
	}
	p, err := g.Submit(ctx, seqs, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got != plain {
		t.Errorf("profiled %+v, plain %+v", got, plain)
	}
	L := m.Config.NLayer
	byName := map[string]int{}
	matmuls := 0
	for _, k := range p.Profile() {
		if k.Dispatches == 0 || k.Nanos == 0 || k.Bytes <= 0 {
			t.Errorf("kernel %+v: no dispatches, time or bytes", k)
		}
		byName[k.Kernel] = k.Dispatches
		if strings.HasPrefix(k.Kernel, "matmul") {
			matmuls++
			if k.Dispatches != L {
				t.Errorf("%s: %d dispatches, want one per block", k.Kernel, k.Dispatches)
			}
		}
	}
	for name, n := range map[string]int{"embed": 1, "rmsnorm": 2*L + 1, "rope_kv_write": L, "attention": L, "lmhead_loss": 1, "nll_combine": 1} {
		if byName[name] != n {
			t.Errorf("%s: %d dispatches, want %d (profile %v)", name, byName[name], n, byName)
		}
	}
	if matmuls != 4 {
		t.Errorf("%d matmul shapes, want 4: %v", matmuls, byName)
	}
}

// TestLlamaRefusals: shapes the kernels do not take are refused by NewGPT2
// with the problem named (head sizes not a multiple of 4 or above 128,
// channels not a multiple of 4; on an adapter with a loop limit, an MLP
// of 70000, whose down projection's K loops past it: both kernel sets
// scored it wrong, 0.02 to 0.07 nats off, before it was refused); a batch wider than the positions the model
// attends over on the adapter (Positions, capped here by hand as a loop limit
// or the rotary table would cap it) is refused before any work, naming them.
func TestLlamaRefusals(t *testing.T) {
	d := newTestDev(t)
	ctx := context.Background()
	for _, c := range []struct {
		edit func(*model.Config)
		want string
	}{
		{func(c *model.Config) { c.HeadSize = 6 }, "head size 6"},
		{func(c *model.Config) { c.HeadSize = 132 }, "head size 132"},
		{func(c *model.Config) { c.NEmbd = 30 }, "30 channels"},
		{func(c *model.Config) { c.NEmbd, c.NInner = 4, 70000 }, "shader loop limit"},
	} {
		cfg := synth.TinyLlamaConfig("mistral")
		c.edit(&cfg)
		if cfg.NInner == 70000 && !Software(d.info) {
			continue // no loop limit
		}
		g, err := NewGPT2(ctx, d.dev, synth.Random(cfg, 1).Reader(), false, nil)
		if err == nil {
			g.Close()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one naming %q", cfg, err, c.want)
		}
	}
	m := synth.Random(synth.TinyLlamaConfig("mistral"), 2)
	g := newLlama(t, d, m, KernelsSoftware, false)
	g.positions = 10
	seqs := zipfSeqs(3, 1, 20, m.Config.VocabSize)
	seqs[0].Tokens = append(seqs[0].Tokens, make([]int32, 20)...)
	if _, err := g.Loss(ctx, seqs); err == nil || !strings.Contains(err.Error(), "model's 10 positions on") {
		t.Errorf("a batch past Positions: error %v", err)
	}
	if _, err := g.NewSessionFor(0); err != nil {
		t.Fatal(err)
	}
}

// TestPositionsFitBindingLimit: a model whose MLP rows are so wide that a
// sequence of its positions would not fit the device's binding limit
// (maxStorageBufferRange; every activation buffer is bound whole) takes as
// many positions as fit, limit / (4 bytes x MLP width), with both kernel
// sets: a sequence of that many scores like the CPU (where they are at most
// 4096: lavapipe's 128 MiB takes 838, SwiftShader's more; a GPU's 4 GiB
// would take 26843, more than the test's CPU run should), and one more is
// refused before any work with the limit named, not failed in a bind group.
// The MLP of 40000 stays within the loop limit of the CPU drivers.
func TestPositionsFitBindingLimit(t *testing.T) {
	d := newTestDev(t)
	limit := int(d.dev.Limits().MaxStorageBufferBindingSize)
	cfg := synth.TinyLlamaConfig("mistral")
	cfg.NLayer, cfg.NEmbd, cfg.NHead, cfg.NKVHead, cfg.HeadSize, cfg.NInner = 1, 4, 1, 1, 4, 40000
	want := limit / (4 * cfg.NInner)
	cfg.NPositions = want + 64
	m := synth.Peaked(cfg, 170)
	toks := zipfSeqs(172, 1, 1000, cfg.VocabSize)[0].Tokens
	for len(toks) <= want {
		toks = append(toks, toks...)
	}
	score := want <= 4096
	seqs := []model.Sequence{{Tokens: toks[:want], First: 1}}
	var wantSums model.LossSums
	var wantNLL []float32
	if score {
		wantSums, wantNLL = cpuNLL(t, m, seqs)
	} else {
		t.Logf("%d positions fit: a sequence of them is not scored here", want)
	}
	ctx := context.Background()
	for _, set := range kernelSets {
		t.Run(string(set), func(t *testing.T) {
			g := newLlama(t, d, m, set, false)
			if g.Positions() != want {
				t.Fatalf("%d positions, want %d (limit %d bytes, MLP rows of %d)", g.Positions(), want, limit, cfg.NInner)
			}
			if score {
				got, nll := perToken(t, g, seqs)
				if got.Count != wantSums.Count {
					t.Fatalf("%d targets, CPU %d", got.Count, wantSums.Count)
				}
				for i, x := range nll {
					if d := math.Abs(float64(x) - float64(wantNLL[i])); !(d <= 20*llamaTol(false)*math.Max(1, float64(wantNLL[i]))) {
						t.Fatalf("target %d: NLL %.7f, CPU %.7f", i, x, wantNLL[i])
					}
				}
			}
			long := []model.Sequence{{Tokens: toks[:want+1], First: 1}}
			if _, err := g.Loss(ctx, long); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("model's %d positions on", want)) ||
				!strings.Contains(err.Error(), "binding limit") {
				t.Errorf("%d positions: error %v, want a refusal naming the %d positions and the binding limit", want+1, err, want)
			}
		})
	}
}
