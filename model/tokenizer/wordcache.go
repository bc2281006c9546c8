package tokenizer

import (
	"strings"
	"sync"
	"sync/atomic"
)

// wordCache maps short pieces (words) to their ids, for a tokenizer that
// several goroutines encode with at once (package corpus tokenizes on all
// cores). A hit, nearly every piece once a text is under way, reads a
// published map that is never changed again, through an atomic pointer:
// no write to memory that the goroutines share, so the cores do not pass a
// lock's cache line between them on every piece (with a sync.RWMutex, whose
// read lock is such a write, two goroutines encoded TinyShakespeare no
// faster than one). New pieces go to a small map under a mutex (looked in
// on a miss), which is published with the old one as a new map once it
// holds a quarter as many entries as that (at least minPublish): the
// copying is linear in the cache's size over its life. At most cacheMax
// pieces are kept; once that many are published, a miss takes no lock
// either.
type wordCache struct {
	published atomic.Pointer[map[string][]int32]
	pending   atomic.Bool // fresh holds entries
	full      atomic.Bool // cacheMax entries are published

	mu    sync.Mutex
	fresh map[string][]int32 // added since the last publication
	size  int                // entries in published and fresh
}

// minPublish is the fewest new entries worth publishing a new map for.
const minPublish = 1024

// get returns the ids of piece p, if the cache holds them.
func (c *wordCache) get(p string) ([]int32, bool) {
	if m := c.published.Load(); m != nil {
		if ids, ok := (*m)[p]; ok {
			return ids, true
		}
	}
	if !c.pending.Load() {
		return nil, false
	}
	c.mu.Lock()
	ids, ok := c.fresh[p]
	c.mu.Unlock()
	return ids, ok
}

// put keeps ids as the ids of piece p (a copy of p: p would keep the
// caller's text alive), if the cache has room.
func (c *wordCache) put(p string, ids []int32) {
	if c.full.Load() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.size >= cacheMax {
		return
	}
	if _, ok := c.fresh[p]; ok {
		return
	}
	if m := c.published.Load(); m != nil {
		if _, ok := (*m)[p]; ok {
			return
		}
	}
	if c.fresh == nil {
		c.fresh = map[string][]int32{}
	}
	c.fresh[strings.Clone(p)] = ids
	c.pending.Store(true)
	c.size++
	old := 0
	if m := c.published.Load(); m != nil {
		old = len(*m)
	}
	if len(c.fresh) >= max(minPublish, old/4) || c.size == cacheMax {
		m := make(map[string][]int32, old+len(c.fresh))
		if pm := c.published.Load(); pm != nil {
			for k, v := range *pm {
				m[k] = v
			}
		}
		for k, v := range c.fresh {
			m[k] = v
		}
		c.published.Store(&m)
		c.fresh = nil
		c.pending.Store(false)
		c.full.Store(c.size >= cacheMax)
	}
}

// reset empties the cache (for benchmarks and tests).
func (c *wordCache) reset() {
	c.mu.Lock()
	c.published.Store(nil)
	c.fresh, c.size = nil, 0
	c.pending.Store(false)
	c.full.Store(false)
	c.mu.Unlock()
}
