package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/model"
)

// bigramNLL is the fake model's NLL of target t after prev: it depends on both,
// so a target scored with the wrong prefix or the wrong target shows in the sums.
func bigramNLL(prev, t int32) float64 {
	return 0.25 + float64((int64(prev)*31+int64(t)*17)%97)/16
}

// fakeLen is the fake tokenizer's byte length of a token.
func fakeLen(id int32) int { return int(id%4) + 1 }

// fakeBackend scores with bigramNLL and records what it was given.
type fakeBackend struct {
	t           *testing.T
	ctx         int // longest sequence allowed
	batchTokens int
	batches     [][]model.Sequence
	onCall      func(call int) error // may fail or cancel
	miscount    int                  // added to Count, to fake a broken backend
	nan         bool                 // return a NaN sum, as a broken model would
	feedTokens  int                  // Feed().BatchTokens
	widths      []int                // Feed().Widths
	inFlight    int                  // Feed().InFlight
	widthsSeen  []int                // Batch.Width of each batch
}

func (f *fakeBackend) Name() string { return "fake" }

func (f *fakeBackend) Feed() Feed {
	return Feed{BatchTokens: f.feedTokens, Widths: f.widths, InFlight: f.inFlight}
}

func (f *fakeBackend) Close() error { return nil }

func (f *fakeBackend) Describe() BackendInfo {
	return BackendInfo{Precision: "f32", Device: DeviceInfo{Kind: "cpu", Name: "fake"}}
}

func (f *fakeBackend) Submit(ctx context.Context, b Batch) (Pending, error) {
	s, err := f.loss(ctx, b)
	if err != nil {
		return nil, err
	}
	return Done{Sums: s}, nil
}

func (f *fakeBackend) loss(ctx context.Context, b Batch) (model.LossSums, error) {
	seqs := b.Seqs
	f.batches = append(f.batches, seqs)
	f.widthsSeen = append(f.widthsSeen, b.Width)
	if f.onCall != nil {
		if err := f.onCall(len(f.batches)); err != nil {
			return model.LossSums{}, err
		}
	}
	if len(seqs) == 0 {
		f.t.Errorf("empty batch")
	}
	width := 0
	for _, s := range seqs {
		width = max(width, len(s.Tokens))
	}
	if b.Width < width {
		f.t.Errorf("batch width %d, longest sequence %d", b.Width, width)
	}
	width = b.Width
	if len(seqs) > 1 && len(seqs)*width > f.batchTokens {
		f.t.Errorf("batch of %d sequences of up to %d tokens exceeds %d tokens", len(seqs), width, f.batchTokens)
	}
	var s model.LossSums
	for _, q := range seqs {
		if q.First < 1 || len(q.Tokens) > f.ctx {
			f.t.Errorf("bad sequence: First %d, %d tokens, ctx %d", q.First, len(q.Tokens), f.ctx)
		}
		for j := q.First; j < len(q.Tokens); j++ {
			v := bigramNLL(q.Tokens[j-1], q.Tokens[j])
			s.AddNLL(v)
		}
	}
	s.Count += f.miscount
	if f.nan {
		s.Sum.Add(math.NaN())
	}
	return s, nil
}

// expect is the independent expectation: the per-target NLLs and bytes of the
// targets the method must score.
type expect struct {
	nll   []float64
	bytes int
}

func (e *expect) add(prev, t int32) {
	e.nll = append(e.nll, bigramNLL(prev, t))
	e.bytes += fakeLen(t)
}

// addSpecial is add for a target that the tokenizer or the stream added (a
// separator, a BOS or EOS): it stands for no byte of the text.
func (e *expect) addSpecial(prev, t int32) {
	e.nll = append(e.nll, bigramNLL(prev, t))
}

// check compares r with e, the metrics computed the plain way (two-pass variance).
func (e *expect) check(t *testing.T, r *Result) {
	t.Helper()
	n := float64(len(e.nll))
	sum := 0.0
	for _, v := range e.nll {
		sum += v
	}
	mean := sum / n
	ss := 0.0
	for _, v := range e.nll {
		ss += (v - mean) * (v - mean)
	}
	stderr := math.Sqrt(ss/(n-1)) / math.Sqrt(n)
	if r.Tokens != len(e.nll) {
		t.Errorf("tokens %d, want %d", r.Tokens, len(e.nll))
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"nll_sum", r.NLLSum, sum},
		{"mean_nll", r.MeanNLL, mean},
		{"ppl", r.PPL, math.Exp(mean)},
		{"bits_per_byte", r.BitsPerByte, sum / math.Ln2 / float64(e.bytes)},
		{"stderr", r.StdErr, stderr},
	} {
		if math.Abs(c.got-c.want) > 1e-9*math.Abs(c.want) {
			t.Errorf("%s = %.12g, want %.12g", c.name, c.got, c.want)
		}
	}
	if r.Device != "fake" || r.Seconds <= 0 || r.TokensPerSecond <= 0 {
		t.Errorf("device %q, seconds %g, tokens/s %g", r.Device, r.Seconds, r.TokensPerSecond)
	}
}

func randomIDs(rng *rand.Rand, n int) []int32 {
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = rng.Int32N(500)
	}
	return ids
}

func TestEvaluateStream(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ids := randomIDs(rng, 1000)
	// Stream at ctx 64 scores every index except the window starts 0, 64, 128, ...
	var e expect
	for j := 1; j < len(ids); j++ {
		if j%64 != 0 {
			e.add(ids[j-1], ids[j])
		}
	}
	f := &fakeBackend{t: t, ctx: 64, batchTokens: 200}
	r, err := Evaluate(context.Background(), f, EvalConfig{
		Model: "m", Data: "d", Tokens: &corpus.Tokens{Docs: [][]int32{ids}}, Ctx: 64, Stride: 7,
		BatchTokens: 200, TokenLen: fakeLen, VocabSize: 500,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.check(t, r)
	if r.Mode != "stream" || r.Ctx != 64 || r.Stride != 64 || r.InputTokens != 1000 || r.Model != "m" || r.Data != "d" {
		t.Errorf("result header %+v", r)
	}
	// 15 full windows of 64 and one of 40: batches of at most 3 windows of 64.
	var sizes []int
	for _, b := range f.batches {
		sizes = append(sizes, len(b))
	}
	if want := []int{3, 3, 3, 3, 3, 1}; !slices.Equal(sizes, want) {
		t.Errorf("batch sizes %v, want %v", sizes, want)
	}
	if last := f.batches[len(f.batches)-1][0]; len(last.Tokens) != 1000-15*64 {
		t.Errorf("last batch holds a window of %d tokens, want the short one", len(last.Tokens))
	}
}

func TestEvaluateStrided(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ids := randomIDs(rng, 777)
	var e expect
	for j := 1; j < len(ids); j++ { // stride < ctx: every target once
		e.add(ids[j-1], ids[j])
	}
	f := &fakeBackend{t: t, ctx: 50, batchTokens: DefaultBatchTokens}
	r, err := Evaluate(context.Background(), f, EvalConfig{
		Tokens: &corpus.Tokens{Docs: [][]int32{ids}}, Mode: ModeStrided, Ctx: 50, TokenLen: fakeLen,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.check(t, r)
	if r.Stride != 25 || r.Mode != "strided" {
		t.Errorf("stride %d mode %q, want the default ctx/2 = 25, strided", r.Stride, r.Mode)
	}
}

func TestEvaluateDocuments(t *testing.T) {
	const eot = 499
	rng := rand.New(rand.NewPCG(5, 6))
	var docs [][]int32
	for _, n := range []int{5, 0, 1, 40, 90, 17, 3} {
		docs = append(docs, randomIDs(rng, n))
	}
	for _, max := range []int{0, 60, 100000} {
		// MaxTokens 60 keeps 5 + 1 + 40 ids and 14 of the fourth non-empty document.
		var e expect
		left := max
		if left == 0 {
			left = math.MaxInt
		}
		input := 0
		for _, d := range docs {
			prev := int32(eot)
			for _, id := range d {
				if left == 0 {
					break
				}
				e.add(prev, id)
				prev = id
				left--
				input++
			}
		}
		f := &fakeBackend{t: t, ctx: 32, batchTokens: 100}
		r, err := Evaluate(context.Background(), f, EvalConfig{
			Tokens: &corpus.Tokens{Docs: docs, Separated: true}, EOT: eot, Mode: ModeDocuments,
			Ctx: 32, Stride: 8, BatchTokens: 100, MaxTokens: max, TokenLen: fakeLen, VocabSize: 500,
		})
		if err != nil {
			t.Fatal(err)
		}
		e.check(t, r)
		if r.InputTokens != input || r.Stride != 8 {
			t.Errorf("max %d: input tokens %d, stride %d; want %d, 8", max, r.InputTokens, r.Stride, input)
		}
	}
}

func TestEvaluateSeparatedStream(t *testing.T) {
	// Separate documents in stream mode: each preceded by eot, then windows of ctx;
	// MaxTokens cuts the stream (eot ids included).
	const eot = 7
	docs := [][]int32{{1, 2, 3}, {4, 5}, {6, 8, 9, 10}}
	stream := []int32{eot, 1, 2, 3, eot, 4, 5, eot, 6, 8, 9, 10}
	if got := (&corpus.Tokens{Docs: docs, Separated: true}).Stream(eot); !slices.Equal(got, stream) {
		t.Fatalf("Stream = %v, want %v", got, stream)
	}
	var e expect
	for j := 1; j < 11; j++ { // MaxTokens 11, ctx 4: windows [0,4) [4,8) [8,11)
		switch {
		case j%4 == 0:
		case stream[j] == eot: // the separator is no byte of the text
			e.addSpecial(stream[j-1], stream[j])
		default:
			e.add(stream[j-1], stream[j])
		}
	}
	f := &fakeBackend{t: t, ctx: 4, batchTokens: 8}
	r, err := Evaluate(context.Background(), f, EvalConfig{
		Tokens: &corpus.Tokens{Docs: docs, Separated: true}, EOT: eot, Ctx: 4, BatchTokens: 8, MaxTokens: 11, TokenLen: fakeLen,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.check(t, r)
	if r.InputTokens != 11 {
		t.Errorf("input tokens %d, want 11", r.InputTokens)
	}
}

func TestTokensDocuments(t *testing.T) {
	const eot = 0
	// A continuous stream (an llm.c token file) is cut at its eot ids.
	tk := &corpus.Tokens{Docs: [][]int32{{0, 1, 2, 0, 0, 3, 0, 4, 5}}}
	want := [][]int32{{1, 2}, {3}, {4, 5}}
	if got := tk.Documents(eot); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("Documents = %v, want %v", got, want)
	}
	if got := tk.Stream(eot); !slices.Equal(got, tk.Docs[0]) {
		t.Errorf("Stream of a continuous text = %v, want it unchanged", got)
	}
	sep := &corpus.Tokens{Docs: [][]int32{{1}, {}, {2, 3}}, Separated: true}
	if got := sep.Documents(eot); !slices.EqualFunc(got, [][]int32{{1}, {}, {2, 3}}, slices.Equal) {
		t.Errorf("Documents of separated = %v: want the empty one kept, so that the third is document 2", got)
	}
}

func TestEvaluateProgress(t *testing.T) {
	ids := randomIDs(rand.New(rand.NewPCG(7, 8)), 300)
	var calls []Progress
	f := &fakeBackend{t: t, ctx: 16, batchTokens: 40}
	r, err := Evaluate(context.Background(), f, EvalConfig{
		Tokens: &corpus.Tokens{Docs: [][]int32{ids}}, Ctx: 16, BatchTokens: 40,
		Progress: func(p Progress) { calls = append(calls, p) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != len(f.batches)+1 {
		t.Fatalf("%d progress calls for %d batches", len(calls), len(f.batches))
	}
	done := 0
	for i, c := range calls {
		if i > 0 {
			for _, s := range f.batches[i-1] {
				done += s.Scored()
			}
		}
		if c.Done != done || c.Total != r.Tokens || c.Scored != done {
			t.Errorf("progress call %d = %+v, want %d of %d done and scored", i, c, done, r.Tokens)
		}
	}
	if last := calls[len(calls)-1]; last.NLLSum != r.NLLSum || last.MeanNLL() != r.MeanNLL {
		t.Errorf("last progress %+v (mean %v), want the result's sum %v and mean %v", last, last.MeanNLL(), r.NLLSum, r.MeanNLL)
	}
	if calls[0].MeanNLL() != 0 {
		t.Errorf("mean NLL %v before any batch, want 0", calls[0].MeanNLL())
	}
	if r.BitsPerByte != 0 {
		t.Errorf("bits per byte %g without TokenLen, want 0", r.BitsPerByte)
	}
}

func TestEvaluateCancel(t *testing.T) {
	ids := randomIDs(rand.New(rand.NewPCG(9, 10)), 300)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fakeBackend{t: t, ctx: 16, batchTokens: 32, onCall: func(int) error { cancel(); return nil }}
	_, err := Evaluate(ctx, f, EvalConfig{Tokens: &corpus.Tokens{Docs: [][]int32{ids}}, Ctx: 16, BatchTokens: 32})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if len(f.batches) != 1 {
		t.Errorf("%d batches scored after cancellation, want 1", len(f.batches))
	}
}

func TestEvaluateBackendErrors(t *testing.T) {
	ids := randomIDs(rand.New(rand.NewPCG(11, 12)), 100)
	cfg := EvalConfig{Data: "corpus.txt", Tokens: &corpus.Tokens{Docs: [][]int32{ids}}, Ctx: 16}
	boom := errors.New("device lost")
	f := &fakeBackend{t: t, ctx: 16, batchTokens: DefaultBatchTokens, onCall: func(int) error { return boom }}
	if _, err := Evaluate(context.Background(), f, cfg); !errors.Is(err, boom) || !strings.Contains(err.Error(), "corpus.txt") {
		t.Errorf("err = %v, want it to wrap %v and name the corpus", err, boom)
	}
	f = &fakeBackend{t: t, ctx: 16, batchTokens: DefaultBatchTokens, nan: true}
	if _, err := Evaluate(context.Background(), f, cfg); err == nil || !strings.Contains(err.Error(), "not finite") {
		t.Errorf("err = %v, want a non-finite NLL error", err)
	}
	f = &fakeBackend{t: t, ctx: 16, batchTokens: DefaultBatchTokens, miscount: 1}
	if _, err := Evaluate(context.Background(), f, cfg); err == nil || !strings.Contains(err.Error(), "scored") {
		t.Errorf("err = %v, want a miscount error", err)
	}
}

func TestEvaluateBadConfig(t *testing.T) {
	ids := []int32{1, 2, 3, 4, 5}
	tk := &corpus.Tokens{Docs: [][]int32{ids}}
	for _, c := range []struct {
		cfg  EvalConfig
		want string
	}{
		{EvalConfig{Ctx: 4}, "no tokens"},
		{EvalConfig{Tokens: tk, Ctx: 1}, "context length 1"},
		{EvalConfig{Tokens: tk, Ctx: 0}, "context length 0"},
		{EvalConfig{Tokens: tk, Ctx: 4, Mode: ModeStrided, Stride: 5}, "stride 5"},
		// Documents mode predicts every token: a stride of ctx would skip some.
		{EvalConfig{Tokens: tk, Ctx: 4, Mode: ModeDocuments, Stride: 4, EOT: 0}, "stride 4: documents mode predicts every token"},
		{EvalConfig{Tokens: tk, Ctx: 4, Mode: "rolling"}, "unknown evaluation mode"},
		{EvalConfig{Tokens: tk, Ctx: 4, MaxTokens: -1}, "max tokens"},
		{EvalConfig{Tokens: tk, Ctx: 4, VocabSize: 5}, "id 5 is not below the vocabulary size 5"},
		{EvalConfig{Tokens: tk, Ctx: 4, Mode: ModeDocuments, VocabSize: 6, EOT: 6}, "end-of-text id 6"},
		{EvalConfig{Tokens: tk, Ctx: 4, MaxTokens: 1}, "nothing to score"},
		{EvalConfig{Tokens: &corpus.Tokens{Docs: [][]int32{{}}}, Ctx: 4, Mode: ModeDocuments}, "nothing to score"},
	} {
		f := &fakeBackend{t: t, ctx: 4}
		_, err := Evaluate(context.Background(), f, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.cfg, err, c.want)
		}
		if len(f.batches) != 0 {
			t.Errorf("%+v: backend called despite a bad config", c.cfg)
		}
	}
	if _, err := Evaluate(context.Background(), nil, EvalConfig{Tokens: tk, Ctx: 4}); err == nil {
		t.Error("nil backend accepted")
	}
}

// TestEvaluateLongestFirst: documents are batched longest first, so batch
// widths never grow (the fake backend's sums are checked by other tests).
func TestEvaluateLongestFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	var docs [][]int32
	for range 30 {
		docs = append(docs, randomIDs(rng, 1+rng.IntN(40)))
	}
	cfg := EvalConfig{Tokens: &corpus.Tokens{Docs: docs, Separated: true}, Mode: ModeDocuments, Ctx: 16, Stride: 4, BatchTokens: 64}
	f := &fakeBackend{t: t, ctx: 16, batchTokens: 64}
	if _, err := Evaluate(context.Background(), f, cfg); err != nil {
		t.Fatal(err)
	}
	prev := math.MaxInt
	for _, b := range f.batches {
		if w := len(b[0].Tokens); w > prev {
			t.Errorf("batch of width %d after one of %d", w, prev)
		} else {
			prev = w
		}
	}
	if len(f.batches) < 2 {
		t.Errorf("%d batches: the test no longer compares widths", len(f.batches))
	}
}

func TestResultJSON(t *testing.T) {
	data, err := json.Marshal(Result{})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"bits_per_byte", "byte_perplexity", "ctx", "data", "device", "format", "format_version", "input_tokens", "mean_nll", "mode", "model", "nll_sum",
		"nll_sum_exact", "nll_sumsq", "nll_sumsq_exact", "ppl", "ppl_stderr", "samples", "scored_bytes", "seconds", "stderr", "stride", "tokens", "tokens_per_second"}
	if !slices.Equal(keys, want) {
		t.Errorf("JSON keys %v, want %v", keys, want)
	}
	if !strings.HasPrefix(string(data), `{"format":"wgpu-eval result","format_version":1,"model":`) {
		t.Errorf("the JSON does not start with its mark: %.80s", data)
	}
}

func TestStdErr(t *testing.T) {
	// NLLs 1, 2, 3, 4: mean 2.5, sample variance 5/3, stderr sqrt(5/3)/2.
	if got, want := StdErr(10, 30, 4), math.Sqrt(5.0/3)/2; math.Abs(got-want) > 1e-15 {
		t.Errorf("stdErr = %g, want %g", got, want)
	}
	if got := StdErr(3, 9, 1); got != 0 {
		t.Errorf("stdErr of one target = %g, want 0", got)
	}
	if got := StdErr(3, 3-1e-15, 3); got != 0 { // rounding below zero
		t.Errorf("stdErr of a negative rounding = %g, want 0", got)
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 tokens", 1: "1 token", 2: "2 tokens"} {
		if got := Count(n, "token"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

// slowBackend is a backend whose batches finish only when released, as a
// slow device's would: Submit returns at once.
type slowBackend struct {
	fakeBackend
	release   chan struct{}
	two       chan struct{} // closed at the second Submit
	submitted int
}

type slowPending struct {
	release chan struct{}
	sums    model.LossSums
}

func (p slowPending) Wait(ctx context.Context) (model.LossSums, error) {
	if err := ctx.Err(); err != nil {
		return model.LossSums{}, err
	}
	<-p.release // a device does not stop for ctx
	return p.sums, nil
}

func (f *slowBackend) Submit(ctx context.Context, b Batch) (Pending, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := f.loss(ctx, b)
	if err != nil {
		return nil, err
	}
	if f.submitted++; f.submitted == 2 {
		close(f.two)
	}
	return slowPending{f.release, s}, nil
}

// cancelWithTwoInFlight evaluates a stream of n token ids in windows of 16,
// two windows a batch, on a slow device, and cancels once two batches are
// submitted (Evaluate then waits for the first), letting the batches end
// after the cancel.
func cancelWithTwoInFlight(t *testing.T, n int) (*slowBackend, *Result, error) {
	toks := &corpus.Tokens{Docs: [][]int32{make([]int32, n)}}
	for i := range toks.Docs[0] {
		toks.Docs[0][i] = int32(i % 50)
	}
	b := &slowBackend{fakeBackend: fakeBackend{t: t, ctx: 16, batchTokens: 32, inFlight: 2}, release: make(chan struct{}), two: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	var got *Result
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		got, err = Evaluate(ctx, b, EvalConfig{Tokens: toks, Mode: ModeStream, Ctx: 16, Stride: 16, VocabSize: 50, BatchTokens: 32})
	}()
	<-b.two
	cancel()
	close(b.release)
	<-done
	return b, got, err
}

// TestCancelCountsBatchesInFlight: cancelled while two batches are on a slow
// device, Evaluate submits nothing more, and its partial result counts both
// in-flight batches once they end (their work is done anyway), marked
// interrupted.
func TestCancelCountsBatchesInFlight(t *testing.T) {
	b, got, err := cancelWithTwoInFlight(t, 400)
	if !errors.Is(err, context.Canceled) || got == nil || !got.Interrupted {
		t.Fatalf("err = %v, result %+v", err, got)
	}
	want := 0
	for _, seqs := range b.batches[:2] {
		for _, s := range seqs {
			want += s.Scored()
		}
	}
	if len(b.batches) != 2 || got.Tokens != want {
		t.Errorf("%d batches submitted, %d tokens counted; want 2 batches, their %d tokens", len(b.batches), got.Tokens, want)
	}
}

// TestCancelAfterLastBatchIsComplete: a cancel that comes once the last
// batch is on the device leaves nothing out: the batches in flight are
// counted and the result is complete, not interrupted, with no error.
func TestCancelAfterLastBatchIsComplete(t *testing.T) {
	// Four windows of 16, two a batch: the second batch is the last.
	b, got, err := cancelWithTwoInFlight(t, 64)
	if err != nil || got == nil {
		t.Fatalf("err = %v, result %+v; want the complete result", err, got)
	}
	if got.Interrupted || got.TotalTokens != 0 || got.Tokens != 60 || got.Samples != 4 || len(b.batches) != 2 {
		t.Errorf("result %+v after %d batches: want a complete run of 4 windows, 60 targets, not interrupted", got, len(b.batches))
	}
}

// TestCancelInSubmitCountsBatchesInFlight: a cancel that a backend's Submit
// reports (its context done) while an earlier batch is in flight still
// counts that batch, as a cancel between batches does.
func TestCancelInSubmitCountsBatchesInFlight(t *testing.T) {
	toks := &corpus.Tokens{Docs: [][]int32{make([]int32, 400)}}
	for i := range toks.Docs[0] {
		toks.Docs[0][i] = int32(i % 50)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := &slowBackend{fakeBackend: fakeBackend{t: t, ctx: 16, batchTokens: 32, inFlight: 2}, release: make(chan struct{}), two: make(chan struct{})}
	close(b.release) // batches end as soon as they are waited for
	b.onCall = func(call int) error {
		if call == 2 {
			cancel()
			return ctx.Err()
		}
		return nil
	}
	got, err := Evaluate(ctx, b, EvalConfig{Tokens: toks, Mode: ModeStream, Ctx: 16, VocabSize: 50, BatchTokens: 32})
	if !errors.Is(err, context.Canceled) || got == nil || !got.Interrupted {
		t.Fatalf("err = %v, result %+v; want the interrupted result", err, got)
	}
	want := 0
	for _, s := range b.batches[0] {
		want += s.Scored()
	}
	if got.Tokens != want || got.Samples != len(b.batches[0]) {
		t.Errorf("%d tokens of %d samples counted; want the first batch's %d tokens, %d samples", got.Tokens, got.Samples, want, len(b.batches[0]))
	}
}

// TestBitsPerByteCountsTextOnly: the bytes of bits per byte are the text's,
// in every mode: a token the tokenizer or the stream added (a separator
// before a document, Llama's <s> before and </s> after a text) stands for no
// byte of it, while the same id encoded from the text (Qwen reads
// <|endoftext|> written in a text as that token) counts its bytes.
func TestBitsPerByteCountsTextOnly(t *testing.T) {
	const bos, eos = 1, 2 // fakeLen gives them 2 and 3 bytes
	text := func(id int32) bool { return id >= 10 }
	for _, c := range []struct {
		name string
		toks *corpus.Tokens
		sep  int32
		// textAt says whether the stream's (or, in documents mode, the
		// document's) id at position i came from the text.
		streamText func(stream []int32, i int) bool
	}{
		{"llama lead and trail, separated", &corpus.Tokens{Docs: [][]int32{{10, 11, 12}, {}, {13, 14}, {15}}, Separated: true,
			Lead: []int32{bos}, Trail: []int32{eos}}, bos, func(s []int32, i int) bool { return text(s[i]) }},
		{"llama lead and trail, one text", &corpus.Tokens{Docs: [][]int32{{10, 11, 12, 13, 14, 15, 16}},
			Lead: []int32{bos}, Trail: []int32{eos}}, bos, func(s []int32, i int) bool { return text(s[i]) }},
		{"separator from the text", &corpus.Tokens{Docs: [][]int32{{10, bos, 11}, {12, 13, bos}}, Separated: true}, bos,
			func(s []int32, i int) bool { return i != 0 && i != 4 }}, // stream: bos 10 bos 11 | bos 12 13 bos
		// An llm.c token file: its separators were put between documents, as
		// the bos of the cases above, not encoded from text.
		{"token file", &corpus.Tokens{Docs: [][]int32{{bos, 10, 11, bos, 12, 13, 14, bos, bos, 15, 16}}, SepAdded: true}, bos,
			func(s []int32, i int) bool { return text(s[i]) }},
	} {
		stream := c.toks.Stream(c.sep)
		for _, mode := range []Mode{ModeStream, ModeStrided} {
			for _, bosWin := range []bool{false, true} {
				var e expect
				// Every target of the stream once (ctx 4, stride 2 covers all
				// but the first; with a BOS in every window, the first too
				// unless it is the BOS).
				for j := range stream {
					first := 1
					if bosWin && stream[0] != c.sep {
						first = 0
					}
					if j < first || mode == ModeStream && !bosWin && j%4 == 0 || mode == ModeStream && bosWin && skipsBOSStream(stream, c.sep, j) {
						continue
					}
					if c.streamText(stream, j) {
						e.bytes += fakeLen(stream[j])
					}
					e.nll = append(e.nll, 0)
				}
				f := &fakeBackend{t: t, ctx: 4, batchTokens: 8}
				r, err := Evaluate(context.Background(), f, EvalConfig{Tokens: c.toks, EOT: c.sep, Mode: mode, Ctx: 4, Stride: 2,
					BOSEachWindow: bosWin, BatchTokens: 8, TokenLen: fakeLen})
				if err != nil {
					t.Fatal(err)
				}
				if r.Tokens != len(e.nll) || r.ScoredBytes != e.bytes {
					t.Errorf("%s, %s, BOS each window %v: %d targets of %d bytes, want %d of %d", c.name, mode, bosWin, r.Tokens, r.ScoredBytes, len(e.nll), e.bytes)
				}
			}
		}
		// Documents: every id of each document is a target; the text's count.
		docs := c.toks.Documents(c.sep)
		want, targets := 0, 0
		var records []TokenNLL
		for i, d := range docs {
			for j, id := range d {
				records = append(records, TokenNLL{Doc: i, Pos: j, Token: id})
				targets++
				if text(id) || c.name == "separator from the text" {
					want += fakeLen(id)
				}
			}
		}
		for _, bosWin := range []bool{false, true} {
			f := &fakeBackend{t: t, ctx: 4, batchTokens: 8}
			r, err := Evaluate(context.Background(), f, EvalConfig{Tokens: c.toks, EOT: c.sep, Mode: ModeDocuments, Ctx: 4, Stride: 2,
				BOSEachWindow: bosWin, BatchTokens: 8, TokenLen: fakeLen})
			if err != nil {
				t.Fatal(err)
			}
			if r.Tokens != targets || r.ScoredBytes != want {
				t.Errorf("%s, documents, BOS each window %v: %d targets of %d bytes, want %d of %d", c.name, bosWin, r.Tokens, r.ScoredBytes, targets, want)
			}
		}
		// The per-document bytes (RecordBytes) add up to the run's.
		rb, n := RecordBytes(c.toks, c.sep, fakeLen), 0
		for _, rec := range records {
			n += rb(rec)
		}
		if n != want {
			t.Errorf("%s: RecordBytes adds up to %d bytes, want %d", c.name, n, want)
		}
	}
}

// skipsBOSStream reports whether stream mode with a BOS in every window (ctx
// 4: the BOS and 3 ids) leaves position j unscored: only a leading sep,
// which is the first window's BOS.
func skipsBOSStream(stream []int32, sep int32, j int) bool { return j == 0 && stream[0] == sep }
