package kv

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// maxDeferred bounds the writes a Deferred holds between two Flushes; past
// it Set commits them at once.
const maxDeferred = 4096

// Deferred gathers small writes that need no fsync of their own into one
// batch, committed by Flush: for data written once per page by many
// goroutines (payload digests, near-duplicate hashes), where a Pebble
// commit per write cost about 3 % of a crawl's CPU. A caller that flushes
// right before its own synced commit keeps the write-ahead-log argument
// of SetNoSync: the synced commit makes everything before it durable.
// Until flushed, writes are invisible to Get and Scan; Pending answers
// for them. It is safe for concurrent use.
type Deferred struct {
	db     *pebble.DB
	prefix []byte
	mu     struct {
		sync.Mutex
		b       *pebble.Batch
		pending map[string][]byte // key (without prefix) -> value
		// flushing holds the writes of a Flush under way, so that Pending
		// still finds them until the commit makes them readable.
		flushing map[string][]byte
	}
	// flushMu makes Flushes commit one after another, in order.
	flushMu sync.Mutex
}

// Deferred returns a Deferred writing into the bucket.
func (b *Bucket) Deferred() *Deferred {
	d := &Deferred{db: b.db, prefix: b.prefix}
	d.mu.pending = map[string][]byte{}
	return d
}

// Set queues value under key (both are copied).
func (d *Deferred) Set(key, value []byte) error {
	d.mu.Lock()
	if d.mu.b == nil {
		d.mu.b = d.db.NewBatch()
	}
	k := make([]byte, 0, len(d.prefix)+len(key))
	k = append(append(k, d.prefix...), key...)
	_ = d.mu.b.Set(k, value, nil) // copies
	d.mu.pending[string(key)] = bytes.Clone(value)
	full := len(d.mu.pending) >= maxDeferred
	d.mu.Unlock()
	if full {
		return d.Flush()
	}
	return nil
}

// Pending returns the value queued under key and not yet flushed.
func (d *Deferred) Pending(key []byte) ([]byte, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if v, ok := d.mu.pending[string(key)]; ok {
		return v, true
	}
	v, ok := d.mu.flushing[string(key)]
	return v, ok
}

// Flush commits the queued writes in one batch, without an fsync.
func (d *Deferred) Flush() error {
	d.flushMu.Lock()
	defer d.flushMu.Unlock()
	d.mu.Lock()
	b := d.mu.b
	d.mu.b = nil
	if b == nil {
		d.mu.Unlock()
		return nil
	}
	d.mu.flushing, d.mu.pending = d.mu.pending, map[string][]byte{}
	d.mu.Unlock()
	err := b.Commit(pebble.NoSync)
	_ = b.Close()
	d.mu.Lock()
	d.mu.flushing = nil
	d.mu.Unlock()
	if err != nil {
		return fmt.Errorf("kv: deferred writes: %w", err)
	}
	return nil
}
