package frontier

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// QueueInfo is one queue's state as a monitor shows it.
type QueueInfo struct {
	Key string
	// Queued counts URLs not completed (leased ones included).
	Queued uint64
	// InFlight counts URLs leased now.
	InFlight uint64
	// Completed counts completed URLs.
	Completed uint64
	// Delay is the queue's own delay (SetDelay); negative means the
	// default applies.
	Delay time.Duration
	// BlockedUntil is the queue's block time (BlockQueueUntil); zero when
	// none. It may lie in the past.
	BlockedUntil time.Time
	// Retired is the reason the queue was retired, "" when it was not.
	Retired string
}

// Queues calls fn with every queue of a crawl, in no particular order,
// until fn returns false. It holds the frontier's lock throughout (about
// 20 ms for a million queues), so fn must only copy what it needs.
func (f *Frontier) Queues(crawlID string, fn func(QueueInfo) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.mu.crawls[normCrawl(crawlID)]
	if c == nil {
		return
	}
	for _, q := range c.queues {
		if !fn(queueInfoLocked(q)) {
			return
		}
	}
}

// Queue returns one queue's state, or ErrNotFound.
func (f *Frontier) Queue(crawlID, key string) (QueueInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.findLocked(crawlID, key)
	if q == nil {
		return QueueInfo{}, fmt.Errorf("frontier: queue %q of crawl %q: %w", key, normCrawl(crawlID), ErrNotFound)
	}
	return queueInfoLocked(q), nil
}

func queueInfoLocked(q *queue) QueueInfo {
	qi := QueueInfo{Key: q.key, Queued: q.rec.queued, InFlight: uint64(len(q.leased)), Completed: q.rec.completed,
		Delay: time.Duration(q.rec.delay), Retired: q.rec.retired}
	if q.rec.blocked > 0 {
		qi.BlockedUntil = time.Unix(0, q.rec.blocked)
	}
	return qi
}

// HeadEntry is one URL at the head of a queue.
type HeadEntry struct {
	URL      string
	Priority int8
	Depth    int
	// Due is when the URL may be served (zero: at once).
	Due time.Time
	// Leased is set while a lease on the URL is held.
	Leased bool
}

var errHeadFull = errors.New("frontier: head full")

// Head returns up to n (at most 1,000) URLs of a queue in the order Get
// serves them, without leasing them: the committed entries (a Put not yet
// committed is not shown). An unknown queue is ErrNotFound.
func (f *Frontier) Head(ctx context.Context, crawlID, key string, n int) ([]HeadEntry, error) {
	n = min(max(n, 1), 1000)
	f.mu.Lock()
	q := f.findLocked(crawlID, key)
	if q == nil {
		f.mu.Unlock()
		return nil, fmt.Errorf("frontier: head of queue %q: %w", key, ErrNotFound)
	}
	prefix := entryPrefix(q.crawl.cid, q.rec.qid)
	f.mu.Unlock()
	var out []HeadEntry
	var hashes []urlHash
	err := scan(f.db, prefix, func(k, v []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		pos, err := decodeEntryKey(k)
		if err != nil {
			return corrupt("queue entry key", err)
		}
		e, err := decodeEntry(v)
		if err != nil {
			return corrupt("queue entry", err)
		}
		h := HeadEntry{URL: e.url, Priority: pos.prio, Depth: int(pos.depth)}
		if pos.due > 0 {
			h.Due = time.Unix(0, pos.due)
		}
		out = append(out, h)
		hashes = append(hashes, e.hash)
		if len(out) >= n {
			return errHeadFull
		}
		return nil
	})
	if err != nil && !errors.Is(err, errHeadFull) {
		return nil, err
	}
	f.mu.Lock()
	for i, h := range hashes {
		_, out[i].Leased = q.leased[h]
	}
	f.mu.Unlock()
	return out, nil
}
