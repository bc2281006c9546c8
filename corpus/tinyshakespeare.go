package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/wgpu-eval/wgpu-eval/internal/download"
	"github.com/wgpu-eval/wgpu-eval/internal/infile"
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
// into the cache, one process at a time (the others wait, then find it cached).
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
	if checkSHA256(dest, TinyShakespeareSHA256) == nil {
		return dest, nil
	}
	if !opt.Offline {
		// One download at a time, also across processes (the jobs of an
		// array started together on a fresh cache shared one partial file,
		// and all but one failed): whoever waited finds the file there.
		unlock, err := lockDownload(ctx, filepath.Join(root, ".locks", "tinyshakespeare.txt.lock"), opt)
		if err != nil {
			return "", err
		}
		defer unlock()
	}
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
			"fetch %s there, or name a local copy with --tinyshakespeare-file FILE (or $%s)", dest, url, TinyShakespeareEnv)
	}
	w := watchDownload(url, opt)
	err = download.File(ctx, url, dest, download.Options{
		SHA256: TinyShakespeareSHA256,
		Progress: func(done, total int64) {
			w.progress(done)
			if opt.Progress != nil {
				opt.Progress(done, total)
			}
		},
		Client: opt.HTTP,
	})
	w.stop()
	if err != nil {
		return "", fmt.Errorf("tinyshakespeare: %w\n(to use a copy you already have, name it with --tinyshakespeare-file FILE or $%s)", err, TinyShakespeareEnv)
	}
	return dest, nil
}

// lockDownload takes the lock at path that keeps TinyShakespeare's
// downloads into one cache apart (download.LockFile), telling opt.Waiting
// every WaitInterval while another process holds it. Where no lock can be
// taken (a file system without locks, a folder it cannot write in), it goes
// on without one, as before there was a lock: the download then says what
// fails, if anything does.
func lockDownload(ctx context.Context, path string, opt Options) (unlock func(), err error) {
	var w *download.Watch
	if opt.Waiting != nil {
		interval := opt.WaitInterval
		if interval <= 0 {
			interval = DefaultWaitInterval
		}
		w = download.NewWatch(interval, func(silence time.Duration) {
			opt.Waiting(fmt.Sprintf("tinyshakespeare: waiting %v for another process downloading it (it holds %s)",
				silence.Round(time.Millisecond), path))
		})
	}
	unlock, err = download.LockFile(ctx, path)
	if w != nil {
		w.Stop()
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("tinyshakespeare: %w", err)
	case err != nil:
		return func() {}, nil
	}
	return unlock, nil
}

// checkSHA256 returns nil when the file at path has the hex digest want, an error
// wrapping os.ErrNotExist when there is no such file, and another error otherwise.
// What is not a regular file is refused before it is opened.
func checkSHA256(path, want string) error {
	f, err := infile.Open(path)
	if err != nil {
		return err // names the file
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

// downloadWatch tells opt.Waiting what a silent TinyShakespeare download waits
// for. A nil *downloadWatch does nothing.
type downloadWatch struct {
	host    string
	timeout time.Duration // for the answer; the data's is download.DefaultStallTimeout

	mu       sync.Mutex
	answered bool
	done     int64
	watch    *download.Watch
}

func watchDownload(rawURL string, opt Options) *downloadWatch {
	if opt.Waiting == nil {
		return nil
	}
	w := &downloadWatch{host: rawURL, timeout: download.HeaderTimeout(opt.HTTP)}
	if u, err := url.Parse(rawURL); err == nil && u.Host != "" {
		w.host = u.Host
	}
	interval := opt.WaitInterval
	if interval <= 0 {
		interval = DefaultWaitInterval
	}
	w.watch = download.NewWatch(interval, func(silence time.Duration) {
		w.mu.Lock()
		answered, done := w.answered, w.done
		w.mu.Unlock()
		silence = silence.Round(time.Millisecond)
		if answered {
			opt.Waiting(fmt.Sprintf("tinyshakespeare: %s has sent nothing more for %v (at %d bytes; gives up after %v without data, "+
				"a rerun resumes)", w.host, silence, done, download.DefaultStallTimeout))
			return
		}
		limit := "no time limit; Ctrl-C stops"
		if w.timeout > 0 {
			limit = fmt.Sprintf("gives up after %v", w.timeout)
		}
		opt.Waiting(fmt.Sprintf("tinyshakespeare: waiting %v for %s to answer (%s)", silence, w.host, limit))
	})
	return w
}

func (w *downloadWatch) progress(done int64) {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.answered, w.done = true, done
	w.mu.Unlock()
	w.watch.Touch()
}

func (w *downloadWatch) stop() {
	if w != nil {
		w.watch.Stop()
	}
}
