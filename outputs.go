package wgpueval

import (
	"errors"
	"fmt"

	"github.com/wgpu-eval/wgpu-eval/corpus"
	"github.com/wgpu-eval/wgpu-eval/internal/clobber"
	"github.com/wgpu-eval/wgpu-eval/internal/infile"
	"github.com/wgpu-eval/wgpu-eval/pipeline/runfile"
)

// Files are the model's files that Open and Evaluate read, those that exist:
// its weight files and, for a Hugging Face model, the config, shard index
// and tokenizer files beside them. Evaluate refuses outputs on them; a
// program that writes files of its own can check its paths against them.
func (e *Evaluator) Files() []string { return e.ck.InputFiles() }

// checkOutputPaths refuses, as an *OptionError of the output's field, an
// output of opt that is the same file as an input of the run (the corpus
// file, the local TinyShakespeare copy, a model file) or as another output:
// writing it would destroy that file, and a checkpoint on the path of a
// result would be deleted, result and all, when the run completes.
func (e *Evaluator) checkOutputPaths(data Data, opt EvalOptions) error {
	outputs := []struct {
		field string
		file  clobber.File
	}{
		{"JSON", clobber.File{Role: "the JSON result", Path: opt.JSON}},
		{"PerToken", clobber.File{Role: "the per-token file", Path: opt.PerToken}},
		{"PerDocument", clobber.File{Role: "the per-document file", Path: opt.PerDocument}},
		{"Checkpoint", clobber.File{Role: "the checkpoint", Path: opt.Checkpoint}},
	}
	// First the files a checkpoint keeps beside it, so that an output on one
	// of them is the output at fault.
	var outs []clobber.File
	if opt.Checkpoint != "" {
		for _, p := range runfile.CheckpointSidecars(opt.Checkpoint) {
			outs = append(outs, clobber.File{Role: "a file the checkpoint keeps beside it", Path: p})
		}
	}
	for _, o := range outputs {
		outs = append(outs, o.file)
	}
	inputs := clobber.ModelFiles(e.Files())
	if p := data.file(); p != "" {
		inputs = append(inputs, clobber.File{Role: "the corpus", Path: p})
	}
	if data.name == corpus.TinyShakespeare && opt.TinyShakespeareFile != "" {
		inputs = append(inputs, clobber.File{Role: "the TinyShakespeare copy", Path: opt.TinyShakespeareFile})
	}
	err := clobber.Check(outs, inputs)
	var cl *clobber.Clash
	if !errors.As(err, &cl) {
		return err
	}
	field := ""
	for _, o := range outputs {
		if o.file == cl.Output {
			field = o.field
		}
	}
	return &OptionError{field, cl.Output.Path, clashReason(cl)}
}

// clashReason says what an output path clashes with, for an OptionError
// that names the output.
func clashReason(cl *clobber.Clash) string {
	if cl.Input {
		return fmt.Sprintf("the same file as %s (%s), which it would overwrite; write the output elsewhere", cl.Other.Role, infile.Quote(cl.Other.Path))
	}
	return fmt.Sprintf("the same file as %s, which it would replace; give each output its own path", cl.Other.Role)
}

// file is the path of the file a Named corpus reads; "" for stdin, the
// named TinyShakespeare and data held in memory.
func (d Data) file() string {
	if d.memory || d.name == "-" || d.name == corpus.TinyShakespeare {
		return ""
	}
	return d.name
}
