package frontier

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/courtesy-crawler/courtesy/internal/kv"
)

// Stats describes one crawl or one queue (URLFrontier Stats).
type Stats struct {
	CrawlID string
	// Size is the number of URLs not completed (queued, scheduled or
	// leased), excluding retired queues.
	Size uint64
	// InProcess is the number of URLs leased now.
	InProcess uint64
	// Completed is the number of completed URLs.
	Completed uint64
	// Retired is the number of URLs left in retired queues.
	Retired uint64
	// Queues is the number of queues (1 or 0 when a key was given).
	Queues uint64
	// ActiveQueues counts queues with URLs not completed or in flight.
	ActiveQueues uint64
	// RetiredQueues counts retired queues.
	RetiredQueues uint64
	// ReadyQueues counts queues a Get would look at now; WaitingQueues
	// those with URLs to serve once their delay, block or the due time
	// of their URLs has passed (NextDue, the earliest). A queue whose
	// first URL's due time no Get has read yet counts as ready. Queues
	// whose URLs are all in flight are in neither. Only the embedded
	// frontier sets them.
	ReadyQueues, WaitingQueues uint64
	NextDue                    time.Time
}

// Counts returns the map URLFrontier's Stats.counts carries.
func (s Stats) Counts() map[string]uint64 {
	return map[string]uint64{"completed": s.Completed, "active_queues": s.ActiveQueues, "retired": s.Retired, "retired_queues": s.RetiredQueues}
}

// Stats returns the statistics of a crawl, or of one of its queues when key
// is not empty. Unknown crawls and queues give zero counts.
func (f *Frontier) Stats(crawlID, key string) Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.opts.Now().UnixNano()
	f.expireLocked(now)
	s := Stats{CrawlID: normCrawl(crawlID)}
	c := f.mu.crawls[s.CrawlID]
	if c == nil {
		return s
	}
	next := int64(0)
	add := func(q *queue) {
		s.Queues++
		s.Completed += q.rec.completed
		if q.rec.retired != "" {
			s.RetiredQueues++
			s.Retired += q.rec.queued
			return
		}
		s.Size += q.rec.queued
		s.InProcess += uint64(len(q.leased))
		if q.rec.queued > 0 {
			s.ActiveQueues++
		}
		if q.heapIdx < 0 { // not servable: all in flight, parked, or at its limit
			return
		}
		if q.readyAt <= now {
			s.ReadyQueues++
			return
		}
		s.WaitingQueues++
		if next == 0 || q.readyAt < next {
			next = q.readyAt
		}
	}
	if key != "" {
		if q := c.queues[key]; q != nil {
			add(q)
		}
	} else {
		for _, q := range c.queues {
			add(q)
		}
	}
	if next != 0 {
		s.NextDue = time.Unix(0, next)
	}
	return s
}

// ListCrawls returns the crawl IDs, sorted.
func (f *Frontier) ListCrawls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.mu.crawls))
	for name := range f.mu.crawls {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// ListQueues returns up to size (0 = 100) queue keys of a crawl in key
// order, from start, and the number of matching queues. Without
// includeInactive, queues that are blocked, retired or hold no URLs to
// fetch are left out (URLFrontier ListQueues).
func (f *Frontier) ListQueues(crawlID string, start, size int, includeInactive bool) ([]string, int) {
	if size <= 0 {
		size = 100
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.mu.crawls[normCrawl(crawlID)]
	if c == nil {
		return nil, 0
	}
	now := f.opts.Now().UnixNano()
	keys := make([]string, 0, len(c.queues))
	for k, q := range c.queues {
		if !includeInactive && (q.rec.retired != "" || q.rec.queued == 0 || q.rec.blocked > now) {
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	total := len(keys)
	if start >= total || start < 0 {
		return nil, total
	}
	return keys[start:min(total, start+size)], total
}

// BlockQueueUntil keeps a queue from being served before t (the zero time
// unblocks). The crawler calls it with the politeness gate's next allowed
// time for the host when it gives a URL back (after a fetch that time
// travels with the acknowledgement instead: Item.Hold). On a queue
// that does not exist yet the block is kept in memory and applied when the
// queue appears (URLFrontier ignores it; pending.go). The block is persisted
// with the next commit (the next Put or admin call), without a write of its
// own.
func (f *Frontier) BlockQueueUntil(ctx context.Context, crawlID, key string, t time.Time) error {
	f.mu.Lock()
	if f.mu.closed {
		f.mu.Unlock()
		return ErrClosed
	}
	q := f.findLocked(crawlID, key)
	if q == nil {
		f.pendBlockLocked(crawlID, key, t)
		f.mu.Unlock()
		return nil
	}
	q.rec.blocked = 0
	if !t.IsZero() {
		q.rec.blocked = t.UnixNano()
	}
	f.mu.dirty[q] = struct{}{}
	f.rescheduleLocked(q)
	f.wakeLocked()
	f.mu.Unlock()
	return nil
}

// SetDelay sets the minimum time between two servings of a queue; with an
// empty key it sets the default of every queue without its own (not
// persisted, as in URLFrontier). On a queue that does not exist yet the
// delay is kept in memory and applied when the queue appears (URLFrontier
// ignores it; pending.go). A negative d on a queue restores the default.
func (f *Frontier) SetDelay(ctx context.Context, crawlID, key string, d time.Duration) error {
	f.mu.Lock()
	if f.mu.closed {
		f.mu.Unlock()
		return ErrClosed
	}
	if key == "" {
		f.opts.DefaultDelay = max(d, 0)
		for _, c := range f.mu.crawls {
			for _, q := range c.queues {
				if q.heapIdx >= 0 {
					f.rescheduleLocked(q)
				}
			}
		}
		f.wakeLocked()
		f.mu.Unlock()
		return nil
	}
	q := f.findLocked(crawlID, key)
	if q == nil {
		f.pendDelayLocked(crawlID, key, d)
		f.mu.Unlock()
		return nil
	}
	q.rec.delay = int64(max(d, -1))
	f.mu.dirty[q] = struct{}{}
	f.rescheduleLocked(q)
	f.wakeLocked()
	f.mu.Unlock()
	return f.submit(ctx, &op{fn: func(*pebble.Batch) error { return nil }, done: make(chan error, 1)})
}

// SetCrawlLimit sets the maximum number of completed URLs of a queue; once
// reached the queue is no longer served. 0 removes the limit. An unknown
// queue is ErrNotFound.
func (f *Frontier) SetCrawlLimit(ctx context.Context, crawlID, key string, limit uint64) error {
	return f.updateQueue(ctx, "crawl limit", crawlID, key, func(q *queue) { q.rec.limit = limit })
}

// updateQueue applies set to a known queue's record in the committer,
// persists it and reschedules the queue; an unknown queue is ErrNotFound.
func (f *Frontier) updateQueue(ctx context.Context, what, crawlID, key string, set func(*queue)) error {
	o := &op{done: make(chan error, 1)}
	o.fn = func(*pebble.Batch) error {
		q := f.findLocked(crawlID, key)
		if q == nil {
			return fmt.Errorf("frontier: %s: queue %q of crawl %q: %w", what, key, normCrawl(crawlID), ErrNotFound)
		}
		set(q)
		f.mu.dirty[q] = struct{}{}
		f.rescheduleLocked(q)
		return nil
	}
	return f.submit(ctx, o)
}

// Retire stops serving a queue for good, keeping its URLs as known (so they
// are not discovered again) and the reason (a host that kept failing: DNS,
// connect, 5xx). Its URLs leave Stats.Size for Stats.Retired.
func (f *Frontier) Retire(ctx context.Context, crawlID, key, reason string) error {
	if reason == "" {
		reason = "retired"
	}
	return f.updateQueue(ctx, "retire", crawlID, key, func(q *queue) { q.rec.retired = reason })
}

// Retired returns the reason a queue was retired, or "".
func (f *Frontier) Retired(crawlID, key string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if q := f.findLocked(crawlID, key); q != nil {
		return q.rec.retired
	}
	return ""
}

func (f *Frontier) findLocked(crawlID, key string) *queue {
	c := f.mu.crawls[normCrawl(crawlID)]
	if c == nil {
		return nil
	}
	return c.queues[key]
}

// DeleteQueue removes a queue and its URLs not completed, returning how many
// were removed. Completed URLs stay known to the seen-test. An unknown queue
// removes nothing.
func (f *Frontier) DeleteQueue(ctx context.Context, crawlID, key string) (uint64, error) {
	var removed uint64
	o := &op{done: make(chan error, 1)}
	o.fn = func(b *pebble.Batch) error {
		q := f.findLocked(crawlID, key)
		if q == nil {
			return nil
		}
		c := q.crawl
		err := scan(f.db, entryPrefix(c.cid, q.rec.qid), func(k, v []byte) error {
			e, err := decodeEntry(v)
			if err != nil {
				return corrupt("queue entry", err)
			}
			b.Delete(k, nil)
			b.Delete(urlKey(c.cid, e.hash), nil)
			removed++
			return nil
		})
		if err != nil {
			return err
		}
		dp := donePrefix(c.cid, q.rec.qid)
		if err := b.DeleteRange(dp, kv.PrefixEnd(dp), nil); err != nil {
			return fmt.Errorf("frontier: delete queue: %w", err)
		}
		b.Delete(queueKey(c.cid, q.key), nil)
		f.dropQueueLocked(q)
		// The deleted URLs may be discovered again: forget them.
		f.seen.reset()
		clear(f.recent)
		return nil
	}
	err := f.submit(ctx, o)
	return removed, err
}

// dropQueueLocked forgets q in memory, with its leases.
func (f *Frontier) dropQueueLocked(q *queue) {
	c := q.crawl
	f.unparkLocked(q)
	for _, l := range q.leased {
		if l.idx >= 0 {
			heap.Remove(&f.mu.leases, l.idx)
		}
	}
	q.leased = nil
	q.dropped = true
	f.dropAheadLocked(q)
	if q.heapIdx >= 0 {
		heap.Remove(&c.ready, q.heapIdx)
	}
	delete(c.queues, q.key)
	if c.qidIndex != nil {
		delete(c.qidIndex, q.rec.qid)
	}
	delete(f.mu.dirty, q)
}

// DeleteCrawl removes a whole crawl, returning the number of URLs not
// completed that it held.
func (f *Frontier) DeleteCrawl(ctx context.Context, crawlID string) (uint64, error) {
	var removed uint64
	o := &op{done: make(chan error, 1)}
	o.fn = func(b *pebble.Batch) error {
		c := f.mu.crawls[normCrawl(crawlID)]
		if c == nil {
			return nil
		}
		for _, q := range c.queues {
			removed += q.rec.queued
			f.dropQueueLocked(q)
		}
		for _, p := range []string{prefixURL, prefixEntry, prefixQueue, prefixDone} {
			lo := append([]byte(p), byte(c.cid>>24), byte(c.cid>>16), byte(c.cid>>8), byte(c.cid))
			if err := b.DeleteRange(lo, kv.PrefixEnd(lo), nil); err != nil {
				return fmt.Errorf("frontier: delete crawl: %w", err)
			}
		}
		b.Delete(crawlKey(c.name), nil)
		c.deleted = true
		delete(f.mu.crawls, c.name)
		f.setCIDsLocked()
		delete(f.mu.dirtyCrw, c)
		return nil
	}
	err := f.submit(ctx, o)
	return removed, err
}

// URLStatus is the state of one URL (URLFrontier GetURLStatus).
type URLStatus struct {
	URL string
	Key string
	// Completed is set when the URL was acknowledged with no refetch date.
	Completed bool
	// RefetchFrom is when the URL is due (zero: as soon as possible, or
	// completed).
	RefetchFrom time.Time
	// Created is when the URL was first stored (seconds precision).
	Created time.Time
	// Leased is set while a lease on the URL is held.
	Leased bool
	// Metadata is the URL's stored metadata (none for completed URLs
	// stored before 2026-11-25).
	Metadata map[string][]string
}

// cid returns the id of crawl crawlID from the ids' snapshot (as Put
// does: without the lock Get and the committer hold), ok false when there
// is no such crawl.
func (f *Frontier) cid(crawlID string) (uint32, bool) {
	id, ok := (*f.cids.Load())[normCrawl(crawlID)]
	return id, ok
}

// Known reports whether the crawl holds the URL, queued or completed: a
// Put of it would be skipped. One point lookup, cheaper than Lookup.
func (f *Frontier) Known(crawlID, rawURL string) (bool, error) {
	cid, ok := f.cid(crawlID)
	if !ok {
		return false, nil
	}
	h := hashURL(rawURL)
	if f.seen.contains(fingerprint(cid, h)) { // Put's own seen-test
		return true, nil
	}
	if f.absent(cid, h) {
		return false, nil
	}
	_, closer, err := f.db.Get(urlKey(cid, h))
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("frontier: known: %w", err)
	}
	closer.Close()
	return true, nil
}

// Lookup returns the state of a URL in a crawl (URLFrontier GetURLStatus),
// or ErrNotFound.
func (f *Frontier) Lookup(ctx context.Context, crawlID, rawURL string) (URLStatus, error) {
	f.mu.Lock()
	c := f.mu.crawls[normCrawl(crawlID)]
	var cid uint32
	if c != nil {
		cid = c.cid
	}
	f.mu.Unlock()
	if c == nil {
		return URLStatus{}, ErrNotFound
	}
	h := hashURL(rawURL)
	v, closer, err := f.db.Get(urlKey(cid, h))
	if errors.Is(err, pebble.ErrNotFound) {
		return URLStatus{}, ErrNotFound
	}
	if err != nil {
		return URLStatus{}, fmt.Errorf("frontier: status: %w", err)
	}
	rec, err := decodeURLRecord(v)
	closer.Close()
	if err != nil {
		return URLStatus{}, corrupt("url record", err)
	}
	st := URLStatus{URL: rawURL, Completed: rec.state == stateCompleted, Created: time.Unix(rec.created, 0)}
	if rec.state == stateQueued && rec.pos.due > 0 {
		st.RefetchFrom = time.Unix(0, rec.pos.due)
	}
	ek := entryKey(cid, rec.qid, rec.pos)
	if st.Completed {
		ek = doneKey(cid, rec.qid, h)
	}
	if v, closer, err := f.db.Get(ek); err == nil {
		if e, err := decodeEntry(v); err == nil && e.hash == h {
			st.Metadata = e.md
		}
		closer.Close()
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return URLStatus{}, fmt.Errorf("frontier: status: %w", err)
	}
	f.mu.Lock()
	if q := c.byQID(rec.qid); q != nil {
		st.Key = q.key
		_, st.Leased = q.leased[h]
	}
	f.mu.Unlock()
	return st, nil
}

// SetActive pauses (false) or resumes (true) serving: while inactive Get
// returns nothing, Put still stores (URLFrontier SetActive).
func (f *Frontier) SetActive(active bool) {
	f.mu.Lock()
	f.mu.active = active
	f.wakeLocked()
	f.mu.Unlock()
}

// Active reports whether Get serves URLs.
func (f *Frontier) Active() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.active
}

// Release ends the lease on a URL without changing it, so that it can be
// served again at once (subject to its queue's block time): the crawler
// uses it when the politeness gate says "not yet". This is an extension of
// URLFrontier, where a lease can only expire.
func (f *Frontier) Release(info URLInfo) {
	key := info.Key
	if key == "" {
		key = DefaultKey(info.URL)
	}
	h := hashURL(info.URL)
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.findLocked(info.CrawlID, key)
	if q == nil {
		return
	}
	if l := q.leased[h]; l != nil && !l.acking {
		f.releaseLocked(l)
		f.wakeLocked()
	}
}
