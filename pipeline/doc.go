// Package pipeline turns tokens into a score: token ids (a corpus.Tokens) ->
// samples (windows or documents) -> length buckets -> batches -> a Backend -> NLL
// sums -> Result (NLL, perplexity, bits per byte, standard error).
//
// The evaluation lives in three rooms, each a package with one job:
//
//   - pipeline (this package): samples, batches, the Backend interface,
//     Evaluate and the Result. It needs corpus, model and model/exactsum only.
//   - pipeline/backend: what scores a batch: devices (backend.Devices,
//     backend.Open for --device), the CPU backend and the GPU backend. The
//     one package here that links the kernels, the WGSL compiler and Vulkan.
//   - pipeline/runfile: what runs leave behind: per-token files and logs,
//     checkpoints (with the Checkpointer that writes them during a run),
//     shard merges, comparisons and exports, result files. It links no GPU
//     code, so a tool that reads per-token files stays small.
//
// The entry points, in order of use (corpus loads and tokenizes the text):
//
//	c, err := corpus.Load(ctx, "tinyshakespeare", corpus.Options{Split: "val"})
//	toks, err := corpus.Tokenize(ctx, c, tok, corpus.TokenizeOptions{})
//	b, err := backend.Open(ctx, spec, weights, backend.Options{})
//	res, err := pipeline.Evaluate(ctx, b, pipeline.EvalConfig{
//		Tokens: toks, EOT: tok.DocSeparator(), Mode: pipeline.ModeStream, Ctx: 1024, TokenLen: tok.TokenLen})
//
// Stream, Strided and Documents cut token ids into model.Sequence windows with the
// Hugging Face semantics of DESIGN.md ("Evaluation methods"); Evaluate uses them.
// EvalConfig.BOSEachWindow is the one departure from those semantics, on request:
// every window then starts with a BOS, as llama.cpp's perplexity tool starts its
// chunks. NewMulti spreads batches over several backends (--device all).
//
// The package never prints: progress goes through callbacks.
package pipeline
