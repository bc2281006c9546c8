package corpus

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"

	"github.com/wgpu-eval/wgpu-eval/internal/infile"
)

// In-memory corpora: what a program embedding the engine scores without a
// file. They are checked as Load checks the same content read from a file,
// and their SHA256 is computed alike, so a text scored from memory and from
// a file of the same bytes is the same corpus (same token cache key, same
// provenance digest).

// FromText is text held in memory, named name (how results and errors call
// it), split and cut at opt.Separator as Load does a text file; the other
// fields of opt are ignored. Empty text and text that is not UTF-8 are
// errors.
func FromText(name, text string, opt Options) (*Corpus, error) {
	split, err := checkSplit(name, opt.Split)
	if err != nil {
		return nil, err
	}
	c := &Corpus{Name: name, Format: FormatText, Split: split}
	if err := c.loadText(text, opt.Separator); err != nil {
		return nil, fmt.Errorf("corpus %s: %w", infile.Quote(name), err)
	}
	return c, nil
}

// FromDocuments is a corpus of separate documents held in memory, as a
// JSONL file's "text" fields are (FormatJSONL: each scored alone in documents
// mode, joined with the separator token in the others). No documents, only
// empty ones, or one that is not UTF-8 is an error. The slice is kept, not
// copied.
func FromDocuments(name string, docs []string) (*Corpus, error) {
	total := 0
	for i, d := range docs {
		if err := checkUTF8(d); err != nil {
			return nil, fmt.Errorf("corpus %s: document %d: %w", infile.Quote(name), i, err)
		}
		total += len(d)
	}
	switch {
	case len(docs) == 0:
		return nil, fmt.Errorf("corpus %s: no documents", infile.Quote(name))
	case total == 0:
		return nil, fmt.Errorf("corpus %s: all %d documents are empty", infile.Quote(name), len(docs))
	}
	return &Corpus{Name: name, Format: FormatJSONL, Split: SplitAll, Separated: true, Docs: docs, SHA256: docsHash(docs)}, nil
}

// FromTokens is a corpus of token ids held in memory, as an llm.c token
// file's (FormatTokens: scored as one stream, never tokenized). Its SHA256
// is that of the llm.c token file holding the ids (GPT-2's, uint16 ids, where
// every id fits; else Llama 3's, uint32 ids), so the ids and such a file are
// the same corpus. Negative ids are refused here; ids at or above the model's
// vocabulary when it is scored. The slice is kept, not copied.
func FromTokens(name string, ids []int32) (*Corpus, error) {
	if len(ids) == 0 {
		return nil, fmt.Errorf("corpus %s: no token ids", infile.Quote(name))
	}
	if len(ids) > math.MaxInt32 {
		return nil, fmt.Errorf("corpus %s: %d token ids, more than a token file holds", infile.Quote(name), len(ids))
	}
	magic, version, width := uint32(tokenMagic), uint32(1), 2
	for i, id := range ids {
		if id < 0 {
			return nil, fmt.Errorf("corpus %s: token %d: negative id %d", infile.Quote(name), i, id)
		}
		if id > math.MaxUint16 {
			magic, version, width = tokenMagicLlama3, 7, 4
		}
	}
	h := sha256.New()
	var header [tokenHeaderSize]byte
	binary.LittleEndian.PutUint32(header[0:], magic)
	binary.LittleEndian.PutUint32(header[4:], version)
	binary.LittleEndian.PutUint32(header[8:], uint32(len(ids)))
	h.Write(header[:])
	buf := make([]byte, 0, 32<<10)
	for _, id := range ids {
		if len(buf)+width > cap(buf) {
			h.Write(buf)
			buf = buf[:0]
		}
		if width == 2 {
			buf = binary.LittleEndian.AppendUint16(buf, uint16(id))
		} else {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(id))
		}
	}
	h.Write(buf)
	return &Corpus{Name: name, Format: FormatTokens, Split: SplitAll, Tokens: ids, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// CheckWhole refuses, for c, a corpus of documents or token ids
// (FromDocuments, FromTokens), the options that only a text corpus honours:
// a split other than "" or "all", and a separator. Load refuses them for
// .jsonl and token files itself; FromDocuments and FromTokens take no
// options, so whoever passes options along checks them here rather than
// scoring the whole corpus under the name of a split. A text corpus passes.
func (c *Corpus) CheckWhole(split, sep string) error {
	var what string
	switch c.Format {
	case FormatJSONL:
		what = "documents, each scored whole"
	case FormatTokens:
		what = "token ids, one stream"
	default:
		return nil
	}
	if split != "" && split != SplitAll {
		return fmt.Errorf("corpus %s: split %q: only text corpora have train/val splits; this corpus is %s", infile.Quote(c.Name), split, what)
	}
	if err := noSeparator(sep, "this corpus is "+what); err != nil {
		return fmt.Errorf("corpus %s: %w", infile.Quote(c.Name), err)
	}
	return nil
}

// checkSplit returns split, "" meaning SplitAll, or an error naming the
// corpus for a split that does not exist.
func checkSplit(name, split string) (string, error) {
	switch split {
	case "":
		return SplitAll, nil
	case SplitAll, SplitTrain, SplitVal:
		return split, nil
	}
	return "", fmt.Errorf("corpus %s: unknown split %q (want all, train or val)", infile.Quote(name), split)
}
