// The index's LRU order and its in-memory tier of hot entries.

package httpcache

import "slices"

func (c *Cache) makeHotLocked(v *variant, e *Entry) {
	if c.opts.MemoryBytes < 0 || v.size > c.opts.MemoryBytes/8 {
		return
	}
	v.entry = e
	v.hotElem = c.mu.hot.PushFront(v)
	c.mu.hotBytes += v.size
	for c.mu.hotBytes > c.opts.MemoryBytes {
		last := c.mu.hot.Back().Value.(*variant)
		c.dropHotLocked(last)
	}
}

func (c *Cache) dropHotLocked(v *variant) {
	if v.hotElem == nil {
		return
	}
	c.mu.hot.Remove(v.hotElem)
	c.mu.hotBytes -= v.size
	v.hotElem, v.entry = nil, nil
}

// removeLocked drops v from the index (its records stay until
// deleteRecords).
func (c *Cache) removeLocked(v *variant) {
	if v.elem == nil {
		return
	}
	c.dropHotLocked(v)
	c.mu.lru.Remove(v.elem)
	v.elem = nil
	c.mu.bytes -= v.size
	vs := c.mu.groups[v.pk]
	vs = slices.DeleteFunc(vs, func(x *variant) bool { return x == v })
	if len(vs) == 0 {
		delete(c.mu.groups, v.pk)
	} else {
		c.mu.groups[v.pk] = vs
	}
}

// evictLocked removes least recently used variants from the index until
// the store fits, and returns them for deleteRecords.
func (c *Cache) evictLocked() []*variant {
	var out []*variant
	for c.mu.bytes > c.opts.MaxBytes && c.mu.lru.Len() > 0 {
		v := c.mu.lru.Back().Value.(*variant)
		c.removeLocked(v)
		out = append(out, v)
		c.evictions.Add(1)
	}
	return out
}
