// Package tokenizer turns text into GPT-2 token ids and back: GPT-2's
// byte-level BPE, with the hand-written GPT-2 pre-tokenizer and a rank-ordered
// merge loop of its own. The vocabulary and merges come from a model folder's
// vocab.json + merges.txt or tokenizer.json (Load), or are built in (GPT2):
// recovered from the r50k_base token table of github.com/tiktoken-go/tokenizer.
//
// Special tokens such as <|endoftext|> are never recognised in text: they are
// encoded as plain text, as OpenAI's encoder.py and tiktoken with
// disallowed_special=() do (Hugging Face's tokenizers would map the string to
// 50256). Callers that want an end-of-text token insert EOT themselves.
//
// A Tokenizer is immutable after construction (but for an internal word cache)
// and safe for concurrent use.
//
// It imports nothing of this module; of outside code, only tiktoken-go.
package tokenizer
