package model

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

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
