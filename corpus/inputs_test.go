package corpus

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/wgpu-eval/wgpu-eval/internal/alloctest"
	"github.com/wgpu-eval/wgpu-eval/internal/sysmem"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
)

// within fails the test when f has not returned after a generous timeout:
// an open(2) of a FIFO without a writer blocks forever.
func within(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("still blocked after 30 s")
	}
}

func mkfifo(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	return path
}

// A FIFO, a device or a folder as the corpus is refused, naming what it is,
// before it is opened (an open of a FIFO blocked for 52 minutes; /dev/zero
// grew memory until the Go runtime died).
func TestLoadRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, filepath.Join(dir, "corpus.txt"))
	for _, c := range []struct{ path, kind, what string }{
		{fifo, "named pipe (FIFO)", "not a regular file"},
		{"/dev/zero", "device", "not a regular file"},
		{dir, "folder", "name a file in it"},
	} {
		if _, err := os.Stat(c.path); err != nil {
			continue
		}
		within(t, func() {
			_, err := Load(context.Background(), c.path, Options{})
			wantErr(t, err, c.path, c.kind, c.what)
		})
	}
	// The local copy of TinyShakespeare too.
	within(t, func() {
		_, err := Load(context.Background(), TinyShakespeare, Options{TinyShakespeare: fifo})
		wantErr(t, err, fifo, "named pipe (FIFO)")
	})
}

// Stdin that sends nothing more is left at the first cancel; stdin longer
// than the limit is refused at the limit.
func TestLoadStdinCancelAndLimit(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		pw.Write([]byte("First Citizen:\n"))
		cancel()
	}()
	within(t, func() {
		if _, err := Load(ctx, "-", Options{Stdin: pr}); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
	_, err := Load(context.Background(), "-", Options{Stdin: strings.NewReader(strings.Repeat("x", 1001)), MaxBytes: 1000})
	wantErr(t, err, "stdin", "more than 1000 bytes")
	if c := load(t, "-", Options{Stdin: strings.NewReader(strings.Repeat("x", 1000)), MaxBytes: 1000}); c.Bytes() != 1000 {
		t.Errorf("%d bytes", c.Bytes())
	}
	// The memory available bounds stdin too.
	t.Setenv(sysmem.Env, "500")
	_, err = Load(context.Background(), "-", Options{Stdin: strings.NewReader(strings.Repeat("x", 1000))})
	wantErr(t, err, "stdin", "more than 500 bytes")
}

// A corpus file larger than the memory available is refused before it is read.
func TestLoadChecksMemory(t *testing.T) {
	path := writeTemp(t, "big.txt", bytes.Repeat([]byte("word "), 1000))
	t.Setenv(sysmem.Env, "4000")
	_, err := Load(context.Background(), path, Options{})
	wantErr(t, err, path, "needs 5.0 kB of memory", "only 4.0 kB")
}

// A .jsonl file's documents are decoded in place in its bytes, so reading
// it takes the file's size, as text does (measured: 204 MB for 200 MB of
// lines, 193 MB for their text as a .txt): the check counts the file once,
// then the list of its documents, 16 bytes a line, which is more than the
// file where the lines are short.
func TestLoadChecksMemoryForJSONL(t *testing.T) {
	lines := strings.Repeat(`{"text": "a line of the corpus"}`+"\n", 40) // 1,320 bytes
	path := writeTemp(t, "docs.jsonl", []byte(lines))
	t.Setenv(sysmem.Env, "1200")
	_, err := Load(context.Background(), path, Options{})
	wantErr(t, err, path, "JSON Lines (1320 bytes)", "needs 1.3 kB of memory", "only 1.2 kB")
	t.Setenv(sysmem.Env, "1320")
	if c, err := Load(context.Background(), path, Options{}); err != nil || len(c.Docs) != 40 {
		t.Errorf("with the file's size: %v", err)
	}
	if _, err := Load(context.Background(), writeTemp(t, "docs.txt", []byte(lines)), Options{}); err != nil {
		t.Errorf("the same bytes as text: %v", err)
	}
	short := writeTemp(t, "short.jsonl", []byte(strings.Repeat(`{"text":"a"}`+"\n", 500))) // 6,500 bytes
	t.Setenv(sysmem.Env, "7000")
	_, err = Load(context.Background(), short, Options{})
	wantErr(t, err, short, "a list of the documents of its 500 lines", "needs 8.0 kB of memory", "only 7.0 kB")
	t.Setenv(sysmem.Env, "8000")
	if c, err := Load(context.Background(), short, Options{}); err != nil || len(c.Docs) != 500 {
		t.Errorf("with room for the list: %v", err)
	}
}

// An llm.c token file's ids take 4 bytes each in memory, twice the file for
// GPT-2's uint16 ids: the memory is checked for them too, not only for the
// file (3,024 bytes here, 4,000 for its ids).
func TestLoadChecksMemoryForTokenIDs(t *testing.T) {
	ids := make([]uint32, 1000)
	path := writeTemp(t, "val.bin", tokenFile(tokenMagic, 1, 1000, ids))
	t.Setenv(sysmem.Env, "3500")
	_, err := Load(context.Background(), path, Options{})
	wantErr(t, err, path, "1000 token ids", "needs 4.0 kB of memory", "only 3.5 kB")
	t.Setenv(sysmem.Env, "4000")
	if _, err := Load(context.Background(), path, Options{}); err != nil {
		t.Errorf("with the memory the ids need: %v", err)
	}
}

// A FIFO at the token cache's path is neither read nor written (either would
// block); the corpus is tokenized and the cache error says why.
func TestTokenizeCacheFIFO(t *testing.T) {
	c := load(t, "-", Options{Stdin: strings.NewReader("hello world")})
	cache := t.TempDir()
	mkfifo(t, cachePath(cache, c.SHA256, "b"))
	var errs []error
	within(t, func() {
		tk := tokenize(t, c, &byteTokenizer{id: "b"}, TokenizeOptions{CacheDir: cache, CacheError: func(err error) { errs = append(errs, err) }})
		if !slices.EqualFunc(tk.Docs, byteIDs("hello world"), slices.Equal) {
			t.Errorf("docs %v", tk.Docs)
		}
	})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "named pipe (FIFO)") {
		t.Errorf("cache errors %v, want one naming the FIFO", errs)
	}
}

// A one-line corpus many times larger than what --max-tokens needs costs its
// text once, not the text as bytes and as a string and its whole
// tokenization (a 1 GB line with --max-tokens 1000 peaked at 4 GB).
func TestTokenizeMaxTokensStopsEarly(t *testing.T) {
	const size = 32 << 20
	path := writeTemp(t, "line.txt", bytes.Repeat([]byte("lorem ipsum "), size/12))
	var tk *Tokens
	alloc := alloctest.During(t, func() {
		c := load(t, path, Options{})
		tk = tokenize(t, c, &byteTokenizer{id: "b"}, TokenizeOptions{NoCache: true, MaxTokens: 1000})
	})
	if n := tk.Len(); n < 1000 || n > 2*chunkBytes || !tk.Partial {
		t.Errorf("%d ids (partial %v), want at least 1000 and about one piece, partial", n, tk.Partial)
	}
	if want := "lorem ipsum lorem"; !slices.Equal(tk.Docs[0][:len(want)], byteIDs(want)[0]) {
		t.Errorf("ids start %v", tk.Docs[0][:len(want)])
	}
	if alloc > size+size/2 {
		t.Errorf("loading a %d-byte corpus and tokenizing 1000 ids allocated %d bytes", size, alloc)
	}
}

// With MaxTokens, documents are encoded until enough ids are made, and the
// partial result is not cached; a whole one is.
func TestTokenizeMaxTokensDocuments(t *testing.T) {
	c := load(t, "-", Options{Stdin: strings.NewReader("aaaa\n\nbbbb\n\ncccc"), Separator: "\n\n"})
	cache := t.TempDir()
	tok := &byteTokenizer{id: "b"}
	tk := tokenize(t, c, tok, TokenizeOptions{CacheDir: cache, MaxTokens: 6})
	if !tk.Separated || !slices.EqualFunc(tk.Docs, byteIDs("aaaa", "bbbb"), slices.Equal) {
		t.Errorf("docs %v", tk.Docs)
	}
	if !tk.Partial {
		t.Error("a tokenization that stopped at MaxTokens is not marked Partial")
	}
	if _, err := os.Stat(cachePath(cache, c.SHA256, "b")); !os.IsNotExist(err) {
		t.Errorf("a partial tokenization was cached (%v)", err)
	}
	if tk := tokenize(t, c, tok, TokenizeOptions{CacheDir: cache, MaxTokens: 100}); len(tk.Docs) != 3 || tk.Partial {
		t.Errorf("docs %v, partial %v", tk.Docs, tk.Partial)
	}
	if _, err := os.Stat(cachePath(cache, c.SHA256, "b")); err != nil {
		t.Errorf("a whole tokenization was not cached: %v", err)
	}
}

// Text encoded in pieces cut where safeCut allows gives exactly the ids of
// the whole text under GPT-2's tokenizer, whatever the spaces, line breaks,
// contractions and non-ASCII characters around the cuts.
func TestEncodeHeadMatchesWhole(t *testing.T) {
	tok, err := tokenizer.GPT2()
	if err != nil {
		t.Fatal(err)
	}
	defer func(n int) { chunkBytes = n }(chunkBytes)
	chunkBytes = 7
	pieces := []string{"a", "b", "Z", "1", "42", " ", "  ", "\n", "\n\n", "\t", "'s", "'ll", "'", ".", "é", "日本", "\u00a0", "\r\n", "x y", "it's", "!"}
	r := rand.New(rand.NewPCG(1, 2))
	texts := []string{"First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n"}
	for range 2000 {
		var b strings.Builder
		for range 5 + r.IntN(60) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	if data, err := os.ReadFile(shakespearePath); err == nil {
		chunkBytes = 4096
		texts = append(texts, string(data[:200_000]))
	}
	for _, text := range texts {
		want := tok.Encode(text)
		got, whole, err := encodeHead(context.Background(), tok, text, len(want)+1, nil)
		if err != nil || !whole || !slices.Equal(got, want) {
			t.Fatalf("%q: pieces give %v (whole %v, %v), the text %v", text, got, whole, err, want)
		}
	}
}

// A UTF-8 byte order mark at the start of a JSONL or text file is dropped;
// elsewhere it is text.
func TestLoadBOM(t *testing.T) {
	c := load(t, writeTemp(t, "d.jsonl", []byte("\uFEFF"+`{"text": "one"}`+"\n"+`{"text": "two"}`+"\n")), Options{})
	if !slices.Equal(c.Docs, []string{"one", "two"}) {
		t.Errorf("docs %q", c.Docs)
	}
	c = load(t, writeTemp(t, "t.txt", []byte("\uFEFFhello\uFEFFworld")), Options{})
	if !slices.Equal(c.Docs, []string{"hello\uFEFFworld"}) || c.SHA256 != sha256Hex("hello\uFEFFworld") {
		t.Errorf("docs %q", c.Docs)
	}
	_, err := Load(context.Background(), writeTemp(t, "d.jsonl", []byte(`{"text": "one"}`+"\n\uFEFF"+`{"text": "two"}`)), Options{})
	wantErr(t, err, "line 2", "not a JSON object")
}

// A cache entry whose documents are cut elsewhere than the corpus's (the
// same ids in the same order) is not used: the checksum covers the cuts.
func TestTokenizeCacheBoundaryMoved(t *testing.T) {
	c := load(t, "-", Options{Stdin: strings.NewReader("ab\n\nc"), Separator: "\n\n"})
	cache := t.TempDir()
	want := byteIDs("ab", "c")
	tokenize(t, c, &byteTokenizer{id: "b"}, TokenizeOptions{CacheDir: cache})
	path := cachePath(cache, c.SHA256, "b")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f cacheFile
	if err := msgpack.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	f.Docs = byteIDs("a", "bc") // damage that moved a boundary, the checksum field left as it was
	if data, err = msgpack.Marshal(&f); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	tok := &byteTokenizer{id: "b"}
	if tk := tokenize(t, c, tok, TokenizeOptions{CacheDir: cache}); tok.calls == 0 || !slices.EqualFunc(tk.Docs, want, slices.Equal) {
		t.Errorf("%d encode calls, docs %v: the moved boundary was read from the cache", tok.calls, tk.Docs)
	}
}

// A cache entry of version 1 (whose checksum did not cover the document
// boundaries) is recomputed, not read.
func TestTokenizeCacheVersion1(t *testing.T) {
	c := load(t, "-", Options{Stdin: strings.NewReader("hello world")})
	want := byteIDs("hello world")
	// Version 1's checksum: sha256 of the ids as little-endian uint32.
	var ids []byte
	for _, id := range want[0] {
		ids = append(ids, byte(id), byte(id>>8), byte(id>>16), byte(id>>24))
	}
	old, err := msgpack.Marshal(&cacheFile{Version: 1, Corpus: c.SHA256, Tokenizer: "b", IDsSHA256: sha256Hex(string(ids)), Docs: want})
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	path := cachePath(cache, c.SHA256, "b")
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	tok := &byteTokenizer{id: "b"}
	if tokenize(t, c, tok, TokenizeOptions{CacheDir: cache}); tok.calls != 1 {
		t.Errorf("%d encode calls: a version 1 cache entry was read", tok.calls)
	}
	if _, ok := readCache(path, c.SHA256, "b", 1, 257); !ok {
		t.Error("the entry was not rewritten in the current version")
	}
}

// A compressed corpus (a .jsonl.gz from a dataset hub) or UTF-16 text was
// refused as text with a Latin-1 byte: "invalid byte 0x8b at byte offset 1
// (convert the file to UTF-8 first, e.g. iconv -f latin1 -t utf-8)", advice
// that makes UTF-8 garbage of it, then scored. Such files are named for what
// they are, with what to do; text that only looks like a magic number is
// still text.
func TestLoadNamesCompressedAndWideText(t *testing.T) {
	jsonl := []byte(`{"text": "First Citizen: before we proceed"}` + "\n")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(jsonl)
	zw.Close()
	var zipped bytes.Buffer
	aw := zip.NewWriter(&zipped)
	f, _ := aw.Create("docs.jsonl")
	f.Write(jsonl)
	aw.Close()
	u16 := []byte{0xff, 0xfe} // little-endian, with its byte order mark, as Windows writes it
	for _, u := range utf16.Encode([]rune("First Citizen: caf\u00e9")) {
		u16 = binary.LittleEndian.AppendUint16(u16, u)
	}
	for _, c := range []struct {
		name string
		data []byte
		want []string
	}{
		{"docs.jsonl.gz", gz.Bytes(), []string{"gzip-compressed", "gunzip"}},
		{"docs.jsonl", gz.Bytes(), []string{"gzip-compressed"}},
		{"docs.zip", zipped.Bytes(), []string{"zip archive", "unzip"}},
		{"notes.txt", u16, []string{"UTF-16 text", "iconv -f UTF-16"}},
	} {
		path := writeTemp(t, c.name, c.data)
		_, err := Load(context.Background(), path, Options{})
		wantErr(t, err, append([]string{path, "not UTF-8 text"}, c.want...)...)
		if err != nil && strings.Contains(err.Error(), "latin1") {
			t.Errorf("%s: %v: the Latin-1 advice", c.name, err)
		}
	}
	_, err := Load(context.Background(), "-", Options{Stdin: bytes.NewReader(gz.Bytes())})
	wantErr(t, err, "stdin", "gzip-compressed")
	// UTF-8 text that starts as bzip2's magic does is text.
	if c := load(t, writeTemp(t, "bzh.txt", []byte("BZh, said the bee")), Options{}); c.Docs[0] != "BZh, said the bee" {
		t.Errorf("docs %q", c.Docs)
	}
	// Text that is not UTF-8 for another reason keeps its byte offset.
	_, err = Load(context.Background(), writeTemp(t, "latin1.txt", []byte("caf\xe9")), Options{})
	wantErr(t, err, "invalid byte 0xe9 at byte offset 3")
}

// UTF-16 text without a byte order mark, mostly ASCII, is valid UTF-8 (each
// character followed or preceded by a NUL) and was scored as text full of
// NULs. It is refused, named with its byte order; text with a few NULs is
// still text.
func TestLoadUTF16WithoutBOM(t *testing.T) {
	text := []rune("First Citizen:\nBefore we proceed any further, hear me speak. Caf\u00e9 \u2019s")
	var le, be []byte
	for _, u := range utf16.Encode(text) {
		le = binary.LittleEndian.AppendUint16(le, u)
		be = binary.BigEndian.AppendUint16(be, u)
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"le.txt", le, "iconv -f UTF-16LE"},
		{"be.txt", be, "iconv -f UTF-16BE"},
		{"le.jsonl", le, "iconv -f UTF-16LE"},
		{"short.txt", le[:8], "UTF-16LE"}, // four characters
	} {
		_, err := Load(context.Background(), writeTemp(t, c.name, c.data), Options{})
		wantErr(t, err, c.name, "without a byte order mark", "not UTF-8 text", c.want)
	}
	_, err := Load(context.Background(), "-", Options{Stdin: bytes.NewReader(le)})
	wantErr(t, err, "stdin", "UTF-16LE")
	for _, s := range []string{
		"a\x00b\x00c",                      // three characters: too short to tell
		"a\x00b\x00c\x00de\x00f",           // a NUL in half the pairs only
		"\x00\x00\x00\x00\x00\x00\x00\x00", // NULs in both places: not UTF-16 text
		strings.Repeat("To be, or not to be\n", 100) + strings.Repeat("\x00.", 100), // NULs in a tenth of the pairs
	} {
		if c := load(t, writeTemp(t, "nuls.txt", []byte(s)), Options{}); c.Docs[0] != s {
			t.Errorf("%q: docs %q", s, c.Docs)
		}
	}
}

// The train split of a one-character text is empty: refused as such, as an
// empty text is, instead of tokenized to nothing (tokenize wrote 0 ids and
// exited 0).
func TestLoadEmptySplit(t *testing.T) {
	path := writeTemp(t, "one.txt", []byte("\u00e9"))
	_, err := Load(context.Background(), path, Options{Split: SplitTrain})
	wantErr(t, err, path, "the train split is empty", "1 character")
	if c := load(t, path, Options{Split: SplitVal}); c.Docs[0] != "\u00e9" {
		t.Errorf("val split %q", c.Docs)
	}
}

// A separator that never occurs leaves the text one document: Load says so
// in SeparatorNote, with the CRLF form of a separator of line ends where that
// form occurs (Windows text cut at "\n\n").
func TestLoadSeparatorNote(t *testing.T) {
	for _, c := range []struct {
		text, sep string
		want      []string // in the note; nil: no note
		docs      int
	}{
		{"one\r\n\r\ntwo\r\n", "\n\n", []string{`"\n\n" never occurs`, "one document", `"\r\n\r\n" occurs`}, 1},
		{"one two", "\n\n", []string{`"\n\n" never occurs`}, 1},
		{"one\n\ntwo", "\r\n\r\n", []string{`"\r\n\r\n" never occurs`}, 1},
		{"one\n\ntwo", "\n\n", nil, 2},
		{"\n\none", "\n\n", nil, 1}, // it occurs, at the start
	} {
		co := load(t, writeTemp(t, "c.txt", []byte(c.text)), Options{Separator: c.sep})
		if len(co.Docs) != c.docs {
			t.Errorf("%q at %q: %d documents, want %d", c.text, c.sep, len(co.Docs), c.docs)
		}
		if c.want == nil && co.SeparatorNote != "" {
			t.Errorf("%q at %q: note %q", c.text, c.sep, co.SeparatorNote)
		}
		for _, w := range c.want {
			if !strings.Contains(co.SeparatorNote, w) {
				t.Errorf("%q at %q: note %q lacks %q", c.text, c.sep, co.SeparatorNote, w)
			}
		}
	}
}
