package frontier

import (
	"container/heap"
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/courtesy-crawler/courtesy/internal/kv"
)

// Get hands out URLs that are due, from up to p.MaxQueues queues (those
// servable longest ago first, so queues are served round-robin) with up to
// p.MaxURLsPerQueue each, and leases them for p.Lease. It never blocks on
// the clock: when nothing is due it returns nothing (see WaitReady).
func (f *Frontier) Get(ctx context.Context, p GetParams) ([]Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	g, err := f.getLocked(p)
	f.mu.Unlock()
	if err != nil || g == nil || len(g.out) == 0 {
		return nil, err
	}
	// Decode the entries leased once the lock is free: the URL and its
	// metadata are most of the allocations of a Get, and every other Get
	// and the committer wait while the lock is held. The values are not
	// changed once read (read-ahead entries are replaced, never written),
	// and getter.lease checked them.
	expires := time.Unix(0, g.expires)
	out := make([]Lease, len(g.out))
	for i, t := range g.out {
		e, err := decodeEntry(t.val)
		if err != nil {
			return nil, corrupt("queue entry", err)
		}
		out[i] = Lease{
			URLInfo: URLInfo{URL: e.url, Key: t.key, CrawlID: t.crawl, Metadata: e.md, Priority: t.pos.prio, Depth: int(t.pos.depth)},
			Expires: expires,
		}
	}
	return out, nil
}

// outCap is the capacity to reserve for the leases of a Get of up to
// queues queues of perQueue URLs each: at most budget and 1,024, and
// computed without the product overflowing (both come from the wire).
func outCap(queues, perQueue, budget int) int {
	n := min(budget, 1024)
	if queues < n && perQueue < n {
		n = min(n, queues*perQueue)
	}
	return max(n, 0)
}

// getLocked leases the URLs Get returns; their entries are in the
// getter's out.
func (f *Frontier) getLocked(p GetParams) (*getter, error) {
	if f.mu.closed {
		return nil, ErrClosed
	}
	if !f.mu.active {
		return nil, nil
	}
	nowT := f.opts.Now()
	now := nowT.UnixNano()
	f.expireLocked(now)
	leaseDur := p.Lease
	if leaseDur <= 0 {
		leaseDur = f.opts.DefaultLease
	}
	f.mu.gets++
	g := &getter{f: f, p: p, id: f.mu.gets, now: now, expires: now + int64(leaseDur), budget: f.opts.MaxURLsPerGet}
	if p.MaxQueues > 0 && p.MaxURLsPerQueue > 0 {
		g.out = make([]leased, 0, outCap(p.MaxQueues, p.MaxURLsPerQueue, g.budget))
	}
	defer g.close()

	if p.Key != "" {
		c := f.mu.crawls[normCrawl(p.CrawlID)]
		if c == nil {
			return nil, nil
		}
		q := c.queues[p.Key]
		if q != nil && q.parked && q.parkLimit > 0 && (p.MaxURLsPerQueue == 0 || len(q.leased) < p.MaxURLsPerQueue) {
			f.unparkLocked(q)
			f.rescheduleLocked(q)
		}
		if q != nil && q.heapIdx >= 0 && q.readyAt <= now {
			if err := g.serve(q); err != nil {
				return nil, err
			}
		}
		return g, nil
	}
	var crawls []*crawl
	if p.AnyCrawl {
		for _, c := range f.mu.crawls {
			crawls = append(crawls, c)
		}
		sort.Slice(crawls, func(i, j int) bool { return crawls[i].name < crawls[j].name })
	} else if c := f.mu.crawls[normCrawl(p.CrawlID)]; c != nil {
		crawls = append(crawls, c)
	}
	queues := 0
	for _, c := range crawls {
		if len(c.parkedAt) > 0 {
			f.unparkBelowLocked(c, p.MaxURLsPerQueue)
		}
		for len(c.ready) > 0 && c.ready[0].readyAt <= now && g.budget > 0 {
			if p.MaxQueues > 0 && queues >= p.MaxQueues {
				return g, nil
			}
			q := c.ready[0].q
			if q.servedBy == g.id {
				break // every other ready queue has had its turn
			}
			q.servedBy = g.id
			n := len(g.out)
			if err := g.serve(q); err != nil {
				return nil, err
			}
			if len(g.out) > n {
				queues++
			}
		}
	}
	return g, nil
}

// getter carries one Get call's state.
type getter struct {
	f *Frontier
	p GetParams
	// id numbers the Get (Frontier.mu.gets), to mark the queues it served.
	id      uint64
	now     int64
	expires int64
	budget  int
	out     []leased
	// it reads the queues of this call, one after another (SetBounds):
	// a Pebble iterator per queue served cost about 4 % of a crawl's CPU.
	it *pebble.Iterator
}

// iter returns the call's iterator bounded to prefix.
func (g *getter) iter(prefix []byte) (*pebble.Iterator, error) {
	if g.it == nil {
		it, err := g.f.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: kv.PrefixEnd(prefix)})
		if err != nil {
			return nil, fmt.Errorf("frontier: get: %w", err)
		}
		g.it = it
		return it, nil
	}
	g.it.SetBounds(prefix, kv.PrefixEnd(prefix))
	return g.it, nil
}

// close closes the call's iterator, if any.
func (g *getter) close() {
	if g.it != nil {
		_ = g.it.Close()
		g.it = nil
	}
}

// serve leases up to the allowed number of q's due URLs and reschedules q.
// It always moves q out of the head of the heap (served, parked, or due
// later), so the caller's loop ends.
//
// It walks q's entries in key order, skipping leased URLs and stopping at
// the first entry not yet due: first those of q's read-ahead (ahead.go),
// then, if it needs more, those in the store after them, of which it keeps
// up to Options.ReadAhead beyond the last one it looked at.
func (g *getter) serve(q *queue) error {
	f := g.f
	n := g.budget
	if m := g.p.MaxURLsPerQueue; m > 0 {
		if len(q.leased) >= m {
			f.parkLocked(q, m)
			f.rescheduleLocked(q)
			return nil
		}
		n = min(n, m-len(q.leased))
	}
	served := 0
	futureDue := int64(0)
	// done is set once the walk needs no more entries: n served, or an
	// entry not yet due.
	done := false
	var r *readAhead // q's read-ahead, filled by this call; nil: none
	if f.aheadUsableLocked(q) {
		f.mu.ahead.tick++
		if r = q.ahead; r != nil {
			f.touchAheadLocked(r)
			for i := range r.entries {
				if served >= n {
					break
				}
				e := &r.entries[i]
				if e.pos.due > g.now {
					futureDue = e.pos.due
					done = true
					break
				}
				ok, err := g.lease(q, e.pos, e.val)
				if err != nil {
					return err
				}
				if ok {
					served++
				}
			}
			if served >= n || r.complete {
				done = true
			}
			if done {
				f.aheadHits.Add(1)
			}
		} else if f.admitAheadLocked() {
			r = f.newAheadLocked(q)
		}
	}
	if !done {
		var err error
		if served, futureDue, err = g.serveStore(q, r, n, served); err != nil {
			if r != nil {
				f.dropAheadLocked(q)
			}
			return err
		}
	}
	if r != nil {
		f.trimAheadLocked()
	}
	g.budget -= served
	switch {
	case served > 0:
		q.lastServed = g.now
		q.nextDue = 0
	case futureDue > 0:
		q.nextDue = futureDue
	default:
		// Everything on disk is leased or not yet committed: wait for a
		// change (a release or a commit clears parked).
		f.parkLocked(q, 0)
	}
	if m := g.p.MaxURLsPerQueue; m > 0 && len(q.leased) >= m {
		f.parkLocked(q, m)
	}
	f.maybeRefillLocked(q)
	f.rescheduleLocked(q)
	return nil
}

// serveStore continues serve's walk of q in the store, after the entries
// of r (from the queue's first entry when r is nil or has read nothing),
// until served reaches n or an entry is not yet due, and returns served
// and the due time of that entry. When r is not nil it appends the entries
// it reads, and up to Options.ReadAhead more, to r.
func (g *getter) serveStore(q *queue, r *readAhead, n, served int) (int, int64, error) {
	f := g.f
	c := q.crawl
	it, err := g.iter(entryPrefix(c.cid, q.rec.qid))
	if err != nil {
		return 0, 0, err
	}
	var ok bool
	if r != nil && r.hasEnd {
		// The smallest key after end: keys have one length.
		ok = it.SeekGE(append(entryKey(c.cid, q.rec.qid, r.end), 0))
	} else {
		ok = it.First()
	}
	f.storeReads.Add(1)
	futureDue := int64(0)
	done := false
	filling := r != nil
	extra := 0 // entries read after done
	for ; ok; ok = it.Next() {
		if filling && len(r.entries) >= f.aheadMaxEntries() {
			filling = false
		}
		if done && (!filling || extra >= f.opts.ReadAhead) {
			break
		}
		pos, err := decodeEntryKey(it.Key())
		if err != nil {
			if !done {
				return 0, 0, corrupt("queue entry", err)
			}
			// Reading ahead: leave the corrupt entry to the Get that
			// needs it.
			filling = false
			break
		}
		if !done && pos.due > g.now {
			futureDue = pos.due
			done = true
			if !filling {
				break
			}
		}
		v, err := it.ValueAndErr()
		if err != nil {
			if !done {
				return 0, 0, fmt.Errorf("frontier: get: %w", err)
			}
			filling = false
			break
		}
		if done {
			if len(v) < hashLen {
				filling = false
				break
			}
			extra++
			if filling {
				f.appendAheadLocked(r, pos, slices.Clone(v))
			}
			continue
		}
		// The value outlives the iterator's buffer: in the read-ahead,
		// and in the lease's entry decoded by Get after the lock.
		v = slices.Clone(v)
		leased, err := g.lease(q, pos, v)
		if err != nil {
			return 0, 0, err
		}
		if leased {
			served++
			done = served >= n
		}
		if filling {
			f.appendAheadLocked(r, pos, v)
		}
	}
	if err := it.Error(); err != nil {
		if !done {
			return 0, 0, fmt.Errorf("frontier: get: %w", err)
		}
		filling = false
	}
	if filling && !ok {
		r.complete = true
	}
	return served, futureDue, nil
}

// leased is an entry a Get leased: its value is decoded after the lock.
type leased struct {
	key, crawl string
	pos        entryPos
	val        []byte // not changed once read
}

// lease leases the URL of the entry at pos with value v to the caller,
// unless it is leased already, and reports whether it did. v must stay
// unchanged until Get returns.
func (g *getter) lease(q *queue, pos entryPos, v []byte) (bool, error) {
	f := g.f
	if len(v) < hashLen {
		return false, corrupt("queue entry", errCorrupt)
	}
	var h urlHash
	copy(h[:], v)
	if _, leased := q.leased[h]; leased {
		return false, nil
	}
	created, hasCreated, err := checkEntry(v)
	if err != nil {
		return false, corrupt("queue entry", err)
	}
	// The entry and its key are the URL record (state queued, this queue,
	// pos): the committer writes them together. The lease keeps them for
	// the ack (commitGroup).
	l := &lease{q: q, hash: h, expires: g.expires, hasRec: hasCreated, pos: pos, created: created}
	if q.leased == nil {
		q.leased = map[urlHash]*lease{}
	}
	q.leased[h] = l
	heap.Push(&f.mu.leases, l)
	g.out = append(g.out, leased{key: q.key, crawl: q.crawl.name, pos: pos, val: v})
	return true, nil
}
