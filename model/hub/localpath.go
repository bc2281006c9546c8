package hub

import (
	"os"
	"path/filepath"
	"strings"
)

// looksLikePath reports whether src, which does not exist, was meant as a local
// file or folder rather than a hub id: it starts like a path (./ ../ / ~ or a
// drive letter), ends in a weights or config file's extension, or names
// something inside a folder that exists here (models/gpt2 with ./models present).
func looksLikePath(src string) bool {
	if strings.HasPrefix(src, ".") || strings.HasPrefix(src, "/") || strings.HasPrefix(src, "~") ||
		strings.HasPrefix(src, `\`) || filepath.VolumeName(src) != "" {
		return true
	}
	switch strings.ToLower(filepath.Ext(src)) {
	case ".safetensors", ".bin", ".json", ".pt", ".pth":
		return true
	}
	if dir := filepath.Dir(src); dir != "." {
		if info, err := os.Stat(dir); err == nil && info.IsDir() {
			return true
		}
	}
	return false
}
