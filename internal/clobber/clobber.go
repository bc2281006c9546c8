// Package clobber finds the output of a command that would overwrite one of
// its own inputs, or another of its outputs: the corpus named again as the
// JSON result, a model's config.json as the per-token file, the checkpoint
// on the path of the result (which the end of the run deletes). Such a run
// would destroy data and exit 0, so commands refuse it before they start. It
// imports nothing of this module.
package clobber

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// A File is a path a command reads or writes, with what it is to the user:
// "--json", "the corpus", "the model's config.json".
type File struct {
	Role, Path string
}

// ModelFiles are a model's files (config, weights, tokenizer) as inputs,
// each called "the model's NAME".
func ModelFiles(paths []string) []File {
	in := make([]File, 0, len(paths))
	for _, p := range paths {
		in = append(in, File{Role: "the model's " + filepath.Base(p), Path: p})
	}
	return in
}

// Clash is an output that names the same file as an input or as an earlier
// output.
type Clash struct {
	Output File
	Other  File
	// Input is set when Other is an input (else it is another output).
	Input bool
}

func (c *Clash) Error() string {
	if c.Input {
		return fmt.Sprintf("%s %s is %s (%s): it would be overwritten; write the output elsewhere",
			c.Output.Role, c.Output.Path, c.Other.Role, c.Other.Path)
	}
	return fmt.Sprintf("%s %s and %s %s name the same file: one would replace the other; give each its own path",
		c.Other.Role, c.Other.Path, c.Output.Role, c.Output.Path)
}

// Check returns a *Clash for the first output that is the same file as an
// input or as an earlier output, else nil. Paths are compared as files, not
// as strings: through symbolic links, relative and absolute names, and hard
// links where both files exist. Empty paths and "-" (standard input or
// output) are skipped, and so are character devices and FIFOs (two outputs
// may both be /dev/null or a terminal): only regular files, and paths where
// nothing is yet, can be destroyed by a write.
func Check(outputs, inputs []File) error {
	type seen struct {
		File
		id    identity
		input bool
	}
	var all []seen
	for _, in := range inputs {
		if id, ok := identify(in.Path); ok {
			all = append(all, seen{in, id, true})
		}
	}
	for _, out := range outputs {
		id, ok := identify(out.Path)
		if !ok {
			continue
		}
		for _, s := range all {
			if id.same(s.id) {
				return &Clash{Output: out, Other: s.File, Input: s.input}
			}
		}
		all = append(all, seen{out, id, false})
	}
	return nil
}

// identity is what makes two paths one file: the file itself where it
// exists, else the absolute path it would be created at, its folder's
// symbolic links resolved.
type identity struct {
	fi   fs.FileInfo // nil where nothing is at the path yet
	path string
}

func (a identity) same(b identity) bool {
	if a.fi != nil && b.fi != nil {
		return os.SameFile(a.fi, b.fi)
	}
	return a.fi == nil && b.fi == nil && a.path == b.path
}

// identify returns path's identity; false for paths that cannot be
// clobbered: "", "-", a device, a FIFO, a folder, or one that cannot be
// examined (the write that follows reports that).
func identify(path string) (identity, bool) {
	if path == "" || path == "-" {
		return identity{}, false
	}
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.Mode().IsRegular():
		return identity{fi: fi}, true
	case err == nil:
		return identity{}, false
	case !errors.Is(err, fs.ErrNotExist):
		return identity{}, false
	}
	// Nothing there yet (or a link to nothing): where the file would be made.
	p := path
	if lfi, err := os.Lstat(path); err == nil && lfi.Mode()&fs.ModeSymlink != 0 {
		if dest, err := os.Readlink(path); err == nil {
			if !filepath.IsAbs(dest) {
				dest = filepath.Join(filepath.Dir(path), dest)
			}
			p = dest
		}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return identity{}, false
	}
	dir := filepath.Dir(abs)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return identity{path: filepath.Join(dir, filepath.Base(abs))}, true
}
