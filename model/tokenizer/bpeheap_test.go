package tokenizer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// refMerge is BPE as its definition says, written apart from mergeScan and
// mergeHeap: while some adjacent pair has a merge, the leftmost pair of the
// lowest rank becomes the merge's id. O(n^2) and more.
func refMerge(e *bpe, sym []int32) []int32 {
	s := slices.Clone(sym)
	for {
		best, m := -1, merge{rank: noRank}
		for k := 0; k+1 < len(s); k++ {
			if mk, ok := e.merges[pairKey(s[k], s[k+1])]; ok && mk.rank < m.rank {
				best, m = k, mk
			}
		}
		if best < 0 {
			return s
		}
		s = slices.Replace(s, best, best+2, m.id)
	}
}

// randomBPE returns merges over the ids [0, ids), drawn at random, in which
// everything the heap must get right happens: ranks not in the order in which
// the merges' sides are made (a pair of a merge's result can have a lower
// rank than the merge), a result that is one of its own sides, a result
// shared by two pairs, a pair listed twice (the last rank kept), and gaps in
// the ranks.
func randomBPE(rnd *rand.Rand, ids, merges int) *bpe {
	e := &bpe{merges: map[uint64]merge{}}
	for rank := range merges {
		if rnd.IntN(8) == 0 {
			continue // a gap
		}
		a, b := int32(rnd.IntN(ids)), int32(rnd.IntN(ids))
		e.setMerge(a, b, merge{rank: int32(rank), id: int32(rnd.IntN(ids))})
	}
	return e
}

// TestMergeHeapMatchesReference compares mergeHeap with refMerge and
// mergeScan on long random pieces over small alphabets, where many merges
// apply and many pairs tie in rank: with random merges (see randomBPE), and
// with GPT-2's on bytes such as "a", "b", " " and "=".
func TestMergeHeapMatchesReference(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 11))
	for round := range 300 {
		ids := 2 + rnd.IntN(6)
		e := randomBPE(rnd, ids, 1+rnd.IntN(3*ids*ids))
		alphabet := 1 + rnd.IntN(min(ids, 3))
		sym := make([]int32, heapFrom+rnd.IntN(2000))
		for i := range sym {
			sym[i] = int32(rnd.IntN(alphabet))
		}
		want := refMerge(e, sym)
		if got := e.mergeScanSymbols(slices.Clone(sym)); !slices.Equal(got, want) {
			t.Fatalf("round %d: mergeScan differs from the reference on %v", round, sym)
		}
		if got := e.mergeHeapSymbols(slices.Clone(sym)); !slices.Equal(got, want) {
			t.Fatalf("round %d: mergeHeap %v, reference %v, on %v", round, got, want, sym)
		}
	}

	tok, err := GPT2()
	if err != nil {
		t.Fatal(err)
	}
	e := tok.bpe
	for _, alphabet := range []string{"a", "ab", "a ", "ab ", "=", "=-", "0123456789", "\x00a", "abcdefgh", "\xe2\x96\x81"} {
		for _, n := range []int{heapFrom, 100, 1000, 5000} {
			b := make([]byte, n)
			for i := range b {
				b[i] = alphabet[rnd.IntN(len(alphabet))]
			}
			p := string(b)
			want := refMerge(e, e.byteSymbols(p))
			if got := e.mergeHeap(p); !slices.Equal(got, want) {
				t.Errorf("GPT-2, %d bytes of %q: mergeHeap differs from the reference", n, alphabet)
			}
			if got := e.mergeScan(p); !slices.Equal(got, want) {
				t.Errorf("GPT-2, %d bytes of %q: mergeScan differs from the reference", n, alphabet)
			}
		}
	}
	// Runs of one byte, the case of the 2026-12-06 audit, at a length
	// refMerge still takes quickly.
	for _, c := range []string{"a", "=", " ", "\x00", "-", "0"} {
		p := strings.Repeat(c, 3000)
		if got, want := e.mergeHeap(p), refMerge(e, e.byteSymbols(p)); !slices.Equal(got, want) {
			t.Errorf("GPT-2, 3000 bytes of %q: mergeHeap %v, reference %v", c, got, want)
		}
	}
}

// TestMergeHeapPool encodes long pieces of different lengths one after
// another, so that pooled arrays longer than the piece are reused: the ids
// are those of a fresh tokenizer's.
func TestMergeHeapPool(t *testing.T) {
	tok, err := GPT2()
	if err != nil {
		t.Fatal(err)
	}
	e := tok.bpe
	for _, n := range []int{5000, 70, 4999, 100, 300, 65} {
		p := strings.Repeat("ab", n/2) + strings.Repeat("=", n%7)
		if got, want := tok.Encode(p), refMerge(e, e.byteSymbols(p)); !slices.Equal(got, want) {
			t.Errorf("%d bytes: Encode %v, reference %v", len(p), got, want)
		}
	}
}

// FuzzMergeHeap compares mergeHeap with refMerge on merges and a piece that
// the fuzzer writes: data[0] is the number of merges, each three bytes (left,
// right, result, ids below 16) in rank order; the rest are the piece's
// symbols (the first 1024), repeated to heapFrom symbols where fewer.
func FuzzMergeHeap(f *testing.F) {
	f.Add([]byte{2, 0, 0, 1, 1, 1, 2, 0, 0, 0, 0})
	f.Add([]byte{3, 0, 1, 2, 2, 0, 0, 1, 0, 3, 0, 1, 0, 1, 1})
	f.Add([]byte{4, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 2, 0, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		n := int(data[0])
		data = data[1:]
		e := &bpe{merges: map[uint64]merge{}}
		for rank := 0; rank < n && len(data) >= 3; rank++ {
			e.setMerge(int32(data[0]%16), int32(data[1]%16), merge{rank: int32(rank), id: int32(data[2] % 16)})
			data = data[3:]
		}
		if len(data) == 0 {
			return
		}
		data = data[:min(len(data), 1024)] // refMerge is cubic
		sym := make([]int32, max(len(data), heapFrom))
		for i := range sym {
			sym[i] = int32(data[i%len(data)] % 16)
		}
		if got, want := e.mergeHeapSymbols(slices.Clone(sym)), refMerge(e, sym); !slices.Equal(got, want) {
			t.Fatalf("mergeHeap %v, reference %v, on %v", got, want, sym)
		}
	})
}
