package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
)

// The cache layout of huggingface_hub, for one model repo:
//
//	models--{org}--{name}/
//	  blobs/{etag}                       file contents, named by the hub's etag
//	                                     (sha256 for LFS files, git sha1 otherwise)
//	  refs/{revision}                    the commit hash a branch or tag resolved to
//	  snapshots/{commit}/{file}          relative symlink to ../../blobs/{etag}
//	  .no_exist/{commit}/{file}          empty: the file does not exist at that commit

// commitRe is a full git commit hash, as huggingface_hub's REGEX_COMMIT_HASH.
var commitRe = regexp.MustCompile(`^[0-9a-f]{40}$`)

// repoCache is one repo's folder in the cache.
type repoCache struct {
	id  string // "org/name" or "name"
	dir string // .../models--org--name
}

func (c *Client) repo(id string) repoCache {
	return repoCache{id: id, dir: filepath.Join(c.cacheDir(), "models--"+strings.ReplaceAll(id, "/", "--"))}
}

func (r repoCache) snapshot(commit string) string {
	return filepath.Join(r.dir, "snapshots", commit)
}

// cachedCommit resolves a revision to a commit with the cache alone: a commit
// hash with a snapshot folder, or a ref file.
func (r repoCache) cachedCommit(rev string) (string, bool) {
	if commitRe.MatchString(rev) {
		if info, err := os.Stat(r.snapshot(rev)); err == nil && info.IsDir() {
			return rev, true
		}
	}
	b, err := os.ReadFile(filepath.Join(r.dir, "refs", filepath.FromSlash(rev)))
	if err != nil {
		return "", false
	}
	commit := strings.TrimSpace(string(b))
	return commit, commitRe.MatchString(commit)
}

// writeRef records that rev resolved to commit, unless rev is that commit.
func (r repoCache) writeRef(rev, commit string) error {
	if rev == commit {
		return nil
	}
	path := filepath.Join(r.dir, "refs", filepath.FromSlash(rev))
	if b, err := os.ReadFile(path); err == nil && string(b) == commit {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return writeAtomic(path, []byte(commit))
}

// has reports whether the snapshot holds file (a symlink must resolve).
func (r repoCache) has(commit, file string) bool {
	info, err := os.Stat(filepath.Join(r.snapshot(commit), filepath.FromSlash(file)))
	return err == nil && info.Mode().IsRegular()
}

// noExist reports whether the cache records that file is absent at commit.
func (r repoCache) noExist(commit, file string) bool {
	_, err := os.Stat(filepath.Join(r.dir, ".no_exist", commit, filepath.FromSlash(file)))
	return err == nil
}

// markNoExist records that file is absent at commit, as huggingface_hub does.
func (r repoCache) markNoExist(commit, file string) error {
	path := filepath.Join(r.dir, ".no_exist", commit, filepath.FromSlash(file))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// complete reports whether the snapshot holds everything a model load needs:
// the required files and the weights, whole or sharded.
func (r repoCache) complete(commit string) bool {
	return len(r.missing(commit)) == 0
}

// missing lists what the snapshot of commit lacks of what a model load
// needs: required files, and the weights (model.safetensors when there is no
// index, else the index's shards that are not there).
func (r repoCache) missing(commit string) []string {
	var miss []string
	for _, f := range requiredFiles {
		if !r.has(commit, f) {
			miss = append(miss, f)
		}
	}
	switch {
	case r.has(commit, weightsFile):
	case !r.has(commit, weightsIdx):
		miss = append(miss, weightsFile+" (or "+weightsIdx+" and its shards)")
	default:
		shards, err := readShards(filepath.Join(r.snapshot(commit), weightsIdx))
		if err != nil {
			return append(miss, weightsIdx+" ("+err.Error()+")")
		}
		for _, s := range shards {
			if !r.has(commit, s) {
				miss = append(miss, s)
			}
		}
	}
	return miss
}

// tokenizerKnown reports whether the snapshot of commit settles which
// tokenizer the model has: it holds tokenizer.json, or vocab.json and
// merges.txt, or .no_exist records that the repo has neither form.
func (r repoCache) tokenizerKnown(commit string) bool {
	known := func(f string) bool { return r.has(commit, f) || r.noExist(commit, f) }
	if r.has(commit, "tokenizer.json") || (r.has(commit, "vocab.json") && r.has(commit, "merges.txt")) {
		return true
	}
	return known("tokenizer.json") && known("vocab.json") && known("merges.txt")
}

// maxIndexBytes bounds the safetensors index readShards reads (as
// model.MaxJSONFile bounds it when loading): the index of a model of 100,000
// tensors is about 10 MB.
const maxIndexBytes = 64 << 20

// readShards lists the distinct files named in a safetensors index's weight_map.
func readShards(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var b []byte
	if fi.Size() <= maxIndexBytes {
		if b, err = io.ReadAll(io.LimitReader(f, maxIndexBytes+1)); err != nil {
			return nil, err
		}
	}
	if fi.Size() > maxIndexBytes || len(b) > maxIndexBytes {
		return nil, fmt.Errorf("%s: more than %d bytes: not a safetensors index", path, maxIndexBytes)
	}
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, fmt.Errorf("parse %s: empty weight_map", path)
	}
	seen := map[string]bool{}
	var shards []string
	for _, f := range idx.WeightMap {
		if seen[f] {
			continue
		}
		if !safeRepoPath(f) {
			return nil, fmt.Errorf("parse %s: bad shard file name %q", path, f)
		}
		seen[f] = true
		shards = append(shards, f)
	}
	slices.Sort(shards)
	return shards, nil
}

// safeRepoPath accepts a relative slash-separated path inside a repo.
func safeRepoPath(p string) bool {
	if p == "" || strings.ContainsAny(p, "\\:") || strings.HasPrefix(p, "/") {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
	}
	return true
}

// safeEtag accepts an etag usable as a blob file name.
func safeEtag(e string) bool {
	return e != "" && e != "." && e != ".." && !strings.ContainsAny(e, "/\\:\x00")
}

// link points snapshots/{commit}/{file} at blob with a relative symlink, as
// huggingface_hub does. Where symlinks are not possible it moves a blob it has
// just downloaded (newBlob) or copies an older one.
// linkSeq numbers the temporary links of this process.
var linkSeq atomic.Int64

func (r repoCache) link(commit, file, blob string, newBlob bool) error {
	dst := filepath.Join(r.snapshot(commit), filepath.FromSlash(file))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	rel, err := filepath.Rel(filepath.Dir(dst), blob)
	if err != nil {
		rel = blob
	}
	// A link made beside dst and renamed over it: another process linking
	// the same file meanwhile cannot make this fail.
	tmp := fmt.Sprintf("%s.%d-%d.link", dst, os.Getpid(), linkSeq.Add(1))
	os.Remove(tmp)
	if err := os.Symlink(rel, tmp); err == nil {
		if err := os.Rename(tmp, dst); err != nil {
			os.Remove(tmp)
			return err
		}
		return nil
	}
	if err := os.Remove(dst); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if newBlob {
		return os.Rename(blob, dst)
	}
	return copyFile(blob, dst)
}

// copyFile copies src to dst through a temporary file.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.CreateTemp(filepath.Dir(dst), filepath.Base(dst)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := out.Name()
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(tmp)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, dst)
}

// writeAtomic writes data to path through a temporary file of its own (so
// that two processes writing one path both succeed) and a rename.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
