package shaders

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/wgpu-eval/wgpu-eval/internal/atomicfile"
	"github.com/wgpu-eval/wgpu-eval/internal/infile"
)

// maxStateFile is the most bytes a file the GPU path keeps between runs
// (the tuning file, the matrix units' verdicts) may have: a few KiB in
// practice.
const maxStateFile = 1 << 20

// readStateFile reads one of the files the GPU path keeps between runs in
// the user's cache folder: nil, nil where there is none. Such a file is
// small and regular: anything else at path (a FIFO, whose read would wait
// for a writer forever; a device such as /dev/zero, which never ends; a
// file over maxStateFile) is an error naming it, found before it is read
// (infile.ReadFile), and what it should be (a "verdict file").
func readStateFile(path, what string) ([]byte, error) {
	b, err := infile.ReadFile(path, maxStateFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("not a %s: %w", what, err)
	}
	return b, nil
}

// writeStateFile writes data to path, a file readStateFile reads, through
// atomicfile.Write (a crash or a concurrent writer leaves one whole file,
// never a torn one), making its folder where needed. Where something other
// than a regular file is at path (a FIFO, whose open would wait for a
// reader forever; a device), it writes nothing and says so (the caller
// names the file).
func writeStateFile(path string, data []byte) error {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("not written: there is a %v, not a regular file", fi.Mode().Type())
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data)
}
