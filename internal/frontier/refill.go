package frontier

import (
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/courtesy-crawler/courtesy/internal/kv"
)

// Refilling read-aheads outside the lock.
//
// A Get that serves a queue whose read-ahead runs out reads the store
// under Frontier.mu (serveStore), and every other Get and the committer
// wait for that read: it was half of a Get's time under the lock with 64
// clients, more when the block it needs belongs to a table just written
// by a compaction. So when a Get leaves a queue's read-ahead with fewer
// than Options.ReadAhead/2 entries not leased, it asks the refiller, a
// goroutine, to read the next entries ahead of time, without the lock.
//
// The refiller notes, under the lock, where each read-ahead ends and the
// queue's write count (queue.aheadGen, and aheadList.gen for admin
// operations), reads the store after that end without the lock, and takes
// the lock again to append what it read, but only if nothing changed in
// between: the same read-ahead, the same end, the same counts, and no
// commit holding the queue. Every commit that writes a queue's entries
// counts when its batch is built (before it is applied), so an unchanged
// count means every write the store shows for the queue was applied (and
// patched into the read-ahead) before the refiller noted the end, and the
// entries it read are exactly those after the end. Otherwise the read is
// dropped, and Get reads the store itself as before.

// refillBatch bounds the queues the refiller reads in one round.
const refillBatch = 256

// refillSnap is a queue's read-ahead as the refiller noted it, and what
// it read after the noted end.
type refillSnap struct {
	q        *queue
	r        *readAhead
	cid, qid uint32
	end      entryPos
	hasEnd   bool
	gen      uint64 // q.aheadGen
	allGen   uint64 // aheadList.gen

	entries  []aheadEntry
	complete bool
}

// maybeRefillLocked asks the refiller to read q's next entries if its
// read-ahead is running out.
func (f *Frontier) maybeRefillLocked(q *queue) {
	r := q.ahead
	if f.refillWake == nil || r == nil || r.complete || r.refilling || !f.aheadUsableLocked(q) {
		return
	}
	if len(r.entries)-len(q.leased) > f.opts.ReadAhead/2 || len(r.entries) >= f.aheadMaxEntries() {
		return
	}
	r.refilling = true
	f.mu.refill = append(f.mu.refill, q)
	select {
	case f.refillWake <- struct{}{}:
	default:
	}
}

// refillLoop runs the refiller until Close.
func (f *Frontier) refillLoop() {
	defer close(f.refillDone)
	for {
		select {
		case <-f.stop:
			return
		case <-f.refillWake:
		}
		for f.refillOnce() {
		}
	}
}

// refillOnce refills up to refillBatch queues and reports whether more
// are waiting.
func (f *Frontier) refillOnce() bool {
	f.mu.Lock()
	if f.mu.closed {
		f.mu.Unlock()
		return false
	}
	n := min(len(f.mu.refill), refillBatch)
	snaps := make([]refillSnap, 0, n)
	for _, q := range f.mu.refill[:n] {
		r := q.ahead
		if r == nil || !r.refilling {
			continue
		}
		if r.complete || q.dropped || !f.aheadUsableLocked(q) {
			r.refilling = false
			continue
		}
		snaps = append(snaps, refillSnap{q: q, r: r, cid: q.crawl.cid, qid: q.rec.qid, end: r.end, hasEnd: r.hasEnd,
			gen: q.aheadGen, allGen: f.mu.ahead.gen})
	}
	f.mu.refill = slices.Delete(f.mu.refill, 0, n)
	more := len(f.mu.refill) > 0
	f.mu.Unlock()

	if err := f.readRefills(snaps); err != nil {
		// Leave the queues to Get, which reports the error if it meets it.
		for i := range snaps {
			snaps[i].entries, snaps[i].complete = nil, false
		}
	}

	if f.testHookRefillRead != nil {
		f.testHookRefillRead()
	}
	f.mu.Lock()
	for i := range snaps {
		s := &snaps[i]
		q, r := s.q, s.r
		r.refilling = false
		if q.ahead != r || r.end != s.end || r.hasEnd != s.hasEnd || q.aheadGen != s.gen || f.mu.ahead.gen != s.allGen ||
			r.complete || !f.aheadUsableLocked(q) || len(s.entries) == 0 && !s.complete {
			continue
		}
		room := f.aheadMaxEntries() - len(r.entries)
		if room <= 0 {
			continue
		}
		for _, e := range s.entries[:min(room, len(s.entries))] {
			f.appendAheadLocked(r, e.pos, e.val)
		}
		if s.complete && room >= len(s.entries) {
			r.complete = true
		}
		f.refills.Add(1)
	}
	f.trimAheadLocked()
	f.mu.Unlock()
	return more
}

// readRefills reads, without the lock, up to Options.ReadAhead entries of
// each noted queue after its noted end.
func (f *Frontier) readRefills(snaps []refillSnap) error {
	if len(snaps) == 0 {
		return nil
	}
	var it *pebble.Iterator
	defer func() {
		if it != nil {
			_ = it.Close()
		}
	}()
	for i := range snaps {
		s := &snaps[i]
		prefix := entryPrefix(s.cid, s.qid)
		if it == nil {
			var err error
			if it, err = f.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: kv.PrefixEnd(prefix)}); err != nil {
				return fmt.Errorf("frontier: refill: %w", err)
			}
		} else {
			it.SetBounds(prefix, kv.PrefixEnd(prefix))
		}
		var ok bool
		if s.hasEnd {
			ok = it.SeekGE(append(entryKey(s.cid, s.qid, s.end), 0))
		} else {
			ok = it.First()
		}
		for ; ok && len(s.entries) < f.opts.ReadAhead; ok = it.Next() {
			pos, err := decodeEntryKey(it.Key())
			if err != nil {
				break // a corrupt entry: left to the Get that meets it
			}
			v, err := it.ValueAndErr()
			if err != nil || len(v) < hashLen {
				break
			}
			s.entries = append(s.entries, aheadEntry{pos: pos, val: slices.Clone(v)})
		}
		if err := it.Error(); err != nil {
			return fmt.Errorf("frontier: refill: %w", err)
		}
		// The store holds nothing after the last entry read.
		s.complete = !ok
	}
	return nil
}
