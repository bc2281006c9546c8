package tokenizer

import (
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
		b.Run(rt.name, func(b *testing.B) {
			tok, err := Load(realDir(b, modules, rt))
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
		})
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
