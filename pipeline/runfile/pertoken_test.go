package runfile_test

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
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

// target is where a scored target is expected and the one-target window that
// scores it the way the run does.
type target struct {
	doc, pos int
	token    int32
	window   model.Sequence
}

// windowOf is the window a strided pass over ids (ctx, stride) scores target
// p in, cut to end at p and to score only p: the first window whose end
// passes p, computed from the definition (windows start every stride tokens).
// p is not scored (ok false) when it is that window's first token.
func windowOf(ids []int32, p, ctx, stride int) (w model.Sequence, ok bool) {
	k := 0
	if p >= ctx {
		k = (p-ctx)/stride + 1
	}
	begin := k * stride
	return model.Sequence{Tokens: ids[begin : p+1], First: p - begin}, begin < p
}

// expectTargets lists every target a run of mode over toks scores, in corpus
// order, from the definitions of the modes (not from the package's cutting).
func expectTargets(toks *corpus.Tokens, mode pipeline.Mode, ctx, stride int) []target {
	var out []target
	if mode == pipeline.ModeDocuments {
		for i, d := range toks.Documents(backendtest.EOT) {
			buf := append([]int32{backendtest.EOT}, d...)
			for q, id := range d {
				w, _ := windowOf(buf, q+1, ctx, stride) // the eot begins every window of a document
				out = append(out, target{i, q, id, w})
			}
		}
		return out
	}
	stream := toks.Stream(backendtest.EOT)
	for p := 1; p < len(stream); p++ {
		if w, ok := windowOf(stream, p, ctx, stride); ok {
			out = append(out, target{0, p, stream[p], w})
		}
	}
	return out
}

// TestPerTokenCPU: per-token NLLs on the CPU are in corpus order with the
// right positions and ids in every mode, sum to the run's nll_sum (float64
// rounding), each equals the CPU loss of a one-target window of the same
// prefix (to 4e-7 relative: a few ulps where the kernels tile the shorter
// window differently; most are bit-identical), and asking for them leaves the
// sums bit-identical.
func TestPerTokenCPU(t *testing.T) {
	m := synth.Random(synth.TinyConfig(), 3)
	toks := backendtest.RandomDocs(1, 30, 0, 5, 90, 1, 47)
	cpu := backend.NewCPU(m, 2)
	ref := model.NewCPU(m, 1)
	ctx := context.Background()
	for _, c := range []struct {
		mode        pipeline.Mode
		ctx, stride int
	}{
		{pipeline.ModeStream, 32, 32},
		{pipeline.ModeStrided, 32, 12},
		{pipeline.ModeDocuments, 40, 16},
	} {
		t.Run(string(c.mode), func(t *testing.T) {
			cfg := pipeline.EvalConfig{Tokens: toks, EOT: backendtest.EOT, Mode: c.mode, Ctx: c.ctx, Stride: c.stride, BatchTokens: 96}
			plain, err := pipeline.Evaluate(ctx, cpu, cfg)
			if err != nil {
				t.Fatal(err)
			}
			cfg.PerToken = true
			res, err := pipeline.Evaluate(ctx, cpu, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.NLLSum != plain.NLLSum || res.NLLSumSq != plain.NLLSumSq || plain.PerToken != nil {
				t.Errorf("sums with per-token %v/%v, without %v/%v (per-token kept without asking: %d)",
					res.NLLSum, res.NLLSumSq, plain.NLLSum, plain.NLLSumSq, len(plain.PerToken))
			}
			want := expectTargets(toks, c.mode, c.ctx, c.stride)
			if len(res.PerToken) != len(want) || res.Tokens != len(want) {
				t.Fatalf("%d per-token records, %d targets scored, want %d", len(res.PerToken), res.Tokens, len(want))
			}
			sum, inexact := 0.0, 0
			for i, got := range res.PerToken {
				w := want[i]
				if got.Doc != w.doc || got.Pos != w.pos || got.Token != w.token {
					t.Fatalf("record %d: doc %d pos %d token %d, want doc %d pos %d token %d", i, got.Doc, got.Pos, got.Token, w.doc, w.pos, w.token)
				}
				sum += float64(got.NLL)
				one, err := ref.Loss(ctx, []model.Sequence{w.window})
				if err != nil {
					t.Fatal(err)
				}
				// The kernels tile a shorter window differently: a few ulps.
				if d := math.Abs(one.Sum.Float64() - float64(got.NLL)); one.Count != 1 || d > 4e-7*one.Sum.Float64() {
					t.Errorf("doc %d pos %d: per-token NLL %v, one-target window %v", w.doc, w.pos, got.NLL, one.Sum.Float64())
				} else if d != 0 {
					inexact++
				}
			}
			t.Logf("%d of %d per-token NLLs differ from their one-target window's in the last bits", inexact, len(want))
			if math.Abs(sum-res.NLLSum) > 1e-12*math.Abs(res.NLLSum) {
				t.Errorf("per-token NLLs sum to %.17g, nll_sum %.17g", sum, res.NLLSum)
			}
		})
	}
}

// TestPerTokenLossCPU: model.CPU.LossPerToken's sums are Loss's bit for bit
// and its NLLs add up to them.
func TestPerTokenLossCPU(t *testing.T) {
	m := synth.Random(synth.TinyConfig(), 5)
	c := model.NewCPU(m, 3)
	seqs := pipeline.Strided(backendtest.RandomDocs(2, 200).Docs[0], 64, 20)
	seqs = append(seqs, model.Sequence{Tokens: []int32{1}, First: 1})
	sums, err := c.Loss(context.Background(), seqs)
	if err != nil {
		t.Fatal(err)
	}
	got, nll, err := c.LossPerToken(context.Background(), seqs)
	if err != nil {
		t.Fatal(err)
	}
	var want model.LossSums // the NLLs added exactly, independently of the backend's order
	for _, v := range nll {
		want.AddNLL(float64(v))
	}
	if got != sums || len(nll) != sums.Count || want != sums {
		t.Errorf("LossPerToken %+v with %d NLLs summing to %+v, Loss %+v", got, len(nll), want, sums)
	}
}

// TestPerTokenShardsAndResume: a shard's per-token records are its targets;
// per-token output refuses to resume a run half done.
func TestPerTokenShardsAndResume(t *testing.T) {
	m := synth.Random(synth.TinyConfig(), 3)
	toks := backendtest.RandomDocs(4, 70)
	cpu := backend.NewCPU(m, 1)
	cfg := pipeline.EvalConfig{Tokens: toks, EOT: backendtest.EOT, Ctx: 16, PerToken: true}
	whole, err := pipeline.Evaluate(context.Background(), cpu, cfg)
	if err != nil {
		t.Fatal(err)
	}
	at := map[int]pipeline.TokenNLL{}
	for _, r := range whole.PerToken {
		at[r.Pos] = r
	}
	n := 0
	for i := range 2 {
		cfg.Shard = pipeline.Shard{Index: i, Count: 2}
		res, err := pipeline.Evaluate(context.Background(), cpu, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.PerToken {
			if w := at[r.Pos]; !sameRecord(w, r) {
				t.Errorf("shard %d: %+v, unsharded %+v", i, r, w)
			}
		}
		n += len(res.PerToken)
	}
	if n != len(whole.PerToken) {
		t.Errorf("shards hold %d records, the whole run %d", n, len(whole.PerToken))
	}
	cfg.Shard = pipeline.Shard{}
	cfg.Resume = &pipeline.State{Samples: 1, Sums: model.LossSums{Count: 15}}
	if _, err := pipeline.Evaluate(context.Background(), cpu, cfg); err == nil || !strings.Contains(err.Error(), "cannot resume") {
		t.Errorf("per-token resume: err = %v", err)
	}
}

// sameRecord reports whether two per-token records are equal, their top
// log-probabilities included.
func sameRecord(a, b pipeline.TokenNLL) bool {
	return a.Doc == b.Doc && a.Pos == b.Pos && a.Token == b.Token && math.Float32bits(a.NLL) == math.Float32bits(b.NLL) && slices.Equal(a.Top, b.Top)
}

func testPerTokenFile(t *testing.T) *runfile.PerTokenFile {
	t.Helper()
	m := synth.Random(synth.TinyConfig(), 3)
	res, err := pipeline.Evaluate(context.Background(), backend.NewCPU(m, 1), pipeline.EvalConfig{
		Tokens: backendtest.RandomDocs(5, 20, 9), EOT: backendtest.EOT, Mode: pipeline.ModeDocuments, Ctx: 16, PerToken: true})
	if err != nil {
		t.Fatal(err)
	}
	res.Config = &pipeline.RunConfig{Mode: res.Mode, Ctx: 16, Stride: 8, Split: "all", Device: "cpu", Precision: "f32"}
	res.Provenance = &pipeline.Provenance{Tool: "wgpu-eval", Tokenizer: "gpt2-builtin",
		Corpus: pipeline.CorpusProvenance{Name: "x", SHA256: strings.Repeat("ab", 32)}}
	return runfile.NewPerTokenFile(res, "gpt2-builtin")
}

// TestPerTokenFileRoundTrip: a written file reads back as it was; damaged
// files are refused without large allocations.
func TestPerTokenFileRoundTrip(t *testing.T) {
	f := testPerTokenFile(t)
	path := filepath.Join(t.TempDir(), "run.ptk")
	if err := runfile.WritePerToken(path, f); err != nil {
		t.Fatal(err)
	}
	got, err := runfile.ReadPerToken(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Header.Targets != len(f.Tokens) || got.Header.Tokenizer != "gpt2-builtin" || got.Header.Config.Ctx != 16 ||
		got.Header.Provenance.Corpus.SHA256 != f.Header.Provenance.Corpus.SHA256 || len(got.Tokens) != len(f.Tokens) {
		t.Fatalf("header %+v, %d tokens; wrote %+v, %d", got.Header, len(got.Tokens), f.Header, len(f.Tokens))
	}
	for i := range f.Tokens {
		if !sameRecord(got.Tokens[i], f.Tokens[i]) {
			t.Fatalf("record %d: %+v, wrote %+v", i, got.Tokens[i], f.Tokens[i])
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("%d files left in the folder, want only the result", len(entries))
	}
	data, _ := f.Marshal()
	for _, bad := range [][]byte{nil, data[:len(data)/2], append(bytes.Clone(data), 0), []byte{0xdd, 0xff, 0xff, 0xff, 0xff}} {
		if _, err := runfile.ParsePerToken(bad); err == nil {
			t.Errorf("a damaged file of %d bytes was accepted", len(bad))
		}
	}
}

// FuzzParsePerToken: no input panics or allocates by an unchecked length; what
// parses marshals again to a file that parses to the same.
func FuzzParsePerToken(f *testing.F) {
	for _, seed := range seedPerTokenFiles(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := runfile.ParsePerToken(data)
		if err != nil {
			return
		}
		again, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		q, err := runfile.ParsePerToken(again)
		if err != nil || len(q.Tokens) != len(p.Tokens) {
			t.Fatalf("re-marshalled file: %v, %d records of %d", err, len(q.Tokens), len(p.Tokens))
		}
	})
}

// seedPerTokenFiles is a small valid file and some near misses.
func seedPerTokenFiles(tb testing.TB) [][]byte {
	f := &runfile.PerTokenFile{Header: runfile.PerTokenHeader{Model: "m", Data: "d", Mode: "stream", Ctx: 8, Stride: 8, Tokenizer: "gpt2-builtin"},
		Tokens: []pipeline.TokenNLL{{Pos: 1, Token: 5, NLL: 2.5}, {Pos: 2, Token: 7, NLL: 0.125}}}
	data, err := f.Marshal()
	if err != nil {
		tb.Fatal(err)
	}
	top, err := topFile(2).Marshal()
	if err != nil {
		tb.Fatal(err)
	}
	return [][]byte{data, data[:len(data)-3], {0x80}, {0xc0}, top, top[:len(top)-5]}
}

// TestCompare: a run against itself differs by nothing; a changed NLL shows
// as the top difference; files of another corpus or tokenizer are refused,
// naming what differs.
func TestCompare(t *testing.T) {
	a := testPerTokenFile(t)
	c, err := runfile.Compare(a, a, 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.MeanDiff != 0 || c.DiffStdErr != 0 || c.MaxAbsDiff != 0 || c.IdenticalShare != 1 || len(c.Top) != 0 ||
		!strings.HasPrefix(c.Verdict, "identical") || c.MeanNLLA != c.MeanNLLB {
		t.Errorf("self comparison: %+v", c)
	}
	b := *a
	b.Tokens = append([]pipeline.TokenNLL(nil), a.Tokens...)
	b.Tokens[3].NLL += 0.5
	c, err = runfile.Compare(a, &b, 2, func(id int32) string { return "tok" })
	if err != nil {
		t.Fatal(err)
	}
	n := float64(len(a.Tokens))
	if math.Abs(c.MeanDiff-0.5/n) > 1e-6 || c.Identical != len(a.Tokens)-1 || len(c.Top) != 1 ||
		c.Top[0].Pos != a.Tokens[3].Pos || c.Top[0].Text != "tok" || math.Abs(c.Top[0].Diff-0.5) > 1e-6 {
		t.Errorf("one changed NLL: %+v", c)
	}
	// Paired standard error of differences that are 0.5 once and 0 else.
	mean := 0.5 / n
	se := math.Sqrt(((0.25 - 0.5*mean) / (n - 1)) / n)
	if math.Abs(c.DiffStdErr-se) > 1e-9 {
		t.Errorf("paired SE %v, want %v", c.DiffStdErr, se)
	}
	other := b
	other.Header.Tokenizer = "sha256:1234"
	if _, err := runfile.Compare(a, &other, 1, nil); err == nil || !strings.Contains(err.Error(), "tokenizer") {
		t.Errorf("another tokenizer: err = %v", err)
	}
	// Streams in windows of 8 and 16: other windows, other targets, which
	// the error explains, unless another difference is the reason.
	s8, s16 := *a, b
	s8.Header.Mode, s16.Header.Mode = "stream", "stream"
	s8.Header.Config = &pipeline.RunConfig{Mode: "stream", Ctx: 8, Stride: 8, Split: "all"}
	s16.Header.Config = &pipeline.RunConfig{Mode: "stream", Ctx: 16, Stride: 16, Split: "all"}
	s16.Tokens = b.Tokens[1:]
	if _, err := runfile.Compare(&s8, &s16, 1, nil); err == nil || !strings.Contains(err.Error(), "only context") {
		t.Errorf("other windows, other targets: err = %v, want the windows named", err)
	}
	s16.Header.Tokenizer = "sha256:1234"
	if _, err := runfile.Compare(&s8, &s16, 1, nil); err == nil || !strings.Contains(err.Error(), "tokenizer") || strings.Contains(err.Error(), "window") {
		t.Errorf("another tokenizer and other windows: err = %v, want the tokenizer alone named", err)
	}
	prov := *a.Header.Provenance
	prov.Corpus.SHA256 = strings.Repeat("cd", 32)
	other = b
	other.Header.Provenance = &prov
	if _, err := runfile.Compare(a, &other, 1, nil); err == nil || !strings.Contains(err.Error(), "corpus") {
		t.Errorf("another corpus: err = %v", err)
	}
	other = b
	other.Tokens = b.Tokens[1:]
	if _, err := runfile.Compare(a, &other, 1, nil); err == nil || !strings.Contains(err.Error(), "targets") {
		t.Errorf("fewer targets: err = %v", err)
	}
}

// TestParsePerTokenRefusesDamage: records no run writes (NLL NaN, ±Inf or
// negative beyond rounding, ids outside the header's vocabulary) and a
// record changed after writing (its NLL no longer adds up to the header's
// exact sum) are refused, naming the target; compare never sees them.
func TestParsePerTokenRefusesDamage(t *testing.T) {
	base := func() *runfile.PerTokenFile {
		return &runfile.PerTokenFile{Header: runfile.PerTokenHeader{Model: "m", Data: "d", Mode: "stream", Ctx: 8, Stride: 8,
			Tokenizer: "gpt2-builtin", VocabSize: 100, TopLogprobs: 1},
			Tokens: []pipeline.TokenNLL{{Pos: 1, Token: 5, NLL: 2.5, Top: []pipeline.TokenLogprob{{ID: 9, Logprob: -0.5}}},
				{Pos: 2, Token: 7, NLL: 0.125, Top: []pipeline.TokenLogprob{{ID: 7, Logprob: -0.125}}}}}
	}
	good, err := base().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runfile.ParsePerToken(good); err != nil {
		t.Fatalf("a good file: %v", err)
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"a JSON result", []byte("{\n  \"model\": \"m\"\n}\n"), "it is JSON text"},
		{"cut short", good[:len(good)/2], "or a truncated one"},
	} {
		if _, err := runfile.ParsePerToken(c.data); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	for _, c := range []struct {
		name string
		edit func(*runfile.PerTokenFile)
		want string
	}{
		{"NaN", func(f *runfile.PerTokenFile) { f.Tokens[1].NLL = float32(math.NaN()) }, "target 1"},
		{"+Inf", func(f *runfile.PerTokenFile) { f.Tokens[0].NLL = float32(math.Inf(1)) }, "target 0"},
		{"negative", func(f *runfile.PerTokenFile) { f.Tokens[1].NLL = -0.5 }, "NLL -0.5"},
		{"token outside the vocabulary", func(f *runfile.PerTokenFile) { f.Tokens[0].Token = 100 }, "vocabulary of 100"},
		{"top id outside the vocabulary", func(f *runfile.PerTokenFile) { f.Tokens[1].Top[0].ID = 250 }, "id 250"},
	} {
		f := base()
		c.edit(f)
		data, err := f.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := runfile.ParsePerToken(data); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one naming %q", c.name, err, c.want)
		}
	}
	// The NLL 0.125 (0x3e000000) changed in its last bit, as a disk might.
	i := bytes.Index(good, []byte{0, 0, 0, 0x3e})
	if i < 0 {
		t.Fatal("NLL 0.125 not found in the file")
	}
	flipped := bytes.Clone(good)
	flipped[i] ^= 1
	if _, err := runfile.ParsePerToken(flipped); err == nil || !strings.Contains(err.Error(), "add up to") {
		t.Errorf("a record's NLL changed: err = %v", err)
	}
}
