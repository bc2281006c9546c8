package runfile_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/internal/backendtest"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// bosTargets lists every target of a run with BOSEachWindow, in corpus
// order, each with the one-target window that holds exactly its context,
// from the definition: a window is backendtest.EOT (the BOS) and up to ctx-1 corpus
// tokens, windows start every stride tokens (ctx-1 in stream mode), and a
// token is scored by the first window that reaches it, after the BOS and the
// window's tokens before it. A stream that begins with backendtest.EOT keeps it as
// its first window's BOS (a context token, at position 0).
func bosTargets(toks *corpus.Tokens, mode pipeline.Mode, ctx, stride int) []target {
	if mode == pipeline.ModeStream {
		stride = ctx - 1
	}
	var out []target
	add := func(doc, lead int, ids []int32) {
		for j, id := range ids {
			begin := 0
			if j >= ctx-1 {
				begin = ((j-(ctx-1))/stride + 1) * stride
			}
			w := append([]int32{backendtest.EOT}, ids[begin:j+1]...)
			out = append(out, target{doc, lead + j, id, model.Sequence{Tokens: w, First: len(w) - 1}})
		}
	}
	if mode == pipeline.ModeDocuments {
		for i, d := range toks.Documents(backendtest.EOT) {
			add(i, 0, d)
		}
		return out
	}
	stream := toks.Stream(backendtest.EOT)
	if stream[0] == backendtest.EOT {
		add(0, 1, stream[1:])
	} else {
		add(0, 0, stream)
	}
	return out
}

// TestBOSEachWindowCPU: a run with BOSEachWindow on the CPU, on a tiny GPT-2
// far from uniform (synth.Peaked), scores exactly bosTargets' targets, at
// their corpus positions, each with the NLL the CPU model gives its
// hand-built BOS-prefixed window (to 4e-7 relative: a shorter window is
// tiled differently), and the run's mean NLL is theirs. A stream that starts
// with the BOS scores its first window as a run without the option does, bit
// for bit: the BOS is not doubled.
func TestBOSEachWindowCPU(t *testing.T) {
	m := synth.Peaked(synth.TinyConfig(), 7)
	cpu := backend.NewCPU(m, 2)
	ref := model.NewCPU(m, 1)
	ctx := context.Background()
	docs := backendtest.RandomDocs(3, 30, 0, 5, 90, 1, 47)
	continuous := &corpus.Tokens{Docs: [][]int32{backendtest.RandomDocs(4, 150).Docs[0]}}
	led := &corpus.Tokens{Docs: continuous.Docs, Lead: []int32{backendtest.EOT}} // as a Llama 2-style tokenizer's stream
	for _, c := range []struct {
		name        string
		toks        *corpus.Tokens
		mode        pipeline.Mode
		ctx, stride int
	}{
		{"stream", continuous, pipeline.ModeStream, 32, 0},
		{"stream ctx 2", &corpus.Tokens{Docs: [][]int32{continuous.Docs[0][:9]}}, pipeline.ModeStream, 2, 0},
		{"stream led by the BOS", led, pipeline.ModeStream, 32, 0},
		{"stream of documents", docs, pipeline.ModeStream, 40, 0}, // starts with the documents' separator
		{"strided", continuous, pipeline.ModeStrided, 32, 12},
		{"strided led by the BOS", led, pipeline.ModeStrided, 20, 19},
		{"documents", docs, pipeline.ModeDocuments, 40, 16},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := pipeline.Evaluate(ctx, cpu, pipeline.EvalConfig{Tokens: c.toks, EOT: backendtest.EOT, Mode: c.mode, Ctx: c.ctx, Stride: c.stride,
				BOSEachWindow: true, BatchTokens: 96, PerToken: true, VocabSize: m.Config.VocabSize})
			if err != nil {
				t.Fatal(err)
			}
			want := bosTargets(c.toks, c.mode, c.ctx, c.stride)
			if len(res.PerToken) != len(want) || res.Tokens != len(want) {
				t.Fatalf("%d per-token records, %d targets scored, want %d", len(res.PerToken), res.Tokens, len(want))
			}
			hand := make([]model.Sequence, len(want))
			for i, w := range want {
				hand[i] = w.window
			}
			_, nlls, err := ref.LossPerToken(ctx, hand)
			if err != nil {
				t.Fatal(err)
			}
			sum := 0.0
			for i, got := range res.PerToken {
				w := want[i]
				if got.Doc != w.doc || got.Pos != w.pos || got.Token != w.token {
					t.Fatalf("record %d: doc %d pos %d token %d, want doc %d pos %d token %d", i, got.Doc, got.Pos, got.Token, w.doc, w.pos, w.token)
				}
				if d := math.Abs(float64(nlls[i]) - float64(got.NLL)); d > 4e-7*float64(nlls[i]) {
					t.Errorf("doc %d pos %d: NLL %v, its hand-built window %v", w.doc, w.pos, got.NLL, nlls[i])
				}
				sum += float64(nlls[i])
			}
			if mean := sum / float64(len(want)); math.Abs(res.MeanNLL-mean) > 1e-6 {
				t.Errorf("mean NLL %.9f, the hand-built windows' %.9f", res.MeanNLL, mean)
			}
		})
	}

	// The first window of a stream led by the BOS is the window a run
	// without the option scores: its targets' NLLs are bit-identical.
	cfg := pipeline.EvalConfig{Tokens: led, EOT: backendtest.EOT, Ctx: 32, BatchTokens: 96, PerToken: true}
	plain, err := pipeline.Evaluate(ctx, cpu, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.BOSEachWindow = true
	bos, err := pipeline.Evaluate(ctx, cpu, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 31 { // stream positions 1..31
		p, b := plain.PerToken[i], bos.PerToken[i]
		if p.Pos != i+1 || b.Pos != i+1 || math.Float32bits(p.NLL) != math.Float32bits(b.NLL) {
			t.Fatalf("first window, target %d: without the option pos %d NLL %v, with it pos %d NLL %v", i, p.Pos, p.NLL, b.Pos, b.NLL)
		}
	}
	if bos.Tokens != 150 || plain.Tokens != 151-5 {
		t.Errorf("targets: %d with the option (want all 150 after the BOS), %d without (want the 151 tokens less the 5 window starts)", bos.Tokens, plain.Tokens)
	}
}

// TestBOSEachWindowIdentity: a checkpoint of a run with BOSEachWindow is
// another run for one without it (and the reverse), named; compare notes
// the difference, and explains targets that differ by it.
func TestBOSEachWindowIdentity(t *testing.T) {
	on, off := runfile.RunIdentity{Mode: "stream", Ctx: 16, Stride: 15, BOSEachWindow: true}, runfile.RunIdentity{Mode: "stream", Ctx: 16, Stride: 15}
	if d := on.Diff(off); !strings.Contains(d, "BOS each window: true in the checkpoint, false now") {
		t.Errorf("Diff = %q", d)
	}
	if d := on.Diff(on); d != "" {
		t.Errorf("Diff of the same run = %q", d)
	}

	m := synth.Peaked(synth.TinyConfig(), 7)
	cpu := backend.NewCPU(m, 1)
	file := func(toks *corpus.Tokens, mode pipeline.Mode, bos bool) *runfile.PerTokenFile {
		res, err := pipeline.Evaluate(context.Background(), cpu, pipeline.EvalConfig{Tokens: toks, EOT: backendtest.EOT, Mode: mode, Ctx: 24,
			Stride: 8, BOSEachWindow: bos, PerToken: true})
		if err != nil {
			t.Fatal(err)
		}
		return runfile.NewPerTokenFile(res, "gpt2-builtin")
	}
	docs := backendtest.RandomDocs(5, 10, 40, 3)
	a, b := file(docs, pipeline.ModeDocuments, false), file(docs, pipeline.ModeDocuments, true)
	if !b.Header.BOSEachWindow || a.Header.BOSEachWindow {
		t.Errorf("headers say BOS each window %v and %v", a.Header.BOSEachWindow, b.Header.BOSEachWindow)
	}
	c, err := runfile.Compare(a, b, 3, nil) // documents mode: the same targets, other contexts in the 40-token document
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(c.Notes, "; "), "BOS each window: false in A, true in B") || c.Identical == c.Targets {
		t.Errorf("notes %q, %d of %d identical", c.Notes, c.Identical, c.Targets)
	}
	stream := &corpus.Tokens{Docs: [][]int32{docs.Docs[1]}}
	if _, err := runfile.Compare(file(stream, pipeline.ModeStream, false), file(stream, pipeline.ModeStream, true), 3, nil); err == nil ||
		!strings.Contains(err.Error(), "BOS each window: false in A, true in B") {
		t.Errorf("stream targets that differ by the option: err = %v", err)
	}
}

// Stream runs of one corpus in windows of another length score other
// targets (each window's first token is context only): compare refuses
// them, naming both runs' windows.
func TestCompareOtherWindows(t *testing.T) {
	cpu := backend.NewCPU(synth.Peaked(synth.TinyConfig(), 7), 1)
	stream := &corpus.Tokens{Docs: [][]int32{backendtest.RandomDocs(1, 60, 60, 5).Docs[0]}}
	file := func(ctx int) *runfile.PerTokenFile {
		res, err := pipeline.Evaluate(context.Background(), cpu, pipeline.EvalConfig{Tokens: stream, EOT: backendtest.EOT, Mode: pipeline.ModeStream,
			Ctx: ctx, PerToken: true})
		if err != nil {
			t.Fatal(err)
		}
		res.Config = &pipeline.RunConfig{Mode: "stream", Ctx: res.Ctx, Stride: res.Stride}
		return runfile.NewPerTokenFile(res, "gpt2-builtin")
	}
	_, err := runfile.Compare(file(16), file(24), 3, nil)
	if err == nil || !strings.Contains(err.Error(), "different targets") || !strings.Contains(err.Error(), "ctx 16, stride 16 in A; ctx 24, stride 24 in B") {
		t.Errorf("stream runs in other windows: err = %v", err)
	}
	if c, err := runfile.Compare(file(16), file(16), 3, nil); err != nil || c.Identical != c.Targets {
		t.Errorf("the same run twice: %v, %+v", err, c)
	}
}
