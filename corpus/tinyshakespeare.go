package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/wgpu-eval/wgpu-eval/internal/download"
)

// cacheRoot returns dir, or os.UserCacheDir()/wgpu-eval when dir is empty.
func cacheRoot(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find the user cache folder: %w", err)
	}
	return filepath.Join(base, "wgpu-eval"), nil
}

// tinyShakespeare returns the path of a checked copy of TinyShakespeare: the local
// copy opt or the environment names, else the cached file, else a fresh download
// into the cache.
func tinyShakespeare(ctx context.Context, opt Options) (string, error) {
	local, from := opt.TinyShakespeare, ""
	if local == "" {
		local, from = os.Getenv(TinyShakespeareEnv), " (from $"+TinyShakespeareEnv+")"
	}
	if local != "" {
		if err := checkSHA256(local, TinyShakespeareSHA256); err != nil {
			return "", fmt.Errorf("tinyshakespeare: the local copy%s is not TinyShakespeare (%s has it): %w", from, TinyShakespeareURL, err)
		}
		return local, nil
	}

	root, err := cacheRoot(opt.CacheDir)
	if err != nil {
		return "", fmt.Errorf("tinyshakespeare: %w", err)
	}
	dest := filepath.Join(root, "data", "tinyshakespeare.txt")
	err = checkSHA256(dest, TinyShakespeareSHA256)
	if err == nil {
		return dest, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		// A damaged cached copy: fetch it again (removing it lets the download start clean).
		if rerr := os.Remove(dest); rerr != nil {
			return "", fmt.Errorf("tinyshakespeare: cached copy %w; removing it: %v", err, rerr)
		}
	}
	url := opt.URL
	if url == "" {
		url = TinyShakespeareURL
	}
	if opt.Offline {
		return "", fmt.Errorf("tinyshakespeare: not in the cache (%s) and downloads are off; "+
			"fetch %s there, or name a local copy with %s", dest, url, TinyShakespeareEnv)
	}
	err = download.File(ctx, url, dest, download.Options{
		SHA256:   TinyShakespeareSHA256,
		Progress: opt.Progress,
		Client:   opt.HTTP,
	})
	if err != nil {
		return "", fmt.Errorf("tinyshakespeare: %w\n(to use a copy you already have, name it with --tinyshakespeare-file FILE or $%s)", err, TinyShakespeareEnv)
	}
	return dest, nil
}

// checkSHA256 returns nil when the file at path has the hex digest want, an error
// wrapping os.ErrNotExist when there is no such file, and another error otherwise.
func checkSHA256(path, want string) error {
	f, err := os.Open(path)
	if err != nil {
		return err // *PathError names the file
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%s: sha256 %s, want %s (a different or damaged file)", path, got, want)
	}
	return nil
}
