package frontier

import "container/heap"

// queue is the in-memory state of one queue; guarded by Frontier.mu.
type queue struct {
	crawl *crawl
	key   string
	rec   queueRecord // persisted part (counters, delay, block, limit)

	// lastServed is when a Get last returned URLs of the queue (unix ns).
	lastServed int64
	// nextDue is a lower bound of the due time of the first unleased entry
	// (unix ns); 0 = due now.
	nextDue int64
	// leased maps the hashes of leased URLs to their lease.
	leased map[urlHash]*lease
	// parked is set when the queue left the ready heap because its
	// in-flight count reached the caller's MaxURLsPerQueue (parkLimit,
	// also a key of crawl.parkedAt) or everything it holds is leased
	// (parkLimit 0).
	parked    bool
	parkLimit int
	// dropped is set once the queue was deleted.
	dropped bool
	// aheadHold counts the entry writes to the queue in the commit group
	// being applied; while it is not 0 Get reads the store, not ahead.
	aheadHold int32
	// aheadGen counts the commit groups that wrote the queue's entries,
	// from when each batch is built (refill.go).
	aheadGen uint64
	// ahead holds the queue's next entries read from the store, or nil
	// (ahead.go).
	ahead *readAhead

	// servedBy is the id of the last Get that served the queue
	// (getter.id), so that one Get serves each queue once.
	servedBy uint64

	readyAt int64 // heap key: unix ns
	heapIdx int   // position in crawl.ready, -1 when absent
}

func (q *queue) delay(def int64) int64 {
	if q.rec.delay >= 0 {
		return q.rec.delay
	}
	return def
}

// available is the number of queued URLs not leased.
func (q *queue) available() uint64 {
	l := uint64(len(q.leased))
	if l >= q.rec.queued {
		return 0
	}
	return q.rec.queued - l
}

func (q *queue) limitReached() bool {
	return q.rec.limit > 0 && q.rec.completed >= q.rec.limit
}

// servable reports whether the queue belongs in the ready heap.
func (q *queue) servable() bool {
	return !q.dropped && !q.crawl.deleted && q.rec.retired == "" && !q.parked && !q.limitReached() && q.available() > 0
}

// rescheduleLocked recomputes q's ready time and its place in the heap.
func (f *Frontier) rescheduleLocked(q *queue) {
	c := q.crawl
	if !q.servable() {
		if q.heapIdx >= 0 {
			heap.Remove(&c.ready, q.heapIdx)
		}
		return
	}
	t := max(q.rec.blocked, q.nextDue)
	if q.lastServed > 0 {
		t = max(t, q.lastServed+q.delay(int64(f.opts.DefaultDelay)))
	}
	q.readyAt = t
	if q.heapIdx >= 0 {
		c.ready[q.heapIdx].readyAt = t
		heap.Fix(&c.ready, q.heapIdx)
	} else {
		heap.Push(&c.ready, readyQueue{readyAt: t, qid: q.rec.qid, q: q})
	}
}

// queueHeap orders queues by readyAt, then by queue id (the order they
// were created in), so that the order in which queues are served does not
// depend on the order in which they were pushed (which follows map
// iteration in the committer). The keys are kept in the heap's array, so
// that sifting through thousands of queues compares without loading each
// queue (a served queue sinks through the whole heap; the loads were a
// quarter of Get's time under its lock).
type queueHeap []readyQueue

// readyQueue is a queue in the heap, with its keys.
type readyQueue struct {
	readyAt int64 // = q.readyAt
	qid     uint32
	q       *queue
}

func (h queueHeap) Len() int { return len(h) }
func (h queueHeap) Less(i, j int) bool {
	if h[i].readyAt != h[j].readyAt {
		return h[i].readyAt < h[j].readyAt
	}
	return h[i].qid < h[j].qid
}
func (h queueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].q.heapIdx = i
	h[j].q.heapIdx = j
}
func (h *queueHeap) Push(x any) {
	e := x.(readyQueue)
	e.q.heapIdx = len(*h)
	*h = append(*h, e)
}
func (h *queueHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = readyQueue{}
	e.q.heapIdx = -1
	*h = old[:len(old)-1]
	return e
}

// lease is one URL handed out.
type lease struct {
	q       *queue
	hash    urlHash
	expires int64 // unix ns
	idx     int   // position in leaseHeap, -1 when released
	// acking is set while an ack for the URL is being committed: the lease
	// must then not expire (the queue entry is still on disk until the
	// commit ends).
	acking bool
	// hasRec is set when pos and created are the URL's record as stored
	// (queued in q at pos), so that its ack need not read the record
	// (commitGroup). It is clear when the entry predates the created
	// trailer, and cleared by the committer when the lease may have been
	// made from an entry its commit was deleting (sweepLeasesLocked).
	hasRec  bool
	pos     entryPos
	created int64 // unix seconds
}

// record returns the URL record the lease stands for; valid when hasRec.
func (l *lease) record() urlRecord {
	return urlRecord{state: stateQueued, qid: l.q.rec.qid, pos: l.pos, created: l.created}
}

type leaseHeap []*lease

func (h leaseHeap) Len() int           { return len(h) }
func (h leaseHeap) Less(i, j int) bool { return h[i].expires < h[j].expires }
func (h leaseHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx = i
	h[j].idx = j
}
func (h *leaseHeap) Push(x any) {
	l := x.(*lease)
	l.idx = len(*h)
	*h = append(*h, l)
}
func (h *leaseHeap) Pop() any {
	old := *h
	l := old[len(old)-1]
	old[len(old)-1] = nil
	l.idx = -1
	*h = old[:len(old)-1]
	return l
}

// releaseLocked ends a lease and makes its queue servable again if it can.
func (f *Frontier) releaseLocked(l *lease) {
	if l.idx >= 0 {
		heap.Remove(&f.mu.leases, l.idx)
	}
	q := l.q
	if cur, ok := q.leased[l.hash]; ok && cur == l {
		delete(q.leased, l.hash)
		if len(q.leased) == 0 {
			q.leased = nil
		}
	}
	f.unparkLocked(q)
	// The released URL may sit before nextDue's entry.
	q.nextDue = 0
	f.rescheduleLocked(q)
}

// expireLocked releases every lease that expired at or before now.
func (f *Frontier) expireLocked(now int64) {
	for len(f.mu.leases) > 0 && f.mu.leases[0].expires <= now {
		l := f.mu.leases[0]
		if l.acking {
			// Keep it until the ack commits; push its expiry back a little
			// so the loop ends.
			l.expires = now + 1
			heap.Fix(&f.mu.leases, 0)
			if f.mu.leases[0] == l {
				break
			}
			continue
		}
		f.releaseLocked(l)
	}
}

// parkLocked takes q out of the ready heap until a release or a commit
// touches it; limit is the MaxURLsPerQueue its in-flight count reached (0:
// parked for another reason). A Get that allows more URLs in flight
// brings the queues parked at lower limits back (unparkBelowLocked), so
// that clients asking with different limits do not starve each other.
func (f *Frontier) parkLocked(q *queue, limit int) {
	if q.parked && q.parkLimit > 0 {
		delete(q.crawl.parkedAt[q.parkLimit], q)
	}
	q.parked, q.parkLimit = true, limit
	if limit > 0 {
		c := q.crawl
		if c.parkedAt == nil {
			c.parkedAt = map[int]map[*queue]struct{}{}
		}
		m := c.parkedAt[limit]
		if m == nil {
			m = map[*queue]struct{}{}
			c.parkedAt[limit] = m
		}
		m[q] = struct{}{}
	}
}

// unparkLocked clears q's parked state (the caller reschedules it).
func (f *Frontier) unparkLocked(q *queue) {
	if q.parked && q.parkLimit > 0 {
		if m := q.crawl.parkedAt[q.parkLimit]; m != nil {
			delete(m, q)
			if len(m) == 0 {
				delete(q.crawl.parkedAt, q.parkLimit)
			}
		}
	}
	q.parked, q.parkLimit = false, 0
}

// unparkBelowLocked returns to the ready heap the queues of c parked at an
// in-flight limit below limit (0: any), which a Get allowing limit may
// serve.
func (f *Frontier) unparkBelowLocked(c *crawl, limit int) {
	for l, m := range c.parkedAt {
		if limit > 0 && l >= limit {
			continue
		}
		for q := range m {
			if len(q.leased) < limit || limit == 0 {
				f.unparkLocked(q)
				f.rescheduleLocked(q)
			}
		}
	}
}
