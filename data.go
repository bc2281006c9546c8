package wgpueval

import (
	"context"

	"github.com/wgpu-eval/wgpu-eval/corpus"
)

// Data is what Evaluate scores: a corpus by name (Named), or text, documents
// or token ids a program holds in memory (Text, Documents, TokenIDs). The
// zero value is no corpus.
type Data struct {
	name string // how results name it (Result.Data, before the split)
	// load returns the corpus; opt carries the split, the separator and
	// where the named corpora come from.
	load func(ctx context.Context, opt corpus.Options) (*corpus.Corpus, error)
	// memory is set for in-memory data, which is never written to the
	// token cache.
	memory bool
}

// Named is the corpus spec names, as the command's --data takes it:
// "tinyshakespeare" (downloaded once, sha256-checked, cached), a text file,
// a .jsonl file of documents (a string field "text" per line), an llm.c
// token file, or "-" for EvalOptions.Stdin.
func Named(spec string) Data {
	return Data{name: spec, load: func(ctx context.Context, opt corpus.Options) (*corpus.Corpus, error) {
		return corpus.Load(ctx, spec, opt)
	}}
}

// Text is UTF-8 text held in memory, called name in results: one continuous
// text, split (EvalOptions.Split) and cut into documents
// (EvalOptions.Separator) as a text file would be.
func Text(name, text string) Data {
	return Data{name: name, memory: true, load: func(_ context.Context, opt corpus.Options) (*corpus.Corpus, error) {
		return corpus.FromText(name, text, opt)
	}}
}

// Documents is separate UTF-8 documents held in memory, called name in
// results, as a .jsonl file's: ModeDocuments scores each alone, the other
// modes join them with the separator token before each. Like a .jsonl file,
// it has no split and is not cut at a separator: EvalOptions.Split (other
// than all) or Separator is an error. The slice must not change until
// Evaluate returns.
func Documents(name string, docs []string) Data {
	return Data{name: name, memory: true, load: func(_ context.Context, opt corpus.Options) (*corpus.Corpus, error) {
		c, err := corpus.FromDocuments(name, docs)
		return whole(c, err, opt)
	}}
}

// TokenIDs is a stream of the model's token ids held in memory, called name
// in results, scored as it is (no tokenizer, no separator added), as an
// llm.c token file is; like one, it has no split and is not cut at a
// separator (EvalOptions.Split other than all, or Separator, is an error).
// An id outside the model's vocabulary is an error before anything is
// scored. The slice must not change until Evaluate returns.
func TokenIDs(name string, ids []int32) Data {
	return Data{name: name, memory: true, load: func(_ context.Context, opt corpus.Options) (*corpus.Corpus, error) {
		c, err := corpus.FromTokens(name, ids)
		return whole(c, err, opt)
	}}
}

// whole is an in-memory corpus of documents or token ids (c, or the error
// err of making it) loaded with opt: the options only a text corpus honours
// (a split, a separator) are refused (corpus.Corpus.CheckWhole).
func whole(c *corpus.Corpus, err error, opt corpus.Options) (*corpus.Corpus, error) {
	if err == nil {
		err = c.CheckWhole(opt.Split, opt.Separator)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}
