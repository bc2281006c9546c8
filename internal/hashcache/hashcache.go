// Package hashcache names big local files by their sha256 without reading
// them again on every run: a file's sum is kept in a small record, in the
// user's cache, under the file's identity on disk (device, inode, size,
// modification time and status-change time), and used while that identity
// stays the same. Writing to a file changes its status-change time (ctime),
// which no program can set back (os.Chtimes sets it to now), so a record
// is never taken for a changed file; a file changed within the last two
// seconds is not recorded at all, so that a change inside the file system's
// timestamp granularity cannot leave the identity as it was recorded.
//
// Records exist where the platform gives the status-change time (Linux,
// macOS, FreeBSD); elsewhere every file is hashed. The weights' sha256 in a
// result's provenance and a checkpoint's identity come from here: for a
// local checkpoint of gigabytes, hashing took as long as loading (about a
// second per GB).
package hashcache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/wgpu-eval/wgpu-eval/internal/atomicfile"
	"github.com/wgpu-eval/wgpu-eval/internal/infile"
)

// MinSize is the smallest file whose sum is recorded; smaller ones are
// hashed every time (64 MiB: about 50 ms).
var MinSize int64 = 64 << 20

// settle is how long ago a file must have last changed for its sum to be
// recorded (a variable for tests).
var settle = 2 * time.Second

// version changes whenever record's meaning does; records of another are
// ignored and rewritten.
const version = 1

// maxRecord bounds the bytes read of a record (a damaged or planted file in
// the cache costs no more).
const maxRecord = 8 << 10

// identity is what names a file's content on disk.
type identity struct {
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"ino"`
	Size    int64  `json:"size"`
	MtimeNs int64  `json:"mtime_ns"`
	CtimeNs int64  `json:"ctime_ns"`
}

// record is one file's sum, as JSON in dir/<sha256 of the file's absolute
// path>.json.
type record struct {
	Version  int      `json:"version"`
	Path     string   `json:"path"`
	Identity identity `json:"identity"`
	SHA256   string   `json:"sha256"`
}

// Sum returns the sha256 (lowercase hex) of the file at path: the one
// recorded in dir when the file's identity is the recorded one (cached
// true), else read from the file, a megabyte at a time between checks of
// ctx, and then recorded in dir unless the file is smaller than MinSize,
// changed in the last two seconds or while it was read. dir "" records
// nothing. A record that cannot be read or written is passed over: the
// cache only saves time, and the sum is the file's either way.
func Sum(ctx context.Context, dir, path string) (sum string, cached bool, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", false, err
	}
	id, known := identityOf(fi)
	keep := dir != "" && known && fi.Size() >= MinSize
	var at string
	if keep {
		at = filepath.Join(dir, recordName(abs))
		if r, ok := read(at); ok && r.Path == abs && r.Identity == id {
			return r.SHA256, true, nil
		}
	}
	if sum, err = hashFile(ctx, abs); err != nil {
		return "", false, err
	}
	if keep {
		if fi, err := os.Stat(abs); err == nil {
			after, _ := identityOf(fi)
			if after == id && time.Since(time.Unix(0, id.CtimeNs)) >= settle && time.Since(time.Unix(0, id.MtimeNs)) >= settle {
				write(at, record{Version: version, Path: abs, Identity: id, SHA256: sum})
			}
		}
	}
	return sum, false, nil
}

// recordName is the record's file name for the absolute path abs.
func recordName(abs string) string {
	h := sha256.Sum256([]byte(abs))
	return hex.EncodeToString(h[:16]) + ".json"
}

// read returns the record at path when it is one of this version with a
// well-formed sum.
func read(path string) (record, bool) {
	data, err := infile.ReadFile(path, maxRecord)
	if err != nil {
		return record{}, false
	}
	var r record
	if json.Unmarshal(data, &r) != nil || r.Version != version || !isHex64(r.SHA256) {
		return record{}, false
	}
	return r, true
}

// write records r at path (best effort).
func write(path string, r record) {
	data, err := json.Marshal(r)
	if err != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(path), 0o755) != nil {
		return
	}
	_ = atomicfile.Write(path, append(data, '\n'))
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// hashFile reads the file at path through sha256, checking ctx between
// reads.
func hashFile(ctx context.Context, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	buf := make([]byte, 1<<20)
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		n, err := f.Read(buf)
		h.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("read: %w", err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
