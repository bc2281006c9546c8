package regex

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLlama3Shakespeare splits TinyShakespeare with Llama 3's pattern
// (skipped where ../shared/data/tinyshakespeare.txt is not beside the module).
func BenchmarkLlama3Shakespeare(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "..", "shared", "data", "tinyshakespeare.txt"))
	if err != nil {
		b.Skip(err)
	}
	re, err := Compile(llama3Pattern)
	if err != nil {
		b.Fatal(err)
	}
	mt := re.Matcher()
	text := string(data)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		mt.FindAll(text, func(int, int) bool { return true })
	}
}
