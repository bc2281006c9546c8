// Package atomicfile writes files so that a crash leaves the old content or the
// new, never half of one. It imports nothing of this module.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes data to path (mode 0644) through a temporary file in
// the same folder, synced and then renamed over path, so that a crash leaves
// the old file or the new one, never half of one.
func Write(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
