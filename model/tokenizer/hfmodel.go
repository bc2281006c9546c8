package tokenizer

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"unicode/utf8"
)

// hfModel is the BPE model of a tokenizer.json, run on the pieces of its
// pre-tokenizer. Byte-level files (a ByteLevel pre-tokenizer: GPT-2, Llama 3,
// Qwen) start a piece as one symbol per byte; the others (SentencePiece
// style: Llama 2, Mistral) as one symbol per character, a character missing
// from the vocabulary becoming its UTF-8 bytes as <0xXX> tokens
// (byte_fallback) or the unknown token (merged with unknown neighbours when
// fuse_unk), or nothing when there is no unknown token (as Hugging Face
// drops it).
type hfModel struct {
	bpe          *bpe
	byteLevel    bool
	ignoreMerges bool
	whole        map[string]int32 // ignore_merges: a piece that is a token is that token (byte-level: by its raw bytes)

	chars        map[rune]int32 // SentencePiece style: single-character tokens
	charsBMP     []uint64       // ... as a bit set of the runes below U+10000 (for MergeMemory)
	byteFallback bool
	byteTok      [256]int32 // <0xXX> tokens, -1 where missing
	unk          int32      // -1: none
	fuseUnk      bool
	mergeable    []bool // by id: the token is a side of some merge

	wordStart rune // SentencePiece's "▁", where text may be cut before it (see findWordStart); -1: nowhere

	cache wordCache // word -> ids (SentencePiece style)
}

// encode appends the ids of piece to dst.
func (m *hfModel) encode(dst []int32, piece string) []int32 {
	if m.byteLevel {
		// A piece that is a token is found in the word cache once used.
		if m.ignoreMerges && len(piece) > 1 && !m.bpe.cached(piece) {
			if id, ok := m.whole[piece]; ok {
				m.bpe.remember(piece, []int32{id})
				return append(dst, id)
			}
		}
		return m.bpe.encodePiece(dst, piece)
	}
	if m.ignoreMerges {
		if id, ok := m.whole[piece]; ok {
			return append(dst, id)
		}
	}
	return m.encodeChars(dst, piece)
}

// encodeSteps appends the ids of piece, which lies at at in the text, to
// e.dst as encode does, taking an encoding step (e.step) after the piece,
// and, for a SentencePiece-style model, after each word that encodeChars
// cuts it into: for Llama 2 a piece is a whole text between added tokens,
// which EncodeHead can then stop in, and whose context it checks as it
// goes; and every place Cut may cut such a text is a step, as it is in the
// text's parts (see EncodePiece). A piece or word longer than BPE can merge
// is refused (checkWord) when it is reached.
func (m *hfModel) encodeSteps(e *encoding, piece string, at pieceAt) error {
	if m.byteLevel || m.wordStart < 0 {
		if err := m.checkWord(piece, at, 0); err != nil {
			return err
		}
		e.dst = m.encode(e.dst, piece)
		return e.step(at.offset(len(piece)))
	}
	if m.ignoreMerges {
		if id, ok := m.whole[piece]; ok {
			e.dst = append(e.dst, id)
			return e.step(at.offset(len(piece)))
		}
	}
	start := 0
	prev := rune(-1)
	for i, r := range piece {
		if r == m.wordStart && prev != m.wordStart && i > start {
			if err := m.checkWord(piece[start:i], at, start); err != nil {
				return err
			}
			e.dst = m.encodeWord(e.dst, piece[start:i])
			if err := e.step(at.offset(i)); err != nil {
				return err
			}
			start = i
		}
		prev = r
	}
	if err := m.checkWord(piece[start:], at, start); err != nil {
		return err
	}
	e.dst = m.encodeWord(e.dst, piece[start:])
	return e.step(at.offset(len(piece)))
}

// checkWord refuses word, at byte start of a piece that lies at at in the
// text, where BPE would merge more than maxPieceSymbols of its symbols at
// once: a byte-level piece of more bytes, or a SentencePiece-style word
// (the whole piece where encodeChars does not cut) of more symbols
// (longestWord's count, which MergeMemory makes too). A word of fewer
// bytes, nearly every one, is passed by its length alone.
func (m *hfModel) checkWord(word string, at pieceAt, start int) error {
	if len(word) <= maxPieceSymbols {
		return nil
	}
	if n := m.longestWord(word); n > maxPieceSymbols {
		return errPieceTooLong(at.offset(start), at.offset(start+len(word)), n, true)
	}
	return nil
}

// symbols appends the initial symbols of a SentencePiece-style piece, as
// Hugging Face's BPE::merge_word makes them (a pending unknown token is
// written out only before the next known character or at the end, after
// any byte tokens between: its order, kept).
func (m *hfModel) symbols(sym []int32, piece string) []int32 {
	pendingUnk := false
	for _, r := range piece {
		if id, ok := m.chars[r]; ok {
			if pendingUnk {
				sym = append(sym, m.unk)
				pendingUnk = false
			}
			sym = append(sym, id)
			continue
		}
		if m.byteFallback && m.hasBytes(r) {
			var buf [utf8.UTFMax]byte
			for _, b := range buf[:utf8.EncodeRune(buf[:], r)] {
				sym = append(sym, m.byteTok[b])
			}
			continue
		}
		if m.unk < 0 {
			continue
		}
		if pendingUnk && !m.fuseUnk {
			sym = append(sym, m.unk)
		}
		pendingUnk = true
	}
	if pendingUnk {
		sym = append(sym, m.unk)
	}
	return sym
}

// hasBytes reports whether every UTF-8 byte of r has a <0xXX> token.
func (m *hfModel) hasBytes(r rune) bool {
	var buf [utf8.UTFMax]byte
	for _, b := range buf[:utf8.EncodeRune(buf[:], r)] {
		if m.byteTok[b] < 0 {
			return false
		}
	}
	return true
}

// encodeChars runs BPE on a SentencePiece-style piece, which for Llama 2
// is a whole text between added tokens. It is cut where no merge can join
// the two sides, and the parts are merged on their own (the same result as
// merging the whole): before a word-start character (see findWordStart) that
// follows another character, and around a symbol that is no side of any
// merge.
func (m *hfModel) encodeChars(dst []int32, piece string) []int32 {
	if m.wordStart < 0 {
		return m.encodeWord(dst, piece)
	}
	start := 0
	prev := rune(-1)
	for i, r := range piece {
		if r == m.wordStart && prev != m.wordStart && i > start {
			dst = m.encodeWord(dst, piece[start:i])
			start = i
		}
		prev = r
	}
	return m.encodeWord(dst, piece[start:])
}

// longWord is the length from which encodeWord counts a word's symbols
// before it makes them.
const longWord = 4096

// encodeWord merges the symbols of word, cached when it is short.
func (m *hfModel) encodeWord(dst []int32, word string) []int32 {
	cacheable := len(word) <= cacheMaxLen
	if cacheable {
		if ids, ok := m.cache.get(word); ok {
			return append(dst, ids...)
		}
	}
	size := len(word) // at least its symbols
	if size > longWord {
		// Many characters of several bytes would leave most of a buffer
		// of one symbol a byte unused: count them (MergeMemory assumes
		// one buffer of the symbols).
		size = 0
		for _, r := range word {
			size += m.symbolsOf(r)
		}
	}
	sym := m.symbols(make([]int32, 0, size), word)
	w := 0 // the ids so far, written over the symbols they were made of
	start := 0
	for i := 0; i <= len(sym); i++ {
		if i < len(sym) && m.mergeable[sym[i]] {
			continue
		}
		w += copy(sym[w:], m.bpe.mergeSymbols(sym[start:i]))
		if i < len(sym) {
			sym[w] = sym[i]
			w++
		}
		start = i + 1
	}
	if cacheable {
		m.cache.put(word, sym[:w:w])
	}
	return append(dst, sym[:w]...)
}

// findWordStart returns SentencePiece's word-start character ("▁") when
// the vocabulary shows it never follows another character inside a token:
// every token holding it holds it only in a leading run. No merge then
// joins a character to a following "▁" (every symbol BPE makes is a token),
// so text can be cut before each "▁" that follows another character. c is
// the candidate (the normalizer's replacement); -1 when it fails the test.
func findWordStart(c rune, vocab map[string]int32, chars map[rune]int32) rune {
	if _, ok := chars[c]; !ok {
		return -1
	}
	for text := range vocab {
		lead := true
		for _, r := range text {
			if r != c {
				lead = false
			} else if !lead {
				return -1
			}
		}
	}
	return c
}

// modelJSON is a tokenizer.json "model".
type modelJSON struct {
	Type          string           `json:"type"`
	Dropout       *float64         `json:"dropout"`
	UnkToken      *string          `json:"unk_token"`
	SubwordPrefix *string          `json:"continuing_subword_prefix"`
	EndOfWord     *string          `json:"end_of_word_suffix"`
	FuseUnk       bool             `json:"fuse_unk"`
	ByteFallback  bool             `json:"byte_fallback"`
	IgnoreMerges  bool             `json:"ignore_merges"`
	RawVocab      json.RawMessage  `json:"vocab"`
	Vocab         map[string]int64 `json:"-"`      // RawVocab, read once the type is known to be BPE
	Merges        json.RawMessage  `json:"merges"` // read by parseMerges
}

// newHFModel builds the model. vocab maps token text to id (checked by the
// caller); merges are in rank order.
func newHFModel(mj *modelJSON, vocab map[string]int32, merges []mergeRule, byteLevel bool, size int, where string) (*hfModel, error) {
	m := &hfModel{bpe: &bpe{merges: make(map[uint64]merge, len(merges)), byRank: make([]int32, 0, len(merges))},
		byteLevel: byteLevel, ignoreMerges: mj.IgnoreMerges, byteFallback: mj.ByteFallback,
		unk: -1, fuseUnk: mj.FuseUnk, wordStart: -1}
	if mj.UnkToken != nil {
		id, ok := vocab[*mj.UnkToken]
		if !ok {
			return nil, fmt.Errorf("load %s: unk_token %q is not in the vocabulary", where, *mj.UnkToken)
		}
		m.unk = id
	}
	for b := range 256 {
		m.byteTok[b] = -1
		if id, ok := vocab[fmt.Sprintf("<0x%02X>", b)]; ok {
			m.byteTok[b] = id
		}
	}
	if byteLevel {
		for b := range 256 {
			id, ok := vocab[string(byteToRune[b])]
			if !ok {
				return nil, fmt.Errorf("load %s: no token for byte 0x%02x (%q), which byte-level BPE needs", where, b, byteToRune[b])
			}
			m.bpe.byteID[b] = id
		}
	} else {
		m.chars = map[rune]int32{}
		m.charsBMP = make([]uint64, 1<<16/64)
		for text, id := range vocab {
			if r, n := utf8.DecodeRuneInString(text); n == len(text) && n > 1 || n == 1 && r < utf8.RuneSelf && len(text) == 1 {
				m.chars[r] = id
				if r < 1<<16 {
					m.charsBMP[r/64] |= 1 << (r % 64)
				}
			}
		}
	}
	// The tokens as a whole (ignore_merges) are gathered beside the merges'
	// lookups.
	gathered := make(chan struct{})
	go func() {
		defer close(gathered)
		if m.ignoreMerges {
			m.whole = wholeTokens(vocab, byteLevel)
		}
	}()
	ids, err := mergeIDs(vocab, merges)
	<-gathered
	if err != nil {
		return nil, err
	}
	m.mergeable = make([]bool, size)
	for rank, id := range ids {
		m.bpe.setMerge(id.left, id.right, merge{rank: int32(rank), id: id.joined})
		m.mergeable[id.left], m.mergeable[id.right] = true, true
	}
	return m, nil
}

// wholeTokens maps each token's bytes to its id, for ignore_merges: the
// text itself, or for byte-level BPE the bytes it stands for (tokens with
// characters outside the byte-level alphabet left out).
func wholeTokens(vocab map[string]int32, byteLevel bool) map[string]int32 {
	whole := make(map[string]int32, len(vocab))
	var raw []byte
	for text, id := range vocab {
		var ok bool
		if !byteLevel {
			whole[text] = id
		} else if raw, ok = appendByteLevelBytes(raw[:0], text); ok {
			whole[string(raw)] = id
		}
	}
	return whole
}

// mergeID is a merge's tokens and its result as ids.
type mergeID struct{ left, right, joined int32 }

// mergeIDs looks the merges' tokens and results up in vocab, in parts on
// every core (Llama 3 has 280,000 merges); an error names the first merge,
// in rank order, that has one outside it.
func mergeIDs(vocab map[string]int32, merges []mergeRule) ([]mergeID, error) {
	ids := make([]mergeID, len(merges))
	parts := min(runtime.GOMAXPROCS(0), len(merges)/4096+1)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			var joinedText []byte
			for i := p * len(merges) / parts; i < (p+1)*len(merges)/parts; i++ {
				mr := merges[i]
				l, ok := vocab[mr.left]
				if !ok {
					errs[p] = fmt.Errorf("load %s: merge %q: %q is not in the vocabulary", mr.where(), mr.left+" "+mr.right, mr.left)
					return
				}
				r, ok := vocab[mr.right]
				if !ok {
					errs[p] = fmt.Errorf("load %s: merge %q: %q is not in the vocabulary", mr.where(), mr.left+" "+mr.right, mr.right)
					return
				}
				joinedText = append(append(joinedText[:0], mr.left...), mr.right...)
				joined, ok := vocab[string(joinedText)]
				if !ok {
					errs[p] = fmt.Errorf("load %s: merge %q: its result %q is not in the vocabulary", mr.where(), mr.left+" "+mr.right, mr.left+mr.right)
					return
				}
				ids[i] = mergeID{l, r, joined}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// byteLevelBytes maps a byte-level token text to its raw bytes; ok is false
// when a character is outside the byte-level alphabet.
func byteLevelBytes(text string) (string, bool) {
	raw, ok := appendByteLevelBytes(make([]byte, 0, len(text)), text)
	return string(raw), ok
}

// appendByteLevelBytes is byteLevelBytes appending to dst.
func appendByteLevelBytes(dst []byte, text string) ([]byte, bool) {
	for _, r := range text {
		b, ok := runeToByte(r)
		if !ok {
			return dst, false
		}
		dst = append(dst, b)
	}
	return dst, true
}
