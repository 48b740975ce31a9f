package triplestore

import "sync"

// cache is a bounded map with two generations: entries live in cur; when
// cur holds half the bound, it becomes old and a fresh cur starts; a hit in
// old moves the entry back to cur. It keeps the recently used entries at a
// fraction of an LRU list's cost per entry. Safe for concurrent use.
type cache[K comparable, V any] struct {
	half int
	mu   struct {
		sync.Mutex
		cur, old map[K]V
	}
}

func newCache[K comparable, V any](size int) *cache[K, V] {
	c := &cache[K, V]{half: max(1, size/2)}
	c.mu.cur = map[K]V{}
	return c
}

func (c *cache[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.mu.cur[k]; ok {
		return v, true
	}
	v, ok := c.mu.old[k]
	if ok {
		c.putLocked(k, v)
	}
	return v, ok
}

func (c *cache[K, V]) put(k K, v V) {
	c.mu.Lock()
	c.putLocked(k, v)
	c.mu.Unlock()
}

func (c *cache[K, V]) putLocked(k K, v V) {
	if len(c.mu.cur) >= c.half {
		c.mu.old, c.mu.cur = c.mu.cur, make(map[K]V, c.half)
	}
	c.mu.cur[k] = v
}
