//go:build unix

package corpus

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
	"github.com/wgpu-eval/wgpu-eval/model/tokenizer"
)

// BenchmarkTokenize tokenizes TinyShakespeare repeated to about 50 MB, as
// one text and as a JSONL-style corpus of its paragraphs, with GPT-2's
// tokenizer and (where $WGPU_TEST_HF_TOKENIZERS is set) Llama 3's, on 1 and
// 2 goroutines (run with -benchtime 2x; the word caches are warm after the
// first copy of the text, as they are on any corpus that long).
func BenchmarkTokenize(b *testing.B) {
	data := string(shakespeareB(b))
	text := strings.Repeat(data, 46) // 51.3 MB
	one, err := FromText("text", text, Options{})
	if err != nil {
		b.Fatal(err)
	}
	paras := strings.Split(strings.TrimSpace(data), "\n\n")
	var docs []string
	for range 46 {
		docs = append(docs, paras...)
	}
	jsonl, err := FromDocuments("paragraphs", docs)
	if err != nil {
		b.Fatal(err)
	}
	gpt2, err := tokenizer.GPT2()
	if err != nil {
		b.Fatal(err)
	}
	toks := []struct {
		name string
		tok  Tokenizer
	}{{"gpt2", gpt2}}
	if modules := os.Getenv(prereq.HFTokenizersEnv); modules != "" {
		tok, err := tokenizer.Load(filepath.Join(modules, "@lenml", "tokenizer-llama3", "models"))
		if err != nil {
			b.Fatal(err)
		}
		toks = append(toks, struct {
			name string
			tok  Tokenizer
		}{"llama3", tok})
	}
	for _, tk := range toks {
		for _, c := range []*Corpus{one, jsonl} {
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/%s/threads=%d", tk.name, c.Name, threads), func(b *testing.B) {
					b.SetBytes(int64(c.Bytes()))
					cpu0 := cpuSeconds()
					for b.Loop() {
						if _, err := Tokenize(context.Background(), c, tk.tok, TokenizeOptions{NoCache: true, Threads: threads}); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
				})
			}
		}
	}
}

// cpuSeconds is the CPU time the process has used, user and system.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func shakespeareB(b *testing.B) []byte {
	b.Helper()
	data, err := os.ReadFile(shakespearePath)
	if err != nil {
		prereq.Missing(b, "tinyshakespeare", err)
	}
	return data
}

// BenchmarkDocsHash digests TinyShakespeare's paragraphs, 46 times over
// (355,000 documents, 51 MB), as loading a JSONL corpus does.
func BenchmarkDocsHash(b *testing.B) {
	paras := strings.Split(strings.TrimSpace(string(shakespeareB(b))), "\n\n")
	var docs []string
	for range 46 {
		docs = append(docs, paras...)
	}
	size := 0
	for _, d := range docs {
		size += len(d)
	}
	b.SetBytes(int64(size))
	for b.Loop() {
		docsHash(docs)
	}
}

// BenchmarkLoadJSONL loads a .jsonl file of about 50 MB: TinyShakespeare
// passages of 10 kB, one a line, with escapes (\n, \", \\, \u00e9,
// surrogate pairs) in every other line and raw UTF-8 in the rest, an "id"
// before the "text" and a "meta" object (with a "text" of its own) after
// it; the same text as one line; and lines with an "html" field holding the
// passage ten times over (the documents a tenth of the file, copied out of
// it). held-MB is what the heap keeps of the corpus once loaded.
func BenchmarkLoadJSONL(b *testing.B) {
	docs := benchDocs(shakespeareB(b), 50<<20, 10<<10)
	var lines, one, html strings.Builder
	for i, d := range docs {
		lines.WriteString(benchLine(i, d, i%2 == 0, ""))
		if html.Len() < 50<<20 {
			html.WriteString(benchLine(i, d, i%2 == 0, strings.Repeat(d, 10)))
		}
	}
	one.WriteString(benchLine(0, strings.Join(docs, "\n"), false, ""))
	dir := b.TempDir()
	for _, f := range []struct{ name, data string }{{"lines", lines.String()}, {"one-line", one.String()}, {"html", html.String()}} {
		path := filepath.Join(dir, f.name+".jsonl")
		if err := os.WriteFile(path, []byte(f.data), 0o644); err != nil {
			b.Fatal(err)
		}
		b.Run(f.name, func(b *testing.B) {
			b.SetBytes(int64(len(f.data)))
			for b.Loop() {
				if _, err := Load(context.Background(), path, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			before := heapInUse()
			c, err := Load(context.Background(), path, Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(heapInUse()-before)/1e6, "held-MB")
			runtime.KeepAlive(c)
		})
	}
}

// benchDocs cuts TinyShakespeare, repeated, into documents of size bytes,
// total bytes in all, with a word of the extras every 40 words or so.
func benchDocs(src []byte, total, size int) []string {
	extras := []string{"caf\u00e9", "na\u00efve", `"quoted"`, `back\slash`, "\U0001F600", "\u4e2d\u6587", "tab\there"}
	words := strings.Split(string(src), " ")
	var docs []string
	var d strings.Builder
	for i, n := 0, 0; n < total; i++ {
		w := words[i%len(words)]
		if i%40 == 39 {
			w = extras[i/40%len(extras)]
		}
		d.WriteString(w)
		d.WriteByte(' ')
		if d.Len() >= size {
			docs = append(docs, d.String())
			n += d.Len()
			d.Reset()
		}
	}
	return docs
}

// benchLine is a .jsonl line of the document text: as JSON, with every
// character past ASCII an escape where ascii is true (as Python's
// json.dumps writes it), raw UTF-8 otherwise; with an "html" field holding
// html where it is not empty.
func benchLine(id int, text string, ascii bool, html string) string {
	meta := fmt.Sprintf(`{"url": "https://example.com/page/%d", "lang": "en", "score": 0.87, "tags": ["web", "shard-3"], "text": "nested"}`, id)
	if html != "" {
		meta += `, "html": ` + benchQuote(html, ascii)
	}
	return fmt.Sprintf(`{"id": %d, "text": %s, "meta": %s}`+"\n", id, benchQuote(text, ascii), meta)
}

// benchQuote is s as a JSON string, as benchLine writes it.
func benchQuote(s string, ascii bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r < 0x80 || !ascii:
			b.WriteRune(r)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, hi, lo)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
