package model

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/wgpu-eval/wgpu-eval/internal/infile"
)

// checkRegular reports why path cannot be read as a model file: it is missing,
// a symbolic link to nothing or one that cannot be followed (a loop), or not a
// regular file (a folder, or a FIFO, device or socket, whose open or read
// could block forever). It is called before every open.
func checkRegular(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		if lfi, lerr := os.Lstat(path); lerr == nil && lfi.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(path)
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%s is a symbolic link to %s, which does not exist", path, target)
			}
			return fmt.Errorf("%s is a symbolic link that cannot be followed (a loop?): %w", path, err)
		}
		return err // *PathError names the file
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is %s, not a regular file", path, infile.Kind(fi.Mode()))
	}
	return nil
}

// present reports whether anything (even a broken link) is at path, and if so
// the error of checkRegular.
func present(path string) (bool, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return true, checkRegular(path)
}

// knownFiles are the files of a Hugging Face model folder that loading it
// may read: its config, weights, shard index, and tokenizer files.
var knownFiles = []string{"config.json", "model.safetensors", indexName, "generation_config.json",
	"vocab.json", "merges.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"}

// KnownFiles are the files in the folder dir that loading a Hugging Face
// model from it may read (config, weights, shard index, tokenizer files),
// those that exist. A command checks its outputs against them, so that a
// result never overwrites the model.
func KnownFiles(dir string) []string {
	var files []string
	for _, name := range knownFiles {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			files = append(files, p)
		}
	}
	return files
}

// InputFiles are the files of c's model that loading and scoring it read,
// those that exist: its weight files, and for a Hugging Face model the
// files of KnownFiles beside them.
func (c *Checkpoint) InputFiles() []string {
	files := slices.Clone(c.files)
	if c.llmc || len(c.files) == 0 {
		return files
	}
	for _, p := range KnownFiles(filepath.Dir(c.files[0])) {
		if !slices.Contains(files, p) {
			files = append(files, p)
		}
	}
	return files
}
