package httpcache

import (
	"container/list"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/courtesy-crawler/courtesy/internal/kv"
)

// Stats are cache counters since Open (entries and bytes are current).
type Stats struct {
	Entries     int     // stored variants
	Bytes       int64   // their encoded size
	HotEntries  int     // variants held decoded in memory
	HotBytes    int64   // their size
	Hits        int64   // lookups answered Fresh
	Misses      int64   // lookups with nothing usable stored
	Stale       int64   // lookups that needed validation
	Revalidated int64   // validations answered 304 (Freshen calls)
	Stores      int64   // responses stored
	Evictions   int64   // variants evicted for space
	HitRatio    float64 // Hits / (Hits + Misses + Stale); 0 before any lookup
}

// Cache is a shared HTTP cache on the embedded store. It is safe for
// concurrent use; it owns one writer goroutine, stopped by Close.
type Cache struct {
	db     *pebble.DB
	bucket *kv.Bucket
	prefix []byte
	opts   Options

	// mu guards the index: groups, both LRU lists and the byte counts.
	// Pebble writes happen under it so that the index and the store agree;
	// disk reads do not.
	mu struct {
		sync.Mutex
		groups   map[string][]*variant // primary key -> variants, oldest first
		lru      list.List             // *variant, most recently used first
		hot      list.List             // *variant with entry != nil
		bytes    int64
		hotBytes int64
		closed   bool   // Close was called: no more writes are queued
		seq      uint64 // the last data record number given out
		// reserved holds the primary keys a response is about to be
		// stored for (Reserve), with what their lookups wait on.
		reserved map[string]*reservation
	}

	hits, misses, stale, revalidated, stores, evictions atomic.Int64

	// writes feeds the writer goroutine, which applies every change to the
	// store in order, many per Pebble batch (one WAL write for a burst of
	// stores instead of one each). Close stops it.
	writes    chan writeOp
	writerErr atomic.Pointer[error]
	done      chan struct{}
}

// ErrClosed is returned by Store and Freshen after Close.
var ErrClosed = errors.New("httpcache: closed")

// variant is the index record of one stored entry.
type variant struct {
	pk         string
	vk         [16]byte
	seq        uint64 // number of its data record: 'd' + 8 bytes big-endian
	mediaType  string
	varyNames  []string
	varyValues []string
	size       int64
	storedAt   int64 // unix nanoseconds, orders the LRU after a restart
	elem       *list.Element
	hotElem    *list.Element
	entry      *Entry // decoded entry while in the memory tier
}

// Open opens the cache stored in db, rebuilding the index from the stored
// metadata records (bodies are not read).
func Open(db *kv.DB, opts Options) (*Cache, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	c := &Cache{db: db.Pebble(), bucket: db.Bucket(opts.Prefix), prefix: []byte(opts.Prefix), opts: opts}
	c.mu.groups = map[string][]*variant{}
	c.mu.reserved = map[string]*reservation{}
	var loaded []*variant
	var corrupt [][]byte
	err := c.bucket.Scan([]byte("m"), func(key, value []byte) error {
		v, err := decodeMeta(value)
		if err != nil || len(key) != 17 {
			corrupt = append(corrupt, slices.Clone(key))
			return nil
		}
		copy(v.vk[:], key[1:])
		loaded = append(loaded, v)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("httpcache: open: %w", err)
	}
	slices.SortFunc(loaded, func(a, b *variant) int { return int(max(-1, min(1, b.storedAt-a.storedAt))) })
	for _, v := range loaded {
		c.mu.groups[v.pk] = append(c.mu.groups[v.pk], v)
		v.elem = c.mu.lru.PushBack(v)
		c.mu.bytes += v.size
		c.mu.seq = max(c.mu.seq, v.seq)
	}
	for _, vs := range c.mu.groups {
		slices.SortFunc(vs, func(a, b *variant) int { return int(max(-1, min(1, a.storedAt-b.storedAt))) })
	}
	b := c.db.NewBatch()
	for _, k := range corrupt {
		_ = b.Delete(c.key('m', k[1:]), nil)
	}
	if len(corrupt) > 0 {
		// The data records of corrupt metadata records (and those of the
		// earlier layout, keyed by variant key) are found by elimination:
		// a rare path, so a scan of the data keys is affordable.
		live := make(map[uint64]bool, len(loaded))
		for _, v := range loaded {
			live[v.seq] = true
		}
		err := c.bucket.Scan([]byte("d"), func(key, _ []byte) error {
			if len(key) != 9 || !live[binary.BigEndian.Uint64(key[1:])] {
				_ = b.Delete(c.key('d', key[1:]), nil)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("httpcache: open: %w", err)
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return nil, fmt.Errorf("httpcache: open: %w", err)
	}
	_ = b.Close()
	c.writes = make(chan writeOp, writeQueue)
	c.done = make(chan struct{})
	go c.writer()
	c.mu.Lock()
	c.deleteRecords(c.evictLocked())
	c.mu.Unlock()
	return c, nil
}

// Close stops the writer after the queued writes are committed. The kv.DB
// must be closed after the cache. Close is idempotent.
func (c *Cache) Close() error {
	c.mu.Lock()
	if !c.mu.closed {
		c.mu.closed = true
		close(c.writes)
	}
	c.mu.Unlock()
	<-c.done
	if p := c.writerErr.Load(); p != nil {
		return *p
	}
	return nil
}

// MaxEntryBytes is the largest body the cache stores, so that callers need
// not buffer more.
func (c *Cache) MaxEntryBytes() int64 { return c.opts.MaxEntryBytes }

// Stats returns the current counters.
func (c *Cache) Stats() Stats {
	s := Stats{
		Hits:        c.hits.Load(),
		Misses:      c.misses.Load(),
		Stale:       c.stale.Load(),
		Revalidated: c.revalidated.Load(),
		Stores:      c.stores.Load(),
		Evictions:   c.evictions.Load(),
	}
	c.mu.Lock()
	s.Entries = c.mu.lru.Len()
	s.Bytes = c.mu.bytes
	s.HotEntries = c.mu.hot.Len()
	s.HotBytes = c.mu.hotBytes
	c.mu.Unlock()
	if n := s.Hits + s.Misses + s.Stale; n > 0 {
		s.HitRatio = float64(s.Hits) / float64(n)
	}
	return s
}
