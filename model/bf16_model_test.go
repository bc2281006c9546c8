package model_test

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// bf16Config is a tiny shape whose matrices have K below, at and above the
// kernels' 32-element blocks (C = 40: one block and a tail; 4C = 160: five
// blocks), and a real GPT-2 vocabulary.
var bf16Config = model.Config{NLayer: 2, NHead: 4, NEmbd: 40, NPositions: 48, VocabSize: 50257, LayerNormEps: 1e-5}

func bf16Tokens(cfg model.Config, n int, seed uint64) []int32 {
	r := rand.New(rand.NewPCG(seed, 3))
	toks := make([]int32, n)
	for i := range toks {
		toks[i] = int32(r.IntN(min(2000, cfg.VocabSize))) // common ids: the Peaked prior matters
	}
	return toks
}

// The bf16 mode against a float64 forward that applies the same roundings
// (weights and matmul inputs to bf16, products summed in float64): they agree
// to what float32 accumulation and float32 activations explain, while the f32
// mode and the unrounded float64 forward are farther away by the bf16
// rounding itself, on a model far from uniform.
func TestCPUBF16AgainstReference(t *testing.T) {
	checkBF16AgainstReference(t, bf16Config, true, "bf16-generic")
}

// The same with the AMX kernels (bf16-amx: another summation order, the
// same tolerances): natively on a CPU with AMX, elsewhere on amd64 in the
// x86 emulator, on a smaller vocabulary.
func TestCPUBF16AMXAgainstReference(t *testing.T) {
	checkBF16AgainstReference(t, amxBF16Config(t), false, "bf16-amx")
}

func checkBF16AgainstReference(t *testing.T, cfg model.Config, portable bool, kernels string) {
	m := synth.Peaked(cfg, 11)
	toks := bf16Tokens(cfg, cfg.NPositions, 1)
	bf, err := model.NewCPUBF16(m, 2, portable)
	if err != nil {
		t.Fatal(err)
	}
	if bf.Precision() != "bf16" || !strings.Contains(bf.Kernels(), kernels) {
		t.Errorf("precision %q, kernels %q: want bf16 on the %s kernels", bf.Precision(), bf.Kernels(), kernels)
	}
	_, nllBF, err := bf.LossPerToken(context.Background(), []model.Sequence{{Tokens: toks, First: 1}})
	if err != nil {
		t.Fatal(err)
	}
	_, nllF32, err := model.NewCPU(m, 2).LossPerToken(context.Background(), []model.Sequence{{Tokens: toks, First: 1}})
	if err != nil {
		t.Fatal(err)
	}
	refBF, ref := model.RefNLLBF16(m, toks), model.RefNLL(m, toks)
	var dRef, dRounded, dF32, meanBF, meanF32 float64
	for i := range nllBF {
		dRounded = max(dRounded, math.Abs(float64(nllBF[i])-refBF[i]))
		dRef = max(dRef, math.Abs(float64(nllBF[i])-ref[i]))
		dF32 = max(dF32, math.Abs(float64(nllBF[i]-nllF32[i])))
		meanBF += float64(nllBF[i]) / float64(len(nllBF))
		meanF32 += float64(nllF32[i]) / float64(len(nllBF))
	}
	t.Logf("max |NLL diff| per target: bf16 vs rounded float64 %.2g, vs float64 %.2g, vs f32 mode %.2g; mean NLL bf16 %.6f, f32 %.6f",
		dRounded, dRef, dF32, meanBF, meanF32)
	// float32 sums of ~C products and float32 activations (measured: 1.6e-6
	// nats), and the rare activation a float32 error moves across a bf16
	// rounding boundary.
	if dRounded > 2e-5 {
		t.Errorf("bf16 mode differs from the rounded float64 forward by %.3g nats, want <= 2e-5", dRounded)
	}
	// bf16 rounding moves NLLs by about 2^-9 of the logits' size: clearly
	// more than float32 error, far less than a nat.
	if dF32 < 5*dRounded || dF32 < 1e-3 || dF32 > 0.2 {
		t.Errorf("bf16 mode differs from the f32 mode by %.3g nats at most, want in [max(1e-3, 5 x %.2g), 0.2]", dF32, dRounded)
	}
	if dRef < 5*dRounded {
		t.Errorf("bf16 mode is %.3g from the unrounded float64 forward, %.3g from the rounded one: the roundings are not the ones modelled", dRef, dRounded)
	}
}

// The bf16 mode's results are bit-identical for any thread count and batch
// composition.
func TestCPUBF16Threads(t *testing.T) { checkBF16Threads(t, bf16Config, true) }

// The same with the AMX kernels: their order of sums does not depend on the
// split either.
func TestCPUBF16AMXThreads(t *testing.T) {
	checkBF16Threads(t, amxBF16Config(t), false)
}

func checkBF16Threads(t *testing.T, cfg model.Config, portable bool) {
	m := synth.Peaked(cfg, 12)
	seqs := []model.Sequence{
		{Tokens: bf16Tokens(cfg, 48, 2), First: 1},
		{Tokens: bf16Tokens(cfg, 17, 3), First: 5},
		{Tokens: bf16Tokens(cfg, 30, 4), First: 1},
	}
	var want []float32
	for _, threads := range []int{1, 2, 3, 5} {
		c, err := model.NewCPUBF16(m, threads, portable)
		if err != nil {
			t.Fatal(err)
		}
		_, nll, err := c.LossPerToken(context.Background(), seqs)
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = nll
			continue
		}
		for i := range want {
			if math.Float32bits(nll[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%d threads: target %d NLL %g, 1 thread %g", threads, i, nll[i], want[i])
			}
		}
	}
	// One sequence alone gives the bits it gets in the batch.
	c, _ := model.NewCPUBF16(m, 2, portable)
	_, alone, err := c.LossPerToken(context.Background(), seqs[1:2])
	if err != nil {
		t.Fatal(err)
	}
	off := 47
	for i, v := range alone {
		if math.Float32bits(v) != math.Float32bits(want[off+i]) {
			t.Fatalf("sequence 1 alone: target %d NLL %g, in the batch %g", i, v, want[off+i])
		}
	}
}

// LoadCPU's bf16 mode reads a checkpoint into what NewCPUBF16 makes of the
// same weights, bit for bit, holding half the weight memory of the f32 mode;
// an F16 checkpoint is widened and rounded once.
func TestLoadCPUBF16(t *testing.T) {
	m := synth.Peaked(bf16Config, 13)
	seq := []model.Sequence{{Tokens: bf16Tokens(bf16Config, 40, 5), First: 1}}
	for _, dtype := range []string{"F32", "F16", "BF16"} {
		dir := filepath.Join(t.TempDir(), dtype)
		if err := synth.WriteSafetensors(dir, m, dtype); err != nil {
			t.Fatal(err)
		}
		ck, err := model.OpenCheckpoint(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		c, err := model.LoadCPU(context.Background(), ck, 2, model.LoadOptions{BF16: true, PortableBF16: true})
		ck.Close()
		if err != nil {
			t.Fatal(err)
		}
		// The same weights as a Model (as stored: F16 and BF16 widened).
		ref, err := model.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		want, err := model.NewCPUBF16(ref, 1, true)
		if err != nil {
			t.Fatal(err)
		}
		got, err1 := c.Loss(context.Background(), seq)
		exp, err2 := want.Loss(context.Background(), seq)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if got != exp {
			t.Errorf("%s: LoadCPU bf16 sums %+v, NewCPUBF16 %+v", dtype, got, exp)
		}
		f32 := model.NewCPU(ref, 1).WeightBytes()
		// Matrices in 2 bytes instead of 4; the vectors and wpe stay float32.
		if b := c.WeightBytes(); float64(b) > 0.6*float64(f32) {
			t.Errorf("%s: bf16 weights take %d bytes, f32 %d: want about half", dtype, b, f32)
		}
	}
}

// Without AVX512_BF16 the bf16 mode is refused, naming the missing
// capability, unless the portable kernels are asked for (by option or by
// WGPU_EVAL_CPU_KERNELS=generic).
func TestCPUBF16NeedsHardware(t *testing.T) {
	if model.BF16Hardware() {
		t.Skip("this CPU has AVX512_BF16: nothing is refused")
	}
	t.Setenv("WGPU_EVAL_CPU_KERNELS", "")
	m := synth.Peaked(bf16Config, 14)
	_, err := model.NewCPUBF16(m, 1, false)
	if err == nil || !strings.Contains(err.Error(), "bf16 needs a CPU with AVX512_BF16; this CPU has none") {
		t.Fatalf("err = %v, want the AVX512_BF16 refusal", err)
	}
	t.Setenv("WGPU_EVAL_CPU_KERNELS", "generic")
	c, err := model.NewCPUBF16(m, 1, false)
	if err != nil {
		t.Fatalf("with WGPU_EVAL_CPU_KERNELS=generic: %v", err)
	}
	if !strings.Contains(c.Kernels(), "bf16-generic") {
		t.Errorf("kernels %q, want the portable bf16 ones", c.Kernels())
	}
}

// The bf16 mode's Generator (KV cache, one row at a time) gives the
// log-probabilities of the bf16 mode's full forward (LossPerToken), and
// not the f32 mode's.
func TestGeneratorBF16(t *testing.T) { checkGeneratorBF16(t, true) }

// The same with the AMX kernels: a generator's steps (up to 16 rows: the
// half kernel) and the loss forward agree.
func TestGeneratorBF16AMX(t *testing.T) {
	t.Setenv("WGPU_EVAL_CPU_KERNELS", "")
	if !model.AMXAsm(t) {
		t.Skip("no AMX kernels here (not amd64)")
	}
	checkGeneratorBF16(t, false)
}

func checkGeneratorBF16(t *testing.T, portable bool) {
	ctx := context.Background()
	m := synth.Peaked(synth.TinyConfig(), 15)
	bf, err := model.NewCPUBF16(m, 2, portable)
	if err != nil {
		t.Fatal(err)
	}
	prompt := []int32{464, 2068, 7586, 21831, 18045, 625, 262}
	lpOf := func(c *model.CPU) []float32 {
		g, err := c.NewGenerator()
		if err != nil {
			t.Fatal(err)
		}
		g.SetChunk(3)
		logits, err := g.Append(ctx, prompt)
		if err != nil {
			t.Fatal(err)
		}
		return logits
	}
	logits, logitsF32 := lpOf(bf), lpOf(model.NewCPU(m, 2))
	var seqs []model.Sequence
	for id := range int32(20) {
		seqs = append(seqs, model.Sequence{Tokens: append(append([]int32{}, prompt...), id), First: len(prompt)})
	}
	_, nll, err := bf.LossPerToken(ctx, seqs)
	if err != nil {
		t.Fatal(err)
	}
	var dF32 float64
	for id := range int32(20) {
		lp := model.LogSoftmax(logits, id)
		if d := math.Abs(lp + float64(nll[id])); d > 1e-5 {
			t.Errorf("token %d: logprob %.7f from the generator, %.7f from the forward", id, lp, -nll[id])
		}
		dF32 = max(dF32, math.Abs(lp-model.LogSoftmax(logitsF32, id)))
	}
	if dF32 < 1e-4 {
		t.Errorf("bf16 generator within %.2g of the f32 one: are its products bf16?", dF32)
	}
}

// The VDPBF16PS kernels score a model exactly as the portable ones do: on a
// CPU with AVX512_BF16 natively, elsewhere on amd64 the same assembly run in
// the x86 emulator (model.BF16Asm), on a smaller vocabulary (the emulator
// runs about 2M instructions a second). Other architectures have no such
// kernels: this skips there.
func TestCPUBF16HardwareMatchesPortable(t *testing.T) {
	t.Setenv("WGPU_EVAL_CPU_KERNELS", "avx512") // not AMX: it sums in another order
	if !model.BF16Asm(t) {
		t.Skip("no VDPBF16PS kernels here (not amd64)")
	}
	cfg := bf16Config
	if model.BF16AsmEmulated() {
		cfg.VocabSize = 509 // 4k+1 columns: every block shape of the LM head
	}
	m := synth.Peaked(cfg, 16)
	seqs := []model.Sequence{{Tokens: bf16Tokens(cfg, 48, 6), First: 1}, {Tokens: bf16Tokens(cfg, 21, 7), First: 3}}
	var got [2][]float32
	for i, portable := range []bool{false, true} {
		c, err := model.NewCPUBF16(m, 2, portable)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{false: "bf16-avx512", true: "bf16-generic"}[portable]; !strings.Contains(c.Kernels(), want) {
			t.Fatalf("kernels %q, want %s", c.Kernels(), want)
		}
		if _, got[i], err = c.LossPerToken(context.Background(), seqs); err != nil {
			t.Fatal(err)
		}
	}
	for i := range got[0] {
		if math.Float32bits(got[0][i]) != math.Float32bits(got[1][i]) {
			t.Fatalf("target %d: NLL %g with VDPBF16PS, %g with the portable kernels", i, got[0][i], got[1][i])
		}
	}
}

// amxBF16Config makes the bf16 mode pick the AMX kernels until t ends
// (natively, or in the x86 emulator on another amd64 CPU; t skips
// elsewhere) and returns the model shape for them: bf16Config, with a
// smaller vocabulary where emulated.
func amxBF16Config(t *testing.T) model.Config {
	t.Helper()
	t.Setenv("WGPU_EVAL_CPU_KERNELS", "")
	if !model.AMXAsm(t) {
		t.Skip("no AMX kernels here (not amd64)")
	}
	cfg := bf16Config
	if model.AMXAsmEmulated() {
		cfg.VocabSize = 509
	}
	return cfg
}
