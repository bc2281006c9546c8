package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/wgpu-eval/wgpu-eval/internal/clobber"
	"github.com/wgpu-eval/wgpu-eval/model"
)

// notClobbering refuses, as a usage error, an output that is the same file
// as one of the command's inputs or as another of its outputs (clobber.Check):
// the run would destroy that file and exit 0.
func notClobbering(cmd string, outputs, inputs []clobber.File) error {
	if err := clobber.Check(outputs, inputs); err != nil {
		return usageError{fmt.Errorf("%s: %w", cmd, err)}
	}
	return nil
}

// modelFolderInputs are the files of the model at path (a folder, or a file
// in one) that a tokenizer or a model load reads, as notClobbering's inputs.
func modelFolderInputs(path string) []clobber.File {
	dir := path
	var files []string
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
		dir = filepath.Dir(path)
		files = append(files, path)
	}
	return clobber.ModelFiles(append(files, model.KnownFiles(dir)...))
}
