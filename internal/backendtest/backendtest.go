// Package backendtest is the conformance suite every pipeline.Backend runs
// (the CPU path and the GPU path): the float64 PyTorch goldens of every
// evaluation method, agreement with the CPU path on a model whose predictions
// are far from uniform, a target's NLL independent of its batch mates,
// bit-identical reruns, bad input refused with clear errors, and cancellation.
package backendtest

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/model"
	"github.com/wgpu-eval/wgpu-eval/model/synth"
	"github.com/wgpu-eval/wgpu-eval/pipeline"
	"github.com/wgpu-eval/wgpu-eval/pipeline/backend"
)

// GoldenWindow is one window the reference scored.
type GoldenWindow struct {
	Doc    *int    `json:"doc"` // documents mode: the document the window belongs to
	Begin  int     `json:"begin"`
	End    int     `json:"end"`
	Scored int     `json:"scored"`
	NLLSum float64 `json:"nll_sum"`
}

// GoldenCase is one evaluation the reference ran: a method, its window and
// the float64 NLL.
type GoldenCase struct {
	Name    string         `json:"name"`
	Mode    string         `json:"mode"`
	Ctx     int            `json:"ctx"`
	Stride  int            `json:"stride"`
	NTokens int            `json:"n_tokens"` // stream/strided: the leading tokens evaluated
	NLLSum  float64        `json:"nll_sum"`
	Count   int            `json:"count"`
	MeanNLL float64        `json:"mean_nll"`
	Windows []GoldenWindow `json:"windows"`
}

// Golden is testdata/golden/golden.json: the corpus the reference scored and
// its cases. testdata/golden/gen_golden.py wrote it with a float64 PyTorch
// reference of Hugging Face's GPT2LMHeadModel and perplexity loops, for the
// tiny F16 model in testdata/golden/tiny.
type Golden struct {
	EOT       int32        `json:"eot"`
	Tokens    []int32      `json:"tokens"`
	Documents [][]int32    `json:"documents"`
	Cases     []GoldenCase `json:"cases"`
}

// LoadGolden reads dir/golden.json.
func LoadGolden(t testing.TB, dir string) Golden {
	t.Helper()
	path := filepath.Join(dir, "golden.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g Golden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	if len(g.Cases) == 0 || len(g.Tokens) == 0 {
		t.Fatalf("%s: no cases or no tokens", path)
	}
	return g
}

// Config returns the EvalConfig that runs case c of g.
func (g Golden) Config(c GoldenCase) pipeline.EvalConfig {
	toks := &corpus.Tokens{Docs: [][]int32{g.Tokens[:c.NTokens]}}
	if pipeline.Mode(c.Mode) == pipeline.ModeDocuments {
		toks = &corpus.Tokens{Docs: g.Documents, Separated: true}
	}
	return pipeline.EvalConfig{Tokens: toks, EOT: g.EOT, Mode: pipeline.Mode(c.Mode), Ctx: c.Ctx, Stride: c.Stride}
}

// Suite says how to make the backend under test and what it must meet.
type Suite struct {
	// Open makes the backend for m; the suite closes it.
	Open func(t *testing.T, m *model.Model) pipeline.Backend
	// GoldenDir holds golden.json and the tiny model it was computed with.
	GoldenDir string
	// GoldenTol bounds |mean NLL - the float64 reference| (nats).
	GoldenTol float64
	// GoldenCases names the golden cases to run; nil runs every one. (A slow
	// backend may run one case per method.)
	GoldenCases []string
	// CPUTol bounds |mean NLL - the CPU path's| on the peaked model (nats).
	CPUTol float64
	// BatchTol bounds, relative to the sum, how far a batch's NLL sum may be
	// from the sum of its sequences scored alone (0 for exact backends; an f32
	// reduction on a device rounds once per addition).
	BatchTol float64
}

// Run runs the whole suite as subtests of t.
func (s Suite) Run(t *testing.T) {
	t.Run("goldens", s.goldens)
	t.Run("peaked", s.peaked)
	t.Run("batch mates", s.batchMates)
	t.Run("bad input", s.badInput)
	t.Run("cancel", s.cancel)
}

func (s Suite) open(t *testing.T, m *model.Model) pipeline.Backend {
	t.Helper()
	b := s.Open(t, m)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close %s: %v", b.Name(), err)
		}
	})
	return b
}

// goldens: every golden case through Evaluate, with batches small enough that
// sequences of different lengths share one; the mean NLL within GoldenTol of
// the reference, the count exact, and a rerun bit-identical.
func (s Suite) goldens(t *testing.T) {
	g := LoadGolden(t, s.GoldenDir)
	m, err := model.Load(filepath.Join(s.GoldenDir, "tiny"))
	if err != nil {
		t.Fatal(err)
	}
	b := s.open(t, m)
	for i, c := range g.Cases {
		if s.GoldenCases != nil && !slices.Contains(s.GoldenCases, c.Name) {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			cfg := g.Config(c)
			cfg.BatchTokens = 4 * c.Ctx
			cfg.VocabSize = m.Config.VocabSize
			res, err := pipeline.Evaluate(context.Background(), b, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Tokens != c.Count {
				t.Errorf("tokens %d, want %d", res.Tokens, c.Count)
			}
			diff := math.Abs(res.MeanNLL - c.MeanNLL)
			t.Logf("%s: mean NLL %.9f, reference %.9f, |diff| %.2e", b.Name(), res.MeanNLL, c.MeanNLL, diff)
			if !(diff <= s.GoldenTol) {
				t.Errorf("mean NLL %.9f, want %.9f (|diff| %.2e > %.0e)", res.MeanNLL, c.MeanNLL, diff, s.GoldenTol)
			}
			if i%2 == 1 {
				return // rerun every other case: enough to catch nondeterminism, half the time
			}
			again, err := pipeline.Evaluate(context.Background(), b, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if again.NLLSum != res.NLLSum || again.StdErr != res.StdErr {
				t.Errorf("rerun: NLL sum %v, first run %v: not bit-identical", again.NLLSum, res.NLLSum)
			}
		})
	}
}

// peakedCorpus is documents of Zipf-like ids (small ids common, as in text)
// of random lengths, up to twice the model's positions.
func peakedCorpus(seed uint64, cfg model.Config, docs int) *corpus.Tokens {
	r := rand.New(rand.NewPCG(seed, 3))
	out := &corpus.Tokens{Separated: true}
	for range docs {
		d := make([]int32, 1+r.IntN(2*cfg.NPositions))
		for i := range d {
			d[i] = int32(min(int(math.Exp(r.Float64()*math.Log(float64(cfg.VocabSize))))-1, cfg.VocabSize-1))
		}
		out.Docs = append(out.Docs, d)
	}
	return out
}

// peaked: every method on the peaked model (mean NLL far below ln V), against
// the CPU path, within CPUTol, and the CPU path against a float64 forward
// (refops, op by op) of the same windows, within PeakedTol: so the CPU
// suite, whose CPUTol compares the CPU with itself, still checks the
// numbers on a model that predicts well.
func (s Suite) peaked(t *testing.T) {
	m := synth.Peaked(synth.TinyConfig(), 7)
	cfg := m.Config
	toks := peakedCorpus(11, cfg, 12)
	b := s.open(t, m)
	cpu := backend.NewCPU(m, 0)
	for _, c := range []struct {
		mode        pipeline.Mode
		ctx, stride int
	}{
		{pipeline.ModeStream, cfg.NPositions, 0},
		{pipeline.ModeStream, cfg.NPositions/2 + 3, 0},
		{pipeline.ModeStrided, cfg.NPositions, cfg.NPositions / 4},
		{pipeline.ModeDocuments, cfg.NPositions, cfg.NPositions / 2},
	} {
		t.Run(string(c.mode), func(t *testing.T) {
			ec := pipeline.EvalConfig{Tokens: toks, EOT: 0, Mode: c.mode, Ctx: c.ctx, Stride: c.stride, VocabSize: cfg.VocabSize, BatchTokens: 3 * c.ctx}
			want, err := pipeline.Evaluate(context.Background(), cpu, ec)
			if err != nil {
				t.Fatal(err)
			}
			if lnV := math.Log(float64(cfg.VocabSize)); want.MeanNLL > lnV-1 {
				t.Fatalf("the peaked model's CPU mean NLL %.4f is not well below ln V = %.4f", want.MeanNLL, lnV)
			}
			var seqs []model.Sequence
			switch c.mode {
			case pipeline.ModeStream:
				seqs = pipeline.Stream(toks.Stream(0), c.ctx)
			case pipeline.ModeStrided:
				seqs = pipeline.Strided(toks.Stream(0), c.ctx, c.stride)
			default:
				seqs = pipeline.Documents(toks.Documents(0), 0, c.ctx, c.stride)
			}
			ref, n := referenceSum(fmt.Sprint(c), m, seqs)
			if d := math.Abs(want.MeanNLL - ref/float64(n)); n != want.Tokens || !(d <= peakedTol) {
				t.Errorf("cpu: %d tokens, mean NLL %.9f; the float64 reference %d, %.9f (|diff| %.2e > %.0e)",
					want.Tokens, want.MeanNLL, n, ref/float64(n), d, peakedTol)
			}
			got, err := pipeline.Evaluate(context.Background(), b, ec)
			if err != nil {
				t.Fatal(err)
			}
			diff := math.Abs(got.MeanNLL - want.MeanNLL)
			t.Logf("%s: mean NLL %.9f, cpu %.9f, |diff| %.2e", b.Name(), got.MeanNLL, want.MeanNLL, diff)
			if got.Tokens != want.Tokens || !(diff <= s.CPUTol) {
				t.Errorf("%d tokens, mean NLL %.9f; cpu %d tokens, %.9f (|diff| %.2e > %.0e)",
					got.Tokens, got.MeanNLL, want.Tokens, want.MeanNLL, diff, s.CPUTol)
			}
		})
	}
}

// peakedTol bounds |the CPU path's mean NLL - the float64 reference's| on the
// peaked model: f32 arithmetic over a tiny model's windows (1e-7 is typical).
const peakedTol = 2e-6

// batchMates: a batch's sum equals the sum of its sequences scored alone
// (BatchTol relative), for mates of other lengths and padding; so a target's
// NLL does not depend on what shares its batch.
func (s Suite) batchMates(t *testing.T) {
	m := synth.Peaked(synth.TinyConfig(), 7)
	b := s.open(t, m)
	r := rand.New(rand.NewPCG(4, 4))
	var seqs []model.Sequence
	for _, n := range []int{m.Config.NPositions, 5, 17, m.Config.NPositions - 1, 2} {
		toks := make([]int32, n)
		for i := range toks {
			toks[i] = int32(r.IntN(m.Config.VocabSize))
		}
		seqs = append(seqs, model.Sequence{Tokens: toks, First: 1 + r.IntN(n)})
	}
	ctx := context.Background()
	score := func(ss []model.Sequence) model.LossSums {
		t.Helper()
		w := 0
		for _, q := range ss {
			w = max(w, len(q.Tokens))
		}
		f := b.Feed()
		for _, fw := range f.Widths { // the smallest bucket that holds the batch, as Evaluate pads
			if fw >= w {
				w = fw
				break
			}
		}
		p, err := b.Submit(ctx, pipeline.Batch{Seqs: ss, Width: w})
		if err != nil {
			t.Fatal(err)
		}
		sums, err := p.Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return sums
	}
	all := score(seqs)
	var alone model.LossSums
	for _, q := range seqs {
		alone.Add(score([]model.Sequence{q}))
	}
	if all.Count != alone.Count {
		t.Fatalf("batch scored %d targets, alone %d", all.Count, alone.Count)
	}
	if a, b := all.Sum.Float64(), alone.Sum.Float64(); !(math.Abs(a-b) <= s.BatchTol*b) {
		t.Errorf("batch NLL sum %.9g, sequences alone %.9g: differ by %.2g (relative %.2g > %.0e)",
			a, b, math.Abs(a-b), math.Abs(a-b)/b, s.BatchTol)
	}
}

// badInput: ids outside the vocabulary, sequences longer than the positions,
// an empty batch and a bad first target are refused by Submit with messages
// that say what is wrong.
func (s Suite) badInput(t *testing.T) {
	m := synth.Peaked(synth.TinyConfig(), 7)
	b := s.open(t, m)
	P, V := m.Config.NPositions, m.Config.VocabSize
	long := make([]int32, P+1)
	for _, c := range []struct {
		name  string
		batch pipeline.Batch
		want  string
	}{
		{"id too large", pipeline.Batch{Seqs: []model.Sequence{{Tokens: []int32{1, int32(V)}, First: 1}}, Width: 2}, "outside the vocabulary"},
		{"negative id", pipeline.Batch{Seqs: []model.Sequence{{Tokens: []int32{-1, 2}, First: 1}}, Width: 2}, "outside the vocabulary"},
		{"too long", pipeline.Batch{Seqs: []model.Sequence{{Tokens: long, First: 1}}, Width: P + 1}, "at most"},
		{"empty batch", pipeline.Batch{Width: 4}, "empty batch"},
		{"first target", pipeline.Batch{Seqs: []model.Sequence{{Tokens: []int32{1, 2}, First: 0}}, Width: 2}, "first target"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := b.Submit(context.Background(), c.batch)
			if err == nil {
				_, err = p.Wait(context.Background())
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one saying %q", err, c.want)
			}
		})
	}
	// The backend still works after refusing.
	p, err := b.Submit(context.Background(), pipeline.Batch{Seqs: []model.Sequence{{Tokens: []int32{1, 2, 3}, First: 1}}, Width: 3})
	if err == nil {
		_, err = p.Wait(context.Background())
	}
	if err != nil {
		t.Errorf("after bad input: %v", err)
	}
}

// cancel: Evaluate with a cancelled context stops with context.Canceled, and
// one cancelled after the first batch stops too; the backend works afterwards.
func (s Suite) cancel(t *testing.T) {
	m := synth.Peaked(synth.TinyConfig(), 7)
	b := s.open(t, m)
	toks := peakedCorpus(12, m.Config, 8)
	ec := pipeline.EvalConfig{Tokens: toks, Ctx: m.Config.NPositions, BatchTokens: m.Config.NPositions, VocabSize: m.Config.VocabSize}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := pipeline.Evaluate(ctx, b, ec); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before: err = %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	ec.Progress = func(p pipeline.Progress) {
		if p.Scored > 0 { // a batch has finished
			cancel()
		}
	}
	if _, err := pipeline.Evaluate(ctx, b, ec); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled during: err = %v, want context.Canceled", err)
	}
	ec.Progress = nil
	if _, err := pipeline.Evaluate(context.Background(), b, ec); err != nil {
		t.Errorf("after cancellation: %v", err)
	}
}

// TokenFile returns case c's input as an llm.c token file (version 1: a
// 256-int32 header of magic 20240520, version and count, then uint16 ids): the
// leading NTokens ids for stream and strided cases, and every document after an
// <|endoftext|> for documents cases, which is how a token file separates them.
// It lets an end-to-end test feed a golden case to the CLI or the library.
func (g Golden) TokenFile(c GoldenCase) []byte {
	ids := g.Tokens[:c.NTokens]
	if pipeline.Mode(c.Mode) == pipeline.ModeDocuments {
		ids = nil
		for _, d := range g.Documents {
			ids = append(append(ids, g.EOT), d...)
		}
	}
	out := make([]byte, 256*4, 256*4+2*len(ids))
	binary.LittleEndian.PutUint32(out[0:], 20240520)
	binary.LittleEndian.PutUint32(out[4:], 1)
	binary.LittleEndian.PutUint32(out[8:], uint32(len(ids)))
	for _, id := range ids {
		out = binary.LittleEndian.AppendUint16(out, uint16(id))
	}
	return out
}

// GoldenTol is the largest difference in mean NLL (nats) allowed between the
// float32 CPU forward and the float64 reference of the GPT-2 goldens.
const GoldenTol = 1e-5

// GoldenDir is the folder of the GPT-2 goldens, testdata/golden at the
// module's root: the first folder upward from the working directory (a
// test's package folder, as go test and scripts/device-check.sh run test
// binaries) that holds go.mod. Without one it is the relative path from a
// package one level down.
func GoldenDir() string {
	dir, err := os.Getwd()
	for err == nil {
		if _, serr := os.Stat(filepath.Join(dir, "go.mod")); serr == nil {
			return filepath.Join(dir, "testdata", "golden")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return filepath.Join("..", "testdata", "golden")
}

// LlamaGoldenVariants are the folders under GoldenDir()/llama that
// testdata/golden/gen_llama_golden.py writes; each must be there.
var LlamaGoldenVariants = []string{"llama2", "llama3", "mistral", "qwen2", "qwen3"}

// EOT is GPT-2's <|endoftext|>, the separator the per-token tests use.
const EOT = 50256

// RandomDocs is separate documents of random ids below 300, one of each
// length in lens (0 makes an empty one; longer than a window is fine).
func RandomDocs(seed uint64, lens ...int) *corpus.Tokens {
	r := rand.New(rand.NewPCG(seed, 9))
	out := &corpus.Tokens{Separated: true}
	for _, n := range lens {
		d := make([]int32, n)
		for i := range d {
			d[i] = int32(r.IntN(300))
		}
		out.Docs = append(out.Docs, d)
	}
	return out
}
