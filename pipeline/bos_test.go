package pipeline

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/model"
)

// bosID is the BOS of the hand-built windows below.
const bosID = 99

// win is a window as written out by hand: its tokens, First, and where its
// first target is.
type win struct {
	tokens   []int32
	first    int
	doc, pos int
}

// planned windows of cfg in corpus order (plan sorts them longest first).
func plannedWindows(t *testing.T, cfg EvalConfig) []win {
	t.Helper()
	samples, _, err := plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out []win
	for _, s := range samples {
		out = append(out, win{s.Tokens, s.First, s.Doc, s.Pos})
	}
	slices.SortFunc(out, func(a, b win) int { return cmp.Or(cmp.Compare(a.doc, b.doc), cmp.Compare(a.pos, b.pos)) })
	return out
}

// TestBOSWindowsByHand: with BOSEachWindow the windows of every mode are
// exactly the ones written out here by hand from the definition: the BOS,
// then up to ctx-1 corpus tokens; every corpus token a target once, the
// corpus's first included; a stream's own leading BOS not doubled.
func TestBOSWindowsByHand(t *testing.T) {
	stream := func(ids ...int32) *corpus.Tokens { return &corpus.Tokens{Docs: [][]int32{ids}} }
	for _, c := range []struct {
		name        string
		toks        *corpus.Tokens
		mode        Mode
		ctx, stride int
		want        []win
	}{
		{"stream", stream(1, 2, 3, 4, 5, 6, 7), ModeStream, 4, 0, []win{
			{[]int32{99, 1, 2, 3}, 1, 0, 0},
			{[]int32{99, 4, 5, 6}, 1, 0, 3},
			{[]int32{99, 7}, 1, 0, 6}, // the last, short window counts, even with one token
		}},
		{"stream ctx 2", stream(1, 2, 3), ModeStream, 2, 0, []win{
			{[]int32{99, 1}, 1, 0, 0},
			{[]int32{99, 2}, 1, 0, 1},
			{[]int32{99, 3}, 1, 0, 2},
		}},
		{"stream that starts with the BOS", stream(99, 1, 2, 3, 4, 5, 6), ModeStream, 4, 0, []win{
			{[]int32{99, 1, 2, 3}, 1, 0, 1}, // the stream's own BOS, as without the option
			{[]int32{99, 4, 5, 6}, 1, 0, 4},
		}},
		{"stream of a Llama 2-style tokenizer", &corpus.Tokens{Docs: [][]int32{{1, 2, 3, 4}}, Lead: []int32{99}}, ModeStream, 3, 0, []win{
			{[]int32{99, 1, 2}, 1, 0, 1},
			{[]int32{99, 3, 4}, 1, 0, 3},
		}},
		{"strided", stream(1, 2, 3, 4, 5, 6, 7), ModeStrided, 4, 2, []win{
			{[]int32{99, 1, 2, 3}, 1, 0, 0},
			{[]int32{99, 3, 4, 5}, 2, 0, 3}, // 3 was scored by the first window: context here
			{[]int32{99, 5, 6, 7}, 2, 0, 5},
		}},
		{"strided, stride ctx-1 is stream", stream(1, 2, 3, 4, 5, 6, 7), ModeStrided, 4, 3, []win{
			{[]int32{99, 1, 2, 3}, 1, 0, 0},
			{[]int32{99, 4, 5, 6}, 1, 0, 3},
			{[]int32{99, 7}, 1, 0, 6},
		}},
		{"strided, stride 1", stream(1, 2, 3, 4, 5), ModeStrided, 3, 1, []win{
			{[]int32{99, 1, 2}, 1, 0, 0},
			{[]int32{99, 2, 3}, 2, 0, 2},
			{[]int32{99, 3, 4}, 2, 0, 3},
			{[]int32{99, 4, 5}, 2, 0, 4},
		}},
		{"documents", &corpus.Tokens{Docs: [][]int32{{1, 2}, {}, {3, 4, 5, 6, 7}}, Separated: true}, ModeDocuments, 4, 2, []win{
			{[]int32{99, 1, 2}, 1, 0, 0},    // fits: as without the option
			{[]int32{99, 3, 4, 5}, 1, 2, 0}, // document 2: the empty one keeps its number
			{[]int32{99, 5, 6, 7}, 2, 2, 3}, // a later window of a long document starts with the BOS too
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := plannedWindows(t, EvalConfig{Tokens: c.toks, EOT: bosID, Mode: c.mode, Ctx: c.ctx, Stride: c.stride,
				BOSEachWindow: true, VocabSize: 100})
			if len(got) != len(c.want) {
				t.Fatalf("%d windows %v, want %d %v", len(got), got, len(c.want), c.want)
			}
			for i, w := range c.want {
				g := got[i]
				if !slices.Equal(g.tokens, w.tokens) || g.first != w.first || g.doc != w.doc || g.pos != w.pos {
					t.Errorf("window %d: %v First %d doc %d pos %d, want %v First %d doc %d pos %d",
						i, g.tokens, g.first, g.doc, g.pos, w.tokens, w.first, w.doc, w.pos)
				}
			}
		})
	}
}

// TestEvaluateBOSEachWindow: on random streams, every target is predicted
// from the token before it in the corpus, or from the BOS where the target
// starts a window (the first window whose ctx-1 corpus tokens reach it,
// windows starting every stride tokens), as computed here from the
// definition; the fake backend's NLL depends on the previous token, so a
// target scored twice, missed or after the wrong token shows in the sums.
func TestEvaluateBOSEachWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		mode        Mode
		n, ctx      int
		stride      int
		leadingBOS  bool
		wantSamples int
	}{
		{ModeStream, 1000, 64, 0, false, 16}, // ceil(1000/63)
		{ModeStream, 1000, 64, 0, true, 16},  // ceil(999/63)
		{ModeStrided, 777, 50, 20, false, 38},
		{ModeStrided, 777, 50, 0, true, 31}, // stride 25
	} {
		ids := randomIDs(rng, c.n)
		ids[0] = 7 // not the BOS
		if c.leadingBOS {
			ids[0] = bosID
		}
		stride := cmp.Or(c.stride, c.ctx/2)
		if c.mode == ModeStream {
			stride = c.ctx - 1
		}
		lead := 0
		if c.leadingBOS {
			lead = 1
		}
		body := ids[lead:]
		var e expect
		for j := range body {
			k := 0
			if j >= c.ctx-1 {
				k = (j-(c.ctx-1))/stride + 1
			}
			prev := bosID
			if j > k*stride {
				prev = int(body[j-1])
			}
			e.add(int32(prev), body[j])
		}
		f := &fakeBackend{t: t, ctx: c.ctx, batchTokens: DefaultBatchTokens}
		r, err := Evaluate(context.Background(), f, EvalConfig{
			Tokens: &corpus.Tokens{Docs: [][]int32{ids}}, EOT: bosID, Mode: c.mode, Ctx: c.ctx, Stride: c.stride,
			BOSEachWindow: true, TokenLen: fakeLen, VocabSize: 500,
		})
		if err != nil {
			t.Fatal(err)
		}
		e.check(t, r)
		if r.Samples != c.wantSamples || r.Stride != stride || !r.BOSEachWindow || r.InputTokens != c.n {
			t.Errorf("%s n %d leading BOS %v: %d samples, stride %d, BOS each window %v, input %d; want %d, %d, true, %d",
				c.mode, c.n, c.leadingBOS, r.Samples, r.Stride, r.BOSEachWindow, r.InputTokens, c.wantSamples, stride, c.n)
		}
	}
}

// TestBOSEachWindowRefusals: a tokenizer without a BOS or <|endoftext|>, a
// stride that would skip tokens, a BOS outside the vocabulary and a corpus
// with nothing after its BOS are refused with the problem named, before the
// backend is called.
func TestBOSEachWindowRefusals(t *testing.T) {
	toks := &corpus.Tokens{Docs: [][]int32{{1, 2, 3, 4, 5}}}
	for _, c := range []struct {
		name string
		cfg  EvalConfig
		want []string
	}{
		{"no BOS", EvalConfig{Tokens: toks, EOT: -1, Ctx: 4}, []string{"BOS", "neither"}},
		{"no BOS, strided", EvalConfig{Tokens: toks, EOT: -1, Mode: ModeStrided, Ctx: 4}, []string{"BOS", "neither"}},
		{"stride ctx", EvalConfig{Tokens: toks, EOT: 9, Mode: ModeStrided, Ctx: 4, Stride: 4}, []string{"stride 4", "between 1 and 3"}},
		{"documents stride ctx", EvalConfig{Tokens: toks, EOT: 9, Mode: ModeDocuments, Ctx: 4, Stride: 4}, []string{"stride 4", "between 1 and 3"}},
		{"ctx 1", EvalConfig{Tokens: toks, EOT: 9, Ctx: 1}, []string{"context length 1"}},
		{"BOS beyond the vocabulary", EvalConfig{Tokens: toks, EOT: 9, Ctx: 4, VocabSize: 9}, []string{"id 9", "vocabulary size 9"}},
		{"only the BOS", EvalConfig{Tokens: &corpus.Tokens{Docs: [][]int32{{9}}}, EOT: 9, Ctx: 4}, []string{"nothing to score", "after its BOS"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.BOSEachWindow = true
			f := &fakeBackend{t: t, ctx: 4}
			_, err := Evaluate(context.Background(), f, c.cfg)
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want one containing %q", err, w)
				}
			}
			if len(f.batches) != 0 {
				t.Error("backend called")
			}
		})
	}
}

// TestBOSEachWindowShards: shards of a run with BOSEachWindow add up to its
// unsharded result exactly, and a resumed one equals it bit for bit
// (runfile's TestMergeRefusesMixedBOS refuses to merge shards that differ in
// the option).
func TestBOSEachWindowShards(t *testing.T) {
	cfg := shardCorpus()
	cfg.BOSEachWindow = true
	whole, err := Evaluate(context.Background(), &fakeBackend{t: t, ctx: 64, batchTokens: 128}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var shards []*Result
	for i := range 3 {
		c := cfg
		c.Shard = Shard{i, 3}
		r, err := Evaluate(context.Background(), &fakeBackend{t: t, ctx: 64, batchTokens: 128}, c)
		if err != nil {
			t.Fatal(err)
		}
		shards = append(shards, r)
	}
	var sums model.LossSums
	for _, r := range shards {
		if !r.BOSEachWindow {
			t.Errorf("shard %v does not record BOS each window", r.Shard)
		}
		sums.Add(r.Sums())
	}
	if sums != whole.Sums() {
		t.Errorf("shards add up to %v, whole %v", sums, whole.Sums())
	}

	var saved *State
	c := cfg
	c.OnBatch = func(s State) error {
		if saved == nil && s.Samples > 3 {
			saved = &s
		}
		return nil
	}
	if _, err := Evaluate(context.Background(), &fakeBackend{t: t, ctx: 64, batchTokens: 128}, c); err != nil || saved == nil {
		t.Fatalf("err %v, state %v", err, saved)
	}
	c.OnBatch, c.Resume = nil, saved
	got, err := Evaluate(context.Background(), &fakeBackend{t: t, ctx: 64, batchTokens: 128}, c)
	if err != nil {
		t.Fatal(err)
	}
	if got.Sums() != whole.Sums() || got.ScoredBytes != whole.ScoredBytes {
		t.Errorf("resumed %v, uninterrupted %v", got.Sums(), whole.Sums())
	}
}
