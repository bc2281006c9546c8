package pipeline_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/backendtest"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
)

// The goldens are written by testdata/golden/gen_golden.py: a tiny GPT-2 (2
// layers, 2 heads, C=16, 64 positions, the full GPT-2 vocabulary) trained on
// TinyShakespeare's train split and saved as F16 safetensors, and the NLL of
// every evaluation method on held-out val ids, computed by a float64 PyTorch
// reference written from Hugging Face's GPT2LMHeadModel and perplexity loop.
// The Go side must match them without PyTorch.
var goldenDir = backendtest.GoldenDir()

const goldenTol = backendtest.GoldenTol

type (
	goldenWindow = backendtest.GoldenWindow
	goldenCase   = backendtest.GoldenCase
	goldenFile   = backendtest.Golden
)

func loadGolden(t *testing.T) goldenFile { return backendtest.LoadGolden(t, goldenDir) }

// sequences cuts the golden's tokens or documents the way case c says, with the
// pipeline's own functions (the code under test).
func sequences(t *testing.T, g goldenFile, c goldenCase) []model.Sequence {
	t.Helper()
	switch pipeline.Mode(c.Mode) {
	case pipeline.ModeStream:
		return pipeline.Stream(g.Tokens[:c.NTokens], c.Ctx)
	case pipeline.ModeStrided:
		return pipeline.Strided(g.Tokens[:c.NTokens], c.Ctx, c.Stride)
	case pipeline.ModeDocuments:
		return pipeline.Documents(g.Documents, g.EOT, c.Ctx, c.Stride)
	}
	t.Fatalf("unknown mode %q", c.Mode)
	return nil
}

// windowTokens is the token ids the reference fed the model for window w.
func windowTokens(g goldenFile, w goldenWindow) []int32 {
	if w.Doc == nil {
		return g.Tokens[w.Begin:w.End]
	}
	seq := append([]int32{g.EOT}, g.Documents[*w.Doc]...)
	return seq[w.Begin:w.End]
}

// windowName names the window for messages: "[begin,end)", with its document.
func windowName(w goldenWindow) string {
	if w.Doc == nil {
		return fmt.Sprintf("[%d,%d)", w.Begin, w.End)
	}
	return fmt.Sprintf("doc %d [%d,%d)", *w.Doc, w.Begin, w.End)
}

// scoringWindows is the golden windows that score at least one token: the
// reference also runs windows that score none (a last stream window of one
// token), which the pipeline rightly skips.
func scoringWindows(c goldenCase) []goldenWindow {
	var ws []goldenWindow
	for _, w := range c.Windows {
		if w.Scored > 0 {
			ws = append(ws, w)
		}
	}
	return ws
}

// TestGoldenWindows checks, without running a model, that the pipeline cuts
// exactly the windows the Hugging Face loops of the reference ran: the same
// tokens, with the same number of targets, in the same order.
func TestGoldenWindows(t *testing.T) {
	g := loadGolden(t)
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) { checkWindows(t, g, c) })
	}
}

// checkWindows checks that the pipeline cuts case c of g into exactly the
// windows the reference scored.
func checkWindows(t *testing.T, g goldenFile, c goldenCase) {
	t.Helper()
	seqs := sequences(t, g, c)
	want := scoringWindows(c)
	if len(seqs) != len(want) {
		t.Fatalf("%d sequences, want %d", len(seqs), len(want))
	}
	count := 0
	for i, s := range seqs {
		w := want[i]
		if !slices.Equal(s.Tokens, windowTokens(g, w)) {
			t.Errorf("sequence %d: tokens differ from the reference window %s", i, windowName(w))
		}
		if s.Scored() != w.Scored {
			t.Errorf("sequence %d (window %s): scores %d targets, want %d", i, windowName(w), s.Scored(), w.Scored)
		}
		count += s.Scored()
	}
	if count != c.Count {
		t.Errorf("scored %d targets, want %d", count, c.Count)
	}
}

// TestGoldenNLL runs every golden case through the pipeline's windows and the
// CPU forward of the tiny F16 model, and checks the mean NLL against the float64
// PyTorch reference to goldenTol, and the number of scored targets exactly.
func TestGoldenNLL(t *testing.T) {
	g := loadGolden(t)
	m, err := model.Load(filepath.Join(goldenDir, "tiny"))
	if err != nil {
		t.Fatal(err)
	}
	cpu := model.NewCPU(m, 0)
	ctx := context.Background()
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			seqs := sequences(t, g, c)
			got, err := cpu.Loss(ctx, seqs)
			if err != nil {
				t.Fatal(err)
			}
			if got.Count != c.Count {
				t.Errorf("count %d, want %d", got.Count, c.Count)
			}
			mean := got.Sum.Float64() / float64(got.Count)
			diff := math.Abs(mean - c.MeanNLL)
			t.Logf("mean NLL %.9f, reference %.9f, |diff| %.2e", mean, c.MeanNLL, diff)
			if !(diff <= goldenTol) { // NaN fails too
				t.Errorf("mean NLL %.9f, want %.9f (|diff| %.2e > %.0e)", mean, c.MeanNLL, diff, goldenTol)
				reportWindows(t, ctx, cpu, seqs, scoringWindows(c))
			}
		})
	}
}

// TestGoldenModelPredictsWell: the golden model's predictions are peaked, its
// mean NLL in every case at least 3 nats below ln V (a uniform guess), so
// that the goldens exercise what only a few dominant logits show (a random
// model of this size scores worse than chance). A regeneration of the goldens
// with an untrained model fails here. TestGoldenNLL holds the Go side to
// these reference values.
func TestGoldenModelPredictsWell(t *testing.T) {
	g := loadGolden(t)
	m, err := model.Load(filepath.Join(goldenDir, "tiny"))
	if err != nil {
		t.Fatal(err)
	}
	lnV := math.Log(float64(m.Config.VocabSize))
	for _, c := range g.Cases {
		if !(c.MeanNLL < lnV-3) {
			t.Errorf("%s: the reference mean NLL %.4f is not 3 nats below ln V = %.4f", c.Name, c.MeanNLL, lnV)
		}
	}
}

// reportWindows scores the sequences one at a time and logs the windows whose
// NLL sum is furthest from the reference, to locate a mismatch.
func reportWindows(t *testing.T, ctx context.Context, cpu *model.CPU, seqs []model.Sequence, want []goldenWindow) {
	t.Helper()
	if len(seqs) != len(want) {
		t.Logf("cannot compare windows: %d sequences, %d reference windows (see TestGoldenWindows)", len(seqs), len(want))
		return
	}
	shown := 0
	for i, s := range seqs {
		got, err := cpu.Loss(ctx, []model.Sequence{s})
		if err != nil {
			t.Logf("window %d: %v", i, err)
			continue
		}
		w := want[i]
		if d := math.Abs(got.Sum.Float64() - w.NLLSum); d > goldenTol*float64(w.Scored) && shown < 5 {
			t.Logf("window %d %s: NLL sum %.9f over %d, reference %.9f over %d",
				i, windowName(w), got.Sum.Float64(), got.Count, w.NLLSum, w.Scored)
			shown++
		}
	}
}

// TestCPUConformance runs the backend conformance suite on the CPU path:
// every golden case through Evaluate within goldenTol of the float64
// reference, bit-identical reruns, batch mates, bad input, cancellation.
func TestCPUConformance(t *testing.T) {
	backendtest.Suite{
		Open:      func(t *testing.T, m *model.Model) pipeline.Backend { return backend.NewCPU(m, 0) },
		GoldenDir: goldenDir,
		GoldenTol: goldenTol,
		CPUTol:    0, // the CPU path against itself: equal to the last bit
		BatchTol:  1e-12,
	}.Run(t)
}
