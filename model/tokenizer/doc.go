// Package tokenizer turns text into token ids and back, for the models the
// evaluation scores: GPT-2's byte-level BPE, and the Hugging Face
// tokenizer.json files of the Llama family (Llama 2's SentencePiece-style
// BPE, its spaces written as "▁" by normalizers or, in newer conversions
// such as Mistral 7B v0.3's, by a Metaspace pre-tokenizer; Llama 3's and
// Qwen's byte-level BPE with a Split pattern). Load picks
// a model folder's files: vocab.json + merges.txt, or tokenizer.json (with
// tokenizer_config.json beside it), else the built-in GPT-2 tokenizer
// (GPT2), recovered from the r50k_base token table of
// github.com/tiktoken-go/tokenizer.
//
// GPT-2's tokenizers (vocab.json + merges.txt, a GPT-2 tokenizer.json, the
// built-in one) run a hand-written GPT-2 pre-tokenizer and a rank-ordered
// merge loop of their own. Special tokens such as <|endoftext|> are never
// recognised in their text: they are encoded as plain text, as OpenAI's
// encoder.py and tiktoken with disallowed_special=() do (Hugging Face's
// tokenizers would map the string to 50256). Callers that want an
// end-of-text token insert EOT themselves.
//
// Other tokenizer.json files run as Hugging Face's tokenizers runs them,
// component by component (LoadJSON lists what is supported; anything else
// is refused, naming it): their added and special tokens are matched in the
// text first, as Hugging Face does, so "<|endoftext|>" in a Qwen text is
// token 151643. EncodeWithSpecials adds the post-processor's special tokens
// (Llama 2's BOS): the ids of transformers' tokenizer(text). The ids are
// those of Hugging Face's tokenizers, checked on real Llama 2-style (also
// rewritten to Metaspace's forms), Llama 3 and Qwen3 files
// (TestRealTokenizers), and on small files of every supported component
// (TestHFGoldens); Decode gives its decode's text. Their Split patterns
// (Oniguruma's, with lookahead) run on the matcher of internal/regex.
//
// Metaspace's prepend_scheme "first" puts "▁" only before the stretch of
// text at byte 0 of the text, as Hugging Face does: not after an added
// token that starts the text ("<s>hi" is <s>, "hi"), nor after one within
// it, nor before a text whose start a normalizer deleted.
//
// A Tokenizer is immutable after construction (but for internal word caches,
// read without locks: see wordcache.go) and safe for concurrent use. Cut and
// EncodePiece let a long text be encoded in pieces, in parallel, with the
// ids of the whole (package corpus does so): cut.go says where each kind of
// tokenizer may be cut, and which are never cut.
//
// BPE holds the whole of each piece of text while it merges it, as Hugging
// Face's tokenizers does: MergeMemory and PieceMemory bound that memory
// (MergeBytesPerSymbol, 20 bytes a byte for byte-level BPE), so that a
// caller can refuse a text with a piece too long for the memory it has (a
// run of one character of many megabytes) before it encodes it. A piece of
// more than MaxPieceSymbols symbols (2^31: BPE's positions are int32) is
// never merged: EncodeContext, EncodeHead and EncodePiece return
// ErrPieceTooLong, wrapped, naming where it is, and Encode returns nil.
//
// Characters are classed (letters, numbers, spaces, word characters,
// punctuation) with the Unicode data Hugging Face's tokenizers has, not Go's
// (Unicode 15.0 in Go 1.26): Unicode 16.0 in patterns (Oniguruma), GPT-2's
// split and single_word, 17.0 in Digits (Rust's is_numeric), an older
// version in Punctuation and the normal forms; see internal/ucd.
//
// It imports nothing of this module but its own internal/regex and
// internal/ucd; of outside code, tiktoken-go and golang.org/x/text (Unicode
// normalization).
package tokenizer
