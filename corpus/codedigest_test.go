package corpus

import (
	"testing"

	"github.com/wgpu-eval/wgpu-eval/internal/srcdigest"
)

// TestTokenizerCodeDigest holds tokenizerCode to the source it digests: a
// change of the tokenizers, of this package or of the modules they import
// needs `go generate ./corpus`, so that token caches written by other code
// are not read as this code's ids.
func TestTokenizerCodeDigest(t *testing.T) {
	got, err := srcdigest.Tokenizer.Digest("..")
	if err != nil {
		t.Fatal(err)
	}
	if got != tokenizerCode {
		t.Errorf("tokenizerCode is %s, the source's digest %s: run `go generate ./corpus` (the tokenizers', corpus's or their modules' code changed)", tokenizerCode, got)
	}
}
