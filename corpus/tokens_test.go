package corpus

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
)

// byteTokenizer maps each byte to its value: ids 0..255, eot 256.
type byteTokenizer struct {
	id    string
	calls int // Encode calls, to see the cache at work
}

func (b *byteTokenizer) Encode(text string) []int32 {
	b.calls++
	ids := make([]int32, len(text))
	for i := range len(text) {
		ids[i] = int32(text[i])
	}
	return ids
}
func (b *byteTokenizer) ID() string                      { return b.id }
func (b *byteTokenizer) EOT() int32                      { return 256 }
func (b *byteTokenizer) VocabSize() int                  { return 257 }
func (b *byteTokenizer) Specials() (lead, trail []int32) { return nil, nil }

func byteIDs(docs ...string) [][]int32 {
	var out [][]int32
	for _, d := range docs {
		out = append(out, (&byteTokenizer{}).Encode(d))
	}
	return out
}

func tokenize(t *testing.T, c *Corpus, tok Tokenizer, opt TokenizeOptions) *Tokens {
	t.Helper()
	tk, err := Tokenize(context.Background(), c, tok, opt)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func TestTokenizeCache(t *testing.T) {
	cache := t.TempDir()
	c := load(t, "-", Options{Stdin: strings.NewReader("ab\n\ncd\n\nef"), Separator: "\n\n"})
	want := byteIDs("ab", "cd", "ef")
	opt := TokenizeOptions{CacheDir: cache, CacheError: func(err error) { t.Errorf("cache error: %v", err) }}

	tok := &byteTokenizer{id: "bytes/v1"}
	tk := tokenize(t, c, tok, opt)
	if !slices.EqualFunc(tk.Docs, want, slices.Equal) || !tk.Separated || tok.calls != 3 {
		t.Fatalf("docs %v separated %v after %d calls", tk.Docs, tk.Separated, tok.calls)
	}
	path := filepath.Join(cache, "tokens", c.SHA256+"-bytes_v1.msgpack")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("cache file: %v", err)
	}

	// Read back without encoding.
	tok2 := &byteTokenizer{id: "bytes/v1"}
	if tk := tokenize(t, c, tok2, opt); !slices.EqualFunc(tk.Docs, want, slices.Equal) || tok2.calls != 0 || !tk.Separated {
		t.Errorf("cached docs %v after %d calls", tk.Docs, tok2.calls)
	}
	// Another tokenizer has its own entry.
	tok3 := &byteTokenizer{id: "other"}
	tokenize(t, c, tok3, opt)
	if tok3.calls != 3 {
		t.Errorf("another tokenizer used the cache (%d calls)", tok3.calls)
	}
	// NoCache neither reads nor writes.
	tok4 := &byteTokenizer{id: "bytes/v1"}
	tokenize(t, c, tok4, TokenizeOptions{CacheDir: cache, NoCache: true})
	if tok4.calls != 3 {
		t.Errorf("NoCache read the cache (%d calls)", tok4.calls)
	}
	entries, _ := os.ReadDir(filepath.Join(cache, "tokens"))
	if len(entries) != 2 {
		t.Errorf("%d files in the cache, want 2 (no temporary files left)", len(entries))
	}
}

// putCache writes data as the cache file of corpus (its sha256) and the
// tokenizer "b" under the cache folder cache, and returns its path.
func putCache(t *testing.T, cache, corpus string, data []byte) string {
	t.Helper()
	path := cachePath(cache, corpus, "b")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTokenizeCacheDamaged(t *testing.T) {
	c := load(t, "-", Options{Stdin: strings.NewReader("hello world")})
	want := byteIDs("hello world")
	good := func() []byte {
		data, err := msgpack.Marshal(&cacheFile{Version: cacheVersion, Corpus: c.SHA256, Tokenizer: "b", Code: tokenizerCode,
			IDsSHA256: docsIDsHash(want), Docs: want})
		if err != nil {
			t.Fatal(err)
		}
		return data
	}()
	{ // the control: the same file whole is read, not tokenized again
		cache := t.TempDir()
		putCache(t, cache, c.SHA256, good)
		tok := &byteTokenizer{id: "b"}
		if tk := tokenize(t, c, tok, TokenizeOptions{CacheDir: cache}); tok.calls != 0 || !slices.EqualFunc(tk.Docs, want, slices.Equal) {
			t.Fatalf("an intact file: %d encode calls, docs %v; want it read", tok.calls, tk.Docs)
		}
	}
	tampered := slices.Clone(want[0])
	tampered[0]++
	bad := func(f cacheFile) []byte {
		data, err := msgpack.Marshal(&f)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	for name, data := range map[string][]byte{
		"truncated":  good[:len(good)/2],
		"garbage":    []byte("\xff\x00not msgpack at all"),
		"empty":      nil,
		"version":    bad(cacheFile{Version: 99, Corpus: c.SHA256, Tokenizer: "b", IDsSHA256: docsIDsHash(want), Docs: want}),
		"corpus":     bad(cacheFile{Version: cacheVersion, Corpus: "x", Tokenizer: "b", Code: tokenizerCode, IDsSHA256: docsIDsHash(want), Docs: want}),
		"tampered":   bad(cacheFile{Version: cacheVersion, Corpus: c.SHA256, Tokenizer: "b", Code: tokenizerCode, IDsSHA256: docsIDsHash(want), Docs: [][]int32{tampered}}),
		"docs count": bad(cacheFile{Version: cacheVersion, Corpus: c.SHA256, Tokenizer: "b", Code: tokenizerCode, IDsSHA256: docsIDsHash(nil)}),
		"vocab":      bad(cacheFile{Version: cacheVersion, Corpus: c.SHA256, Tokenizer: "b", Code: tokenizerCode, IDsSHA256: docsIDsHash([][]int32{{999}}), Docs: [][]int32{{999}}}),
		// Written by a build whose tokenizer code differs: its ids may be what that code made of the text.
		"code": bad(cacheFile{Version: cacheVersion, Corpus: c.SHA256, Tokenizer: "b", Code: "another build's", IDsSHA256: docsIDsHash(want), Docs: want}),
	} {
		cache := t.TempDir()
		path := putCache(t, cache, c.SHA256, data)
		tok := &byteTokenizer{id: "b"}
		tk := tokenize(t, c, tok, TokenizeOptions{CacheDir: cache})
		if tok.calls != 1 || !slices.EqualFunc(tk.Docs, want, slices.Equal) {
			t.Errorf("%s: %d encode calls, docs %v; want the file ignored", name, tok.calls, tk.Docs)
		}
		// ... and rewritten.
		if docs, ok := readCache(path, c.SHA256, "b", 1, 257); !ok || !slices.EqualFunc(docs, want, slices.Equal) {
			t.Errorf("%s: cache not rewritten", name)
		}
	}
	// The good file itself is used.
	cache := t.TempDir()
	path := cachePath(cache, c.SHA256, "b")
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	tok := &byteTokenizer{id: "b"}
	if tokenize(t, c, tok, TokenizeOptions{CacheDir: cache}); tok.calls != 0 {
		t.Error("a good cache file was not used")
	}
}

func TestTokenizeCacheUnwritable(t *testing.T) {
	// A cache folder below a plain file cannot be created.
	blocker := writeTemp(t, "file", []byte("x"))
	var got []error
	c := load(t, "-", Options{Stdin: strings.NewReader("abc")})
	tk := tokenize(t, c, &byteTokenizer{id: "b"}, TokenizeOptions{CacheDir: blocker, CacheError: func(err error) { got = append(got, err) }})
	if !slices.EqualFunc(tk.Docs, byteIDs("abc"), slices.Equal) {
		t.Errorf("docs %v", tk.Docs)
	}
	if len(got) != 1 || !strings.Contains(got[0].Error(), "token cache") {
		t.Errorf("cache errors %v, want one", got)
	}
}

func TestTokenizeTokenFile(t *testing.T) {
	c := load(t, writeTemp(t, "t.bin", tokenFile(tokenMagic, 1, 4, []uint32{256, 1, 2, 256})), Options{})
	tk := tokenize(t, c, &byteTokenizer{id: "b"}, TokenizeOptions{NoCache: true})
	if tk.Separated || !tk.SepAdded || !slices.EqualFunc(tk.Docs, [][]int32{{256, 1, 2, 256}}, slices.Equal) {
		t.Errorf("tokens %+v", tk)
	}
	c = load(t, writeTemp(t, "t.bin", tokenFile(tokenMagic, 1, 3, []uint32{1, 257, 2})), Options{})
	_, err := Tokenize(context.Background(), c, &byteTokenizer{id: "b"}, TokenizeOptions{NoCache: true})
	wantErr(t, err, "t.bin", "token 1", "id 257", "vocabulary size 257")
}

// vocabTokenizer is a byteTokenizer with a larger vocabulary.
type vocabTokenizer struct {
	byteTokenizer
	vocab int
}

func (v *vocabTokenizer) VocabSize() int { return v.vocab }

// An llm.c token file of uint16 ids (GPT-2's) given with a tokenizer of more
// ids than uint16 holds (Llama 3's 128,256) was scored: its ids are all below
// that vocabulary, and were another tokenizer's. It is refused; a file of
// uint32 ids, or a uint16 one with a vocabulary that fits, is not.
func TestTokenizeTokenFileOfAnotherTokenizer(t *testing.T) {
	ids := []uint32{50256, 15496, 995}
	check := func(c *Corpus, vocab int, ok bool) {
		t.Helper()
		_, err := Tokenize(context.Background(), c, &vocabTokenizer{vocab: vocab}, TokenizeOptions{NoCache: true})
		if ok && err != nil {
			t.Errorf("%s, vocabulary %d: %v", c.Name, vocab, err)
		}
		if !ok {
			wantErr(t, err, c.Name, "uint16", "vocabulary of "+strconv.Itoa(vocab))
		}
	}
	gpt2 := load(t, writeTemp(t, "gpt2.bin", tokenFile(tokenMagic, 1, 3, ids)), Options{})
	check(gpt2, 128256, false)
	check(gpt2, 65537, false)
	check(gpt2, 65536, true)
	check(gpt2, 50257, true)
	llama3 := load(t, writeTemp(t, "llama3.bin", tokenFile(tokenMagicLlama3, 7, 3, ids)), Options{})
	check(llama3, 128256, true)
}

func TestTokenizeCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := load(t, "-", Options{Stdin: strings.NewReader("abc")})
	_, err := Tokenize(ctx, c, &byteTokenizer{id: "b"}, TokenizeOptions{NoCache: true})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// The cache's checksum sees where each document ends, not only the ids in
// order; it covers every id.
func TestDocsIDsHash(t *testing.T) {
	if docsIDsHash([][]int32{{1, 2}, {3}}) == docsIDsHash([][]int32{{1}, {2, 3}}) {
		t.Error("docsIDsHash does not depend on document boundaries")
	}
	if docsIDsHash([][]int32{{1}, {}}) == docsIDsHash([][]int32{{1}}) {
		t.Error("docsIDsHash ignores an empty document")
	}
	big := make([]int32, 5000) // spans several internal buffers
	for i := range big {
		big[i] = int32(i)
	}
	if docsIDsHash([][]int32{big}) == docsIDsHash([][]int32{big[:4999]}) {
		t.Error("docsIDsHash ignores the tail")
	}
}

// TestCountWords: the counts Python's len(re.split(r"\s+", text)) gives for
// these texts (worked out by hand from Python's semantics: every run of
// whitespace splits once, and an empty part at either end still counts).
func TestCountWords(t *testing.T) {
	for text, want := range map[string]int{
		"":                       1,
		"one":                    1,
		"two words":              2,
		"  leading":              2,
		"trailing\n":             2,
		"a\t\tb\r\nc":            3,
		" both ":                 3,
		"non\u00a0breaking":      2, // U+00A0 is \s in Python 3
		"ideographic\u3000space": 2,
		"file\x1cseparator":      2, // \x1c is \s in Python (str.isspace), not in Go's unicode.IsSpace
		"no\u200bsplit":          1, // ZERO WIDTH SPACE is not whitespace in either
		"First Citizen:\nBefore we proceed any further, hear me speak.\n": 11,
	} {
		if got := CountWords(text); got != want {
			t.Errorf("CountWords(%q) = %d, want %d", text, got, want)
		}
	}
}

// Specials of the tokenizer (Llama 2's BOS before a text, an EOS after when
// a configuration asks for one) wrap each text in Stream, and Documents
// leaves the first lead token to the documents mode, which puts it back as
// context.
func TestTokensSpecials(t *testing.T) {
	const bos, eos, eot = 300, 301, 256
	for _, c := range []struct {
		name      string
		tk        Tokens
		stream    []int32
		documents [][]int32
	}{
		{"text, BOS", Tokens{Docs: [][]int32{{1, 2}}, Lead: []int32{bos}}, []int32{bos, 1, 2}, [][]int32{{1, 2}}},
		{"text, BOS and EOS", Tokens{Docs: [][]int32{{1, 2}}, Lead: []int32{bos}, Trail: []int32{eos}},
			[]int32{bos, 1, 2, eos}, [][]int32{{1, 2, eos}}},
		{"text spelling out BOS", Tokens{Docs: [][]int32{{1, bos, 2}}, Lead: []int32{bos}}, []int32{bos, 1, bos, 2}, [][]int32{{1}, {2}}},
		{"documents, BOS", Tokens{Docs: [][]int32{{1, 2}, {}, {3}}, Separated: true, Lead: []int32{bos}},
			[]int32{bos, 1, 2, bos, bos, 3}, [][]int32{{1, 2}, {}, {3}}}, // the empty document keeps its number
		{"documents, BOS and EOS", Tokens{Docs: [][]int32{{1, 2}, {3}}, Separated: true, Lead: []int32{bos}, Trail: []int32{eos}},
			[]int32{bos, 1, 2, eos, bos, 3, eos}, [][]int32{{1, 2, eos}, {3, eos}}},
		{"documents, EOS only", Tokens{Docs: [][]int32{{1, 2}, {3}}, Separated: true, Trail: []int32{eos}},
			[]int32{eot, 1, 2, eos, eot, 3, eos}, [][]int32{{1, 2, eos}, {3, eos}}},
	} {
		sep := int32(eot)
		if len(c.tk.Lead) > 0 {
			sep = c.tk.Lead[0]
		}
		if got := c.tk.Stream(sep); !slices.Equal(got, c.stream) {
			t.Errorf("%s: Stream = %v, want %v", c.name, got, c.stream)
		}
		if got := c.tk.Documents(sep); !slices.EqualFunc(got, c.documents, slices.Equal) {
			t.Errorf("%s: Documents = %v, want %v", c.name, got, c.documents)
		}
	}
}

// specialTokenizer is byteTokenizer with a BOS and a head encoder of its own.
type specialTokenizer struct {
	byteTokenizer
	heads int
}

func (s *specialTokenizer) Specials() (lead, trail []int32) { return []int32{300}, nil }

func (s *specialTokenizer) EncodeHead(ctx context.Context, text string, limit int, progress func(int)) ([]int32, bool, error) {
	s.heads++
	ids := s.Encode(text)
	if limit > 0 && len(ids) > limit {
		return ids[:limit], false, nil
	}
	return ids, true, nil
}

// Tokenize keeps the tokenizer's specials (also from the cache) and lets a
// HeadEncoder encode a long text: its head with MaxTokens, else the whole.
func TestTokenizeSpecialsAndHead(t *testing.T) {
	defer func(n int) { chunkBytes = n }(chunkBytes)
	chunkBytes = 4
	c := load(t, "-", Options{Stdin: strings.NewReader("abcdefgh")})
	tok := &specialTokenizer{byteTokenizer: byteTokenizer{id: "special"}}
	cache := t.TempDir()
	for _, max := range []int{3, 0, 0} { // a head, the whole (cached), the whole from the cache
		tk := tokenize(t, c, tok, TokenizeOptions{CacheDir: cache, MaxTokens: max})
		if !slices.Equal(tk.Lead, []int32{300}) {
			t.Errorf("MaxTokens %d: Lead %v", max, tk.Lead)
		}
		if tk.Partial != (max > 0) {
			t.Errorf("MaxTokens %d: Partial %v", max, tk.Partial)
		}
		if want := byteIDs("abcdefgh")[0]; max > 0 {
			if !slices.Equal(tk.Docs[0], want[:max]) {
				t.Errorf("head %v", tk.Docs[0])
			}
		} else if !slices.Equal(tk.Docs[0], want) {
			t.Errorf("whole %v", tk.Docs[0])
		}
	}
	if tok.heads != 2 || tok.calls != 2 {
		t.Errorf("EncodeHead called %d times, Encode %d; want 2 and 2 (the third from the cache)", tok.heads, tok.calls)
	}
}

// A long text is tokenized under the context: cancelled once Tokenize has
// begun, it returns the context's error, with the real tokenizer (a
// HeadEncoder) and with one that has only Encode, with and without
// MaxTokens (before, a whole text went to Encode in one uncancellable call).
func TestTokenizeLongTextCancelled(t *testing.T) {
	gpt2, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("Hello world. ", 3*chunkBytes/13) // about 3 MiB
	c := load(t, "-", Options{Stdin: strings.NewReader(text)})
	for _, tok := range []Tokenizer{gpt2, &byteTokenizer{id: "bytes"}} {
		for _, max := range []int{0, 1 << 20} {
			ctx := &cancelAfter{Context: context.Background(), n: 1}
			_, err := Tokenize(ctx, c, tok, TokenizeOptions{MaxTokens: max, CacheDir: t.TempDir()})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%T, MaxTokens %d: err %v, want context.Canceled", tok, max, err)
			}
		}
	}
}

// cancelAfter is a context whose Err is nil for its first n calls and
// context.Canceled after: cancelled at a known point of the work.
type cancelAfter struct {
	context.Context
	n int
}

func (c *cancelAfter) Err() error {
	if c.n > 0 {
		c.n--
		return nil
	}
	return context.Canceled
}

// TestTokenizeProgress: tokenizing a MiB or more reports the bytes of text
// encoded, about every MiB (within a long text too) and once at the end with
// the total,
// never going back, with the real tokenizer (its EncodeHead) and with one
// that has only Encode (the pieces); ids from the cache report nothing.
func TestTokenizeProgress(t *testing.T) {
	gpt2, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("Hello world. ", 3*chunkBytes/13) // about 3 MiB
	c := load(t, "-", Options{Stdin: strings.NewReader(text)})
	docs := load(t, "-", Options{Stdin: strings.NewReader(strings.Repeat("a short document\n\n", 200_000)), Separator: "\n\n"})
	for _, tc := range []struct {
		name string
		c    *Corpus
		tok  Tokenizer
	}{{"one long text, EncodeHead", c, gpt2}, {"one long text, pieces", c, &byteTokenizer{id: "bytes"}}, {"many documents", docs, gpt2}} {
		var reports [][2]int64
		opt := TokenizeOptions{CacheDir: t.TempDir(), Progress: func(done, total int64) { reports = append(reports, [2]int64{done, total}) }}
		if _, err := Tokenize(context.Background(), tc.c, tc.tok, opt); err != nil {
			t.Fatal(err)
		}
		total := int64(tc.c.Bytes())
		if len(reports) < 3 || reports[len(reports)-1] != [2]int64{total, total} {
			t.Errorf("%s: reports %v, want several ending at %d of %d", tc.name, reports, total, total)
		}
		for i := 1; i < len(reports); i++ {
			if reports[i][0] < reports[i-1][0] || reports[i][0]-reports[i-1][0] > 2*progressBytes {
				t.Errorf("%s: report %d of %v goes back or skips", tc.name, i, reports)
				break
			}
		}
		reports = nil
		if _, err := Tokenize(context.Background(), tc.c, tc.tok, opt); err != nil || len(reports) != 0 {
			t.Errorf("%s from the cache: %v, reports %v", tc.name, err, reports)
		}
	}
	short := load(t, "-", Options{Stdin: strings.NewReader("A text of a moment's work.")})
	calls := 0
	if _, err := Tokenize(context.Background(), short, gpt2, TokenizeOptions{NoCache: true, Progress: func(int64, int64) { calls++ }}); err != nil || calls != 0 {
		t.Errorf("a short text: %v, %d reports, want none", err, calls)
	}
}

// TestTokensText: the spans of the ids encoded from the text, for Stream and
// Documents, worked by hand (ids >= 10 are text; 1 is the BOS and separator,
// 2 an EOS the tokenizer adds).
func TestTokensText(t *testing.T) {
	for _, c := range []struct {
		name      string
		toks      Tokens
		stream    []Span
		docs      [][]int32
		docsSpans []Span
	}{
		{"separated, no lead", Tokens{Docs: [][]int32{{10, 11}, {}, {12}}, Separated: true},
			[]Span{{1, 3}, {4, 4}, {5, 6}}, [][]int32{{10, 11}, {}, {12}}, []Span{{0, 2}, {0, 0}, {0, 1}}},
		{"separated, lead and trail", Tokens{Docs: [][]int32{{10, 11}, {12}}, Separated: true, Lead: []int32{1}, Trail: []int32{2}},
			[]Span{{1, 3}, {5, 6}}, [][]int32{{10, 11, 2}, {12, 2}}, []Span{{0, 2}, {0, 1}}},
		{"one text, lead and trail", Tokens{Docs: [][]int32{{10, 11, 12}}, Lead: []int32{1}, Trail: []int32{2}},
			[]Span{{1, 4}}, [][]int32{{10, 11, 12, 2}}, []Span{{0, 3}}},
		// A text that spells the separator is cut there; the EOS after it is no text.
		{"one text cut at a separator it spells", Tokens{Docs: [][]int32{{10, 1, 11, 12}}, Lead: []int32{1}, Trail: []int32{2}},
			[]Span{{1, 5}}, [][]int32{{10}, {11, 12, 2}}, []Span{{0, 1}, {0, 2}}},
		// A text whose tokenizer encoded the separator's name: text in the stream.
		{"one text that spells the separator", Tokens{Docs: [][]int32{{1, 10, 11, 1, 1, 12}}},
			[]Span{{0, 6}}, [][]int32{{10, 11}, {12}}, []Span{{0, 2}, {0, 1}}},
		// An llm.c token file: its separators were added between documents.
		{"token file cut at its separators", Tokens{Docs: [][]int32{{1, 10, 11, 1, 1, 12}}, SepAdded: true},
			[]Span{{1, 3}, {5, 6}}, [][]int32{{10, 11}, {12}}, []Span{{0, 2}, {0, 1}}},
		{"token file without separators at its ends", Tokens{Docs: [][]int32{{10, 1, 11}}, SepAdded: true},
			[]Span{{0, 1}, {2, 3}}, [][]int32{{10}, {11}}, []Span{{0, 1}, {0, 1}}},
	} {
		if got := c.toks.StreamText(1); !slices.Equal(got, c.stream) {
			t.Errorf("%s: StreamText = %v, want %v", c.name, got, c.stream)
		}
		docs, spans := c.toks.DocumentsText(1)
		if !slices.EqualFunc(docs, c.docs, slices.Equal) || !slices.Equal(spans, c.docsSpans) {
			t.Errorf("%s: DocumentsText = %v, %v; want %v, %v", c.name, docs, spans, c.docs, c.docsSpans)
		}
	}
}
