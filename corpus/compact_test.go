package corpus

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/wgpu-eval/wgpu-eval/internal/sysmem"
)

// jsonlWithMeta is a .jsonl file of n documents, each beside an "html"
// field holding it htmlTimes over (and a "meta" object with a nested
// "text"), with the escapes of JSON in some: the documents are about
// 1/(htmlTimes+1) of the file.
func jsonlWithMeta(n, htmlTimes int) (file string, docs []string) {
	var b strings.Builder
	for i := range n {
		doc := fmt.Sprintf("document %d: caf\u00e9 \"quoted\"\n%s", i, strings.Repeat("word ", i%50))
		docs = append(docs, doc)
		fmt.Fprintf(&b, `{"id": %d, "text": %s, "html": %s, "meta": {"url": "https://example.com/%d", "text": "nested"}}`+"\n",
			i, strconv.Quote(doc), strconv.Quote("<p>"+strings.Repeat(doc, htmlTimes)+"</p>"), i)
	}
	return b.String(), docs
}

// loadOwned loads a .jsonl file's bytes as Load does, in a buffer of its
// own, which it returns: the documents are parts of it or not.
func loadOwned(t *testing.T, file string) (*Corpus, []byte) {
	t.Helper()
	buf := []byte(file)
	c := &Corpus{Split: SplitAll}
	if err := c.loadJSONL(buf); err != nil {
		t.Fatal(err)
	}
	return c, buf
}

// inBuffer counts the documents whose bytes are parts of buf.
func inBuffer(docs []string, buf []byte) int {
	n := 0
	for _, d := range docs {
		if d != "" && inside(unsafe.Slice(unsafe.StringData(d), len(d)), buf) {
			n++
		}
	}
	return n
}

// Documents that are a minor part of their .jsonl file (beside large
// other fields) are copied out of its buffer, on one goroutine or several,
// which then holds none of them; where they are most of the file, they stay
// in it. Either way they are the file's documents, with the same digest.
func TestCompactDocs(t *testing.T) {
	meta, want := jsonlWithMeta(300, 10)
	text, _ := jsonlWithMeta(300, 0)
	digest := docsHash(want)
	for _, procs := range []int{1, 4} {
		defer func(n, p int) { minJSONLPart = n; runtime.GOMAXPROCS(p) }(minJSONLPart, runtime.GOMAXPROCS(procs))
		minJSONLPart = 1000 // several runs of documents, copied on several goroutines
		for _, f := range []struct {
			name, file string
			inFile     int // documents left in the file's buffer
		}{{"metadata", meta, 0}, {"text", text, len(want)}} {
			c, buf := loadOwned(t, f.file)
			if !slices.Equal(c.Docs, want) || c.SHA256 != digest {
				t.Fatalf("%s, %d cores: documents or digest not the file's", f.name, procs)
			}
			if n := inBuffer(c.Docs, buf); n != f.inFile {
				t.Errorf("%s, %d cores: %d documents in the file's buffer, want %d", f.name, procs, n, f.inFile)
			}
		}
	}
}

// The copy is made only where the memory available holds it: otherwise the
// documents stay in the file's buffer, and load all the same.
func TestCompactDocsChecksMemory(t *testing.T) {
	file, want := jsonlWithMeta(50, 10)
	total := 0
	for _, d := range want {
		total += len(d)
	}
	t.Setenv(sysmem.Env, strconv.Itoa(total-1))
	if c, buf := loadOwned(t, file); !slices.Equal(c.Docs, want) || inBuffer(c.Docs, buf) != len(want) {
		t.Errorf("no room for the copy: documents not the file's, or not left in its buffer")
	}
	t.Setenv(sysmem.Env, strconv.Itoa(total))
	if c, buf := loadOwned(t, file); !slices.Equal(c.Docs, want) || inBuffer(c.Docs, buf) != 0 {
		t.Errorf("room for the copy: documents not the file's, or still in its buffer")
	}
}

// Once Load has copied the documents of a file of large other fields out
// of it, nothing holds the file's memory: what the heap keeps is about the
// documents and their list (0.7 MB here), not the file (8.5 MB); a file
// that is mostly text is kept whole, its documents being parts of it.
func TestLoadLetsGoOfTheFile(t *testing.T) {
	for _, c := range []struct {
		name        string
		htmlTimes   int
		least, most float64 // of the file's size, held
	}{{"metadata", 12, 0, 0.25}, {"text", 0, 0.9, 2}} {
		file, _ := jsonlWithMeta(4000, c.htmlTimes)
		path := writeTemp(t, c.name+".jsonl", []byte(file))
		before := heapInUse()
		corp, err := Load(context.Background(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		held := float64(heapInUse()) - float64(before)
		runtime.KeepAlive(corp)
		if held < c.least*float64(len(file)) || held > c.most*float64(len(file)) {
			t.Errorf("%s: the heap holds %.0f bytes more for a file of %d, want %.2f to %.2f times that",
				c.name, held, len(file), c.least, c.most)
		}
	}
}

// heapInUse is the heap's bytes in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}
