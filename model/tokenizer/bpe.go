package tokenizer

import (
	"fmt"
	"math"
)

// noRank marks a pair of adjacent symbols that no merge joins.
const noRank = math.MaxInt32

// heapFrom is the piece length, in bytes, from which mergeHeap replaces the
// quadratic mergeScan.
const heapFrom = 64

// cacheMax bounds the word cache; cacheMaxLen is the longest piece it keeps.
const (
	cacheMax    = 1 << 16
	cacheMaxLen = 64
)

// merge is one rule of merges.txt: the pair it applies to becomes token id, and
// lower ranks apply first.
type merge struct {
	rank, id int32
}

// pairKey packs two adjacent token ids into a map key.
func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// bpe is byte-level BPE driven by a ranked list of merges, as Hugging Face's
// GPT-2 tokenizer runs it: a piece starts as one symbol per byte and the
// adjacent pair with the lowest merge rank (the leftmost among equals) is joined
// until no merge applies.
type bpe struct {
	byteID [256]int32
	merges map[uint64]merge
	byRank []int32 // byRank[m.rank] is m.id, for each merge m of merges

	cache wordCache // piece -> ids, for short pieces
}

// fromRanks recovers the merges of a tiktoken-style rank table, raw[id] being
// the bytes of token id and ids being ranks: each token of two or more bytes is
// the merge of the two symbols that BPE over its bytes, with the merges of lower
// ranks only, leaves.
func fromRanks(raw []string) (*bpe, error) {
	e := &bpe{merges: make(map[uint64]merge, len(raw)), byRank: make([]int32, 0, len(raw))}
	for i := range e.byteID {
		e.byteID[i] = -1
	}
	for id, s := range raw {
		if len(s) == 1 {
			e.byteID[s[0]] = int32(id)
		}
	}
	for b, id := range e.byteID {
		if id < 0 {
			return nil, fmt.Errorf("no token for byte 0x%02x", b)
		}
	}
	for id, s := range raw {
		if len(s) < 2 {
			continue
		}
		sym := e.mergeScan(s)
		if len(sym) != 2 {
			return nil, fmt.Errorf("token %d (%q) is not the merge of two lower-ranked tokens", id, s)
		}
		e.setMerge(sym[0], sym[1], merge{rank: int32(id), id: int32(id)})
	}
	return e, nil
}

// encodePiece appends the ids of one pre-tokenizer piece to dst.
func (e *bpe) encodePiece(dst []int32, p string) []int32 {
	if len(p) == 1 {
		return append(dst, e.byteID[p[0]])
	}
	cacheable := len(p) <= cacheMaxLen
	if cacheable {
		if ids, ok := e.cache.get(p); ok {
			return append(dst, ids...)
		}
	}
	if !cacheable {
		sym := getSymbols(len(p))
		e.fillBytes(sym, p)
		dst = append(dst, e.mergeSymbols(sym)...)
		putSymbols(sym)
		return dst
	}
	ids := e.mergeSymbols(e.byteSymbols(p))
	e.remember(p, ids) // a copy of p: p would keep the caller's text alive
	return append(dst, ids...)
}

// cached reports whether the word cache holds piece.
func (e *bpe) cached(p string) bool {
	if len(p) > cacheMaxLen {
		return false
	}
	_, ok := e.cache.get(p)
	return ok
}

// remember puts the ids of a piece in the word cache, if it has room.
func (e *bpe) remember(p string, ids []int32) {
	if len(p) > cacheMaxLen {
		return
	}
	e.cache.put(p, ids)
}

// setMerge makes m the merge of the pair (a, b), replacing any it had.
func (e *bpe) setMerge(a, b int32, m merge) {
	e.merges[pairKey(a, b)] = m
	for int(m.rank) >= len(e.byRank) {
		e.byRank = append(e.byRank, 0)
	}
	e.byRank[m.rank] = m.id
}

// rank returns the merge of the pair (a, b), or noRank.
func (e *bpe) rank(a, b int32) merge {
	if m, ok := e.merges[pairKey(a, b)]; ok {
		return m
	}
	return merge{rank: noRank}
}

// byteSymbols returns the byte-level symbols of p: one per byte.
func (e *bpe) byteSymbols(p string) []int32 {
	sym := make([]int32, len(p))
	e.fillBytes(sym, p)
	return sym
}

// fillBytes sets sym[i] to the symbol of byte p[i] (len(sym) == len(p)).
func (e *bpe) fillBytes(sym []int32, p string) {
	for i := range len(sym) {
		sym[i] = e.byteID[p[i]]
	}
}

// mergeScan merges the bytes of p (mergeSymbols of its byte symbols).
func (e *bpe) mergeScan(p string) []int32 { return e.mergeScanSymbols(e.byteSymbols(p)) }

// mergeHeap is mergeHeapSymbols of the bytes of p.
func (e *bpe) mergeHeap(p string) []int32 { return e.mergeHeapSymbols(e.byteSymbols(p)) }

// mergeSeen, when a test sets it, is told the length of every sequence of
// symbols that mergeSymbols merges (memory_test.go holds MergeMemory to it).
var mergeSeen func(n int)

// mergeSymbols merges sym (which it may overwrite) with whichever loop suits
// its length.
func (e *bpe) mergeSymbols(sym []int32) []int32 {
	if mergeSeen != nil {
		mergeSeen(len(sym))
	}
	if len(sym) < heapFrom {
		return e.mergeScanSymbols(sym)
	}
	return e.mergeHeapSymbols(sym)
}

// mergeScanSymbols merges sym in place by scanning for the lowest-ranked
// pair after every merge: O(n^2), fastest for short pieces.
func (e *bpe) mergeScanSymbols(sym []int32) []int32 {
	if len(sym) < 2 {
		return sym
	}
	pair := make([]merge, len(sym)-1) // pair[k]: the merge of sym[k], sym[k+1]
	for k := range pair {
		pair[k] = e.rank(sym[k], sym[k+1])
	}
	for len(pair) > 0 {
		best := -1
		bestRank := int32(noRank)
		for k, m := range pair {
			if m.rank < bestRank {
				best, bestRank = k, m.rank
			}
		}
		if best < 0 {
			break
		}
		sym[best] = pair[best].id
		sym = append(sym[:best+1], sym[best+2:]...)
		pair = append(pair[:best], pair[best+1:]...)
		if best < len(pair) {
			pair[best] = e.rank(sym[best], sym[best+1])
		}
		if best > 0 {
			pair[best-1] = e.rank(sym[best-1], sym[best])
		}
	}
	return sym
}
