//go:build unix

package corpus

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
