package corpus

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/sysmem"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
)

// tokenizeWith tokenizes c with GPT-2's tokenizer and the memory available
// set to avail bytes.
func tokenizeWith(t *testing.T, c *Corpus, avail string, opt TokenizeOptions) (*Tokens, error) {
	t.Helper()
	tok, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(sysmem.Env, avail)
	opt.NoCache = true
	return Tokenize(context.Background(), c, tok, opt)
}

// A run of 2 MB of one letter is one GPT-2 piece, which BPE merges whole at
// 20 bytes a byte: Tokenize refuses it up front where 40 MB is not
// available, naming the run, on one goroutine and on several; and the
// same bytes in words, or in a line without spaces whose pieces are short,
// are tokenized with the same memory.
func TestTokenizeRefusesLongPiece(t *testing.T) {
	const n = 2_000_000
	run, err := FromText("run.txt", strings.Repeat("a", n), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, threads := range []int{1, 2} {
		_, err := tokenizeWith(t, run, "30000000", TokenizeOptions{Threads: threads})
		wantErr(t, err, `tokenizing corpus run.txt (2000000 bytes of text; bytes 0 to 2000000 ("aaaaaaaaaaaaaaaaaaaaaaaa...") hold a piece`,
			"cannot split (a long run without spaces or line breaks), whose merge takes up to 40.0 MB) needs 42.0 MB of memory",
			"only 30.0 MB is available")
		if toks, err := tokenizeWith(t, run, "42000000", TokenizeOptions{Threads: threads}); err != nil || toks.Len() == 0 {
			t.Errorf("threads %d, with the memory it needs: %v", threads, err)
		}
	}
	for what, text := range map[string]string{
		"words":         strings.Repeat("word ", n/5),
		"no spaces":     strings.Repeat("a=", n/2),                          // one stretch no cut falls in, of 1-byte pieces
		"short runs":    strings.Repeat(strings.Repeat("b", 99)+"=", n/100), // pieces of 99 bytes
		"tail of a run": strings.Repeat("word ", n/5) + strings.Repeat("c", 10_000),
	} {
		c, err := FromText(what, text, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, threads := range []int{1, 2} {
			if _, err := tokenizeWith(t, c, "30000000", TokenizeOptions{Threads: threads}); err != nil {
				t.Errorf("%s, threads %d: %v", what, threads, err)
			}
		}
	}
}

// The run in a corpus of documents is named by its document; with two
// goroutines two runs may be merged at once, and both count.
func TestTokenizeRefusesLongPieceInDocuments(t *testing.T) {
	docs := []string{"short", strings.Repeat("=", 1_500_000), "also short", strings.Repeat("z", 2_000_000)}
	c, err := FromDocuments("docs.jsonl", docs)
	if err != nil {
		t.Fatal(err)
	}
	// 3,500,015 bytes of ids, and 40 MB to merge the run of z.
	_, err = tokenizeWith(t, c, "43000000", TokenizeOptions{Threads: 1})
	wantErr(t, err, `document 3's bytes 0 to 2000000 ("zzzzzzzzzzzzzzzzzzzzzzzz...") hold a piece`, "needs 43.5 MB of memory")
	if _, err := tokenizeWith(t, c, "43500015", TokenizeOptions{Threads: 1}); err != nil {
		t.Errorf("one goroutine, with the memory it needs: %v", err)
	}
	// The ids, those of the jobs waiting (4 per goroutine of 256 KiB), and
	// the two runs at once: 40 and 30 MB.
	need := 3_500_015 + 4*2*pieceBytes + 70_000_000
	_, err = tokenizeWith(t, c, strconv.Itoa(need-1), TokenizeOptions{Threads: 2})
	wantErr(t, err, "needs 75.6 MB of memory")
	if _, err := tokenizeWith(t, c, strconv.Itoa(need), TokenizeOptions{Threads: 2}); err != nil {
		t.Errorf("two goroutines, with the memory they need: %v", err)
	}
}

// With MaxTokens, a run is refused only when the head reaches it, just
// before it is encoded; a run past the head costs nothing. The head's ids
// are those of the whole text's.
func TestTokenizeLongPieceMaxTokens(t *testing.T) {
	words := strings.Repeat("word ", 400_000) // 2 MB
	run := strings.Repeat("a", 2_000_000)
	first, err := FromText("run-first.txt", run+" "+words, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tokenizeWith(t, first, "30000000", TokenizeOptions{Threads: 1, MaxTokens: 10})
	wantErr(t, err, `tokenize run-first.txt: encoding bytes 0 to 2000000 ("aaaaaaaaaaaaaaaaaaaaaaaa..."), which hold a piece`,
		"needs 40.0 MB of memory, but only 30.0 MB")

	last, err := FromText("run-last.txt", words+run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	toks, err := tokenizeWith(t, last, "30000000", TokenizeOptions{Threads: 1, MaxTokens: 1000})
	if err != nil {
		t.Fatalf("the run past the head: %v", err)
	}
	gpt2, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	want := gpt2.Encode(words[:100_000])
	if got := toks.Docs[0]; len(got) < 1000 || !slices.Equal(got[:1000], want[:1000]) || !toks.Partial {
		t.Errorf("the head: %d ids (partial %v), not the head of the text's", len(got), toks.Partial)
	}
}

// capped is a tokenizer as if its BPE merged no piece of more than limit
// symbols: MergeMemory says unmergeable past it, as GPT-2's does past
// tokenizer.MaxPieceSymbols (2^31: a text too large for a test).
type capped struct {
	*tokenizer.Tokenizer
	limit int
}

func (c capped) MergeMemory(piece string, first bool) uint64 {
	n := c.Tokenizer.MergeMemory(piece, first)
	if n > tokenizer.MergeBytesPerSymbol*uint64(c.limit) {
		return tokenizer.Unmergeable
	}
	return n
}

// A piece longer than the tokenizer merges is refused by name, however much
// memory there is: up front on one goroutine and on several, and with
// MaxTokens just before the head reaches it; a text of short pieces
// passes.
func TestTokenizeRefusesUnmergeablePiece(t *testing.T) {
	gpt2, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	tok := capped{gpt2, 1_500_000}
	t.Setenv(sysmem.Env, "100000000000")
	run, err := FromText("run.txt", "to be "+strings.Repeat("a", 2_000_000), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []TokenizeOptions{{Threads: 1}, {Threads: 2}, {Threads: 1, MaxTokens: 10}} {
		opt.NoCache = true
		_, err := Tokenize(context.Background(), run, tok, opt)
		wantErr(t, err, `bytes `, `("`, `hold a piece that the tokenizer merges whole`, "longer than any the tokenizer can merge (2^31 symbols)")
	}
	words, err := FromText("words.txt", strings.Repeat("word ", 400_000), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Tokenize(context.Background(), words, tok, TokenizeOptions{Threads: 2, NoCache: true}); err != nil {
		t.Errorf("short pieces: %v", err)
	}
}

// scanning is GPT-2's tokenizer counting the bytes its MergeMemory reads.
type scanning struct {
	*tokenizer.Tokenizer
	read *int
}

func (s scanning) MergeMemory(piece string, first bool) uint64 {
	*s.read += len(piece)
	return s.Tokenizer.MergeMemory(piece, first)
}

// A head of a few ids of a long text is encoded from a piece of about
// minHeadPiece bytes, which the memory check bounds without reading it:
// none of the text is pre-tokenized for the check (a megabyte was, for
// one id); a long head is checked piece by piece, about chunkBytes at a
// time. The ids are the head of the whole text's either way.
func TestTokenizeSmallHeadReadsLittle(t *testing.T) {
	text := strings.Repeat("Hello world, and more words. ", 120_000) // 3.5 MB
	c, err := FromText("words.txt", text, Options{})
	if err != nil {
		t.Fatal(err)
	}
	gpt2, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	whole := gpt2.Encode(text)
	for _, k := range []struct{ maxTokens, mostRead int }{{1, 0}, {100, 0}, {300_000, 2*chunkBytes + 1000}} {
		read := 0
		toks, err := Tokenize(context.Background(), c, scanning{gpt2, &read}, TokenizeOptions{NoCache: true, Threads: 1, MaxTokens: k.maxTokens})
		if err != nil {
			t.Fatal(err)
		}
		if got := toks.Docs[0]; len(got) < k.maxTokens || !slices.Equal(got, whole[:len(got)]) {
			t.Errorf("MaxTokens %d: %d ids, not the head of the text's", k.maxTokens, len(got))
		}
		if read > k.mostRead {
			t.Errorf("MaxTokens %d: the memory check read %d bytes of the text, want at most %d", k.maxTokens, read, k.mostRead)
		}
	}
}
