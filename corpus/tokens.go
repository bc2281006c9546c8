package corpus

import (
	"context"
	"fmt"
)

// Tokenizer is what the pipeline needs of a tokenizer (*tokenizer.Tokenizer of
// package model/tokenizer satisfies it).
type Tokenizer interface {
	// Encode returns the ids of text, with no special tokens added.
	Encode(text string) []int32
	// ID identifies the vocabulary and merges, for cache keys.
	ID() string
	// EOT is the <|endoftext|> id.
	EOT() int32
	// VocabSize is the number of ids.
	VocabSize() int
}

// Tokens is a tokenized corpus.
type Tokens struct {
	// Docs holds the ids: one slice for a continuous text or a token file, one per
	// document for a corpus of documents.
	Docs [][]int32
	// Separated is true when Docs are separate documents (see Corpus.Separated).
	Separated bool
}

// Len is the number of ids in all of Docs.
func (t *Tokens) Len() int {
	n := 0
	for _, d := range t.Docs {
		n += len(d)
	}
	return n
}

// Stream returns the ids as one sequence, for the stream and strided modes: a
// continuous text (or token file) as it is; separate documents each preceded by
// eot, as GPT-2's training data and llm.c's token files lay them out.
func (t *Tokens) Stream(eot int32) []int32 {
	if !t.Separated && len(t.Docs) == 1 {
		return t.Docs[0]
	}
	out := make([]int32, 0, t.Len()+len(t.Docs))
	for _, d := range t.Docs {
		if t.Separated {
			out = append(out, eot)
		}
		out = append(out, d...)
	}
	return out
}

// Documents returns the ids as documents, for the documents mode: separate
// documents as they are; a continuous stream cut at its eot tokens (the document
// boundaries of an llm.c token file; a text holds none and stays one document).
// Empty documents are dropped.
func (t *Tokens) Documents(eot int32) [][]int32 {
	var docs [][]int32
	for _, d := range t.Docs {
		if t.Separated {
			if len(d) > 0 {
				docs = append(docs, d)
			}
			continue
		}
		start := 0
		for i, id := range d {
			if id == eot {
				if i > start {
					docs = append(docs, d[start:i:i])
				}
				start = i + 1
			}
		}
		if len(d) > start {
			docs = append(docs, d[start:])
		}
	}
	return docs
}

// TokenizeOptions tunes Tokenize. The zero value is usable.
type TokenizeOptions struct {
	// CacheDir is the root of wgpu-eval's cache; "" means os.UserCacheDir()/wgpu-eval.
	// Tokenized corpora are kept in CacheDir/tokens.
	CacheDir string
	// NoCache skips reading and writing the cache.
	NoCache bool
	// CacheError, when set, is told of a cache that could not be written; the
	// cache is only an accelerator, so Tokenize goes on regardless.
	CacheError func(error)
}

// Tokenize encodes c with tok. Text is encoded document by document (a
// continuous text as one piece, exactly as the tokenizer splits it); the result
// is cached under CacheDir/tokens, keyed by c.SHA256 and tok.ID(). A token file's
// ids are checked against tok.VocabSize() and used as they are.
func Tokenize(ctx context.Context, c *Corpus, tok Tokenizer, opt TokenizeOptions) (*Tokens, error) {
	if c.Format == FormatTokens {
		vocab := tok.VocabSize()
		for i, id := range c.Tokens {
			if id < 0 || int(id) >= vocab {
				return nil, fmt.Errorf("corpus %s: token %d: id %d is not below the vocabulary size %d", c.Name, i, id, vocab)
			}
		}
		return &Tokens{Docs: [][]int32{c.Tokens}}, nil
	}

	var path string
	if !opt.NoCache {
		root, err := cacheRoot(opt.CacheDir)
		if err != nil {
			reportCacheError(opt, err)
		} else {
			path = cachePath(root, c.SHA256, tok.ID())
			if docs, ok := readCache(path, c.SHA256, tok.ID(), len(c.Docs), tok.VocabSize()); ok {
				return &Tokens{Docs: docs, Separated: c.Separated}, nil
			}
		}
	}

	docs := make([][]int32, len(c.Docs))
	for i, d := range c.Docs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("tokenize %s: %w", c.Name, err)
		}
		docs[i] = tok.Encode(d)
	}
	if path != "" {
		if err := writeCache(path, c.SHA256, tok.ID(), docs); err != nil {
			reportCacheError(opt, err)
		}
	}
	return &Tokens{Docs: docs, Separated: c.Separated}, nil
}

func reportCacheError(opt TokenizeOptions, err error) {
	if opt.CacheError != nil {
		opt.CacheError(fmt.Errorf("token cache: %w", err))
	}
}
