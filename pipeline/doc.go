// Package pipeline turns tokens into a score: token ids (a corpus.Tokens) ->
// samples (windows or documents) -> length buckets -> batches -> a Backend -> NLL
// sums -> Result (NLL, perplexity, bits per byte, standard error). It also
// writes and merges what runs leave behind: checkpoints, per-token files, shard
// results and comparisons.
//
// The entry points, in order of use (corpus loads and tokenizes the text):
//
//	c, err := corpus.Load(ctx, "tinyshakespeare", corpus.Options{Split: "val"})
//	toks, err := corpus.Tokenize(ctx, c, tok, corpus.TokenizeOptions{})
//	res, err := pipeline.Evaluate(ctx, backend, pipeline.EvalConfig{
//		Tokens: toks, EOT: tok.DocSeparator(), Mode: pipeline.ModeStream, Ctx: 1024, TokenLen: tok.TokenLen})
//
// Stream, Strided and Documents cut token ids into model.Sequence windows with the
// Hugging Face semantics of DESIGN.md ("Evaluation methods"); Evaluate uses them.
// EvalConfig.BOSEachWindow is the one departure from those semantics, on request:
// every window then starts with a BOS, as llama.cpp's perplexity tool starts its
// chunks.
//
// The package imports corpus, model, shaders and wgpu of this module, and
// internal/atomicfile and internal/msgpackbound for the files it writes and
// reads. It never prints: progress goes through callbacks.
package pipeline
