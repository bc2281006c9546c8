// Package tokenizer is GPT-2's byte-level BPE.
package tokenizer
