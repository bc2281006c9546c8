package tokenizer

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

// maxID bounds token ids in vocabulary files, so a corrupt id cannot make the
// decode table huge.
const maxID = 1 << 24

// LoadFiles returns the tokenizer of a GPT-2 vocab.json (token text -> id) and
// merges.txt (one "left right" merge per line, by rank, after an optional
// "#version" line). A pair listed twice keeps its last rank.
func LoadFiles(vocabPath, mergesPath string) (*Tokenizer, error) {
	vocabData, err := os.ReadFile(vocabPath)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	mergesData, err := os.ReadFile(mergesPath)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	var vocab map[string]int64
	if err := json.Unmarshal(vocabData, &vocab); err != nil {
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
	where       string // "merges.txt line 7", "tokenizer.json model.merges[5]"
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
		where := fmt.Sprintf("%s line %d", path, n+1)
		l, r, ok := strings.Cut(line, " ")
		if !ok || l == "" || r == "" || strings.Contains(r, " ") {
			return nil, fmt.Errorf("parse %s: want two tokens separated by one space, got %q", where, line)
		}
		merges = append(merges, mergeRule{l, r, where})
	}
	return merges, nil
}

// tokenizerJSON is the part of a Hugging Face tokenizer.json this package reads.
type tokenizerJSON struct {
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	AddedTokens  []addedToken    `json:"added_tokens"`
	Model        *tokenizerModel `json:"model"`
}

type addedToken struct {
	ID      int64  `json:"id"`
	Content string `json:"content"`
}

type tokenizerModel struct {
	Type          string            `json:"type"`
	Dropout       *float64          `json:"dropout"`
	SubwordPrefix string            `json:"continuing_subword_prefix"`
	EndOfWord     string            `json:"end_of_word_suffix"`
	IgnoreMerges  bool              `json:"ignore_merges"`
	Vocab         map[string]int64  `json:"vocab"`
	Merges        []json.RawMessage `json:"merges"`
}

// LoadJSON returns the tokenizer of a Hugging Face tokenizer.json holding a
// byte-level BPE model (GPT-2's). Merges may be "left right" strings or
// ["left", "right"] pairs; added tokens are decoded but never matched in text.
// Files with a normalizer, a pre-tokenizer other than GPT-2's ByteLevel, BPE
// dropout, subword prefixes or suffixes, or ignore_merges are refused: this
// package would not tokenize them as their authors intend.
func LoadJSON(path string) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	var tj tokenizerJSON
	if err := json.Unmarshal(data, &tj); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, jsonError(err))
	}
	if tj.Model == nil {
		return nil, fmt.Errorf("parse %s: no \"model\"", path)
	}
	if tj.Model.Type != "BPE" {
		return nil, fmt.Errorf("load %s: model type %q, want \"BPE\"", path, tj.Model.Type)
	}
	if tj.Model.Dropout != nil && *tj.Model.Dropout != 0 {
		return nil, fmt.Errorf("load %s: BPE dropout %g is not supported", path, *tj.Model.Dropout)
	}
	if tj.Model.SubwordPrefix != "" || tj.Model.EndOfWord != "" || tj.Model.IgnoreMerges {
		return nil, fmt.Errorf("load %s: BPE with continuing_subword_prefix, end_of_word_suffix or ignore_merges is not supported (GPT-2 uses none)", path)
	}
	if tj.Model.Vocab == nil {
		return nil, fmt.Errorf("parse %s: no \"model.vocab\"", path)
	}
	if !isNull(tj.Normalizer) {
		return nil, fmt.Errorf("load %s: a normalizer is not supported (GPT-2 has none)", path)
	}
	if err := checkPreTokenizer(tj.PreTokenizer); err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	merges := make([]mergeRule, len(tj.Model.Merges))
	for i, raw := range tj.Model.Merges {
		where := fmt.Sprintf("%s model.merges[%d]", path, i)
		m, err := parseJSONMerge(raw)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", where, err)
		}
		m.where = where
		merges[i] = m
	}
	return build(tj.Model.Vocab, path+" model.vocab", merges, tj.AddedTokens, fileID(data))
}

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
func parseJSONMerge(raw json.RawMessage) (mergeRule, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		l, r, ok := strings.Cut(s, " ")
		if !ok || l == "" || r == "" || strings.Contains(r, " ") {
			return mergeRule{}, fmt.Errorf("want two tokens separated by one space, got %q", s)
		}
		return mergeRule{left: l, right: r}, nil
	}
	var pair []string
	if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 || pair[0] == "" || pair[1] == "" {
		return mergeRule{}, fmt.Errorf("want \"left right\" or [\"left\", \"right\"], got %s", raw)
	}
	return mergeRule{left: pair[0], right: pair[1]}, nil
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
	t := &Tokenizer{id: id, tokens: make([]string, size), eot: -1}
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
	e := &bpe{merges: make(map[uint64]merge, len(merges)), cache: map[string][]int32{}}
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
			return nil, fmt.Errorf("load %s: merge %q: %q is not in the vocabulary", m.where, m.left+" "+m.right, m.left)
		}
		r, ok := vocab[m.right]
		if !ok {
			return nil, fmt.Errorf("load %s: merge %q: %q is not in the vocabulary", m.where, m.left+" "+m.right, m.right)
		}
		joined, ok := vocab[m.left+m.right]
		if !ok {
			return nil, fmt.Errorf("load %s: merge %q: its result %q is not in the vocabulary", m.where, m.left+" "+m.right, m.left+m.right)
		}
		// A pair listed twice keeps its last rank, as Hugging Face's and
		// OpenAI's GPT-2 tokenizers do.
		e.merges[pairKey(int32(l), int32(r))] = merge{rank: int32(rank), id: int32(joined)}
	}
	t.bpe = e
	return t, nil
}
