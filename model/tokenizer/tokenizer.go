package tokenizer

import (
	"context"
	"encoding/json"
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

// Tokenizer encodes text into token ids and decodes ids back to text. Make
// one with GPT2 or Load; the zero value is not usable.
type Tokenizer struct {
	id     string
	tokens []string // id -> the bytes the token stands for in running text; "" for an unused id
	eot    int32
	bos    int32     // -1: none
	lead   []int32   // the post-processor's ids before a text
	trail  []int32   // ... and after it
	bpe    *bpe      // GPT-2's path
	hf     *pipeline // a tokenizer.json's own pipeline; nil for GPT-2's path
}

// Encode returns the token ids of text, without the special tokens the
// tokenizer's post-processor puts around a text (EncodeWithSpecials adds
// them). GPT-2's tokenizers never recognise special tokens in text:
// "<|endoftext|>" is encoded as plain text. Other tokenizer.json files have
// their added tokens matched in the text first, as Hugging Face does.
//
// GPT-2's tokenizers encode text that is not valid UTF-8 (which GPT-2's
// reference tokenizers cannot take) losslessly: each invalid byte becomes
// its own byte token and the valid stretches between them are encoded as
// separate texts. Other tokenizers (Hugging Face's take only Unicode text)
// encode each invalid byte as U+FFFD.
//
// Encode has no error to return but for a text with a piece longer than
// BPE can merge (ErrPieceTooLong: a run of 2 GiB without spaces or line
// breaks), for which it returns nil. A caller whose texts may hold one
// gets the error from EncodeContext, or refuses them first with
// MergeMemory (Unmergeable).
func (t *Tokenizer) Encode(text string) []int32 {
	ids, err := t.EncodeContext(context.Background(), text, nil)
	if err != nil {
		return nil
	}
	return ids
}

// EncodeWithSpecials returns the ids of text as transformers'
// tokenizer(text) gives them: Encode's, with the special tokens of the
// post-processor around them (Llama 2's BOS before; nothing for GPT-2, Llama
// 3's base files or Qwen). It returns nil where Encode does.
func (t *Tokenizer) EncodeWithSpecials(text string) []int32 {
	ids, err := t.EncodeContext(context.Background(), text, nil)
	if err != nil {
		return nil
	}
	out := make([]int32, 0, len(t.lead)+len(ids)+len(t.trail))
	return append(append(append(out, t.lead...), ids...), t.trail...)
}

// progressEvery is how many bytes of text EncodeContext encodes between checks
// of its context and calls of its progress callback.
const progressEvery = 1 << 20

// EncodeContext is Encode for long texts: it checks ctx and calls progress
// (when not nil) with the number of bytes of text encoded so far about every
// MiB and at the end. It returns ctx's error, and no ids, if ctx is done
// first, and ErrPieceTooLong, wrapped, for a text with a piece longer than
// BPE can merge (more than MaxPieceSymbols symbols), naming where it is.
func (t *Tokenizer) EncodeContext(ctx context.Context, text string, progress func(done int)) ([]int32, error) {
	ids, _, err := t.encode(ctx, text, progress, 0, false)
	return ids, err
}

// EncodeHead returns the first ids of Encode(text): all of them, or, when
// limit is positive, at least limit of them, stopping soon after (whole is
// false when it stopped before the end of text). The ids are exactly the
// head of the whole text's, whatever follows, so that a huge text costs
// what its head costs. progress, when not nil, is called as EncodeContext
// calls it, and the errors are EncodeContext's: ErrPieceTooLong only for a
// piece that the head reaches.
func (t *Tokenizer) EncodeHead(ctx context.Context, text string, limit int, progress func(done int)) (ids []int32, whole bool, err error) {
	return t.encode(ctx, text, progress, limit, false)
}

func (t *Tokenizer) encode(ctx context.Context, text string, progress func(done int), limit int, rest bool) ([]int32, bool, error) {
	e := encoding{ctx: ctx, progress: progress, dst: make([]int32, 0, min(len(text)/3+1, max(limit, 0)+64)), next: progressEvery, limit: limit}
	if limit <= 0 {
		e.dst = make([]int32, 0, len(text)/3+1)
	}
	var err error
	if t.hf != nil {
		err = t.hf.encode(&e, text, rest)
	} else {
		err = t.encodeGPT2(&e, text)
	}
	switch {
	case err == errStop:
		return e.dst, false, nil
	case err != nil:
		return nil, false, err
	}
	if progress != nil {
		progress(len(text))
	}
	return e.dst, true, nil
}

// encodeGPT2 is GPT-2's path: its pre-tokenizer and byte-level BPE, invalid
// bytes as byte tokens.
func (t *Tokenizer) encodeGPT2(e *encoding, text string) error {
	start := 0
	if !utf8.ValidString(text) {
		for i := 0; i < len(text); {
			r, n := utf8.DecodeRuneInString(text[i:])
			if r != utf8.RuneError || n != 1 {
				i += n
				continue
			}
			if err := e.valid(t.bpe, text[start:i], start); err != nil {
				return err
			}
			e.dst = append(e.dst, t.bpe.byteID[text[i]])
			i++
			start = i
			if err := e.step(start); err != nil {
				return err
			}
		}
	}
	return e.valid(t.bpe, text[start:], start)
}

// encoding is the state of one encode call.
type encoding struct {
	ctx      context.Context
	progress func(done int)
	dst      []int32
	next     int // offset of the next context check
	limit    int // stop once dst holds this many ids; 0: never
}

// step is called after each piece, which ends at offset off of the text: it
// stops the encoding (errStop) once limit ids are made, and checks the
// context and reports progress about every MiB.
func (e *encoding) step(off int) error {
	if e.limit > 0 && len(e.dst) >= e.limit {
		return errStop
	}
	if off >= e.next {
		if err := e.ctx.Err(); err != nil {
			return fmt.Errorf("encode: %w", err)
		}
		if e.progress != nil {
			e.progress(off)
		}
		e.next = off + progressEvery
	}
	return nil
}

// special appends the id of an added token found in the text.
func (e *encoding) special(id int32) error {
	e.dst = append(e.dst, id)
	if e.limit > 0 && len(e.dst) >= e.limit {
		return errStop
	}
	return nil
}

// valid encodes s, valid UTF-8 found at offset off of the text, piece by
// piece with GPT-2's pre-tokenizer (a piece of more than maxPieceSymbols
// bytes refused).
func (e *encoding) valid(b *bpe, s string, off int) error {
	for i := 0; i < len(s); {
		j := nextPiece(s, i)
		if j-i > maxPieceSymbols {
			return errPieceTooLong(off+i, off+j, j-i, false)
		}
		e.dst = b.encodePiece(e.dst, s[i:j])
		i = j
		if err := e.step(off + i); err != nil {
			return err
		}
	}
	return nil
}

// Decode returns the text of ids: for GPT-2's tokenizers the concatenation
// of their bytes; for other tokenizer.json files what Hugging Face's
// decode(ids) gives (special tokens kept; Llama 2's leading space, which its
// normalizer or Metaspace pre-tokenizer adds, stripped; a normalized added
// token as normalized), except that bytes are kept as bytes: the text
// is not valid UTF-8 when ids cut a character. Ids outside the vocabulary
// decode to nothing (callers that need to reject them check against
// VocabSize).
func (t *Tokenizer) Decode(ids []int32) string {
	if t.hf != nil {
		pieces := make([]string, 0, len(ids))
		for _, id := range ids {
			if id >= 0 && int(id) < len(t.tokens) && t.hf.pieces[id] != "" {
				pieces = append(pieces, t.hf.pieces[id])
			}
		}
		return decode(t.hf.decoder, pieces, false)
	}
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

// TokenText returns the bytes token id stands for in running text (Llama
// 2's "▁the" is " the", its "<0x0A>" is "\n"; a special token is its
// text), or "" for an id outside the vocabulary: what a stream of generated
// tokens prints, one by one.
func (t *Tokenizer) TokenText(id int32) string {
	if id < 0 || int(id) >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// TokenLen returns the number of bytes token id decodes to (len of
// TokenText: UTF-8 bytes of the text, for bits per byte), or 0 for an id
// outside the vocabulary. Llama 2's normalizer (or Metaspace pre-tokenizer)
// puts a "▁" before the text, which its first token counts as a byte of its
// own.
func (t *Tokenizer) TokenLen(id int32) int {
	if id < 0 || int(id) >= len(t.tokens) {
		return 0
	}
	return len(t.tokens[id])
}

// VocabSize returns the number of token ids, one more than the largest
// (50257 for GPT-2).
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// EOT returns the id of the end-of-text token, or -1 when the vocabulary
// has none: <|endoftext|> where it has one (50256 for GPT-2; Qwen), else
// <|end_of_text|> (Llama 3), else tokenizer_config.json's eos_token (Llama
// 2's </s>).
func (t *Tokenizer) EOT() int32 { return t.eot }

// BOS returns the beginning-of-sequence token: the first special token the
// post-processor puts before a text (Llama 2's <s>), else
// tokenizer_config.json's bos_token (Llama 3's <|begin_of_text|>, which its
// base tokenizer.json does not add); ok is false when there is none (GPT-2,
// Qwen).
func (t *Tokenizer) BOS() (id int32, ok bool) { return t.bos, t.bos >= 0 }

// DocSeparator returns the token put before each document when documents
// are scored or joined: BOS where the tokenizer has one, else EOT (-1 when
// there is neither).
func (t *Tokenizer) DocSeparator() int32 {
	if t.bos >= 0 {
		return t.bos
	}
	return t.eot
}

// Specials returns the ids the post-processor puts before and after a text
// (transformers' tokenizer(text) with add_special_tokens): Llama 2's [<s>]
// and none; none for GPT-2. The slices are the tokenizer's: do not change them.
func (t *Tokenizer) Specials() (lead, trail []int32) { return t.lead, t.trail }

// ID identifies the tokenizer for cache keys: BuiltinID for the built-in one,
// else "sha256:" and the hex sha256 of the files it was loaded from (with
// tokenizer_config.json where it is read).
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
	t := &Tokenizer{id: BuiltinID, tokens: append(raw, eotText), eot: gpt2EOT, bos: -1, bpe: e}
	return t, nil
})

// File names Load looks for in a model folder.
const (
	VocabFile     = "vocab.json"
	MergesFile    = "merges.txt"
	TokenizerFile = "tokenizer.json"
)

// Load returns the tokenizer of the model folder dir: vocab.json + merges.txt
// when both exist (unless a tokenizer.json beside them is other than
// GPT-2's, as in Qwen's folders), else tokenizer.json (with
// tokenizer_config.json beside it, if any: see LoadJSON), else the built-in
// GPT-2 tokenizer. When dir is a file (a .safetensors or llm.c checkpoint),
// its folder is used.
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
	case hasVocab && hasMerges && hasTJ && !gpt2JSON(tj):
		return LoadJSON(tj) // Qwen's folders have both: transformers reads tokenizer.json
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

// gpt2JSON reports whether the tokenizer.json at path is GPT-2's (or cannot
// be read: vocab.json + merges.txt are used then, as before tokenizer.json
// files of other models were read), judged by its pre-tokenizer, normalizer
// and model without building its vocabulary.
func gpt2JSON(path string) bool {
	data, err := readFile(path)
	if err != nil {
		return true
	}
	var f struct {
		Normalizer   json.RawMessage `json:"normalizer"`
		PreTokenizer json.RawMessage `json:"pre_tokenizer"`
		Model        struct {
			ByteFallback bool `json:"byte_fallback"`
		} `json:"model"`
	}
	if json.Unmarshal(data, &f) != nil {
		return true
	}
	if isNull(f.PreTokenizer) {
		return isNull(f.Normalizer) && !f.Model.ByteFallback
	}
	var c component
	return json.Unmarshal(f.PreTokenizer, &c) != nil || c.Type == "ByteLevel"
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
