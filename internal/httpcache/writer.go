// The batching writer: one goroutine applies every change to the store
// in order, many per Pebble batch.

package httpcache

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// writeOp is one change to the store: an entry to write (encoded by the
// writer, off the request path), keys to delete, and done, which, when
// non-nil, receives the commit's result.
type writeOp struct {
	put  *pendingPut
	del  [][]byte
	done chan error
}

// pendingPut is an entry and its index record waiting for the writer. Both
// are immutable once queued (Entry by contract; the variant fields that
// encodeMeta reads are set before queueing and never changed).
type pendingPut struct {
	entry *Entry
	v     *variant
}

// Bounds of the writer: queued operations, operations per batch, and how
// long the writer gathers operations after the first of a batch when
// nobody waits for it. Each commit costs a WAL write and wakes Pebble's
// log writer; at one client a commit per store was a third of the
// writes the proxy made. Gathering for writeDelay makes one commit of
// many stores; the entries are served from the memory tier meanwhile
// (those too big for it are waited for and committed at once).
const (
	writeQueue = 1024
	writeBatch = 256
	writeDelay = 5 * time.Millisecond
)

// writer applies queued writes in order until Close.
func (c *Cache) writer() {
	defer close(c.done)
	// scratch is reused for every encoding: Batch.Set copies the value,
	// so no record needs its own allocation.
	var scratch []byte
	for op := range c.writes {
		b := c.db.NewBatch()
		ops := []writeOp{op}
		apply := func(op writeOp) {
			if pp := op.put; pp != nil {
				scratch = appendEntry(scratch[:0], pp.entry)
				_ = b.Set(c.dataKey(pp.v.seq), scratch, nil)
				scratch = appendMeta(scratch[:0], pp.v)
				_ = b.Set(c.key('m', pp.v.vk[:]), scratch, nil)
				if cap(scratch) > 1<<20 {
					scratch = nil // do not pin a large body's buffer
				}
			}
			for _, k := range op.del {
				_ = b.Delete(k, nil)
			}
		}
		apply(op)
		if op.done == nil && len(c.writes) < writeBatch {
			// Sleep, not select on c.writes: a writer parked on the
			// channel would be woken by every store.
			time.Sleep(writeDelay)
		}
	more:
		for len(ops) < writeBatch {
			select {
			case op, ok := <-c.writes:
				if !ok {
					break more
				}
				apply(op)
				ops = append(ops, op)
				if op.done != nil {
					break more // someone waits: commit now
				}
			default:
				break more
			}
		}
		err := b.Commit(pebble.NoSync)
		_ = b.Close()
		if err != nil {
			err = fmt.Errorf("httpcache: store: %w", err)
			c.writerErr.Store(&err)
		}
		for _, op := range ops {
			if op.done != nil {
				op.done <- err
			}
		}
	}
}

// dataKey is the key of a data record. Data records are numbered in store
// order, so that new ones sort after all older ones: Pebble's flushes and
// compactions then add new tables beside the old ones instead of merging
// into (rewriting) them, as random keys made it do for every store. The
// metadata records, small, stay keyed by variant key.
func (c *Cache) dataKey(seq uint64) []byte {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], seq)
	return c.key('d', n[:])
}

func (c *Cache) key(kind byte, vk []byte) []byte {
	k := make([]byte, 0, len(c.prefix)+1+len(vk))
	k = append(k, c.prefix...)
	k = append(k, kind)
	return append(k, vk...)
}

// recordKeys returns the record keys of variants dropped from the index.
func (c *Cache) recordKeys(vs []*variant) [][]byte {
	var keys [][]byte
	for _, v := range vs {
		keys = append(keys, c.dataKey(v.seq), c.key('m', v.vk[:]))
	}
	return keys
}

// deleteRecords queues the deletion of the records of variants already
// dropped from the index. Call it with mu held so that the deletion is
// queued in index order (the writer never takes mu, so this cannot
// deadlock).
func (c *Cache) deleteRecords(vs []*variant) {
	if len(vs) == 0 || c.mu.closed {
		return
	}
	c.writes <- writeOp{del: c.recordKeys(vs)}
}
