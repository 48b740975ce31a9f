package frontier

import (
	"cmp"
	"slices"
)

// Read-ahead of queue entries.
//
// Get serves each queue it visits from the store: one iterator positioned
// on the queue's entries (a seek through every memtable and level). The
// crawler takes one URL per queue per Get, so each URL cost a seek. A
// queue's read-ahead keeps the entries the last store read went past, so
// that the following Gets of the queue serve from memory.
//
// Invariant: a queue's readAhead holds exactly the queue's entries in the
// store whose key is at most end (all of them when complete), in key
// order, leased ones included. So serving from it is serving from the
// store: same order, same skipping of leased URLs, same stop at the first
// entry not yet due. The committer keeps it true (commitGroup):
//
//   - every entry its batch writes or deletes is recorded (aheadOp) with
//     its queue, and the queue is held (queue.aheadHold) from the moment
//     the batch is built until it is applied: Get neither reads nor fills
//     a held queue's read-ahead, and reads the store as before;
//   - once the batch is applied, under Frontier.mu, each recorded write is
//     patched into the read-ahead (inserted when it sorts before end, or
//     anywhere when complete; removed when deleted) and the hold ends.
//
// An acknowledgement deletes its leased entry, so it is patched too: the
// read-ahead survives the crawler's ack of each URL. A lease that expires
// or is released needs nothing: its entry never left the read-ahead.
// Admin operations (op.fn) drop every read-ahead and hold them all while
// their batch is applied.
//
// Read-aheads are bounded by Options.ReadAheadBytes in all; the queues
// served least recently lose theirs first. Queues are served round robin,
// so when more queues are active than read-aheads fit, evicting the least
// recently served to make room for another would evict each read-ahead
// just before its queue's turn, and every read-ahead would be read for
// nothing (measured: 15 % more CPU per Get than without read-ahead). So a
// queue without one gets one only if it fits, or if the least recently
// served read-ahead is stale: unused for more serves than two rounds of
// every active queue take (its queue is blocked, retired or done). The
// read-aheads held then keep serving, the other queues read the store as
// without read-ahead.

// Accounting of a read-ahead's memory: the value bytes plus these
// overheads (slice element, allocation rounding; the struct and its list
// links).
const (
	aheadEntryOverhead = 64
	aheadQueueOverhead = 128
)

// readAhead is one queue's cached entries; guarded by Frontier.mu.
type readAhead struct {
	q *queue
	// entries are the queue's stored entries with key <= end, in key
	// order.
	entries []aheadEntry
	// end is the position of the last entry read (valid when hasEnd);
	// complete is set when the store held no entry after it.
	end      entryPos
	hasEnd   bool
	complete bool
	// bytes is the accounted size (aheadQueueOverhead + entry costs).
	bytes int
	// refilling is set while the queue is on the refiller's list.
	refilling bool
	// tick is aheadList.tick when the queue was last served.
	tick uint64
	// prev and next link the read-aheads from most to least recently
	// served (Frontier.mu.ahead).
	prev, next *readAhead
}

// aheadEntry is a queue entry: its position and its stored value (hash,
// URL, metadata, creation time), decoded only when leased.
type aheadEntry struct {
	pos entryPos
	val []byte
}

func entryCost(val []byte) int { return len(val) + aheadEntryOverhead }

// aheadOp is one entry write of a commit group: val is the entry set at
// pos in q, nil when it was deleted.
type aheadOp struct {
	q   *queue
	pos entryPos
	val []byte
}

// aheadList is the frontier's read-aheads, most recently served first.
type aheadList struct {
	head, tail *readAhead
	bytes      int
	// holdAll is set while an admin operation's batch is applied: no
	// read-ahead is used or filled.
	holdAll int
	// tick counts the queues served with read-ahead usable.
	tick uint64
	// gen counts the admin operations' holds (refill.go).
	gen uint64
	// trimmed and stale count the read-aheads dropped to stay within the
	// bound and those dropped as stale (tests).
	trimmed, stale uint64
}

// aheadEntryEstimate is the cost assumed for an entry not yet read when
// deciding whether a new read-ahead fits (a URL of about 100 bytes).
const aheadEntryEstimate = 192

// cmpPos orders positions as their keys sort (entryKey).
func cmpPos(a, b entryPos) int {
	if c := cmp.Compare(uint64(a.due), uint64(b.due)); c != 0 {
		return c
	}
	if c := cmp.Compare(b.prio, a.prio); c != 0 { // higher first
		return c
	}
	if c := cmp.Compare(a.depth, b.depth); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// keyPos returns p as entryKey stores it (a negative due time is 0), so
// that it compares equal to the position decoded from the key.
func keyPos(p entryPos) entryPos {
	p.due = max(p.due, 0)
	return p
}

// aheadOn reports whether read-ahead is enabled.
func (f *Frontier) aheadOn() bool { return f.opts.ReadAhead > 0 }

// aheadUsableLocked reports whether q's read-ahead may be read and filled
// now: no batch that writes q's entries is being applied.
func (f *Frontier) aheadUsableLocked(q *queue) bool {
	return f.aheadOn() && q.aheadHold == 0 && f.mu.ahead.holdAll == 0
}

// aheadMaxEntries bounds one queue's read-ahead: the entries read beyond
// those handed out plus room for the ones leased and not yet acknowledged.
func (f *Frontier) aheadMaxEntries() int { return 4 * f.opts.ReadAhead }

// touchAheadLocked makes r the most recently served read-ahead.
func (f *Frontier) touchAheadLocked(r *readAhead) {
	l := &f.mu.ahead
	r.tick = l.tick
	if l.head == r {
		return
	}
	f.unlinkAheadLocked(r)
	r.next = l.head
	if l.head != nil {
		l.head.prev = r
	}
	l.head = r
	if l.tail == nil {
		l.tail = r
	}
}

func (f *Frontier) unlinkAheadLocked(r *readAhead) {
	l := &f.mu.ahead
	if r.prev != nil {
		r.prev.next = r.next
	} else if l.head == r {
		l.head = r.next
	}
	if r.next != nil {
		r.next.prev = r.prev
	} else if l.tail == r {
		l.tail = r.prev
	}
	r.prev, r.next = nil, nil
}

// newAheadLocked gives q an empty read-ahead starting at the queue's first
// entry.
func (f *Frontier) newAheadLocked(q *queue) *readAhead {
	r := &readAhead{q: q, bytes: aheadQueueOverhead, entries: make([]aheadEntry, 0, f.opts.ReadAhead+1)}
	q.ahead = r
	f.mu.ahead.bytes += r.bytes
	f.touchAheadLocked(r)
	return r
}

// admitAheadLocked reports whether a queue without a read-ahead gets one:
// if it fits in Options.ReadAheadBytes, after dropping up to a few stale
// read-aheads (see the top of this file).
func (f *Frontier) admitAheadLocked() bool {
	l := &f.mu.ahead
	need := aheadQueueOverhead + (f.opts.ReadAhead+1)*aheadEntryEstimate
	for i := 0; l.bytes+need > f.opts.ReadAheadBytes; i++ {
		if l.tail == nil || i == 4 || l.tick-l.tail.tick <= f.staleAfterLocked() {
			return false
		}
		f.dropAheadLocked(l.tail.q)
		l.stale++
	}
	return true
}

// staleAfterLocked is the number of serves after which a read-ahead not
// used is stale: two rounds of every queue servable or in flight.
func (f *Frontier) staleAfterLocked() uint64 {
	n := len(f.mu.leases)
	for _, c := range f.mu.crawls {
		n += len(c.ready)
	}
	return 2*uint64(n) + 64
}

// dropAheadLocked forgets q's read-ahead.
func (f *Frontier) dropAheadLocked(q *queue) {
	r := q.ahead
	if r == nil {
		return
	}
	f.unlinkAheadLocked(r)
	f.mu.ahead.bytes -= r.bytes
	q.ahead = nil
	r.q = nil
}

// dropAllAheadLocked forgets every read-ahead.
func (f *Frontier) dropAllAheadLocked() {
	for f.mu.ahead.head != nil {
		f.dropAheadLocked(f.mu.ahead.head.q)
	}
}

// trimAheadLocked drops the least recently served read-aheads until the
// total is within Options.ReadAheadBytes.
func (f *Frontier) trimAheadLocked() {
	for f.mu.ahead.bytes > f.opts.ReadAheadBytes && f.mu.ahead.tail != nil {
		f.dropAheadLocked(f.mu.ahead.tail.q)
		f.mu.ahead.trimmed++
	}
}

// appendAheadLocked adds the entry read after r's end; val must not alias
// the iterator's buffer.
func (f *Frontier) appendAheadLocked(r *readAhead, pos entryPos, val []byte) {
	r.entries = append(r.entries, aheadEntry{pos: pos, val: val})
	r.end, r.hasEnd = pos, true
	c := entryCost(val)
	r.bytes += c
	f.mu.ahead.bytes += c
}

// patchAheadLocked applies one committed entry write to q's read-ahead.
// It is idempotent, so a read-ahead that already reflects the write keeps
// it once.
func (f *Frontier) patchAheadLocked(o aheadOp) {
	r := o.q.ahead
	if r == nil {
		return
	}
	pos := keyPos(o.pos)
	i, found := slices.BinarySearchFunc(r.entries, pos, func(e aheadEntry, p entryPos) int { return cmpPos(e.pos, p) })
	if o.val == nil {
		if found {
			c := entryCost(r.entries[i].val)
			r.bytes -= c
			f.mu.ahead.bytes -= c
			r.entries = slices.Delete(r.entries, i, i+1)
		}
		return
	}
	if found {
		return
	}
	switch {
	case r.hasEnd && cmpPos(pos, r.end) <= 0:
	case r.complete:
		// The store held nothing after end: it now holds this entry.
		r.end, r.hasEnd = pos, true
	default:
		return // beyond the range read: the store read after end finds it
	}
	r.entries = slices.Insert(r.entries, i, aheadEntry{pos: pos, val: o.val})
	c := entryCost(o.val)
	r.bytes += c
	f.mu.ahead.bytes += c
	if n := f.aheadMaxEntries(); len(r.entries) > n {
		f.truncateAheadLocked(r, n)
	}
}

// truncateAheadLocked keeps the first n entries of r (n > 0): the range
// read ends at the last one kept.
func (f *Frontier) truncateAheadLocked(r *readAhead, n int) {
	if len(r.entries) <= n {
		return
	}
	c := 0
	for i := n; i < len(r.entries); i++ {
		c += entryCost(r.entries[i].val)
		r.entries[i] = aheadEntry{}
	}
	r.entries = r.entries[:n]
	r.bytes -= c
	f.mu.ahead.bytes -= c
	r.end, r.hasEnd, r.complete = r.entries[n-1].pos, true, false
}

// aheadStats are the read-ahead counters (tests and benchmarks).
type aheadStats struct {
	// storeReads counts the queue reads Get positioned in the store;
	// hits the queues Get served from their read-ahead alone.
	storeReads, hits uint64
	// refills counts the read-aheads the refiller extended.
	refills uint64
	// queues and entries are the read-aheads held now, bytes their
	// accounted size; trimmed and stale count the dropped ones.
	queues, entries, bytes int
	trimmed, stale         uint64
}

func (f *Frontier) aheadStats() aheadStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := aheadStats{storeReads: f.storeReads.Load(), hits: f.aheadHits.Load(), refills: f.refills.Load(), bytes: f.mu.ahead.bytes,
		trimmed: f.mu.ahead.trimmed, stale: f.mu.ahead.stale}
	for r := f.mu.ahead.head; r != nil; r = r.next {
		s.queues++
		s.entries += len(r.entries)
	}
	return s
}
