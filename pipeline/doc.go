// Package pipeline turns a corpus into a score: corpus -> tokens -> samples
// (windows or documents) -> length buckets -> batches -> a Backend -> NLL sums ->
// Result (NLL, perplexity, bits per byte, standard error).
//
// The entry points, in order of use:
//
//	c, err := pipeline.LoadCorpus(ctx, "tinyshakespeare", pipeline.CorpusOptions{Split: "val"})
//	toks, err := pipeline.Tokenize(ctx, c, tok, pipeline.TokenizeOptions{})
//	res, err := pipeline.Evaluate(ctx, backend, pipeline.EvalConfig{
//		Tokens: toks, EOT: tok.EOT(), Mode: pipeline.ModeStream, Ctx: 1024, TokenLen: tok.TokenLen})
//
// Stream, Strided and Documents cut token ids into model.Sequence windows with the
// Hugging Face semantics of DESIGN.md ("Evaluation methods"); Evaluate uses them.
//
// The package imports model and internal/download of this module (DESIGN.md also
// allows shaders and wgpu); the tokenizer is reached through the Tokenizer
// interface. It never prints: progress goes through callbacks.
package pipeline
