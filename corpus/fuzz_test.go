package corpus

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
)

// FuzzLoad: no file, read as text, JSONL or an llm.c token file (each with or
// without a split or a separator), panics Load or allocates by an unchecked
// length; what loads is what the format says.
func FuzzLoad(f *testing.F) {
	tok := func(version, count uint32, ids ...uint32) []byte {
		b := make([]byte, tokenHeaderSize)
		magic := uint32(tokenMagic)
		if version == 7 {
			magic = tokenMagicLlama3
		}
		binary.LittleEndian.PutUint32(b, magic)
		binary.LittleEndian.PutUint32(b[4:], version)
		binary.LittleEndian.PutUint32(b[8:], count)
		for _, id := range ids {
			if version == 1 {
				b = binary.LittleEndian.AppendUint16(b, uint16(id))
			} else {
				b = binary.LittleEndian.AppendUint32(b, id)
			}
		}
		return b
	}
	for _, s := range []struct {
		data            []byte
		ext, split, sep string
	}{
		{[]byte("First Citizen:\nBefore we proceed any further, hear me speak.\n"), ".txt", "val", ""},
		{[]byte("a\n\nb\n\n\nc"), ".txt", "", "\n\n"},
		{[]byte("caf\xe9"), ".txt", "", ""},
		{[]byte("one \u00a7 two \u00a7 three"), ".txt", "", "\xa7"},    // a separator inside characters
		{[]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00"), ".jsonl", "", ""}, // a gzip header
		{[]byte("\xff\xfeH\x00i\x00"), ".txt", "", ""},                 // UTF-16 text
		{[]byte(`{"text": "one"}` + "\n\n" + `{"text": "two", "id": 2}` + "\n"), ".jsonl", "", ""},
		{[]byte(`{"text": null}`), ".jsonl", "", ""},
		{[]byte(`[1, 2]`), ".jsonl", "", ""},
		{tok(1, 3, 1, 2, 50256), ".bin", "", ""},
		{tok(2, 2, 1, 1<<31), ".bin", "", ""},
		{tok(1, 1<<30), ".bin", "", ""},
		{tok(3, 1, 0), ".tokens", "", ""},
		{tok(7, 3, 128000, 9906, 1917), ".bin", "", ""},
		{tok(7, 1<<29), ".tokens", "", ""},
	} {
		f.Add(s.data, s.ext, s.split, s.sep)
	}
	f.Fuzz(func(t *testing.T, data []byte, ext, split, sep string) {
		switch ext {
		case ".txt", ".jsonl", ".bin", ".tokens":
		default:
			ext = ".txt"
		}
		path := filepath.Join(t.TempDir(), "corpus"+ext)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Load(context.Background(), path, Options{Split: split, Separator: sep, Offline: true})
		if err != nil {
			if err.Error() == "" {
				t.Error("empty error message")
			}
			return
		}
		if len(c.SHA256) != 64 {
			t.Errorf("sha256 %q", c.SHA256)
		}
		switch c.Format {
		case FormatTokens:
			if 4*len(c.Tokens) > len(data) || len(c.Docs) != 0 {
				t.Errorf("%d ids from %d bytes, %d docs", len(c.Tokens), len(data), len(c.Docs))
			}
		case FormatText, FormatJSONL:
			if len(c.Docs) == 0 || c.Bytes() > len(data) && c.Format == FormatText {
				t.Errorf("%d docs, %d bytes from %d", len(c.Docs), c.Bytes(), len(data))
			}
			for _, d := range c.Docs {
				if !utf8.ValidString(d) {
					t.Errorf("a document is not UTF-8: %q", d)
				}
				if c.Format == FormatText && !strings.Contains(string(data), d) {
					t.Errorf("document %q is not in the file", d)
				}
			}
		default:
			t.Errorf("format %q", c.Format)
		}
	})
}

// FuzzReadCache: no token cache file, of this version or another, damaged or
// forged, panics readCache or allocates by an unchecked length; what it
// accepts is of the corpus, the tokenizer and the number of documents asked,
// within the vocabulary, and matches its checksum of ids and boundaries.
func FuzzReadCache(f *testing.F) {
	enc := func(c cacheFile) []byte {
		b, err := msgpack.Marshal(&c)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	docs := [][]int32{{104, 105}, {33}}
	good := enc(cacheFile{Version: cacheVersion, Corpus: "c", Tokenizer: "b", Code: tokenizerCode, IDsSHA256: docsIDsHash(docs), Docs: docs})
	for _, seed := range [][]byte{
		good,
		good[:len(good)/2],
		enc(cacheFile{Version: cacheVersion, Corpus: "c", Tokenizer: "b", Code: tokenizerCode, IDsSHA256: docsIDsHash(docs), Docs: [][]int32{{104}, {105, 33}}}),
		enc(cacheFile{Version: 1, Corpus: "c", Tokenizer: "b", IDsSHA256: "x", Docs: docs}),
		enc(cacheFile{Version: cacheVersion, Corpus: "c", Tokenizer: "b", Code: tokenizerCode, IDsSHA256: docsIDsHash([][]int32{{999}, {}}), Docs: [][]int32{{999}, {}}}),
		{0xdd, 0xff, 0xff, 0xff, 0xff},
		nil,
	} {
		f.Add(seed, 2)
	}
	path := filepath.Join(f.TempDir(), "cache.msgpack")
	f.Fuzz(func(t *testing.T, data []byte, ndocs int) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, ok := readCache(path, "c", "b", ndocs, 257)
		if !ok {
			return
		}
		if len(got) != ndocs {
			t.Errorf("%d documents accepted, %d asked", len(got), ndocs)
		}
		n := 0
		for _, d := range got {
			n += len(d)
			for _, id := range d {
				if id < 0 || id >= 257 {
					t.Errorf("id %d accepted", id)
				}
			}
		}
		if 4*n > len(data) {
			t.Errorf("%d ids from %d bytes", n, len(data))
		}
		var cf cacheFile
		if err := msgpack.Unmarshal(data, &cf); err != nil || cf.IDsSHA256 != docsIDsHash(got) || cf.Version != cacheVersion || cf.Code != tokenizerCode {
			t.Errorf("accepted a file whose checksum, version or code does not match (%v)", err)
		}
	})
}

// FuzzJSONLParts: a .jsonl file read in parts (a part of each line or so,
// on as many goroutines) gives the documents, or the error, that reading it
// in one part gives.
func FuzzJSONLParts(f *testing.F) {
	for _, s := range []string{
		"{\"text\":\"a\"}\n{\"text\":\"b\"}\n",
		"{\"text\":\"a\"}\n\n  \n{\"text\": \"b\\n\"}\r\n{\"text\":\"\"}",
		"{\"text\":\"a\"}\n{\"text\":\"\xff\"}\n{\"body\":1}\n",
		"{\"text\":\"a\"}\n{\"body\":1}\n{\"text\":\"\xff\"}\n",
		"\n\n",
		"{\"text\":\"\"}\n{\"text\":\"\"}\n",
		"[1]\n{\"text\":\"\\ud800\"}\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		read := func(minPart int) ([]string, string) {
			defer func(n int) { minJSONLPart = n }(minJSONLPart)
			minJSONLPart = minPart
			c := &Corpus{Split: SplitAll}
			if err := c.loadJSONL([]byte(data)); err != nil { // a copy: decoded in place
				return nil, err.Error()
			}
			return c.Docs, ""
		}
		whole, wholeErr := read(1 << 30)
		defer func(procs int) { runtime.GOMAXPROCS(procs) }(runtime.GOMAXPROCS(8))
		parts, partsErr := read(1)
		if wholeErr != partsErr || !slices.Equal(whole, parts) {
			t.Fatalf("one part: %q, %q; in parts: %q, %q", whole, wholeErr, parts, partsErr)
		}
	})
}

// FuzzValidUTF8: text checked in parts, each on a goroutine (a part of a
// byte or more, up to eight parts), is UTF-8 exactly where it is whole.
func FuzzValidUTF8(f *testing.F) {
	for _, s := range []string{"", "a", "caf\u00e9", "\U0001F600\U0001F600", "\xe2\x82", "a\xffb", "\xed\xa0\x80", "\xf4\x90\x80\x80",
		"\x80\x80\x80\x80", "\xc2\xa7\xc2\xa7\xc2\xa7"} {
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, s string, procs uint8) {
		defer func(n, p int) { minUTF8Part = n; runtime.GOMAXPROCS(p) }(minUTF8Part, runtime.GOMAXPROCS(int(procs%8)+1))
		minUTF8Part = 1
		if got, want := validUTF8(s), utf8.ValidString(s); got != want {
			t.Fatalf("validUTF8(%q) on %d cores = %v, want %v", s, procs%8+1, got, want)
		}
	})
}
