package shaders

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// TestCompileAhead: the pipelines compileAhead compiles for a batch's tuning
// round are exactly those the tuners then time (the LM head's group-size
// round aside, known only after its first), SIMT and with the matrix units;
// after the round none for that batch, nor for a smaller one (borrowed), nor
// under TuneOff; TuneRedo all again.
func TestCompileAhead(t *testing.T) {
	check := func(t *testing.T, g *GPT2, vocab int) {
		ctx := context.Background()
		g.tuneFile, g.autoTune = filepath.Join(t.TempDir(), "tuning.json"), true
		g.mu.Lock()
		err := g.ensureMatrixUnits() // as SubmitWith decides before the round
		g.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		jobs := func(B int) map[string]bool {
			g.mu.Lock()
			defer g.mu.Unlock()
			out := map[string]bool{}
			for _, j := range g.roundJobs(B, 64) {
				out[j.k.Name()+" "+j.consts.String()] = true
			}
			return out
		}
		ahead := jobs(8)
		if len(ahead) == 0 {
			t.Fatal("no pipelines ahead of the first round")
		}
		timed := map[string]bool{}
		g.tuneTimed = func(k *Kernel, cs constSet) {
			if !strings.Contains(cs.String(), "GX") || !strings.HasPrefix(k.Name(), "lmhead_loss_coop") {
				timed[k.Name()+" "+cs.String()] = true
			}
		}
		if _, err := g.Loss(ctx, fullSeqs(8, 64, vocab)); err != nil {
			t.Fatal(err)
		}
		for j := range timed {
			if !ahead[j] {
				t.Errorf("timed %s, not compiled ahead", j)
			}
		}
		for j := range ahead {
			if !timed[j] {
				t.Errorf("compiled ahead %s, not timed", j)
			}
		}
		if n := len(jobs(8)); n != 0 {
			t.Errorf("%d pipelines ahead of a batch already tuned", n)
		}
		if n := len(jobs(1)); n != 0 {
			t.Errorf("%d pipelines ahead of a smaller batch (borrowed)", n)
		}
		g.SetTuning(TuneOff)
		if n := len(jobs(8)); n != 0 {
			t.Errorf("TuneOff: %d pipelines ahead", n)
		}
		g.SetTuning(TuneRedo)
		if n := len(jobs(8)); n != len(ahead) {
			t.Errorf("TuneRedo: %d pipelines ahead, want %d", n, len(ahead))
		}
		t.Logf("%d pipelines compiled ahead", len(ahead))
	}
	t.Run("simt", func(t *testing.T) {
		d := newTestDev(t)
		g, _, _ := newPeakedGPT2(t, d, func(model.Config) []model.Sequence { return nil })
		g.sharedMatmul, g.vt = true, sharedVocabTile // the kernels of hardware GPUs
		check(t, g, g.cfg.VocabSize)
	})
	t.Run("coop", func(t *testing.T) {
		d := coopDev(t)
		mc := synth.TinyConfig()
		mc.VocabSize = 3000
		cfg := coopConfigs(d)[0]
		g := newCoopGPT2(t, d, synth.Peaked(mc, 7), cfg, filepath.Join(t.TempDir(), "matrix-units.json"))
		g.coopShapes = []coopShape{{16, 32, 2, 2, 16, 2, 0}, {16, 32, 2, 2, 16, 2, 1}}
		g.coopHeadShapes = []coopHeadShape{{32, 64, 2, 2, 16, 1}}
		g.attnShapes = []attnCoopShape{{cfg.M, 2, max(cfg.K, cfg.N), 0}}
		if err := g.SetMatrixUnits(MatrixUnitsOn); err != nil {
			t.Fatal(err)
		}
		check(t, g, mc.VocabSize)
		if g.coop == nil || g.coop.attn == nil {
			t.Errorf("the coop kernels and attention_coop.wgsl did not run")
		}
	})
}

// TestSelfCheckCompilesAhead: the self-check's dry run names every pipeline
// the check then dispatches, so each is compiled before the first dispatch
// (on every core at once), and the verdict is the same as without it; its
// matmul case runs a pipeline of the forward pass.
func TestSelfCheckCompilesAhead(t *testing.T) {
	d := coopDev(t)
	m := synth.Peaked(synth.TinyConfig(), 7)
	g := newCoopGPT2(t, d, m, coopConfigs(d)[0], filepath.Join(t.TempDir(), "matrix-units.json"))
	dispatched := 0
	g.checkDispatched = func(k *Kernel, cs constSet) {
		dispatched++
		k.mu.Lock()
		_, ready := k.pipes[cs]
		k.mu.Unlock()
		if !ready {
			t.Errorf("self-check dispatched %s {%s} before it was compiled", k.Name(), cs)
		}
	}
	if err := g.SetMatrixUnits(MatrixUnitsAuto); err != nil {
		t.Fatal(err)
	}
	st := g.MatrixUnits()
	if !st.Used || g.coopChecks != 1 {
		t.Fatalf("status %+v after %d checks: want the matrix units, checked once", st, g.coopChecks)
	}
	if dispatched < 6 { // matmul, LM head (with to_f16) and attention, each against SIMT
		t.Errorf("%d dispatches, want the check's 7", dispatched)
	}

	// The matmul case runs the pipeline the forward pass's residual-add
	// matmuls record (the same tiling, VEC and epilogue), not one of its own.
	forward := map[string]bool{}
	g.opRecorded = func(k *Kernel, cs constSet) { forward[k.Name()+" "+cs.String()] = true }
	if _, err := g.Loss(context.Background(), zipfSeqs(5, 2, 30, m.Config.VocabSize)); err != nil {
		t.Fatal(err)
	}
	var checked []string
	g.checkDispatched = func(k *Kernel, cs constSet) { checked = append(checked, k.Name()+" "+cs.String()) }
	g.mu.Lock()
	g.verdictFor("test: matmul case", func(r *checkRun) (bool, string, error) {
		return r.matmulCase(g.coop.matmulVariant(checkK, checkN))
	})
	g.mu.Unlock()
	if len(checked) != 2 || !forward[checked[0]] {
		t.Errorf("the matmul case dispatched %q; the forward pass recorded %v", checked, forward)
	}
}

// TestBatchCompilesAhead: a batch's dry recording names every pipeline its
// recording then asks for, so that each is made (on every core at once)
// before the first dispatch is recorded, and so does a generation session's
// (a prompt, then single tokens): the SIMT kernels, the hardware set and the
// matrix units' (lowered here), GPT-2 and Llama-family models.
func TestBatchCompilesAhead(t *testing.T) {
	for _, c := range []struct {
		name  string
		model *model.Model
		coop  bool
	}{
		{"gpt2 software", synth.Peaked(synth.TinyConfig(), 7), false},
		{"gpt2 hardware", synth.Peaked(synth.TinyConfig(), 7), false},
		{"gpt2 coop", synth.Peaked(synth.TinyConfig(), 7), true},
		{"qwen3 hardware", synth.Peaked(synth.TinyLlamaConfig("qwen3"), 7), false},
		{"llama coop", synth.Peaked(synth.TinyLlamaConfig("llama"), 7), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var d *testDev
			var g *GPT2
			if c.coop {
				d = coopDev(t)
				g = newCoopGPT2(t, d, c.model, coopConfigs(d)[0], filepath.Join(t.TempDir(), "matrix-units.json"))
				if err := g.SetMatrixUnits(MatrixUnitsOn); err != nil {
					t.Fatal(err)
				}
			} else {
				d = newTestDev(t)
				var err error
				if g, err = NewGPT2(context.Background(), d.dev, c.model.Reader(), false, nil); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { g.Close() })
				if strings.HasSuffix(c.name, " hardware") {
					g.sharedMatmul, g.vt = true, sharedVocabTile
				}
			}
			ops := 0
			g.opRecorded = func(k *Kernel, cs constSet) {
				ops++
				if !k.made(cs) {
					t.Errorf("recorded %s {%s} before it was made", k.Name(), cs)
				}
			}
			if _, err := g.Loss(context.Background(), zipfSeqs(3, 2, 40, c.model.Config.VocabSize)); err != nil {
				t.Fatal(err)
			}
			if ops < 10 {
				t.Errorf("%d dispatches recorded", ops)
			}
			// A generation session: a prompt, then one token at a time.
			s, err := g.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for _, toks := range [][]int32{zipfSeqs(4, 1, 20, c.model.Config.VocabSize)[0].Tokens, {1}, {2}} {
				if _, err := s.Append(context.Background(), toks); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
