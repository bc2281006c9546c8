package backend

import "github.com/wgpu-eval/wgpu-eval/model"

// Model is the CPU forward behind the backend, for what is not batch scoring
// (text generation with model.Generator).
func (c *CPU) Model() *model.CPU { return c.c }
