package frontier

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/courtesy-crawler/courtesy/internal/kv"
)

// URLEntry is one stored URL as ListURLs reports it (URLFrontier ListURLs,
// which returns every URL as a KnownURLItem).
type URLEntry struct {
	URLInfo
	// Completed is set for a URL acknowledged with no refetch date.
	Completed bool
	// RefetchFrom is when a queued URL is due; the zero time means as soon
	// as possible (and is always zero when Completed).
	RefetchFrom time.Time
	// Created is when the URL was first stored (seconds precision).
	Created time.Time
}

// ListParams selects URLs for ListURLs, CountURLs and PurgeURLs.
type ListParams struct {
	// CrawlID is the crawl; "" means DefaultCrawl.
	CrawlID string
	// Key restricts the listing to one queue; "" means every queue of the
	// crawl, in key order.
	Key string
	// Start skips that many matching URLs; Size bounds the URLs listed (0
	// means no bound). CountURLs and PurgeURLs ignore both.
	Start, Size int
	// Filter keeps the URLs that contain it ("" keeps all); IgnoreCase
	// compares both in lower case.
	Filter     string
	IgnoreCase bool
}

func (p *ListParams) match(url string) bool {
	if p.Filter == "" {
		return true
	}
	if p.IgnoreCase {
		return strings.Contains(strings.ToLower(url), strings.ToLower(p.Filter))
	}
	return strings.Contains(url, p.Filter)
}

// listQueue is a queue as the listing walks it.
type listQueue struct {
	key       string
	qid       uint32
	queued    uint64
	completed uint64
}

// listScope returns the crawl id and the queues p selects, in key order,
// or ok false for an unknown crawl or queue.
func (f *Frontier) listScope(p ListParams) (crawlName string, cid uint32, qs []listQueue, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.mu.crawls[normCrawl(p.CrawlID)]
	if c == nil {
		return "", 0, nil, false
	}
	add := func(q *queue) {
		qs = append(qs, listQueue{key: q.key, qid: q.rec.qid, queued: q.rec.queued, completed: q.rec.completed})
	}
	if p.Key != "" {
		q := c.queues[p.Key]
		if q == nil {
			return c.name, c.cid, nil, false
		}
		add(q)
		return c.name, c.cid, qs, true
	}
	for _, q := range c.queues {
		add(q)
	}
	sort.Slice(qs, func(i, j int) bool { return qs[i].key < qs[j].key })
	return c.name, c.cid, qs, true
}

// errStopList ends a listing early (Size reached).
var errStopList = errors.New("frontier: stop listing")

// ListURLs calls fn for the URLs p selects: queue by queue in key order,
// the queued URLs of a queue in serving order, then its completed ones.
// It reads a consistent view of the store and holds no lock while fn runs,
// so fn may block (a gRPC stream). An unknown crawl or queue lists nothing.
// Completed URLs stored before the store kept their URL (2026-11-25) are
// not listed, though CountURLs counts them when it has no filter.
func (f *Frontier) ListURLs(ctx context.Context, p ListParams, fn func(URLEntry) error) error {
	name, cid, qs, ok := f.listScope(p)
	if !ok {
		return nil
	}
	snap := f.db.NewSnapshot()
	defer snap.Close()
	it, err := snap.NewIter(nil)
	if err != nil {
		return fmt.Errorf("frontier: list: %w", err)
	}
	defer it.Close()
	skip, listed := p.Start, 0
	emit := func(e URLEntry) error {
		if !p.match(e.URL) {
			return nil
		}
		if skip > 0 {
			skip--
			return nil
		}
		if err := fn(e); err != nil {
			return err
		}
		listed++
		if p.Size > 0 && listed >= p.Size {
			return errStopList
		}
		return nil
	}
	n := 0
	for _, q := range qs {
		for _, done := range []bool{false, true} {
			prefix := entryPrefix(cid, q.qid)
			if done {
				prefix = donePrefix(cid, q.qid)
			}
			it.SetBounds(prefix, kv.PrefixEnd(prefix))
			for ok := it.First(); ok; ok = it.Next() {
				if n++; n%1024 == 0 {
					if err := ctx.Err(); err != nil {
						return err
					}
				}
				v, err := it.ValueAndErr()
				if err != nil {
					return fmt.Errorf("frontier: list: %w", err)
				}
				e, err := decodeEntry(v)
				if err != nil {
					return corrupt("list entry", err)
				}
				ue := URLEntry{URLInfo: URLInfo{URL: e.url, Key: q.key, CrawlID: name, Metadata: e.md}, Completed: done}
				if e.hasCreated {
					ue.Created = time.Unix(e.created, 0)
				}
				if !done {
					pos, err := decodeEntryKey(it.Key())
					if err != nil {
						return corrupt("list entry", err)
					}
					ue.Priority, ue.Depth = pos.prio, int(pos.depth)
					if pos.due > 0 {
						ue.RefetchFrom = time.Unix(0, pos.due)
					}
				}
				if err := emit(ue); err != nil {
					if errors.Is(err, errStopList) {
						return nil
					}
					return err
				}
			}
			if err := it.Error(); err != nil {
				return fmt.Errorf("frontier: list: %w", err)
			}
		}
	}
	return nil
}

// CountURLs counts the URLs p selects (Start and Size ignored). Without a
// filter it adds the queues' counters; with one it reads every URL.
func (f *Frontier) CountURLs(ctx context.Context, p ListParams) (uint64, error) {
	p.Start, p.Size = 0, 0
	if p.Filter == "" {
		_, _, qs, _ := f.listScope(p)
		var n uint64
		for _, q := range qs {
			n += q.queued + q.completed
		}
		return n, nil
	}
	var n uint64
	err := f.ListURLs(ctx, p, func(URLEntry) error { n++; return nil })
	return n, err
}

// PurgeURLs deletes the URLs p selects (Filter applies; Start and Size are
// ignored) that were created at or before createdBefore (whole seconds:
// so with createdBefore now, every URL stored so far), queued or completed,
// with any lease on them, and returns how many it deleted (URLFrontier
// PurgeURLs). Deleted URLs may be discovered again.
func (f *Frontier) PurgeURLs(ctx context.Context, p ListParams, createdBefore time.Time) (uint64, error) {
	var removed uint64
	limit := createdBefore.Unix()
	o := &op{done: make(chan error, 1)}
	o.fn = func(b *pebble.Batch) error {
		c := f.mu.crawls[normCrawl(p.CrawlID)]
		if c == nil {
			return nil
		}
		var qs []*queue
		if p.Key != "" {
			if q := c.queues[p.Key]; q != nil {
				qs = append(qs, q)
			}
		} else {
			for _, q := range c.queues {
				qs = append(qs, q)
			}
		}
		for _, q := range qs {
			for _, done := range []bool{false, true} {
				prefix := entryPrefix(c.cid, q.rec.qid)
				if done {
					prefix = donePrefix(c.cid, q.rec.qid)
				}
				err := scan(f.db, prefix, func(k, v []byte) error {
					e, err := decodeEntry(v)
					if err != nil {
						return corrupt("purge entry", err)
					}
					// Entries of older builds carry no creation time:
					// they are kept, not guessed at.
					if !e.hasCreated || e.created > limit || !p.match(e.url) {
						return nil
					}
					b.Delete(k, nil)
					b.Delete(urlKey(c.cid, e.hash), nil)
					removed++
					if done {
						q.rec.completed = max(q.rec.completed, 1) - 1
						return nil
					}
					q.rec.queued = max(q.rec.queued, 1) - 1
					if l := q.leased[e.hash]; l != nil {
						if l.idx >= 0 {
							heap.Remove(&f.mu.leases, l.idx)
						}
						delete(q.leased, e.hash)
					}
					if f.mu.purged == nil {
						f.mu.purged = map[seenKey]bool{}
					}
					f.mu.purged[seenKey{c.cid, e.hash}] = true
					return nil
				})
				if err != nil {
					return err
				}
			}
			f.mu.dirty[q] = struct{}{}
			f.unparkLocked(q)
			q.nextDue = 0
			f.rescheduleLocked(q)
		}
		if removed > 0 {
			// The purged URLs may be discovered again: forget them.
			f.seen.reset()
			clear(f.recent)
		}
		return nil
	}
	err := f.submit(ctx, o)
	return removed, err
}
