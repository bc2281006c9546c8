package tokenizer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	tiktoken "github.com/tiktoken-go/tokenizer"
)

// BuiltinID is the ID of the built-in GPT-2 tokenizer.
const BuiltinID = "gpt2-builtin"

// gpt2EOT is the id of <|endoftext|> in GPT-2's vocabulary.
const gpt2EOT = 50256

// eotText is the text of GPT-2's end-of-text token.
const eotText = "<|endoftext|>"

// Tokenizer encodes text into GPT-2 token ids and decodes ids back to text.
// Make one with GPT2 or Load; the zero value is not usable.
type Tokenizer struct {
	id     string
	tokens []string // id -> the token's raw bytes; "" for an unused id
	eot    int32
	bpe    *bpe
}

// Encode returns the token ids of text. Special tokens are not recognised:
// "<|endoftext|>" in text is encoded as plain text.
//
// Text that is not valid UTF-8 (which GPT-2's reference tokenizers cannot take)
// is still encoded losslessly: each invalid byte becomes its own byte token and
// the valid stretches between them are encoded as separate texts.
func (t *Tokenizer) Encode(text string) []int32 {
	ids, _ := t.EncodeContext(context.Background(), text, nil)
	return ids
}

// progressEvery is how many bytes of text EncodeContext encodes between checks
// of its context and calls of its progress callback.
const progressEvery = 1 << 20

// EncodeContext is Encode for long texts: it checks ctx and calls progress
// (when not nil) with the number of bytes of text encoded so far about every
// MiB and at the end. It returns ctx's error, and no ids, if ctx is done first.
func (t *Tokenizer) EncodeContext(ctx context.Context, text string, progress func(done int)) ([]int32, error) {
	e := encoding{bpe: t.bpe, ctx: ctx, progress: progress, dst: make([]int32, 0, len(text)/3+1), next: progressEvery}
	start := 0
	if !utf8.ValidString(text) {
		for i := 0; i < len(text); {
			r, n := utf8.DecodeRuneInString(text[i:])
			if r != utf8.RuneError || n != 1 {
				i += n
				continue
			}
			if err := e.valid(text[start:i], start); err != nil {
				return nil, err
			}
			e.dst = append(e.dst, t.bpe.byteID[text[i]])
			i++
			start = i
		}
	}
	if err := e.valid(text[start:], start); err != nil {
		return nil, err
	}
	if progress != nil {
		progress(len(text))
	}
	return e.dst, nil
}

// encoding is the state of one EncodeContext call.
type encoding struct {
	bpe      *bpe
	ctx      context.Context
	progress func(done int)
	dst      []int32
	next     int // offset of the next context check
}

// valid encodes s, valid UTF-8 found at offset off of the text, piece by piece.
func (e *encoding) valid(s string, off int) error {
	for i := 0; i < len(s); {
		j := nextPiece(s, i)
		e.dst = e.bpe.encodePiece(e.dst, s[i:j])
		i = j
		if off+i >= e.next {
			if err := e.ctx.Err(); err != nil {
				return fmt.Errorf("encode: %w", err)
			}
			if e.progress != nil {
				e.progress(off + i)
			}
			e.next = off + i + progressEvery
		}
	}
	return nil
}

// Decode returns the text of ids: the concatenation of their bytes, which is not
// valid UTF-8 when ids cut a character. Ids outside the vocabulary decode to
// nothing (callers that need to reject them check against VocabSize).
func (t *Tokenizer) Decode(ids []int32) string {
	n := 0
	for _, id := range ids {
		n += t.TokenLen(id)
	}
	var b strings.Builder
	b.Grow(n)
	for _, id := range ids {
		if id >= 0 && int(id) < len(t.tokens) {
			b.WriteString(t.tokens[id])
		}
	}
	return b.String()
}

// TokenLen returns the number of bytes token id decodes to (UTF-8 bytes of the
// text, for bits per byte), or 0 for an id outside the vocabulary.
func (t *Tokenizer) TokenLen(id int32) int {
	if id < 0 || int(id) >= len(t.tokens) {
		return 0
	}
	return len(t.tokens[id])
}

// VocabSize returns the number of token ids, one more than the largest
// (50257 for GPT-2).
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// EOT returns the id of <|endoftext|> (50256 for GPT-2), or -1 when the
// vocabulary has none.
func (t *Tokenizer) EOT() int32 { return t.eot }

// ID identifies the tokenizer for cache keys: BuiltinID for the built-in one,
// else "sha256:" and the hex sha256 of the files it was loaded from.
func (t *Tokenizer) ID() string { return t.id }

// GPT2 returns the built-in GPT-2 tokenizer: the r50k_base token table of
// github.com/tiktoken-go/tokenizer, run by this package's pre-tokenizer and BPE
// (tiktoken-go's own encoder silently drops U+007F in v0.10.0). It is built once
// and shared.
func GPT2() (*Tokenizer, error) { return builtin() }

var builtin = sync.OnceValues(func() (*Tokenizer, error) {
	codec, err := tiktoken.Get(tiktoken.R50kBase)
	if err != nil {
		return nil, fmt.Errorf("built-in GPT-2 tokenizer: %w", err)
	}
	raw := make([]string, gpt2EOT)
	for id := range raw {
		s, err := codec.Decode([]uint{uint(id)})
		if err != nil {
			return nil, fmt.Errorf("built-in GPT-2 tokenizer: token %d: %w", id, err)
		}
		raw[id] = s
	}
	e, err := fromRanks(raw)
	if err != nil {
		return nil, fmt.Errorf("built-in GPT-2 tokenizer: %w", err)
	}
	t := &Tokenizer{id: BuiltinID, tokens: append(raw, eotText), eot: gpt2EOT, bpe: e}
	return t, nil
})

// File names Load looks for in a model folder.
const (
	VocabFile     = "vocab.json"
	MergesFile    = "merges.txt"
	TokenizerFile = "tokenizer.json"
)

// Load returns the tokenizer of the model folder dir: vocab.json + merges.txt
// when both exist, else tokenizer.json, else the built-in GPT-2 tokenizer. When
// dir is a file (a .safetensors or llm.c checkpoint), its folder is used.
func Load(dir string) (*Tokenizer, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	if !st.IsDir() {
		dir = filepath.Dir(dir)
	}
	vocab, merges, tj := filepath.Join(dir, VocabFile), filepath.Join(dir, MergesFile), filepath.Join(dir, TokenizerFile)
	hasVocab, err := exists(vocab)
	if err != nil {
		return nil, err
	}
	hasMerges, err := exists(merges)
	if err != nil {
		return nil, err
	}
	hasTJ, err := exists(tj)
	if err != nil {
		return nil, err
	}
	switch {
	case hasVocab && hasMerges:
		return LoadFiles(vocab, merges)
	case hasTJ:
		return LoadJSON(tj)
	case hasVocab:
		return nil, fmt.Errorf("load tokenizer: %s has %s but no %s", dir, VocabFile, MergesFile)
	case hasMerges:
		return nil, fmt.Errorf("load tokenizer: %s has %s but no %s", dir, MergesFile, VocabFile)
	}
	return GPT2()
}

// exists reports whether anything is at path: false when nothing is, an
// error unless it is a regular file (a broken symbolic link, a folder, or a
// FIFO or device, whose read could block forever).
func exists(path string) (bool, error) {
	lst, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	st, err := os.Stat(path)
	if err != nil {
		if lst != nil && lst.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(path)
			if errors.Is(err, fs.ErrNotExist) {
				return false, fmt.Errorf("load tokenizer: %s is a symbolic link to %s, which does not exist", path, target)
			}
			return false, fmt.Errorf("load tokenizer: %s is a symbolic link that cannot be followed (a loop?): %w", path, err)
		}
		return false, fmt.Errorf("load tokenizer: %w", err)
	}
	if st.IsDir() {
		return false, fmt.Errorf("load tokenizer: %s is a folder", path)
	}
	if !st.Mode().IsRegular() {
		kind := "not a plain file (" + st.Mode().Type().String() + ")"
		switch m := st.Mode(); {
		case m&fs.ModeNamedPipe != 0:
			kind = "a named pipe (FIFO)"
		case m&fs.ModeSocket != 0:
			kind = "a socket"
		case m&fs.ModeDevice != 0:
			kind = "a device"
		}
		return false, fmt.Errorf("load tokenizer: %s is %s, not a regular file", path, kind)
	}
	return true, nil
}
