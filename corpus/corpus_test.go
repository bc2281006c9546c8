package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/wgpu-eval/wgpu-eval/internal/download"
	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
)

// shakespearePath is the shared copy of TinyShakespeare (../shared/data/README.md),
// or $WGPU_EVAL_TINYSHAKESPEARE.
var shakespearePath = prereq.TinyShakespearePath()

func shakespeare(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(shakespearePath)
	if err != nil {
		prereq.Missing(t, "tinyshakespeare", err)
	}
	return data
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func load(t *testing.T, spec string, opt Options) *Corpus {
	t.Helper()
	c, err := Load(context.Background(), spec, opt)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one saying %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not say %q", err, p)
		}
	}
}

func TestTinyShakespeareLocalSplits(t *testing.T) {
	data := shakespeare(t)
	t.Setenv(TinyShakespeareEnv, "")
	// The facts of ../shared/data/README.md.
	for _, c := range []struct {
		split string
		bytes int
		from  int
	}{{"", 1115394, 0}, {"all", 1115394, 0}, {"train", 1003854, 0}, {"val", 111540, 1003854}} {
		corp := load(t, TinyShakespeare, Options{TinyShakespeare: shakespearePath, Split: c.split, CacheDir: t.TempDir()})
		if len(corp.Docs) != 1 || corp.Docs[0] != string(data[c.from:c.from+c.bytes]) || corp.Bytes() != c.bytes {
			t.Errorf("split %q: %d docs, %d bytes; want 1 doc, bytes [%d,%d)", c.split, len(corp.Docs), corp.Bytes(), c.from, c.from+c.bytes)
		}
		if corp.Format != FormatText || corp.Separated || corp.Path != shakespearePath {
			t.Errorf("split %q: %+v", c.split, corp)
		}
		if c.bytes == len(data) && corp.SHA256 != TinyShakespeareSHA256 {
			t.Errorf("sha256 of the whole text %s, want the file's", corp.SHA256)
		}
	}
	// The environment variable names a copy too.
	t.Setenv(TinyShakespeareEnv, shakespearePath)
	if c := load(t, TinyShakespeare, Options{CacheDir: t.TempDir(), Offline: true}); c.Path != shakespearePath {
		t.Errorf("path %q, want the copy named by %s", c.Path, TinyShakespeareEnv)
	}
}

func TestTinyShakespeareWrongLocalCopy(t *testing.T) {
	path := writeTemp(t, "input.txt", []byte("First Citizen:\n"))
	_, err := Load(context.Background(), TinyShakespeare, Options{TinyShakespeare: path})
	wantErr(t, err, path, "sha256", TinyShakespeareSHA256)
}

// shakespeareServer serves body at /input.txt and counts the requests.
func shakespeareServer(t *testing.T, body []byte) (url string, hits *atomic.Int32) {
	hits = new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.ServeContent(w, r, "input.txt", time.Time{}, strings.NewReader(string(body)))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/input.txt", hits
}

func TestTinyShakespeareDownloadAndCache(t *testing.T) {
	data := shakespeare(t)
	t.Setenv(TinyShakespeareEnv, "")
	url, hits := shakespeareServer(t, data)
	cache := t.TempDir()
	var last [2]int64
	opt := Options{CacheDir: cache, URL: url, Split: "val", Progress: func(d, n int64) { last = [2]int64{d, n} }}
	c := load(t, TinyShakespeare, opt)
	dest := filepath.Join(cache, "data", "tinyshakespeare.txt")
	if c.Path != dest || c.Bytes() != 111540 || hits.Load() != 1 {
		t.Fatalf("path %s, %d bytes, %d requests; want %s, 111540, 1", c.Path, c.Bytes(), hits.Load(), dest)
	}
	if last != [2]int64{int64(len(data)), int64(len(data))} {
		t.Errorf("last progress %v, want the whole file", last)
	}
	// Cached: no request, even offline.
	opt.Offline = true
	load(t, TinyShakespeare, opt)
	if hits.Load() != 1 {
		t.Errorf("%d requests, want the cached copy used", hits.Load())
	}
	// A damaged cached copy is fetched again.
	if err := os.WriteFile(dest, data[:1000], 0o644); err != nil {
		t.Fatal(err)
	}
	opt.Offline = false
	if c := load(t, TinyShakespeare, opt); c.Bytes() != 111540 || hits.Load() < 2 {
		t.Errorf("%d bytes after %d requests, want the file fetched again", c.Bytes(), hits.Load())
	}
}

// Runs started together on a fresh cache (the jobs of an array) all get
// TinyShakespeare from one download. They shared one partial file, and all
// but the first to finish failed: "rename ....incomplete ...: no such file
// or directory".
func TestTinyShakespeareConcurrentDownloads(t *testing.T) {
	data := shakespeare(t)
	t.Setenv(TinyShakespeareEnv, "")
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		for rest := data; len(rest) > 0; rest = rest[min(64<<10, len(rest)):] { // slowly: the runs overlap
			w.Write(rest[:min(64<<10, len(rest))])
			w.(http.Flusher).Flush()
			time.Sleep(10 * time.Millisecond)
		}
	}))
	t.Cleanup(srv.Close)
	cache := t.TempDir()
	want := sha256.Sum256(data)
	const runs = 4
	errs := make([]error, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			c, err := Load(context.Background(), TinyShakespeare, Options{CacheDir: cache, URL: srv.URL + "/input.txt"})
			if err == nil && c.SHA256 != hex.EncodeToString(want[:]) {
				err = fmt.Errorf("sha256 %s", c.SHA256)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("run %d: %v", i, err)
		}
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("%d downloads, want 1", n)
	}
}

// A run that waits for another's TinyShakespeare download says so, naming
// the lock, and goes on when it is free.
func TestTinyShakespeareWaitsForAnotherDownload(t *testing.T) {
	t.Setenv(TinyShakespeareEnv, "")
	url, hits := shakespeareServer(t, shakespeare(t))
	cache := t.TempDir()
	lock := filepath.Join(cache, ".locks", "tinyshakespeare.txt.lock")
	unlock, err := download.LockFile(context.Background(), lock)
	if err != nil {
		t.Fatal(err)
	}
	told := make(chan string, 100)
	opt := Options{CacheDir: cache, URL: url, WaitInterval: 20 * time.Millisecond, Waiting: func(msg string) { told <- msg }}
	done := make(chan error, 1)
	go func() {
		_, err := Load(context.Background(), TinyShakespeare, opt)
		done <- err
	}()
	select {
	case msg := <-told:
		if !strings.Contains(msg, "another process") || !strings.Contains(msg, lock) {
			t.Errorf("told %q, want the lock named", msg)
		}
	case err := <-done:
		t.Fatalf("Load returned (%v) while another process held the lock", err)
	case <-time.After(10 * time.Second):
		t.Fatal("nothing said while waiting for the lock")
	}
	if hits.Load() != 0 {
		t.Error("downloaded while another process held the lock")
	}
	unlock()
	if err := <-done; err != nil || hits.Load() != 1 {
		t.Errorf("after the lock was freed: %v, %d downloads", err, hits.Load())
	}

	// Cancelled while waiting: the context's error, promptly.
	unlock, err = download.LockFile(context.Background(), lock)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if err := os.Remove(filepath.Join(cache, "data", "tinyshakespeare.txt")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = Load(ctx, TinyShakespeare, Options{CacheDir: cache, URL: url})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled while waiting: %v", err)
	}
}

func TestTinyShakespeareOfflineOrBadDownload(t *testing.T) {
	t.Setenv(TinyShakespeareEnv, "")
	_, err := Load(context.Background(), TinyShakespeare, Options{CacheDir: t.TempDir(), Offline: true})
	wantErr(t, err, "downloads are off", TinyShakespeareEnv)

	url, _ := shakespeareServer(t, []byte("not shakespeare"))
	cache := t.TempDir()
	_, err = Load(context.Background(), TinyShakespeare, Options{CacheDir: cache, URL: url})
	wantErr(t, err, "sha256")
	if _, serr := os.Stat(filepath.Join(cache, "data", "tinyshakespeare.txt")); serr == nil {
		t.Error("a file with the wrong sha256 was cached")
	}
}

func TestTextSplitOnCharacters(t *testing.T) {
	// 10 characters, 2 bytes each: train is int(0.9*10) = 9 characters.
	text := strings.Repeat("é", 10)
	path := writeTemp(t, "e.txt", []byte(text))
	if c := load(t, path, Options{Split: "train"}); c.Docs[0] != strings.Repeat("é", 9) {
		t.Errorf("train %q", c.Docs[0])
	}
	if c := load(t, path, Options{Split: "val"}); c.Docs[0] != "é" {
		t.Errorf("val %q", c.Docs[0])
	}
	// 3 characters: int(2.7) = 2.
	if c := load(t, writeTemp(t, "a.txt", []byte("a€b")), Options{Split: "val"}); c.Docs[0] != "b" {
		t.Errorf("val %q, want \"b\"", c.Docs[0])
	}
}

func TestTextSeparatorAndStdin(t *testing.T) {
	text := "one\n\ntwo\nlines\n\n\n\nthree\n\n"
	c := load(t, "-", Options{Stdin: strings.NewReader(text), Separator: "\n\n"})
	if want := []string{"one", "two\nlines", "three"}; !slices.Equal(c.Docs, want) || !c.Separated {
		t.Errorf("docs %q (separated %v), want %q", c.Docs, c.Separated, want)
	}
	if c.Name != "-" || c.Path != "" || c.Format != FormatText {
		t.Errorf("%+v", c)
	}
	plain := load(t, "-", Options{Stdin: strings.NewReader(text)})
	if !slices.Equal(plain.Docs, []string{text}) || plain.Separated {
		t.Errorf("without a separator: %q", plain.Docs)
	}
	h := sha256.Sum256([]byte(text))
	if plain.SHA256 != hex.EncodeToString(h[:]) || c.SHA256 == plain.SHA256 {
		t.Errorf("sha256 %s / %s: want the text's own digest, and a different one for documents", plain.SHA256, c.SHA256)
	}
}

func TestTextErrors(t *testing.T) {
	ctx := context.Background()
	_, err := Load(ctx, writeTemp(t, "empty.txt", nil), Options{})
	wantErr(t, err, "empty.txt", "empty")
	_, err = Load(ctx, writeTemp(t, "latin1.txt", []byte("caf\xe9 ok")), Options{})
	wantErr(t, err, "latin1.txt", "not UTF-8", "0xe9", "byte offset 3")
	_, err = Load(ctx, filepath.Join(t.TempDir(), "missing.txt"), Options{})
	wantErr(t, err, "missing.txt", "no such file")
	_, err = Load(ctx, writeTemp(t, "a.txt", []byte("abc")), Options{Split: "test"})
	wantErr(t, err, "unknown split")
	_, err = Load(ctx, "-", Options{Stdin: strings.NewReader("\n\n\n\n"), Separator: "\n\n"})
	wantErr(t, err, "stdin", "no text")
	_, err = Load(ctx, "", Options{})
	wantErr(t, err, "no name")
}

func TestJSONL(t *testing.T) {
	data := "{\"text\": \"first doc\", \"id\": 1}\n\n   \n{\"text\":\"second\\ndoc é\"}\r\n{\"meta\":{},\"text\":\"\"}\n{\"text\":\"last\"}"
	inParts(t, func(t *testing.T) {
		c := load(t, writeTemp(t, "d.jsonl", []byte(data)), Options{})
		if want := []string{"first doc", "second\ndoc é", "", "last"}; !slices.Equal(c.Docs, want) {
			t.Errorf("docs %q, want %q", c.Docs, want)
		}
		if c.Format != FormatJSONL || !c.Separated {
			t.Errorf("format %s separated %v", c.Format, c.Separated)
		}
	})
}

// inParts runs f as a file's lines are read: in one part, and in a part of
// each line or so on eight goroutines (whatever the cores).
func inParts(t *testing.T, f func(t *testing.T)) {
	t.Run("one part", f)
	t.Run("parts", func(t *testing.T) {
		defer func(n, procs int) { minJSONLPart = n; runtime.GOMAXPROCS(procs) }(minJSONLPart, runtime.GOMAXPROCS(8))
		minJSONLPart = 1
		f(t)
	})
}

// jsonlParts cuts a file into whole lines, each part knowing the number and
// byte offset of its first, which together are the file.
func TestJSONLParts(t *testing.T) {
	defer func(n int) { minJSONLPart = n }(minJSONLPart)
	minJSONLPart = 1
	data := "a\n\nbb\nccc\n\n\ndddd\ne"
	for _, d := range []string{data, data + "\n", "", "\n", "one line"} {
		for n := 1; n <= 12; n++ {
			parts := jsonlParts([]byte(d), n)
			var joined strings.Builder
			line := 1
			for i, p := range parts {
				data := string(p.data)
				if p.line != line || p.offset != joined.Len() {
					t.Errorf("%q in %d: part %d starts at line %d byte %d, want %d and %d", d, n, i, p.line, p.offset, line, joined.Len())
				}
				if i < len(parts)-1 && !strings.HasSuffix(data, "\n") {
					t.Errorf("%q in %d: part %d %q does not end a line", d, n, i, data)
				}
				lines := strings.SplitAfter(data, "\n")
				if lines[len(lines)-1] == "" {
					lines = lines[:len(lines)-1]
				}
				if p.lines != len(lines) {
					t.Errorf("%q in %d: part %d %q counts %d lines, not %d", d, n, i, data, p.lines, len(lines))
				}
				joined.WriteString(data)
				line += strings.Count(data, "\n")
			}
			if joined.String() != d || len(parts) > n || len(parts) == 0 {
				t.Errorf("%q in %d: %d parts %+v", d, n, len(parts), parts)
			}
		}
	}
	if n := len(jsonlParts([]byte(strings.Repeat("{}\n", 100)), 4)); n != 4 {
		t.Errorf("%d parts of 100 lines, want 4", n)
	}
}

func TestJSONLErrors(t *testing.T) {
	inParts(t, testJSONLErrors)
}

func testJSONLErrors(t *testing.T) {
	for _, c := range []struct {
		data string
		want []string
	}{
		{"{\"text\":\"a\"}\n{\"text\": \"b\"\n", []string{"line 2", "not a JSON object"}},
		{"{\"text\":\"a\"}\n\n{\"body\":\"b\"}\n", []string{"line 3", `no "text" field`}},
		{"{\"text\":7}\n", []string{"line 1", `"text" is not a string`}},
		{"{\"text\":null}\n", []string{"line 1", `"text" is not a string`}},
		{"[\"text\"]\n", []string{"line 1", "a JSON array, not an object", "one JSON object per line"}},
		{"[{\"text\": \"a\"}, {\"text\": \"b\"}]", []string{"line 1", "a JSON array, not an object"}},
		{"\"a\"\n", []string{"line 1", "a JSON string, not an object"}},
		{"null\n", []string{"line 1", "null, not a JSON object"}},
		{"{\n  \"text\": \"a\"\n}\n", []string{"line 1", "not a JSON object", "over several lines"}},
		{"{\"text\":\"a\"}\n{\"text\":\"\xff\"}\n", []string{"line 2", "not UTF-8", "0xff", "byte offset 22"}},
		// The first error in the file's order, wherever the parts are cut.
		{"{\"text\":\"a\"}\n{\"text\":\"b\"}\n\n{\"text\":\"\xff\"}\n{\"body\":1}\n", []string{"line 4", "byte offset 36"}},
		{"\n  \n", []string{"no documents"}},
		{"{\"text\":\"\"}\n", []string{"all 1 documents are empty"}},
		// Half a surrogate pair is no character: a JSON decoder reads U+FFFD.
		{`{"text":"a\ud800b"}`, []string{"line 1", `the escape \ud800`}},
		{`{"text":"\\\\\udc00"}`, []string{"line 1", `the escape \udc00`}},
		{`{"text":"\ud83d\ud83d\ude00"}`, []string{"line 1", `the escape \ud83d`}},
	} {
		path := writeTemp(t, "bad.jsonl", []byte(c.data))
		_, err := Load(context.Background(), path, Options{})
		wantErr(t, err, append([]string{path}, c.want...)...)
		if err != nil && strings.Contains(err.Error(), "Go value") {
			t.Errorf("the message names a Go type: %v", err)
		}
	}
	_, err := Load(context.Background(), writeTemp(t, "ok.jsonl", []byte(`{"text":"a"}`)), Options{Split: "val"})
	wantErr(t, err, "only text corpora")
	// A whole pair, and an escaped backslash before "ud800", are text.
	c := load(t, writeTemp(t, "pairs.jsonl", []byte(`{"text":"\ud83d\ude00 \\ud800"}`)), Options{})
	if want := "\U0001F600 \\ud800"; len(c.Docs) != 1 || c.Docs[0] != want {
		t.Errorf("docs %q, want %q", c.Docs, want)
	}
}

// A separator that is not UTF-8 (a Latin-1 '§', byte 0xa7, from a shell
// whose locale is not UTF-8) matched the second byte of every UTF-8 '§' and
// cut the characters in two: documents "one \xc2", " two \xc2", scored as
// such. It is refused, for files and text in memory alike.
func TestSeparatorNotUTF8(t *testing.T) {
	text := "one \u00a7 two \u00a7 three"
	path := writeTemp(t, "para.txt", []byte(text))
	_, err := Load(context.Background(), path, Options{Separator: "\xa7"})
	wantErr(t, err, path, `separator "\xa7"`, "not UTF-8")
	_, err = FromText("para", text, Options{Separator: "\xa7"})
	wantErr(t, err, "para", `separator "\xa7"`, "not UTF-8")
	// The character itself cuts the text as it should.
	c := load(t, path, Options{Separator: "\u00a7"})
	if want := []string{"one ", " two ", " three"}; !slices.Equal(c.Docs, want) {
		t.Errorf("docs %q, want %q", c.Docs, want)
	}
}

// TestSeparatorOnlyForText: a separator given for a corpus it would not cut
// (a .jsonl file, an llm.c token file) is refused, naming it, not ignored.
func TestSeparatorOnlyForText(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"d.jsonl", []byte(`{"text":"a"}`), "its lines"},
		{"t.bin", tokenFile(tokenMagic, 1, 2, []uint32{5, 6}), "llm.c token file"},
		{"t.dat", tokenFile(tokenMagic, 1, 2, []uint32{5, 6}), "llm.c token file"},
	} {
		path := writeTemp(t, c.name, c.data)
		_, err := Load(context.Background(), path, Options{Separator: "\n\n"})
		wantErr(t, err, path, "separator", c.want)
		if _, err := Load(context.Background(), path, Options{}); err != nil {
			t.Errorf("%s without a separator: %v", c.name, err)
		}
	}
}

// tokenFile is an llm.c token file as dev/data/data_common.py's
// write_datafile lays it out: a header of 256 int32 (magic, version, count),
// then ids of width 2 (version 1) or 4.
func tokenFile(magic, version, count int32, ids []uint32) []byte {
	b := make([]byte, tokenHeaderSize)
	binary.LittleEndian.PutUint32(b[0:], uint32(magic))
	binary.LittleEndian.PutUint32(b[4:], uint32(version))
	binary.LittleEndian.PutUint32(b[8:], uint32(count))
	for _, id := range ids {
		if version == 1 {
			b = binary.LittleEndian.AppendUint16(b, uint16(id))
		} else {
			b = binary.LittleEndian.AppendUint32(b, id)
		}
	}
	return b
}

func TestTokenFile(t *testing.T) {
	gpt2 := []uint32{50256, 5962, 22307, 25, 0, 65535}
	llama3 := []uint32{128000, 5451, 47317, 25, 0, 65536, 128255}
	for _, f := range []struct {
		name           string
		magic, version int32
		ids            []uint32
		width          int
	}{
		{"GPT-2's", 20240520, 1, gpt2, 2},
		// llm.c's Llama 3 files (tinyshakespeare.py --model_desc llama-3)
		// were refused: "magic 20240801, want 20240520".
		{"Llama 3's", 20240801, 7, llama3, 4},
		{"the uint32 form of magic 20240520", 20240520, 2, llama3, 4},
	} {
		data := tokenFile(f.magic, f.version, int32(len(f.ids)), f.ids)
		if want := tokenHeaderSize + f.width*len(f.ids); len(data) != want {
			t.Fatalf("%s: test file of %d bytes, want %d", f.name, len(data), want)
		}
		// Recognized by the magic, whatever the name.
		c := load(t, writeTemp(t, "val.tokens", data), Options{})
		want := make([]int32, len(f.ids))
		for i, id := range f.ids {
			want[i] = int32(id)
		}
		if c.Format != FormatTokens || !slices.Equal(c.Tokens, want) || c.Docs != nil || c.IDBytes != f.width {
			t.Errorf("%s: format %s, %d-byte ids %v", f.name, c.Format, c.IDBytes, c.Tokens)
		}
		// A .jsonl name too (read as bytes, for its documents to be decoded in place).
		if j := load(t, writeTemp(t, "val.jsonl", data), Options{}); j.Format != FormatTokens || !slices.Equal(j.Tokens, want) || j.SHA256 != c.SHA256 {
			t.Errorf("%s named .jsonl: format %s, ids %v", f.name, j.Format, j.Tokens)
		}
		h := sha256.Sum256(data)
		if c.SHA256 != hex.EncodeToString(h[:]) {
			t.Errorf("%s: sha256 %s, want the file's", f.name, c.SHA256)
		}
	}
}

func TestTokenFileErrors(t *testing.T) {
	ids := []uint32{1, 2, 3}
	for _, c := range []struct {
		name string
		data []byte
		want []string
	}{
		{"short.bin", []byte("abc"), []string{"shorter than the 1024-byte header"}},
		{"text.bin", tokenFile(1234, 1, 3, ids), []string{"magic 1234, want 20240520 (GPT-2's) or 20240801 (Llama 3's)"}},
		{"gpt2_124M.bin", tokenFile(llmcModelMagic, 3, 3, ids), []string{"model checkpoint"}},
		{"v3.bin", tokenFile(tokenMagic, 3, 3, ids), []string{"version 3", "only 1"}},
		{"llama3-v1.bin", tokenFile(tokenMagicLlama3, 1, 3, ids), []string{"Llama 3", "version 1", "only 7"}},
		{"llama3-trunc.bin", tokenFile(tokenMagicLlama3, 7, 4, ids), []string{"1036 bytes", "4 tokens", "need 1040"}},
		{"none.bin", tokenFile(tokenMagic, 1, 0, nil), []string{"0 tokens"}},
		{"neg.bin", tokenFile(tokenMagic, 1, -2, nil), []string{"-2 tokens"}},
		{"trunc.bin", tokenFile(tokenMagic, 1, 4, ids), []string{"1030 bytes", "4 tokens", "need 1032"}},
		{"long.bin", tokenFile(tokenMagic, 2, 2, ids), []string{"1036 bytes", "2 tokens", "need 1032"}},
		{"big.bin", tokenFile(tokenMagic, 2, 1, []uint32{1 << 31}), []string{"out of range"}},
	} {
		path := writeTemp(t, c.name, c.data)
		_, err := Load(context.Background(), path, Options{})
		wantErr(t, err, append([]string{path}, c.want...)...)
	}
	path := writeTemp(t, "ok.bin", tokenFile(tokenMagic, 1, 3, ids))
	_, err := Load(context.Background(), path, Options{Split: "train"})
	wantErr(t, err, "only text corpora")
}

// TestTinyShakespeareFailedDownloadHints: a failed download says how to use a
// local copy and leaves no empty .incomplete file; a wrong local copy names no
// Go field.
func TestTinyShakespeareFailedDownloadHints(t *testing.T) {
	t.Setenv(TinyShakespeareEnv, "")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "gone", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	cache := t.TempDir()
	_, err := Load(context.Background(), TinyShakespeare, Options{CacheDir: cache, URL: srv.URL})
	wantErr(t, err, "503", "--tinyshakespeare-file", TinyShakespeareEnv)
	left, _ := filepath.Glob(filepath.Join(cache, "data", "*"))
	if len(left) != 0 {
		t.Errorf("left behind after a failed download: %q", left)
	}

	wrong := writeTemp(t, "notshakespeare.txt", []byte("hello"))
	_, err = Load(context.Background(), TinyShakespeare, Options{TinyShakespeare: wrong})
	wantErr(t, err, "notshakespeare.txt", "not TinyShakespeare")
	if strings.Contains(err.Error(), "Options") {
		t.Errorf("the message names a Go field: %v", err)
	}
	t.Setenv(TinyShakespeareEnv, wrong)
	_, err = Load(context.Background(), TinyShakespeare, Options{})
	wantErr(t, err, "$"+TinyShakespeareEnv, "not TinyShakespeare")
}

// A long text's UTF-8 is checked in parts on every core: it is UTF-8 where
// it is whole, and its first bad byte is named, wherever the parts are cut
// (characters of one to four bytes, and bytes replaced, around every cut).
func TestValidUTF8InParts(t *testing.T) {
	defer func(n, procs int) { minUTF8Part = n; runtime.GOMAXPROCS(procs) }(minUTF8Part, runtime.GOMAXPROCS(4))
	minUTF8Part = 1
	chars := []string{"a", "\u00e9", "\u4e2d", "\U0001F600"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(chars[r.IntN(len(chars))])
		}
		s := b.String()
		if !validUTF8(s) {
			t.Fatalf("%q: not UTF-8 in parts", s)
		}
		if s == "" {
			continue
		}
		i := r.IntN(len(s))
		bad := s[:i] + string([]byte{0x80 + byte(r.IntN(0x80))}) + s[i+1:] // a byte replaced: maybe still UTF-8
		if validUTF8(bad) != utf8.ValidString(bad) {
			t.Fatalf("%q: validUTF8 %v, utf8.ValidString %v", bad, validUTF8(bad), utf8.ValidString(bad))
		}
		if utf8.ValidString(bad) {
			continue
		}
		// The first bad byte ends the longest prefix that is UTF-8.
		first := len(bad)
		for !utf8.ValidString(bad[:first]) {
			first--
		}
		var ue *utf8Error
		if err := checkUTF8(bad); !errors.As(err, &ue) || ue.Offset != first {
			t.Errorf("%q: %v, want the byte at %d", bad, err, first)
		}
	}
}
