package corpus

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/wgpu-eval/wgpu-eval/internal/alloctest"
)

// A flipped bit in an array header of a token cache entry declared a length
// of hundreds of millions of ids; msgpack allocated it before noticing the
// file was too short, and every later run died out of memory.
func TestTokenizeCacheHugeArrayHeader(t *testing.T) {
	text := strings.Repeat("abcdefghij", 10_000) // 100,000 ids: an array32 header
	c := load(t, "-", Options{Stdin: strings.NewReader(text)})
	want := byteIDs(text)
	good, err := msgpack.Marshal(&cacheFile{Version: cacheVersion, Corpus: c.SHA256, Tokenizer: "b", Code: tokenizerCode,
		IDsSHA256: docsIDsHash(want), Docs: want})
	if err != nil {
		t.Fatal(err)
	}
	header := []byte{0xdd, 0x00, 0x01, 0x86, 0xa0} // array32 of 100,000
	i := bytes.Index(good, header)
	if i < 0 {
		t.Fatal("no array32 header in the encoded file")
	}
	bad := slices.Clone(good)
	bad[i+1] ^= 0x10 // 0x100186a0 = 268,535,456 ids (1 GiB as int32)

	cache := t.TempDir()
	path := putCache(t, cache, c.SHA256, bad)
	var ok bool
	alloc := alloctest.During(t, func() { _, ok = readCache(path, c.SHA256, "b", 1, 257) })
	if ok {
		t.Fatal("damaged cache entry accepted")
	}
	if alloc > 32<<20 {
		t.Errorf("reading a %d-byte damaged cache entry allocated %d bytes", len(bad), alloc)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("damaged entry not deleted: %v", err)
	}

	// Tokenize rebuilds it, and the next run uses the rebuilt entry.
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	tok := &byteTokenizer{id: "b"}
	tk := tokenize(t, c, tok, TokenizeOptions{CacheDir: cache})
	if tok.calls != 1 || !slices.EqualFunc(tk.Docs, want, slices.Equal) {
		t.Fatalf("%d encode calls; want the damaged entry ignored", tok.calls)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, good) {
		t.Errorf("entry not rebuilt (%v)", err)
	}
	tok2 := &byteTokenizer{id: "b"}
	if tokenize(t, c, tok2, TokenizeOptions{CacheDir: cache}); tok2.calls != 0 {
		t.Error("the rebuilt entry was not used")
	}
}
