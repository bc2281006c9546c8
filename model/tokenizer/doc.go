// Package tokenizer turns text into GPT-2 token ids and back: GPT-2's byte-level
// BPE, either the built-in r50k_base encoding (GPT2, through
// github.com/tiktoken-go/tokenizer) or the vocab.json + merges.txt or
// tokenizer.json files of a model folder (Load), run by this package's own BPE.
//
// Special tokens such as <|endoftext|> are never recognised in text: they are
// encoded as plain text, as every token fact in ../shared/data/README.md assumes.
// Callers that want an end-of-text token insert EOT themselves.
//
// A Tokenizer is immutable after construction and safe for concurrent use.
//
// It imports nothing of this module.
package tokenizer
