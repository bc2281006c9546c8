package synth

import (
	"strings"

	"github.com/wgpu-eval/wgpu-eval/model"
)

// gpt2Shapes are TinyConfig and the GPT-2 sizes by name.
var gpt2Shapes = map[string]func() model.Config{
	"tiny":        TinyConfig,
	"gpt2":        GPT2Small,
	"124m":        GPT2Small,
	"gpt2-medium": GPT2Medium,
	"355m":        GPT2Medium,
	"gpt2-large":  GPT2Large,
	"774m":        GPT2Large,
	"gpt2-xl":     GPT2XL,
	"1558m":       GPT2XL,
	"1.5b":        GPT2XL,
}

// Shape is the model shape name stands for, in any case: tiny, gpt2 or
// 124M, gpt2-medium or 355M, gpt2-large or 774M, gpt2-xl, 1558M or 1.5B, or
// one of LlamaShapeNames.
func Shape(name string) (model.Config, bool) {
	name = strings.ToLower(name)
	if f, ok := gpt2Shapes[name]; ok {
		return f(), true
	}
	return LlamaShape(name)
}
