package shaders

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/wgpu"
)

// newCoopGPT2 puts m on the coop test device with f16 weights and the
// hardware kernel set, the coop kernels forced with cfg (lowered: the test
// devices have no matrix units) and their verdicts kept in file. The
// decision is left to the test (SetMatrixUnits, or the first batch).
func newCoopGPT2(t *testing.T, d *testDev, m *model.Model, cfg MatrixConfig, file string) *GPT2 {
	t.Helper()
	g, err := NewGPT2(context.Background(), d.dev, m.Reader(), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	g.sharedMatmul, g.vt = true, sharedVocabTile // the kernels of hardware GPUs
	if err := g.fitLoopLimit(); err != nil {
		t.Fatal(err)
	}
	g.coopForce, g.coopFile = &cfg, file
	return g
}

// perToken scores seqs and returns the sums and every target's NLL.
func perToken(t *testing.T, g *GPT2, seqs []model.Sequence) (model.LossSums, []float32) {
	t.Helper()
	ctx := context.Background()
	p, err := g.SubmitWith(ctx, seqs, 0, SubmitOptions{PerToken: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s, p.PerToken()
}

// coopForwardTol is the whole model's budget on the coop kernels (f16
// weights, activations rounded to f16 at every matmul input) against the
// CPU's float32 run on the peaked tiny model: mean NLL within it, each
// target's NLL within 20 times it relative to max(1, NLL). Measured on
// lavapipe (lowered kernels, 8x8x8 and 16x16x16 alike): the mean differs
// from the CPU's by 3.4e-5, of which the f16 weights (the SIMT kernels with
// the same weights) 2.8e-5 and the f16 activations 5.6e-6; the worst target
// by 3.3e-4 of its NLL. The budget is three times the measured mean,
// tighter than TestGPT2MatchesCPU's 3e-4 for f16 weights.
const coopForwardTol = 1e-4

// TestGPT2Coop runs the peaked tiny model (far from uniform predictions)
// with the coop kernels (lowered, 8x8x8; natively, the device's
// configurations) against the CPU
// path, within coopForwardTol, and logs the differences from the CPU and
// from the SIMT kernels with the same f16 weights; the status says the
// matrix units are used, lowered, with the forced configuration.
func TestGPT2Coop(t *testing.T) {
	d := coopDev(t)
	coopForward(t, d, synth.Peaked(synth.TinyConfig(), 7), coopForwardTol)
}

// TestGPT2CoopFourBuffers is TestGPT2Coop on a device of 4 storage buffers
// a stage (Vulkan's minimum): matmul_coop.wgsl compiled without its KV cache
// bindings ("[nokv]"), c_attn's k and v written by kv_write.wgsl after it.
func TestGPT2CoopFourBuffers(t *testing.T) {
	d := coopDevCapped(t, wgpu.Limits{MaxStorageBuffersPerShaderStage: 4})
	if n := d.dev.Limits().MaxStorageBuffersPerShaderStage; n != 4 {
		t.Fatalf("the device has %d storage buffers a stage, want the cap's 4", n)
	}
	g := coopForward(t, d, synth.Peaked(synth.TinyConfig(), 7), coopForwardTol)
	if g.kvEpilogue() || !strings.Contains(g.coop.matmul.Name(), "[nokv]") {
		t.Errorf("matmul_coop.wgsl as %s, KV cache epilogue %v: want it without", g.coop.matmul.Name(), g.kvEpilogue())
	}
}

// TestLlamaCoop is TestGPT2Coop for the Llama family's forward (Qwen2's
// shape: RMSNorm, rotary positions, grouped-query attention, q/k/v biases
// and the SwiGLU MLP, whose gate and up products run as one matmul with the
// SwiGLU epilogue). Against the CPU the bound is the f16 weights' of the
// Llama tests (3e-4: on lavapipe the mean is 7.9e-5 off, nearly all of it
// the weights'); against the SIMT kernels with the same weights, the
// activations' own, coopActivationTol.
func TestLlamaCoop(t *testing.T) {
	d := coopDev(t)
	coopForward(t, d, synth.Peaked(synth.TinyLlamaConfig("qwen2"), 7), 3e-4)
}

// coopActivationTol bounds how far the coop kernels' mean NLL may be from
// the SIMT kernels' with the same f16 weights: the cost of rounding the
// activations to f16, measured at 5.6e-6 (GPT-2) and 9.6e-6 (Qwen2 shape)
// on the tiny peaked models lowered on lavapipe, 8e-6 at GPT-2 124M's shape
// on an H200.
const coopActivationTol = 5e-5

// coopForward scores m (far from uniform predictions) with the coop kernels
// (lowered, the smallest configuration; natively, the device's
// configurations) against the CPU path, within cpuTol of its mean NLL, and
// against the SIMT kernels with the same weights, within coopActivationTol.
// It returns the model, the matrix units on.
func coopForward(t *testing.T, d *testDev, m *model.Model, cpuTol float64) *GPT2 {
	seqs := zipfSeqs(23, 4, m.Config.NPositions, m.Config.VocabSize)
	want, wantNLL, err := model.NewCPU(m, 0).LossPerToken(context.Background(), seqs)
	if err != nil {
		t.Fatal(err)
	}
	wantMean := want.Sum.Float64() / float64(want.Count)
	if lnV := math.Log(float64(m.Config.VocabSize)); wantMean > lnV-1 {
		t.Fatalf("peaked model: CPU mean NLL %.4f is not well below ln V = %.4f", wantMean, lnV)
	}
	g := newCoopGPT2(t, d, m, coopConfigs(d)[0], "")
	if err := g.SetMatrixUnits(MatrixUnitsOff); err != nil {
		t.Fatal(err)
	}
	simt, _ := perToken(t, g, seqs)
	cfgs := coopConfigs(d)
	if !d.dev.HasFeature(wgpu.FeatureCooperativeMatrix) {
		// Lowered, every configuration computes the same sums (each result
		// adds its products in k order) and each pipeline costs lavapipe's
		// LLVM 10 to 30 s: the smallest; the kernel tests cover the others.
		cfgs = cfgs[:1]
	} else if c, ok := pickMatrixConfig(cfgs); ok {
		// Natively, the one the forward pass uses: each configuration's
		// pipelines cost NVIDIA's compiler over a minute with a cold cache
		// (an H200: two of three in 4m45s); the kernel tests cover the
		// others.
		cfgs = []MatrixConfig{c}
	}
	for _, cfg := range cfgs {
		g.coopForce = &cfg
		if err := g.SetMatrixUnits(MatrixUnitsOn); err != nil {
			t.Fatal(err)
		}
		st := g.MatrixUnits()
		if !st.Used || st.Config != cfg.String() || !g.MatrixUnitsUsed() {
			t.Fatalf("%v: status %+v, want used, config %v", cfg, st, cfg)
		}
		if hd := m.Config.HeadDim(); hd%cfg.K == 0 && hd%cfg.N == 0 && !strings.HasPrefix(st.Attention, "attention_coop.wgsl") {
			t.Errorf("%v: attention %q, want attention_coop.wgsl at head size %d", cfg, st.Attention, hd)
		}
		got, nll := perToken(t, g, seqs)
		if got.Count != want.Count {
			t.Fatalf("%v: %d targets, CPU %d", cfg, got.Count, want.Count)
		}
		worst := 0.0
		for i, x := range nll {
			dd := math.Abs(float64(x) - float64(wantNLL[i]))
			worst = max(worst, dd/math.Max(1, float64(wantNLL[i])))
			if dd > 20*cpuTol*math.Max(1, float64(wantNLL[i])) {
				t.Errorf("%v: target %d: NLL %.7f, CPU %.7f", cfg, i, x, wantNLL[i])
			}
		}
		diff := got.Sum.Float64()/float64(got.Count) - wantMean
		t.Logf("%v: mean NLL %.7f; minus the CPU's (f32 weights) %.3g, minus SIMT's (f16 weights) %.3g; worst target %.3g (%s)", cfg,
			got.Sum.Float64()/float64(got.Count), diff, meanDiff(got, simt), worst, st.Reason)
		if math.Abs(diff) > cpuTol {
			t.Errorf("%v: mean NLL differs from the CPU's by %.3g, more than %g", cfg, diff, cpuTol)
		}
		if md := meanDiff(got, simt); math.Abs(md) > coopActivationTol {
			t.Errorf("%v: mean NLL differs from the SIMT kernels' (same f16 weights) by %.3g, more than %g", cfg, md, coopActivationTol)
		}
		t.Logf("%v: %s", cfg, st.Attention)
	}
	checkAttentionKernel(t, g, seqs[:1], g.coop != nil && g.coop.attn != nil)
	return g
}

// checkAttentionKernel profiles one batch of seqs on g and checks that its
// attention ran on attention_coop.wgsl (coop) or attention_shared.wgsl.
func checkAttentionKernel(t *testing.T, g *GPT2, seqs []model.Sequence, coop bool) {
	t.Helper()
	if err := g.SetProfiling(true); err != nil {
		t.Fatal(err)
	}
	defer g.SetProfiling(false)
	ctx := context.Background()
	p, err := g.Submit(ctx, seqs, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[bool]string{true: "attention_coop[", false: "attention_shared"}[coop]
	var names []string
	for _, k := range p.Profile() {
		if strings.HasPrefix(k.Kernel, "attention") {
			names = append(names, k.Kernel)
		}
	}
	if len(names) != 1 || !strings.HasPrefix(names[0], want) {
		t.Errorf("attention ran on %q, want %s...", names, want)
	}
}

// TestMatrixUnitsSelfCheck: a passing self-check is written to the verdict
// file and read back by the next model (no second check); an unreadable
// file is ignored with a warning and rewritten; coop results made wrong (the
// test hook, matmul, LM head or attention) fail the check: the model falls back to the
// SIMT kernels with one warning and scores bit for bit as the SIMT run, the
// failure is kept, and MatrixUnitsOn is then an error naming the check.
func TestMatrixUnitsSelfCheck(t *testing.T) {
	d := coopDev(t)
	m := synth.Peaked(synth.TinyConfig(), 7)
	seqs := zipfSeqs(24, 3, 24, m.Config.VocabSize)
	dir := t.TempDir()
	file := filepath.Join(dir, "dev-matrix-units.json")
	g := newCoopGPT2(t, d, m, coopConfigs(d)[0], file)

	if err := g.SetMatrixUnits(MatrixUnitsOff); err != nil {
		t.Fatal(err)
	}
	if st := g.MatrixUnits(); st.Used || st.Reason != "off by choice" {
		t.Fatalf("off: status %+v", st)
	}
	_, simt := perToken(t, g, seqs)

	// A passing check, kept and read back.
	if err := g.SetMatrixUnits(MatrixUnitsAuto); err != nil {
		t.Fatal(err)
	}
	if st := g.MatrixUnits(); !st.Used || st.Cached || st.Warning != "" || g.coopChecks != 1 {
		t.Fatalf("first check: status %+v after %d checks", st, g.coopChecks)
	} else {
		t.Logf("self-check: %s", st.Reason)
	}
	if f, err := loadVerdicts(d.dev, file); err != nil || len(f.Verdicts) != 1 || !f.Verdicts[0].OK {
		t.Fatalf("verdict file: %+v, %v", f, err)
	}
	if err := g.SetMatrixUnits(MatrixUnitsAuto); err != nil {
		t.Fatal(err)
	}
	if st := g.MatrixUnits(); !st.Used || !st.Cached || g.coopChecks != 1 {
		t.Fatalf("second decision: status %+v after %d checks, want the kept verdict", st, g.coopChecks)
	}

	// A file of another build's kernels (a new compiler or kernel text):
	// checked again without a warning, and rewritten for this build.
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(string(b), `"kernels": "`+kernelsDigest()+`"`, `"kernels": "0123456789abcdef"`, 1)
	if other == string(b) {
		t.Fatalf("no kernels digest in the verdict file:\n%s", b)
	}
	if err := os.WriteFile(file, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := g.SetMatrixUnits(MatrixUnitsAuto); err != nil {
		t.Fatal(err)
	}
	if st := g.MatrixUnits(); !st.Used || st.Cached || st.Warning != "" || g.coopChecks != 2 {
		t.Fatalf("another build's verdicts: status %+v after %d checks, want a new check", st, g.coopChecks)
	}
	if f, err := loadVerdicts(d.dev, file); err != nil || len(f.Verdicts) != 1 || f.Kernels != kernelsDigest() {
		t.Fatalf("verdict file after the new check: %+v, %v", f, err)
	}

	// An unreadable file: ignored with a warning, checked again, rewritten.
	if err := os.WriteFile(file, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := g.SetMatrixUnits(MatrixUnitsAuto); err != nil {
		t.Fatal(err)
	}
	if st := g.MatrixUnits(); !st.Used || !strings.Contains(st.Warning, "ignoring") || !strings.Contains(st.Warning, file) || g.coopChecks != 3 {
		t.Fatalf("corrupt file: status %+v after %d checks", st, g.coopChecks)
	}
	if _, err := loadVerdicts(d.dev, file); err != nil {
		t.Fatalf("the file was not rewritten: %v", err)
	}

	// Wrong results fail the check, in either kernel.
	for _, kind := range []string{"matmul", "lmhead", "attention"} {
		file := filepath.Join(dir, kind+"-matrix-units.json")
		g.coopFile = file
		g.coopCorrupt = func(k string, v []float32) {
			if k == kind {
				v[len(v)/2] += 0.01 * (1 + float32(math.Abs(float64(v[len(v)/2]))))
			}
		}
		if err := g.SetMatrixUnits(MatrixUnitsAuto); err != nil {
			t.Fatal(err)
		}
		st := g.MatrixUnits()
		if st.Used || !strings.Contains(st.Warning, "failed the self-check") || !strings.Contains(st.Warning, "SIMT") || strings.Count(st.Warning, "\n") != 0 {
			t.Fatalf("%s corrupted: status %+v", kind, st)
		}
		t.Logf("%s corrupted: %s", kind, st.Warning)
		_, got := perToken(t, g, seqs)
		sameBits(t, kind+" corrupted: per-target NLL vs the SIMT run", got, simt)
		g.coopCorrupt = nil // the failure is kept: no new check
		if err := g.SetMatrixUnits(MatrixUnitsAuto); err != nil {
			t.Fatal(err)
		}
		if st := g.MatrixUnits(); st.Used || !st.Cached || st.Warning == "" {
			t.Fatalf("%s: kept failure: status %+v", kind, st)
		}
		if err := g.SetMatrixUnits(MatrixUnitsOn); err == nil || !strings.Contains(err.Error(), "self-check") {
			t.Fatalf("%s: on after a failed check: %v, want an error naming the self-check", kind, err)
		}
	}
}

// TestMatrixUnitsUnavailable: without a configuration (no test hook; no
// device here has matrix units), auto keeps SIMT with the reason and on is
// an error naming it; f32 weights and the software kernel set say why too.
func TestMatrixUnitsUnavailable(t *testing.T) {
	d := newTestDev(t)
	m := synth.Peaked(synth.TinyConfig(), 7)
	for _, c := range []struct {
		f16, shared bool
		why         string
	}{{false, true, "f32"}, {d.f16, false, "software kernel set"}, {d.f16, true, ""}} {
		if c.f16 && !d.f16 {
			continue
		}
		g, err := NewGPT2(context.Background(), d.dev, m.Reader(), c.f16, nil)
		if err != nil {
			t.Fatal(err)
		}
		g.sharedMatmul = c.shared
		if err := g.SetMatrixUnits(MatrixUnitsAuto); err != nil {
			t.Fatal(err)
		}
		st := g.MatrixUnits()
		if st.Used || st.Reason == "" || !strings.Contains(st.Reason, c.why) {
			t.Errorf("f16 %v shared %v: status %+v, want unused because of %q", c.f16, c.shared, st, c.why)
		}
		if err := g.SetMatrixUnits(MatrixUnitsOn); err == nil || !strings.Contains(err.Error(), st.Reason) {
			t.Errorf("f16 %v shared %v: on: %v, want an error with the reason %q", c.f16, c.shared, err, st.Reason)
		}
		g.Close()
	}
}

// TestCoopAccuracy measures (with $WGPU_EVAL_COOP_MEASURE set: minutes on
// lavapipe) what the coop kernels' f16 activations cost on a larger model:
// "L,H,C,W" is a GPT-2 of L layers, H heads and C channels (GPT-2's
// vocabulary, synth.PeakedScaled's weights in f16: predictions far from
// uniform) scored on two windows of W positions; "1" is "12,4,96,128", the
// widest the lowered kernels fit lavapipe's loop limit with (its matmuls
// over K = 4C loop about 520 times per 4 channels: see coopLoopBudget; the
// LM head then takes one tile per workgroup). It logs the mean NLL on the
// coop kernels (lowered, 16x16x16) and on the SIMT kernels, each against
// the CPU's float32 run, the figures the README quotes, and fails only
// beyond 1e-2.
func TestCoopAccuracy(t *testing.T) {
	spec := os.Getenv("WGPU_EVAL_COOP_MEASURE")
	if spec == "" {
		t.Skip("a measurement: set WGPU_EVAL_COOP_MEASURE to 1 or L,H,C,W")
	}
	if spec == "1" {
		spec = "12,4,96,128"
	}
	var dims [4]int
	for i, f := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || i >= 4 || n < 1 {
			t.Fatalf("$WGPU_EVAL_COOP_MEASURE %q: want L,H,C,W", spec)
		}
		dims[i] = n
	}
	width := dims[3]
	d := coopDev(t)
	m := synth.PeakedScaled(synth.GPT2Shape(dims[0], dims[1], dims[2]), 124)
	seqs := twoWindows(width, m.Config.VocabSize)
	want, err := model.NewCPU(m, 0).Loss(context.Background(), seqs)
	if err != nil {
		t.Fatal(err)
	}
	cfg := coopTestConfigs[1]
	if cs := coopConfigs(d); cs[0] != coopTestConfigs[0] {
		cfg = cs[0] // the device's own
	}
	g := newCoopGPT2(t, d, m, cfg, "")
	if g.loopLimit > 0 {
		g.sliceTiles = 1 // the lowered LM head's loops, per tile, within the limit
	}
	if err := g.SetMatrixUnits(MatrixUnitsOff); err != nil {
		t.Fatal(err)
	}
	simt, _ := perToken(t, g, seqs)
	if err := g.SetMatrixUnits(MatrixUnitsOn); err != nil {
		t.Fatal(err)
	}
	coop, _ := perToken(t, g, seqs)
	mean := want.Sum.Float64() / float64(want.Count)
	t.Logf("GPT-2 %d layers, %d heads, %d channels, peaked f16 weights, %d targets: CPU f32 mean NLL %.6f (ln V %.3f); SIMT (f16 weights) %+.3g; coop %v (f16 activations too) %+.3g",
		dims[0], dims[1], dims[2], want.Count, mean, math.Log(float64(m.Config.VocabSize)), simt.Sum.Float64()/float64(simt.Count)-mean,
		cfg, coop.Sum.Float64()/float64(coop.Count)-mean)
	if meanDiff(coop, want) > 1e-2 {
		t.Errorf("coop mean NLL differs from the CPU's by %.3g", meanDiff(coop, want))
	}
}

// twoWindows are two whole windows of width Zipf-like ids, every position
// after the first scored.
func twoWindows(width, vocab int) []model.Sequence {
	var seqs []model.Sequence
	for _, s := range zipfSeqs(25, 2*width, 2, vocab) {
		if len(seqs) == 0 || len(seqs[len(seqs)-1].Tokens) == width {
			seqs = append(seqs, model.Sequence{First: 1})
		}
		seqs[len(seqs)-1].Tokens = append(seqs[len(seqs)-1].Tokens, s.Tokens[0])
	}
	return seqs
}
