package tokenizer

import (
	"fmt"
	"sync"
)

// mergeHeap: BPE for long pieces (heapFrom symbols or more), with the result
// of mergeScan in O(n log n) time and 16 bytes per symbol, all of it in
// three arrays of n elements allocated (or taken from a pool) once:
//
//   - sym, the symbols themselves (4 bytes), which is also the doubly linked
//     list of what is left of them: a symbol made of the L >= 2 initial
//     symbols [s, s+L) keeps its id at sym[s] and -L at sym[s+1] and at
//     sym[s+L-1] (the same slot when L is 2), so that the next symbol starts
//     at s+L and the one before s ends at s-1, whose slot holds the id of a
//     symbol of length 1 (>= 0) or the length of a longer one. Slots inside
//     a symbol are never read.
//   - the candidate merges (8 bytes), one per adjacent pair that some merge
//     joins: a 4-ary min-heap of rank<<32 | start of the pair's left symbol,
//     so that the lowest rank, and among equals the leftmost pair, is on top,
//     as mergeScan chooses.
//   - the index of each symbol's candidate in the heap (4 bytes), -1 where
//     it has none, so that a changed or removed pair's candidate is changed
//     in place: the heap never holds more than one candidate per symbol, nor
//     a stale one.
//
// The id a merge makes is looked up by its rank (bpe.byRank), so candidates
// need not carry it.

// mergeHeapBytes is the working memory mergeHeapSymbols takes per symbol,
// beyond the 4 bytes of the symbols themselves.
const mergeHeapBytes = 12

// heapArity is the number of children of a node of the candidate heap: four
// keys of 8 bytes share a cache line half, and the heap is half as deep as a
// binary one.
const heapArity = 4

// mergeQueue is the candidate heap of mergeHeapSymbols.
type mergeQueue struct {
	keys []uint64 // rank<<32 | pos, a min-heap
	at   []int32  // at[pos]: the index in keys of the candidate of the symbol at pos, -1 where none
}

// poolMax is the largest piece, in symbols, whose working arrays are pooled
// for the next long piece; a longer one's are left to the collector rather
// than kept alive by the pool.
const poolMax = 1 << 20

var queuePool = sync.Pool{New: func() any { return new(mergeQueue) }}

// symPool holds symbol buffers of pieces longer than cacheMaxLen (whose ids
// the word cache never keeps).
var symPool = sync.Pool{New: func() any { return new([]int32) }}

// getSymbols returns a buffer of n symbols, pooled where n is large enough
// that the word cache never keeps the result (put it back with putSymbols).
func getSymbols(n int) []int32 {
	if n <= cacheMaxLen || n > poolMax {
		return make([]int32, n)
	}
	p := symPool.Get().(*[]int32)
	if cap(*p) < n {
		*p = make([]int32, n)
	}
	return (*p)[:n]
}

// putSymbols returns a buffer from getSymbols to its pool.
func putSymbols(s []int32) {
	if cap(s) <= cacheMaxLen || cap(s) > poolMax {
		return
	}
	s = s[:0]
	symPool.Put(&s)
}

func heapKey(rank int32, pos int) uint64 { return uint64(uint32(rank))<<32 | uint64(uint32(pos)) }

// mergeHeapSymbols merges sym in place (its result is a prefix of sym), as
// mergeScanSymbols does. sym must hold at most MaxPieceSymbols symbols (the
// positions are int32: the encoders refuse a longer piece with
// ErrPieceTooLong before they merge it), and every symbol an id >= 0.
func (e *bpe) mergeHeapSymbols(sym []int32) []int32 {
	n := len(sym)
	if n < 2 {
		return sym
	}
	if n > MaxPieceSymbols {
		// Not the input's fault: a path that merges without checking.
		panic(fmt.Sprintf("tokenizer: internal error: BPE of a piece of %d symbols, more than MaxPieceSymbols, which the encoders refuse first", n))
	}
	q := queuePool.Get().(*mergeQueue)
	defer func() {
		if cap(q.at) > poolMax || cap(q.keys) > poolMax {
			q.keys, q.at = nil, nil
		}
		queuePool.Put(q)
	}()
	if cap(q.keys) < n-1 {
		q.keys = make([]uint64, 0, n-1) // its pages are touched only as candidates fill them
	}
	q.keys = q.keys[:0]
	for i := range n - 1 {
		if r := e.rank(sym[i], sym[i+1]).rank; r != noRank {
			q.keys = append(q.keys, heapKey(r, i))
		}
	}
	if len(q.keys) == 0 {
		return sym // no merge applies (a run of NULs)
	}
	if cap(q.at) < n {
		q.at = make([]int32, n)
	}
	q.at = q.at[:n]
	for i := range q.at {
		q.at[i] = -1
	}
	for k, key := range q.keys {
		q.at[uint32(key)] = int32(k)
	}
	for k := (len(q.keys) - 2) / heapArity; k >= 0 && len(q.keys) > 1; k-- {
		q.down(k)
	}

	next := func(i int) int { // the start of the symbol after the one at i, or n
		if i+1 < n {
			if v := sym[i+1]; v < 0 {
				return i - int(v)
			}
		}
		return i + 1
	}
	for len(q.keys) > 0 {
		top := q.keys[0]
		i := int(uint32(top))
		j := next(i)
		k := next(j)
		sym[i] = e.byRank[top>>32]
		sym[i+1], sym[k-1] = int32(i-k), int32(i-k)
		q.set(j, noRank)
		r := int32(noRank)
		if k < n {
			r = e.rank(sym[i], sym[k]).rank
		}
		q.set(i, r)
		if i > 0 {
			p := i - 1
			if v := sym[p]; v < 0 {
				p = i + int(v)
			}
			q.set(p, e.rank(sym[p], sym[i]).rank)
		}
	}
	w := 0
	for i := 0; i < n; w++ {
		id := sym[i]
		i = next(i)
		sym[w] = id
	}
	return sym[:w]
}

// set makes rank the rank of the candidate of the symbol at pos: changed in
// place, added, or removed (noRank).
func (q *mergeQueue) set(pos int, rank int32) {
	k := int(q.at[pos])
	switch {
	case k < 0 && rank == noRank:
	case k < 0:
		k = len(q.keys)
		q.keys = append(q.keys, heapKey(rank, pos))
		q.at[pos] = int32(k)
		q.up(k)
	case rank == noRank:
		q.at[pos] = -1
		last := len(q.keys) - 1
		if k != last {
			q.keys[k] = q.keys[last]
			q.at[uint32(q.keys[k])] = int32(k)
		}
		q.keys = q.keys[:last]
		if k != last {
			q.fix(k)
		}
	default:
		old := q.keys[k]
		q.keys[k] = heapKey(rank, pos)
		if q.keys[k] < old {
			q.up(k)
		} else {
			q.down(k)
		}
	}
}

// fix restores the heap order around keys[k], which changed.
func (q *mergeQueue) fix(k int) {
	if k > 0 && q.keys[k] < q.keys[(k-1)/heapArity] {
		q.up(k)
	} else {
		q.down(k)
	}
}

func (q *mergeQueue) up(k int) {
	keys, at := q.keys, q.at
	key := keys[k]
	for k > 0 {
		p := (k - 1) / heapArity
		if keys[p] <= key {
			break
		}
		keys[k] = keys[p]
		at[uint32(keys[k])] = int32(k)
		k = p
	}
	keys[k] = key
	at[uint32(key)] = int32(k)
}

func (q *mergeQueue) down(k int) {
	keys, at := q.keys, q.at
	n := len(keys)
	key := keys[k]
	for {
		c := heapArity*k + 1
		if c >= n {
			break
		}
		best := c
		for d := c + 1; d < min(c+heapArity, n); d++ {
			if keys[d] < keys[best] {
				best = d
			}
		}
		if keys[best] >= key {
			break
		}
		keys[k] = keys[best]
		at[uint32(keys[k])] = int32(k)
		k = best
	}
	keys[k] = key
	at[uint32(key)] = int32(k)
}
