package tokenizer

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/wgpu-eval/wgpu-eval/internal/infile"
)

// maxID bounds token ids in vocabulary files, so a corrupt id cannot make the
// decode table huge.
const maxID = 1 << 24

// MaxFileBytes is the largest tokenizer file read (tokenizer.json,
// vocab.json, merges.txt, tokenizer_config.json): a tokenizer.json of
// 262,144 tokens and their merges is about 33 MB; a file past the limit is
// refused before it is read.
const MaxFileBytes = 256 << 20

// readFile reads a tokenizer file: a regular file (a FIFO or device there
// is refused before it is opened, which would block) of at most
// MaxFileBytes.
func readFile(path string) ([]byte, error) {
	data, err := infile.ReadFile(path, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	return data, nil
}

// LoadFiles returns the tokenizer of a GPT-2 vocab.json (token text -> id) and
// merges.txt (one "left right" merge per line, by rank, after an optional
// "#version" line). A pair listed twice keeps its last rank.
func LoadFiles(vocabPath, mergesPath string) (*Tokenizer, error) {
	vocabData, err := readFile(vocabPath)
	if err != nil {
		return nil, err
	}
	mergesData, err := readFile(mergesPath)
	if err != nil {
		return nil, err
	}
	vocab, err := decodeVocab(vocabData, false)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", vocabPath, jsonError(err))
	}
	merges, err := parseMergesTxt(mergesData, mergesPath)
	if err != nil {
		return nil, err
	}
	return build(vocab, vocabPath, merges, nil, fileID(vocabData, mergesData))
}

// mergeRule is one merge as written in a file, with where it was written.
type mergeRule struct {
	left, right string
	file        string
	at          int // merges.txt: the line (from 1); tokenizer.json: -1 - the index in model.merges
}

// where names the merge's place: "merges.txt line 7",
// "tokenizer.json model.merges[5]".
func (m mergeRule) where() string {
	if m.at > 0 {
		return fmt.Sprintf("%s line %d", m.file, m.at)
	}
	return fmt.Sprintf("%s model.merges[%d]", m.file, -1-m.at)
}

// parseMergesTxt parses merges.txt: rank order, "#version" lines skipped (as
// Hugging Face does), blank lines ignored.
func parseMergesTxt(data []byte, path string) ([]mergeRule, error) {
	var merges []mergeRule
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" || strings.HasPrefix(line, "#version") {
			continue
		}
		m := mergeRule{file: path, at: n + 1}
		l, r, ok := strings.Cut(line, " ")
		if !ok || l == "" || r == "" || strings.Contains(r, " ") {
			return nil, fmt.Errorf("parse %s: want two tokens separated by one space, got %q", m.where(), line)
		}
		m.left, m.right = l, r
		merges = append(merges, m)
	}
	return merges, nil
}

// LoadJSON returns the tokenizer of a Hugging Face tokenizer.json with a BPE
// model. Merges may be "left right" strings or ["left", "right"] pairs.
//
// A GPT-2 file (its pre-tokenizer a lone ByteLevel, or none with a
// byte-level vocabulary) is run as vocab.json + merges.txt are: GPT-2's
// split, added tokens decoded but never matched in text; such files with a
// normalizer, add_prefix_space, ignore_merges, BPE dropout or subword
// prefixes or suffixes are refused.
//
// Any other file is run as Hugging Face's tokenizers runs it, component by
// component: added tokens (matched in the text first, their lstrip, rstrip,
// single_word and normalized flags honoured); normalizers NFC, NFD, NFKC,
// NFKD, Prepend, Replace and Sequence; pre-tokenizers Split (Oniguruma
// patterns, see package internal/regex), Digits (SmolLM2's; also after
// ByteLevel, as in Falcon3's), Punctuation, Metaspace (prepend_scheme
// always, first or never, or the older add_prefix_space; split or not),
// ByteLevel and Sequence; BPE with byte_fallback, unk_token, fuse_unk and
// ignore_merges; post-processors TemplateProcessing, ByteLevel and Sequence;
// decoders ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace and
// Sequence. Any other component is refused, naming it. The
// tokenizer_config.json beside the file, if any, gives the BOS and EOS
// names, split_special_tokens, and, for the Llama classes, add_bos_token and
// add_eos_token (as transformers' fast tokenizer does, they replace the
// file's post-processor). Its legacy is not read: transformers applies it
// only when it rebuilds the tokenizer from tokenizer.model (see
// tokenizerConfig).
func LoadJSON(path string) (*Tokenizer, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return loadJSON(data, path, func() (*tokenizerConfig, []byte, error) {
		return readConfig(filepath.Join(filepath.Dir(path), ConfigFile))
	})
}

// loadJSON is LoadJSON of the file's bytes; config reads the
// tokenizer_config.json beside it when it is needed.
func loadJSON(data []byte, path string, config func() (*tokenizerConfig, []byte, error)) (*Tokenizer, error) {
	var f hfFile
	var err error
	if err = json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, jsonError(err))
	}
	if f.Model == nil {
		return nil, fmt.Errorf("parse %s: no \"model\"", path)
	}
	if f.Model.Type != "BPE" {
		return nil, fmt.Errorf("load %s: model type %q, want \"BPE\"", path, f.Model.Type)
	}
	if f.Model.Dropout != nil && *f.Model.Dropout != 0 {
		return nil, fmt.Errorf("load %s: BPE dropout %g is not supported", path, *f.Model.Dropout)
	}
	if isNull(f.Model.RawVocab) {
		return nil, fmt.Errorf("parse %s: no \"model.vocab\"", path)
	}
	// The merges are read beside the vocabulary (each some 40 ms for Llama 3's).
	var merges []mergeRule
	var mergesErr error
	parsed := make(chan struct{})
	go func() {
		defer close(parsed)
		merges, mergesErr = parseMerges(f.Model.Merges, path)
	}()
	f.Model.Vocab, err = decodeVocab(f.Model.RawVocab, true) // json.Unmarshal checked the whole file
	gpt2 := false
	var checked checkedVocab
	if err == nil {
		if gpt2 = f.gpt2Style(); !gpt2 {
			checked = checkVocab(f.Model.Vocab, path+" model.vocab") // its error after the merges'
		}
	}
	<-parsed
	if err != nil {
		return nil, fmt.Errorf("parse %s model.vocab: %w", path, jsonError(err))
	}
	if mergesErr != nil {
		return nil, mergesErr
	}
	if !gpt2 {
		cfg, cfgData, err := config()
		if err != nil {
			return nil, err
		}
		files := [][]byte{data}
		if cfg.present {
			files = append(files, cfgData)
		}
		return loadHF(&f, checked, merges, path, cfg, fileID(files...))
	}
	if nonEmpty(f.Model.SubwordPrefix) || nonEmpty(f.Model.EndOfWord) || f.Model.IgnoreMerges {
		return nil, fmt.Errorf("load %s: BPE with continuing_subword_prefix, end_of_word_suffix or ignore_merges is not supported (GPT-2 uses none)", path)
	}
	if !isNull(f.Normalizer) {
		return nil, fmt.Errorf("load %s: a normalizer is not supported (GPT-2 has none)", path)
	}
	if err := checkPreTokenizer(f.PreTokenizer); err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	t, err := build(f.Model.Vocab, path+" model.vocab", merges, f.AddedTokens, fileID(data))
	if err != nil {
		return nil, err
	}
	tmpl, err := parsePostProcessor(f.PostProcessor, "post_processor", t.VocabSize())
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	t.lead, t.trail = tmpl.lead, tmpl.trail
	if len(t.lead) > 0 {
		t.bos = t.lead[0]
	}
	return t, nil
}

func nonEmpty(s *string) bool { return s != nil && *s != "" }

// jsonError adds the byte offset to a JSON syntax error, which lacks it.
func jsonError(err error) error {
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return fmt.Errorf("at byte %d: %w", se.Offset, err)
	}
	return err
}

// isNull reports whether a JSON value is absent or null.
func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

// checkPreTokenizer accepts no pre-tokenizer (the GPT-2 split is always used)
// or GPT-2's ByteLevel one without a prefix space.
func checkPreTokenizer(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	var pt struct {
		Type           string `json:"type"`
		AddPrefixSpace bool   `json:"add_prefix_space"`
		UseRegex       *bool  `json:"use_regex"`
	}
	if err := json.Unmarshal(raw, &pt); err != nil {
		return fmt.Errorf("pre_tokenizer: %w", err)
	}
	switch {
	case pt.Type != "ByteLevel":
		return fmt.Errorf("pre_tokenizer %q is not supported, want GPT-2's \"ByteLevel\"", pt.Type)
	case pt.AddPrefixSpace:
		return errors.New("pre_tokenizer ByteLevel with add_prefix_space is not supported")
	case pt.UseRegex != nil && !*pt.UseRegex:
		return errors.New("pre_tokenizer ByteLevel without use_regex is not supported")
	}
	return nil
}

// parseJSONMerge reads a merge written as "left right" or ["left", "right"].
func parseJSONMerge(raw string) (mergeRule, error) {
	raw = strings.TrimSpace(raw)
	if m, ok := quickMerge(raw); ok {
		return m, nil
	}
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal([]byte(raw), &s) == nil {
		l, r, ok := strings.Cut(s, " ")
		if !ok || l == "" || r == "" || strings.Contains(r, " ") {
			return mergeRule{}, fmt.Errorf("want two tokens separated by one space, got %q", s)
		}
		return mergeRule{left: l, right: r}, nil
	}
	var pair []string
	if err := json.Unmarshal([]byte(raw), &pair); err != nil || len(pair) != 2 || pair[0] == "" || pair[1] == "" {
		return mergeRule{}, fmt.Errorf("want \"left right\" or [\"left\", \"right\"], got %s", raw)
	}
	return mergeRule{left: pair[0], right: pair[1]}, nil
}

// quickMerge reads the common forms of a merge, "a b" and ["a", "b"]
// without escapes or empty tokens, without the JSON decoder (a file has
// hundreds of thousands): its tokens are substrings of raw. ok is false for
// anything else.
func quickMerge(raw string) (m mergeRule, ok bool) {
	if strings.IndexByte(raw, '\\') >= 0 || len(raw) < 2 || !utf8.ValidString(raw) {
		return m, false
	}
	if raw[0] == '"' && raw[len(raw)-1] == '"' {
		l, r, found := strings.Cut(raw[1:len(raw)-1], " ")
		if !found || len(l) == 0 || len(r) == 0 || strings.ContainsAny(r, " \"") || strings.IndexByte(l, '"') >= 0 {
			return m, false
		}
		return mergeRule{left: l, right: r}, true
	}
	if raw[0] != '[' || raw[len(raw)-1] != ']' {
		return m, false
	}
	rest := strings.TrimSpace(raw[1 : len(raw)-1])
	var parts [2]string
	for i := range parts {
		if len(rest) < 2 || rest[0] != '"' {
			return m, false
		}
		end := strings.IndexByte(rest[1:], '"')
		if end <= 0 {
			return m, false
		}
		parts[i] = rest[1 : 1+end]
		rest = strings.TrimSpace(rest[2+end:])
		if i == 0 {
			if len(rest) == 0 || rest[0] != ',' {
				return m, false
			}
			rest = strings.TrimSpace(rest[1:])
		}
	}
	if len(rest) != 0 {
		return m, false
	}
	return mergeRule{left: parts[0], right: parts[1]}, true
}

// fileID is the identity of a tokenizer loaded from files: sha256 over each
// file's length and contents.
func fileID(files ...[]byte) string {
	h := sha256.New()
	for _, f := range files {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write(f)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// build makes a BPE tokenizer from a vocabulary (byte-level token text -> id),
// its merges in rank order, and added tokens (decoded, never matched in text).
// vocabName names the vocabulary in errors.
func build(vocab map[string]int64, vocabName string, merges []mergeRule, added []addedToken, id string) (*Tokenizer, error) {
	size := int64(0)
	byID := map[int64]string{}
	for text, i := range vocab {
		if i < 0 || i >= maxID {
			return nil, fmt.Errorf("load %s: token %q has id %d, outside [0, %d)", vocabName, text, i, maxID)
		}
		if prev, dup := byID[i]; dup {
			a, b := min(prev, text), max(prev, text)
			return nil, fmt.Errorf("load %s: tokens %q and %q share id %d", vocabName, a, b, i)
		}
		byID[i] = text
		size = max(size, i+1)
	}
	for _, a := range added {
		if a.ID < 0 || a.ID >= maxID {
			return nil, fmt.Errorf("load %s: added token %q has id %d, outside [0, %d)", vocabName, a.Content, a.ID, maxID)
		}
		size = max(size, a.ID+1)
	}
	t := &Tokenizer{id: id, tokens: make([]string, size), eot: -1, bos: -1}
	for i, text := range byID {
		t.tokens[i] = textToBytes(text)
	}
	for _, a := range added {
		if _, ok := byID[a.ID]; !ok {
			t.tokens[a.ID] = a.Content
		}
		if a.Content == eotText {
			t.eot = int32(a.ID)
		}
	}
	if i, ok := vocab[eotText]; ok {
		t.eot = int32(i)
	}
	e := &bpe{merges: make(map[uint64]merge, len(merges)), byRank: make([]int32, 0, len(merges))}
	for b := range 256 {
		i, ok := vocab[string(byteToRune[b])]
		if !ok {
			return nil, fmt.Errorf("load %s: no token for byte 0x%02x (%q), which byte-level BPE needs", vocabName, b, byteToRune[b])
		}
		e.byteID[b] = int32(i)
	}
	for rank, m := range merges {
		l, ok := vocab[m.left]
		if !ok {
			return nil, fmt.Errorf("load %s: merge %q: %q is not in the vocabulary", m.where(), m.left+" "+m.right, m.left)
		}
		r, ok := vocab[m.right]
		if !ok {
			return nil, fmt.Errorf("load %s: merge %q: %q is not in the vocabulary", m.where(), m.left+" "+m.right, m.right)
		}
		joined, ok := vocab[m.left+m.right]
		if !ok {
			return nil, fmt.Errorf("load %s: merge %q: its result %q is not in the vocabulary", m.where(), m.left+" "+m.right, m.left+m.right)
		}
		// A pair listed twice keeps its last rank, as Hugging Face's and
		// OpenAI's GPT-2 tokenizers do.
		e.setMerge(int32(l), int32(r), merge{rank: int32(rank), id: int32(joined)})
	}
	t.bpe = e
	return t, nil
}
