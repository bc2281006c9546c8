// Package runfile reads and writes what evaluation runs leave behind:
// per-token files (ReadPerToken, WritePerToken) and the sidecar log that
// keeps a checkpointed run's records (PerTokenLog), run checkpoints
// (RunCheckpoint, and the Checkpointer that saves them as batches finish),
// result files (ParseResult, WriteJSON), the merge of shard results and
// per-token files (Merge, MergePerToken), comparisons of two runs (Compare,
// with the KL divergence of top log-probabilities), exports (CSV, JSONL)
// and per-document scores.
//
// Every reader treats its file as untrusted: sizes are bounded, checksums
// and exact sums are verified, and damage is an error naming the file and
// the place, never a panic. The package links no GPU code (it needs only
// pipeline, model and small file helpers), so a program that reads
// per-token files stays small.
package runfile
