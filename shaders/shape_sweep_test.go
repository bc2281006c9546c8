package shaders

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
)

// sweepShape draws a shape from the space released checkpoints span, at
// tiny sizes: GPT-2 with 1 to 25 heads of 4 to 128 channels (48, 80 and 96
// among them), or the Llama family (each model_type's options) with 1 to
// 3 key/value heads shared by 1, 2, 4, 7 or 8 query heads each, head_dim
// apart from hidden/heads or equal to it, channels, MLP widths and
// vocabularies that are no multiples of 64 (nor of 4, for the MLP), every
// rope scaling and 1 to 100 positions. With small set, widths stay where
// the lowered coop kernels fit lavapipe's loop limit (about 100 channels
// of matmul input, a vocabulary of 97).
func sweepShape(r *rand.Rand, small bool) model.Config {
	hds := []int{4, 8, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128}
	vocabs := []int{97, 257, 301, 1001, 1003, 2053, 3001}
	pos := []int{1, 2, 3, 5, 17, 33, 37, 64, 65, 100}
	var c model.Config
	if r.IntN(3) == 0 {
		heads, hd := 1+r.IntN(25), hds[r.IntN(len(hds))]
		for heads*hd > 1600 || small && heads*hd > 24 {
			heads = max(heads/2, 1)
			if small {
				hd = min(hd, 24)
			}
		}
		c = model.Config{NLayer: 1 + r.IntN(2), NHead: heads, NEmbd: heads * hd, NPositions: pos[r.IntN(len(pos))],
			VocabSize: vocabs[r.IntN(len(vocabs))], LayerNormEps: 1e-5}
	} else {
		c = synth.TinyLlamaConfig([]string{"llama", "mistral", "qwen2", "qwen3"}[r.IntN(4)])
		ratio := []int{1, 2, 4, 7, 8}[r.IntN(5)]
		kv := 1 + r.IntN(3)
		if r.IntN(4) == 0 {
			kv = 1 // multi-query
		}
		c.NHead, c.NKVHead, c.HeadSize = kv*ratio, kv, hds[1+r.IntN(len(hds)-1)]
		c.NEmbd = 4 * (1 + r.IntN(100))
		if r.IntN(3) == 0 { // head_dim = hidden/heads
			for c.NHead*c.HeadSize > 2048 {
				c.NHead, c.NKVHead = max(c.NHead/2, 1), 1
			}
			c.NEmbd = c.NHead * c.HeadSize
		}
		c.NInner, c.VocabSize = 1+r.IntN(200), vocabs[r.IntN(len(vocabs))]
		c.NLayer, c.NPositions = 1+r.IntN(2), pos[r.IntN(len(pos))]
		c.RopeTheta = []float64{10000, 1e6, 500000}[r.IntN(3)]
		switch r.IntN(4) {
		case 0:
			c.RopeScaling = model.RopeScaling{}
		case 1:
			c.RopeScaling = model.RopeScaling{Type: "linear", Factor: 2}
		case 2:
			c.RopeScaling = model.RopeScaling{Type: "yarn", Factor: 4, OrigPositions: 16, BetaFast: 16}
		} // else TinyLlamaConfig's llama3
		if small {
			c.NEmbd, c.NInner = 4*(1+r.IntN(14)), 1+r.IntN(56)
			for c.NHead*c.HeadSize > 96 {
				c.HeadSize = max(4, c.HeadSize/8*4)
				c.NHead = max(c.NKVHead, c.NHead/2/c.NKVHead*c.NKVHead)
			}
		}
	}
	if small {
		c.VocabSize = 97
	}
	return c
}

// TestShapeSweep scores $WGPU_TEST_SHAPE_SWEEP random shapes (sweepShape;
// seed $WGPU_TEST_SHAPE_SEED) on the GPU and on the CPU, each with a
// kernel set and f32 or f16 weights drawn at random (the f16 runs with
// weights rounded to f16, the CPU's too), peaked models and, for a quarter
// of the Llama family's, a tied LM head (Random with embeddings scaled to
// give logits of a few nats): every target's NLL within 20 times llamaTol
// relative to max(1, NLL), the mean within llamaTol relative. With
// $WGPU_TEST_SHAPE_COOP set it runs the lowered coop kernels (hardware set,
// f16) on small shapes; with $WGPU_TEST_SHAPE_SESSION set it also decodes
// the first sequence in two steps through a Session and compares the
// logits with the CPU generator's. Exploratory (not run by default): an
// audit's tool, e.g. WGPU_TEST_SHAPE_SWEEP=60 WGPU_TEST_SHAPE_SEED=3 go
// test ./shaders -run TestShapeSweep -v (about 20 s on lavapipe).
func TestShapeSweep(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("WGPU_TEST_SHAPE_SWEEP"))
	if n <= 0 {
		t.Skip("set $WGPU_TEST_SHAPE_SWEEP to the number of random shapes to run")
	}
	seed, _ := strconv.ParseUint(os.Getenv("WGPU_TEST_SHAPE_SEED"), 10, 64)
	coop := os.Getenv("WGPU_TEST_SHAPE_COOP") != ""
	session := os.Getenv("WGPU_TEST_SHAPE_SESSION") != ""
	var d *testDev
	if coop {
		d = coopDev(t)
	} else {
		d = newTestDev(t)
	}
	r := rand.New(rand.NewPCG(seed, 7))
	ctx := context.Background()
	for i := range n {
		cfg := sweepShape(r, coop)
		tied := cfg.Arch == model.ArchLlama && r.IntN(4) == 0
		f16 := d.f16 && r.IntN(2) == 0
		set := kernelSets[r.IntN(2)]
		if coop {
			f16, set = true, KernelsHardware
		}
		var m *model.Model
		if tied {
			cfg.TiedEmbed = true
			m = synth.Random(cfg, uint64(i))
			s := float32(3 / math.Sqrt(float64(cfg.NEmbd)))
			for k := range m.Weights.WTE {
				m.Weights.WTE[k] *= s
			}
		} else {
			m = synth.PeakedScaled(cfg, uint64(i))
		}
		if f16 {
			m = roundF16(m)
		}
		seqs := zipfSeqs(uint64(1000+i), 1+r.IntN(4), max(cfg.NPositions, 2), cfg.VocabSize)
		for j := range seqs {
			if len(seqs[j].Tokens) > cfg.NPositions {
				seqs[j].Tokens = seqs[j].Tokens[:cfg.NPositions]
				seqs[j].First = min(seqs[j].First, len(seqs[j].Tokens))
			}
		}
		t.Run(fmt.Sprintf("%d/%s", i, cfg.Describe()), func(t *testing.T) {
			t.Logf("V %d, tied %v, f16 %v, %s kernels, coop %v", cfg.VocabSize, tied, f16, set, coop)
			want, wantNLL := cpuNLL(t, m, seqs)
			var g *GPT2
			if coop {
				g = newCoopGPT2(t, d, m, coopConfigs(d)[0], "")
				if err := g.SetMatrixUnits(MatrixUnitsOn); err != nil {
					t.Fatal(err)
				}
			} else {
				g = newLlama(t, d, m, set, f16) // any decoder: GPT-2 too
			}
			tol := llamaTol(f16)
			got, nll := perToken(t, g, seqs)
			if got.Count != want.Count {
				t.Fatalf("%d targets, CPU %d", got.Count, want.Count)
			}
			worst := 0.0
			for k, x := range nll {
				dd := math.Abs(float64(x) - float64(wantNLL[k]))
				worst = max(worst, dd)
				if !(dd <= 20*tol*math.Max(1, float64(wantNLL[k]))) {
					t.Errorf("target %d: NLL %.7f, CPU %.7f (|diff| %.2g)", k, x, wantNLL[k], dd)
				}
			}
			if got.Count > 0 {
				gm, wm := got.Sum.Float64()/float64(got.Count), want.Sum.Float64()/float64(want.Count)
				if !(math.Abs(gm-wm) <= tol*math.Max(1, wm)) {
					t.Errorf("mean NLL %.7f, CPU %.7f", gm, wm)
				}
				t.Logf("mean NLL %.6f, CPU %.6f; worst target %.2g", gm, wm, worst)
			}
			if !session || cfg.NPositions < 2 {
				return
			}
			toks := seqs[0].Tokens
			gen, err := model.NewCPU(m, 0).NewGenerator()
			if err != nil {
				t.Fatal(err)
			}
			s, err := g.NewSessionFor(len(toks))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			cut := max(len(toks)/2, 1)
			for _, step := range [][]int32{toks[:cut], toks[cut:]} {
				if len(step) == 0 {
					continue
				}
				want, err := gen.Append(ctx, step)
				if err != nil {
					t.Fatal(err)
				}
				got, err := s.Append(ctx, step)
				if err != nil {
					t.Fatal(err)
				}
				checkClose(t, "logits", got, f64(want), 20*tol)
			}
		})
	}
}
