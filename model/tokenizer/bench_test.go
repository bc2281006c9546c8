package tokenizer

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	tiktoken "github.com/tiktoken-go/tokenizer"

	"github.com/wgpu-eval/wgpu-eval/internal/prereq"
)

// BenchmarkEncodeShakespeare encodes TinyShakespeare with a fresh word cache
// each time (run with -benchtime=3x; the file is 1.1 MB).
func BenchmarkEncodeShakespeare(b *testing.B) {
	text := shakespeare(b)
	tok, err := GPT2()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tok.bpe.cache.reset()
		tok.Encode(text)
	}
}

// BenchmarkTiktokenShakespeare is tiktoken-go's own r50k encoder on the same text.
func BenchmarkTiktokenShakespeare(b *testing.B) {
	text := shakespeare(b)
	codec, err := tiktoken.Get(tiktoken.R50kBase)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, _, err := codec.Encode(text); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildGPT2 builds the built-in tokenizer from tiktoken-go's table.
func BenchmarkBuildGPT2(b *testing.B) {
	codec, err := tiktoken.Get(tiktoken.R50kBase)
	if err != nil {
		b.Fatal(err)
	}
	raw := make([]string, gpt2EOT)
	for id := range raw {
		raw[id], _ = codec.Decode([]uint{uint(id)})
	}
	for b.Loop() {
		if _, err := fromRanks(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeRealShakespeare encodes TinyShakespeare with the real Llama
// 2, Llama 3 and Qwen3 tokenizers ($WGPU_TEST_HF_TOKENIZERS), word caches
// emptied each time.
func BenchmarkEncodeRealShakespeare(b *testing.B) {
	_, modules := prereq.HFTokenizers(b)
	text := shakespeare(b)
	for _, rt := range realTokenizers {
		b.Run(rt.name, func(b *testing.B) { benchEncodeCold(b, realDir(b, modules, rt), text) })
	}
}

// BenchmarkLoadReal loads the real tokenizer files.
func BenchmarkLoadReal(b *testing.B) {
	_, modules := prereq.HFTokenizers(b)
	for _, rt := range realTokenizers {
		b.Run(rt.name, func(b *testing.B) {
			dir := realDir(b, modules, rt)
			for b.Loop() {
				if _, err := Load(dir); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// longPieces are single GPT-2 pieces of 1 MB: runs of one byte, which
// merge into few long tokens, and letters drawn at random from two and from
// 26, which leave many short ones.
func longPieces() []struct{ name, text string } {
	const n = 1 << 20
	rnd := rand.New(rand.NewPCG(1, 2))
	random := func(alphabet string) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		return string(b)
	}
	return []struct{ name, text string }{
		{"a", strings.Repeat("a", n)},
		{"=", strings.Repeat("=", n)},
		{"ab", random("ab")},
		{"a-z", random("abcdefghijklmnopqrstuvwxyz")},
	}
}

// BenchmarkEncodeLongPiece encodes pieces of 1 MB (mergeHeap's path) with
// the built-in GPT-2 tokenizer.
func BenchmarkEncodeLongPiece(b *testing.B) {
	tok, err := GPT2()
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range longPieces() {
		b.Run(p.name, func(b *testing.B) {
			b.SetBytes(int64(len(p.text)))
			b.ReportAllocs()
			for b.Loop() {
				tok.Encode(p.text)
			}
		})
	}
}

// BenchmarkEncodeGoldenShakespeare encodes TinyShakespeare with small
// tokenizer.json files of testdata/hf (a byte-level Split as Llama 3's, a
// Metaspace pre-tokenizer, SentencePiece-style normalizers), word caches
// emptied each time: the pipeline's path where the real files are not here.
func BenchmarkEncodeGoldenShakespeare(b *testing.B) {
	text := shakespeare(b)
	for _, name := range []string{"bl-llama3", "ms-always", "sp"} {
		b.Run(name, func(b *testing.B) { benchEncodeCold(b, filepath.Join("testdata", "hf", name), text) })
	}
}

// benchEncodeCold encodes text with the tokenizer.json tokenizer in dir,
// its word caches emptied each time.
func benchEncodeCold(b *testing.B, dir, text string) {
	tok, err := Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		m := tok.hf.model
		m.cache.reset()
		m.bpe.cache.reset()
		tok.Encode(text)
	}
}
