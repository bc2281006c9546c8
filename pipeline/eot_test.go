package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/wgpu-eval/wgpu-eval/corpus"
)

// Documents mode with a vocabulary that has no <|endoftext|> (EOT -1) says
// so, instead of "end-of-text id -1 is not below the vocabulary size".
func TestEvaluateDocumentsWithoutEOT(t *testing.T) {
	tk := &corpus.Tokens{Docs: [][]int32{{1, 2, 3}}}
	f := &fakeBackend{t: t, ctx: 4}
	_, err := Evaluate(context.Background(), f, EvalConfig{Tokens: tk, Ctx: 4, Mode: ModeDocuments, VocabSize: 6, EOT: -1})
	if err == nil || !strings.Contains(err.Error(), "<|endoftext|>") || !strings.Contains(err.Error(), "--mode stream") {
		t.Errorf("err = %v, want one saying the tokenizer has no <|endoftext|>", err)
	}
	if len(f.batches) != 0 {
		t.Error("backend called")
	}
}
