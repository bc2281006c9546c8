package tokenizer

import (
	"fmt"
	"slices"
	"sync"
	"testing"
)

// TestWordCache: entries put by several goroutines at once are found by
// all of them, before and after a publication, none is lost or changed,
// and the cache stops at cacheMax entries.
func TestWordCache(t *testing.T) {
	var c wordCache
	ids := func(i int) []int32 { return []int32{int32(i), int32(i) * 3} }
	const n = cacheMax + 5000
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < n; i += 2 { // each word put by two goroutines
				w := fmt.Sprint("w", i)
				if got, ok := c.get(w); ok && !slices.Equal(got, ids(i)) {
					t.Errorf("%s: %v", w, got)
					return
				}
				c.put(w, ids(i))
				if got, ok := c.get(w); ok && !slices.Equal(got, ids(i)) {
					t.Errorf("%s after put: %v", w, got)
					return
				}
			}
		})
	}
	wg.Wait()
	found := 0
	for i := range n {
		if got, ok := c.get(fmt.Sprint("w", i)); ok {
			found++
			if !slices.Equal(got, ids(i)) {
				t.Fatalf("w%d: %v", i, got)
			}
		}
	}
	if found != cacheMax || !c.full.Load() {
		t.Errorf("%d entries found (full %v), want %d", found, c.full.Load(), cacheMax)
	}
	c.reset()
	if _, ok := c.get("w1"); ok {
		t.Error("w1 after reset")
	}
	c.put("w1", ids(1))
	if got, ok := c.get("w1"); !ok || !slices.Equal(got, ids(1)) {
		t.Errorf("w1 after reset and put: %v %v", got, ok)
	}
}
