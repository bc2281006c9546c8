// Package model is the models on the host: their configuration (GPT-2, and
// the Llama family: Llama 2/3.x, Mistral, Qwen2/2.5, Qwen3 as one decoder
// with options, Config.Arch), their weights (Hugging Face safetensors, one
// file or sharded, and llm.c checkpoints for GPT-2), and the pure-Go CPU
// forward pass that is both the fallback where no GPU exists and the
// reference the GPU path is tested against.
//
// The tensor tables (tensors.go: GPT-2's layerTable, the Llama family's
// llamaTable) say every tensor's name, shape and role once; loaders, checks
// and backends read them. The CPU runs both decoders with the same kernels:
// a GPT-2 block (cpu_block.go) or a Llama-family block (cpu_llama.go:
// RMSNorm, rotary embedding, grouped-query attention, SwiGLU).
//
// It imports no GPU code and nothing of this module but small internal
// utilities (internal/...). Finding and downloading a model is model/hub's
// job, text to ids model/tokenizer's, synthetic weights and the writers of
// their files model/synth's.
package model
