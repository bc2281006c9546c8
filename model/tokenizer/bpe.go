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

	cache wordCache // piece -> ids, for short pieces
}

// fromRanks recovers the merges of a tiktoken-style rank table, raw[id] being
// the bytes of token id and ids being ranks: each token of two or more bytes is
// the merge of the two symbols that BPE over its bytes, with the merges of lower
// ranks only, leaves.
func fromRanks(raw []string) (*bpe, error) {
	e := &bpe{merges: make(map[uint64]merge, len(raw))}
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
		e.merges[pairKey(sym[0], sym[1])] = merge{rank: int32(id), id: int32(id)}
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
	ids := e.mergeSymbols(e.byteSymbols(p))
	if cacheable {
		e.remember(p, ids) // a copy of p: p would keep the caller's text alive
	}
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
	for i := range len(p) {
		sym[i] = e.byteID[p[i]]
	}
	return sym
}

// mergeScan merges the bytes of p (mergeSymbols of its byte symbols).
func (e *bpe) mergeScan(p string) []int32 { return e.mergeScanSymbols(e.byteSymbols(p)) }

// mergeHeap is mergeHeapSymbols of the bytes of p.
func (e *bpe) mergeHeap(p string) []int32 { return e.mergeHeapSymbols(e.byteSymbols(p)) }

// mergeSymbols merges sym (which it may overwrite) with whichever loop suits
// its length.
func (e *bpe) mergeSymbols(sym []int32) []int32 {
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

// node is a symbol of mergeHeap's doubly linked list; m is the merge with the
// next symbol. A removed node has m.rank == noRank and is never a candidate.
type node struct {
	id         int32
	prev, next int32
	m          merge
}

// candidate is a possible merge at node pos; stale ones are skipped when popped.
type candidate struct {
	rank, pos int32
}

// candidateHeap is a binary min-heap ordered by rank, then position, so equal
// ranks merge leftmost first, as in mergeScan.
type candidateHeap []candidate

func (h candidateHeap) less(a, b int) bool {
	if h[a].rank != h[b].rank {
		return h[a].rank < h[b].rank
	}
	return h[a].pos < h[b].pos
}

func (h *candidateHeap) push(c candidate) {
	*h = append(*h, c)
	s := *h
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if !s.less(i, parent) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

func (h *candidateHeap) pop() candidate {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(s) {
			break
		}
		if c+1 < len(s) && s.less(c+1, c) {
			c++
		}
		if !s.less(c, i) {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	*h = s
	return top
}

// mergeHeapSymbols gives the same result as mergeScanSymbols in O(n log n),
// for long pieces (a long run of spaces or letters would make mergeScan
// quadratic).
func (e *bpe) mergeHeapSymbols(sym []int32) []int32 {
	n := int32(len(sym))
	if n < 2 {
		return sym
	}
	nodes := make([]node, n)
	for i := range n {
		nodes[i] = node{id: sym[i], prev: i - 1, next: i + 1, m: merge{rank: noRank}}
	}
	nodes[n-1].next = -1
	var h candidateHeap
	for i := range n - 1 {
		nodes[i].m = e.rank(nodes[i].id, nodes[i+1].id)
		if nodes[i].m.rank != noRank {
			h.push(candidate{nodes[i].m.rank, i})
		}
	}
	for len(h) > 0 {
		c := h.pop()
		i := c.pos
		if nodes[i].m.rank != c.rank {
			continue // stale: node i was removed or its pair changed
		}
		j := nodes[i].next
		nodes[i].id = nodes[i].m.id
		nodes[i].next = nodes[j].next
		if k := nodes[j].next; k >= 0 {
			nodes[k].prev = i
		}
		nodes[j].m.rank = noRank
		for _, b := range [2]int32{i, nodes[i].prev} {
			if b < 0 {
				continue
			}
			nodes[b].m = merge{rank: noRank}
			if nx := nodes[b].next; nx >= 0 {
				nodes[b].m = e.rank(nodes[b].id, nodes[nx].id)
			}
			if nodes[b].m.rank != noRank {
				h.push(candidate{nodes[b].m.rank, b})
			}
		}
	}
	out := sym[:0]
	for i := int32(0); i >= 0; i = nodes[i].next {
		out = append(out, nodes[i].id)
	}
	return out
}
