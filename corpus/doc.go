// Package corpus reads the text a model is scored on and turns it into token
// ids: the corpus formats (UTF-8 text or stdin, JSONL documents, llm.c token
// files), nanoGPT's train/val split, the TinyShakespeare download (sha256-checked
// and cached), and the token cache.
//
// The entry points, in order of use:
//
//	c, err := corpus.Load(ctx, "tinyshakespeare", corpus.Options{Split: corpus.SplitVal})
//	toks, err := corpus.Tokenize(ctx, c, tok, corpus.TokenizeOptions{})
//
// toks then goes to pipeline.Evaluate, which cuts it into windows and scores it.
// Tokenize encodes on all cores (TokenizeOptions.Threads), with the ids of
// encoding on one: documents apart, and long texts in pieces where the
// tokenizer says they may be cut (Cutter).
//
// The package imports internal/download, internal/atomicfile,
// internal/msgpackbound, internal/infile and internal/sysmem of this module and
// nothing of the model or the GPU; the
// tokenizer is reached through the Tokenizer interface. It never prints:
// progress and cache failures go through callbacks.
package corpus
