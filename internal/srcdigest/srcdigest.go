// Package srcdigest digests the source that decides what a cache holds, so
// that an entry another build made with other code is never read as this
// build's: go generate writes the digest into the package as a constant
// (internal/cmd/srcdigest), and a test of that package holds the constant to
// the source, so that no change of that code can ship with the old digest.
package srcdigest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Spec names the source a digest covers, by paths relative to the module
// root, with forward slashes.
type Spec struct {
	// Trees are folders whose Go files count (not their _test.go files): a
	// path ending in "/..." takes the folders below it too, but not those
	// named testdata.
	Trees []string
	// Modules are modules whose versions in go.mod count: outside code that
	// the trees import.
	Modules []string
	// Generated is the file go generate writes the digest into, left out of it.
	Generated string
}

// Tokenizer is what decides the token ids in corpus's token cache, beside
// the corpus and the tokenizer files (the cache's key): the tokenizers
// (model/tokenizer and the folders below it), corpus's own code (how it cuts
// a corpus into jobs and joins their ids), and the modules the tokenizers
// import.
var Tokenizer = Spec{
	Trees:     []string{"model/tokenizer/...", "corpus"},
	Modules:   []string{"github.com/tiktoken-go/tokenizer", "golang.org/x/text"},
	Generated: "corpus/ztokenizercode.go",
}

// Digest is the hex sha256 of the spec's source under the module root root:
// each file's path and bytes (line ends read as \n, so that a checkout with
// \r\n ones has the same digest), in the order of their paths, then each
// module's path and version.
func (s Spec) Digest(root string) (string, error) {
	files, err := s.files(root)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	io.WriteString(h, "wgpu-eval srcdigest v1\n")
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			return "", fmt.Errorf("digest: %w", err)
		}
		b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
		fmt.Fprintf(h, "file %s %d\n", f, len(b))
		h.Write(b)
	}
	versions, err := moduleVersions(filepath.Join(root, "go.mod"), s.Modules)
	if err != nil {
		return "", err
	}
	for _, m := range s.Modules {
		fmt.Fprintf(h, "module %s %s\n", m, versions[m])
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// files lists the spec's Go files under root, sorted; a tree without any is
// an error (a folder renamed away must not leave its code uncounted).
func (s Spec) files(root string) ([]string, error) {
	var out []string
	for _, tree := range s.Trees {
		dir, deep := strings.CutSuffix(tree, "/...")
		n := len(out)
		err := filepath.WalkDir(filepath.Join(root, filepath.FromSlash(dir)), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if rel != dir && (!deep || d.Name() == "testdata") {
					return filepath.SkipDir
				}
				return nil
			}
			if path.Ext(rel) == ".go" && !strings.HasSuffix(rel, "_test.go") && rel != s.Generated && d.Type().IsRegular() {
				out = append(out, rel)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("digest %s: %w", tree, err)
		}
		if len(out) == n {
			return nil, fmt.Errorf("digest %s: no Go files", tree)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// moduleVersions reads the versions go.mod requires of modules (in a require
// block or on a require line); a module it does not require is an error.
func moduleVersions(gomod string, modules []string) (map[string]string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return nil, fmt.Errorf("digest: %w", err)
	}
	defer f.Close()
	want := map[string]bool{}
	for _, m := range modules {
		want[m] = true
	}
	versions := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 0 && fields[0] == "require" {
			fields = fields[1:]
		}
		if len(fields) >= 2 && want[fields[0]] {
			versions[fields[0]] = fields[1]
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("digest: read %s: %w", gomod, err)
	}
	for _, m := range modules {
		if versions[m] == "" {
			return nil, fmt.Errorf("digest: %s requires no version of %s", gomod, m)
		}
	}
	return versions, nil
}
