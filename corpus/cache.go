package corpus

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/wgpu-eval/wgpu-eval/internal/atomicfile"
	"github.com/wgpu-eval/wgpu-eval/internal/infile"
	"github.com/wgpu-eval/wgpu-eval/internal/msgpackbound"
)

//go:generate go run ../internal/cmd/srcdigest

// cacheVersion changes whenever cacheFile's layout or meaning does; files of
// another version are ignored and rewritten. Changes of the code that makes
// the ids need no bump: a file records the digest of that code
// (tokenizerCode, go generate), and a file of other code is not read. Version 2: the checksum covers
// the documents' lengths too (version 1's covered only the ids, so a moved
// document boundary went unnoticed). Version 3: tokenizers with a Unicode
// normalizer (Qwen's NFC) give Hugging Face's ids on text with long runs of
// combining marks or characters newer than its Unicode data, where version
// 2's files may hold the old ones under the same Tokenizer.ID. Version 4:
// the tokenizers test characters with Hugging Face's Unicode data (16.0 in
// patterns, GPT-2's split and single_word, 17.0 in Digits) instead of Go's
// 15.0, so text with characters of Unicode 15.1 to 17.0 may get other ids.
// Version 5: files record the digest of the code that made their ids.
const cacheVersion = 5

// cacheFile is a tokenized corpus on disk (msgpack).
type cacheFile struct {
	Version   int       `msgpack:"version"`
	Corpus    string    `msgpack:"corpus"`     // Corpus.SHA256
	Tokenizer string    `msgpack:"tokenizer"`  // Tokenizer.ID()
	Code      string    `msgpack:"code"`       // tokenizerCode of the build that wrote it
	IDsSHA256 string    `msgpack:"ids_sha256"` // docsIDsHash(Docs), to catch damage
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
// and matches the corpus, the tokenizer, the code that makes the ids
// (tokenizerCode), the number of documents, the vocabulary and its own checksum (of the ids and of where each document ends); otherwise
// ok is false and the caller tokenizes afresh (and overwrites the file). What
// is not a regular file is never opened. Every length in the file is checked
// against the bytes left before decoding, so a damaged file costs no more
// memory than its size; one that does not decode is deleted.
func readCache(path, corpus, tokID string, ndocs, vocab int) (docs [][]int32, ok bool) {
	data, err := infile.ReadFile(path, 0)
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
	if f.Version != cacheVersion || f.Corpus != corpus || f.Tokenizer != tokID || f.Code != tokenizerCode || len(f.Docs) != ndocs ||
		f.IDsSHA256 != docsIDsHash(f.Docs) {
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
		Code:      tokenizerCode,
		IDsSHA256: docsIDsHash(docs),
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

// docsIDsHash is sha256 over a tag, then each document's length (uvarint)
// and ids (little-endian uint32): the cache's checksum, which changes when a
// document boundary moves even if the ids in order do not.
func docsIDsHash(docs [][]int32) string {
	h := sha256.New()
	io.WriteString(h, "wgpu-eval token cache v2\n")
	buf := make([]byte, 0, 4096)
	room := func(n int) { // flushes buf unless n more bytes fit
		if len(buf)+n > cap(buf) {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	for _, d := range docs {
		room(binary.MaxVarintLen64)
		buf = binary.AppendUvarint(buf, uint64(len(d)))
		for _, id := range d {
			room(4)
			buf = binary.LittleEndian.AppendUint32(buf, uint32(id))
		}
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil))
}
