// Package model is GPT-2 on the host: its configuration, its weights (Hugging Face
// safetensors and llm.c checkpoints read from files; model/hub finds and
// downloads them), and the
// pure-Go CPU forward pass that is both the fallback where no GPU exists and the
// reference the GPU path is tested against.
//
// It imports no GPU code and nothing of this module but small internal utilities
// (internal/...); the tokenizer lives in model/tokenizer and the hub client in model/hub.
package model
