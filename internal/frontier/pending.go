package frontier

import "time"

// maxPending bounds the SetDelay and BlockQueueUntil calls kept for queues
// that do not exist yet, so that a client naming many queues that never
// appear cannot grow memory without end. Past it, expired blocks are
// dropped first; if none, the call is ignored as URLFrontier would.
const maxPending = 100_000

// pendingKey names a queue that does not exist yet.
type pendingKey struct{ crawl, key string }

// pendingQueue is what was set on it: delay is the per-queue delay (ns,
// -1 = none), blocked the block time (unix ns, 0 = none).
type pendingQueue struct {
	delay   int64
	blocked int64
}

// pendDelayLocked keeps a delay for the queue (crawlID, key).
func (f *Frontier) pendDelayLocked(crawlID, key string, d time.Duration) {
	f.setPendingLocked(pendingKey{normCrawl(crawlID), key}, func(p *pendingQueue) { p.delay = int64(max(d, -1)) })
}

// pendBlockLocked keeps a block time for the queue (crawlID, key); the zero
// time removes it.
func (f *Frontier) pendBlockLocked(crawlID, key string, t time.Time) {
	f.setPendingLocked(pendingKey{normCrawl(crawlID), key}, func(p *pendingQueue) {
		p.blocked = 0
		if !t.IsZero() {
			p.blocked = t.UnixNano()
		}
	})
}

func (f *Frontier) setPendingLocked(k pendingKey, set func(*pendingQueue)) {
	if key := k.key; key == "" || len(key) > MaxKeyLength {
		return
	}
	p, ok := f.mu.pending[k]
	if !ok {
		if f.mu.pending == nil {
			f.mu.pending = map[pendingKey]pendingQueue{}
		}
		if len(f.mu.pending) >= maxPending && !f.prunePendingLocked() {
			return
		}
		p = pendingQueue{delay: -1}
	}
	set(&p)
	if p.delay < 0 && p.blocked == 0 {
		delete(f.mu.pending, k)
		return
	}
	f.mu.pending[k] = p
}

// prunePendingLocked drops the pending entries that no longer matter (a
// block in the past and no delay) and reports whether there is room.
func (f *Frontier) prunePendingLocked() bool {
	now := f.opts.Now().UnixNano()
	for k, p := range f.mu.pending {
		if p.delay < 0 && p.blocked <= now {
			delete(f.mu.pending, k)
		}
	}
	return len(f.mu.pending) < maxPending
}

// applyPendingLocked gives a new queue what was set on it before it
// existed.
func (f *Frontier) applyPendingLocked(q *queue) {
	if len(f.mu.pending) == 0 {
		return
	}
	k := pendingKey{q.crawl.name, q.key}
	p, ok := f.mu.pending[k]
	if !ok {
		return
	}
	delete(f.mu.pending, k)
	q.rec.delay = p.delay
	q.rec.blocked = p.blocked
}

// PendingQueues returns how many queues that do not exist yet have a delay
// or block waiting for them.
func (f *Frontier) PendingQueues() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.mu.pending)
}
