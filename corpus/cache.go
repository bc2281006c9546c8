package corpus

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/wgpu-eval/wgpu-eval/internal/atomicfile"
	"github.com/wgpu-eval/wgpu-eval/internal/msgpackbound"
)

// cacheVersion changes whenever cacheFile's layout or meaning does; files of
// another version are ignored and rewritten.
const cacheVersion = 1

// cacheFile is a tokenized corpus on disk (msgpack).
type cacheFile struct {
	Version   int       `msgpack:"version"`
	Corpus    string    `msgpack:"corpus"`     // Corpus.SHA256
	Tokenizer string    `msgpack:"tokenizer"`  // Tokenizer.ID()
	IDsSHA256 string    `msgpack:"ids_sha256"` // idsHash(Docs), to catch damage
	Docs      [][]int32 `msgpack:"docs"`
}

// cachePath is root/tokens/<corpus sha256>-<tokenizer id>.msgpack, with any
// character of the id that is unsafe in a file name replaced by '_'.
func cachePath(root, corpus, tokID string) string {
	safe := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, tokID)
	return filepath.Join(root, "tokens", corpus+"-"+safe+".msgpack")
}

// readCache returns the documents cached at path when the file exists, decodes,
// and matches the corpus, the tokenizer, the number of documents, the vocabulary
// and its own checksum; otherwise ok is false and the caller tokenizes afresh
// (and overwrites the file). Every length in the file is checked against the
// bytes left before decoding, so a damaged file costs no more memory than its
// size; one that does not decode is deleted.
func readCache(path, corpus, tokID string, ndocs, vocab int) (docs [][]int32, ok bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	defer func() {
		if recover() != nil { // a decoder bug on a damaged file must not take the run down
			docs, ok = nil, false
		}
	}()
	var f cacheFile
	if err := msgpackbound.CheckLengths(data); err != nil {
		os.Remove(path) // damaged: rebuilt by the caller
		return nil, false
	}
	if err := msgpack.Unmarshal(data, &f); err != nil {
		os.Remove(path)
		return nil, false
	}
	if f.Version != cacheVersion || f.Corpus != corpus || f.Tokenizer != tokID || len(f.Docs) != ndocs ||
		f.IDsSHA256 != idsHash(f.Docs) {
		return nil, false
	}
	for _, d := range f.Docs {
		for _, id := range d {
			if id < 0 || int(id) >= vocab {
				return nil, false
			}
		}
	}
	return f.Docs, true
}

// writeCache stores docs at path atomically (atomicfile.Write).
func writeCache(path, corpus, tokID string, docs [][]int32) error {
	data, err := msgpack.Marshal(&cacheFile{
		Version:   cacheVersion,
		Corpus:    corpus,
		Tokenizer: tokID,
		IDsSHA256: idsHash(docs),
		Docs:      docs,
	})
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := atomicfile.Write(path, data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// idsHash is sha256 over every id as little-endian uint32, document after
// document, the same digest ../shared/data/README.md gives for token ids.
func idsHash(docs [][]int32) string {
	h := sha256.New()
	buf := make([]byte, 0, 4096)
	for _, d := range docs {
		for _, id := range d {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(id))
			if len(buf) == cap(buf) {
				h.Write(buf)
				buf = buf[:0]
			}
		}
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil))
}
