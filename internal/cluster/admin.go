// Queue administration (block, delay, limit, retire), statistics, Lookup
// and WaitReady.

package cluster

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
)

// admin sets one field of a known queue's record and reindexes it; it
// reports false for an unknown queue (where pend keeps the field for when
// the queue appears).
func (f *Frontier) admin(ctx context.Context, what, crawlID, key, field, value string, pend bool) (queueState, bool, error) {
	crawl := normCrawl(crawlID)
	dd, err := f.defaultDelay(ctx, crawl)
	if err != nil {
		return queueState{}, false, err
	}
	c := &call{s: adminScript, keys: f.queueKeys(crawl, key), args: []any{f.nowArg(), dd, field, value, pendArg(pend)}}
	if err := f.run(ctx, what, []*call{c}); err != nil {
		return queueState{}, false, err
	}
	if len(c.res) == 1 {
		return queueState{}, false, nil
	}
	st, err := parseState(c.res)
	if err != nil {
		return queueState{}, false, err
	}
	return st, true, f.run(ctx, what+" index", []*call{f.indexCall(crawl, key, st)})
}

func pendArg(pend bool) string {
	if pend {
		return "1"
	}
	return "0"
}

// BlockQueueUntil implements frontier.API (the zero time unblocks). On a
// queue that does not exist yet the block is kept for a day and applies
// when the queue appears, as in the embedded frontier.
func (f *Frontier) BlockQueueUntil(ctx context.Context, crawlID, key string, t time.Time) error {
	v := ""
	if !t.IsZero() {
		v = strconv.FormatInt(msCeil(t), 10)
	}
	_, _, err := f.admin(ctx, "block", crawlID, key, "blocked", v, true)
	return err
}

// SetDelay implements frontier.API. With an empty key it sets the crawl's
// default delay, which every process reads within a second. On a queue
// that does not exist yet the delay is kept for a day, as a block is.
func (f *Frontier) SetDelay(ctx context.Context, crawlID, key string, d time.Duration) error {
	ms := max(d, 0).Milliseconds()
	if key == "" {
		crawl := normCrawl(crawlID)
		err := f.retry(ctx, "set delay", func(ctx context.Context) error {
			return f.c.HSet(ctx, f.delaysKey(), crawl, ms).Err()
		})
		if err != nil {
			return err
		}
		f.mu.Lock()
		f.mu.delays[crawl] = cachedDelay{ms: ms, fetched: time.Now()}
		f.mu.Unlock()
		return nil
	}
	_, _, err := f.admin(ctx, "set delay", crawlID, key, "delay", strconv.FormatInt(ms, 10), true)
	return err
}

// SetCrawlLimit implements frontier.API (0 removes the limit; an unknown
// queue is frontier.ErrNotFound).
func (f *Frontier) SetCrawlLimit(ctx context.Context, crawlID, key string, limit uint64) error {
	v := ""
	if limit > 0 {
		v = strconv.FormatUint(min(limit, math.MaxInt64), 10)
	}
	_, ok, err := f.admin(ctx, "crawl limit", crawlID, key, "limit", v, false)
	if err == nil && !ok {
		return fmt.Errorf("cluster: crawl limit: queue %q of crawl %q: %w", key, normCrawl(crawlID), frontier.ErrNotFound)
	}
	return err
}

// Retire implements frontier.API (an unknown queue is
// frontier.ErrNotFound).
func (f *Frontier) Retire(ctx context.Context, crawlID, key, reason string) error {
	if reason == "" {
		reason = "retired"
	}
	_, ok, err := f.admin(ctx, "retire", crawlID, key, "retired", reason, false)
	if err == nil && !ok {
		return fmt.Errorf("cluster: retire: queue %q of crawl %q: %w", key, normCrawl(crawlID), frontier.ErrNotFound)
	}
	return err
}

// Stats implements frontier.API; on a Redis error it returns what it
// could read (see StatsContext and LastError).
func (f *Frontier) Stats(crawlID, key string) frontier.Stats {
	ctx, cancel := context.WithTimeout(context.Background(), f.o.RetryFor)
	defer cancel()
	s, _ := f.StatsContext(ctx, crawlID, key)
	return s
}

// StatsContext returns a crawl's statistics, or one queue's when key is
// not empty. A crawl's are the sums of its index shards' totals, which
// follow each queue's last update (a lease that expired since then counts
// as in flight until a process next touches the queue).
func (f *Frontier) StatsContext(ctx context.Context, crawlID, key string) (frontier.Stats, error) {
	s := frontier.Stats{CrawlID: normCrawl(crawlID)}
	if key != "" {
		st, ok, err := f.admin(ctx, "stats", crawlID, key, "", "", false)
		if err != nil || !ok {
			return s, err
		}
		s.Queues = 1
		s.Completed = uint64(st.completed)
		if st.retired {
			s.RetiredQueues, s.Retired = 1, uint64(st.queued)
			return s, nil
		}
		s.Size, s.InProcess = uint64(st.queued), uint64(st.inflight)
		if st.queued > 0 {
			s.ActiveQueues = 1
		}
		return s, nil
	}
	cmds := make([]*redis.MapStringStringCmd, f.shards)
	err := f.retry(ctx, "stats", func(ctx context.Context) error {
		f.ops.add("stats", len(cmds), masters(ctx, f.c, len(cmds), func(i int) string { return f.indexKeys(s.CrawlID, i)[2] }))
		pipe := f.c.Pipeline()
		for i := range cmds {
			cmds[i] = pipe.HGetAll(ctx, f.indexKeys(s.CrawlID, i)[2])
		}
		_, err := pipe.Exec(ctx)
		return err
	})
	if err != nil {
		return s, err
	}
	for _, c := range cmds {
		for k, v := range c.Val() {
			n, _ := strconv.ParseInt(v, 10, 64)
			u := uint64(max(n, 0))
			switch k {
			case "size":
				s.Size += u
			case "inflight":
				s.InProcess += u
			case "completed":
				s.Completed += u
			case "retired":
				s.Retired += u
			case "queues":
				s.Queues += u
			case "active":
				s.ActiveQueues += u
			case "retiredq":
				s.RetiredQueues += u
			}
		}
	}
	return s, nil
}

// Lookup implements frontier.API. The URL is looked for in its default
// queue (its host): a URL is unique within its queue, and the crawler's
// queues are hosts.
func (f *Frontier) Lookup(ctx context.Context, crawlID, rawURL string) (frontier.URLStatus, error) {
	crawl := normCrawl(crawlID)
	key := frontier.DefaultKey(rawURL)
	if key == "" {
		return frontier.URLStatus{}, frontier.ErrNotFound
	}
	c := &call{s: lookupScript, keys: f.queueKeys(crawl, key), args: []any{f.nowArg(), 0, hashURL(rawURL)}}
	if err := f.run(ctx, "lookup", []*call{c}); err != nil {
		return frontier.URLStatus{}, err
	}
	if len(c.res) != 3 {
		return frontier.URLStatus{}, fmt.Errorf("cluster: lookup returned %d values", len(c.res))
	}
	rec, _ := c.res[0].(string)
	leased, _ := asInt(c.res[1])
	if rec == "" {
		return frontier.URLStatus{}, frontier.ErrNotFound
	}
	st := frontier.URLStatus{URL: rawURL, Key: key, Leased: leased == 1}
	if data, _ := c.res[2].(string); data != "" {
		if _, md, err := decodeData([]byte(data)); err == nil {
			st.Metadata = md
		}
	}
	switch {
	case rec[0] == 'c' && len(rec) >= 5:
		st.Completed = true
		st.Created = time.Unix(int64(be32(rec[1:5])), 0)
	case rec[0] == 'q' && len(rec) >= 21:
		due := math.Float64frombits(be64(rec[9:17]))
		if due > 0 {
			st.RefetchFrom = time.UnixMilli(int64(due))
		}
		st.Created = time.Unix(int64(be32(rec[17:21])), 0)
	default:
		return frontier.URLStatus{}, fmt.Errorf("cluster: lookup %s: corrupt record", rawURL)
	}
	return st, nil
}

func be32(s string) uint32 {
	return uint32(s[0])<<24 | uint32(s[1])<<16 | uint32(s[2])<<8 | uint32(s[3])
}

func be64(s string) uint64 {
	return uint64(be32(s[:4]))<<32 | uint64(be32(s[4:8]))
}

// ListCrawls implements frontier.API (nil on a Redis error; see
// LastError).
func (f *Frontier) ListCrawls() []string {
	ctx, cancel := context.WithTimeout(context.Background(), f.o.RetryFor)
	defer cancel()
	c, _ := f.listCrawls(ctx)
	return c
}

func (f *Frontier) listCrawls(ctx context.Context) ([]string, error) {
	var out []string
	err := f.retry(ctx, "list crawls", func(ctx context.Context) error {
		var err error
		f.ops.add("list crawls", 1, 1)
		out, err = f.c.SMembers(ctx, f.crawlsKey()).Result()
		return err
	})
	slices.Sort(out)
	return out, err
}

// WaitReady implements frontier.API: it sleeps until the earliest ready
// time in the crawls' indexes, at most d and at most 200 ms (other
// processes' Puts are not signalled, so it looks again soon). With
// Options.ReadyCache it takes the earliest time from the last Get's read
// of its crawl's index while that is fresh; when it is old it reads that
// crawl's index as a Get would (claiming what is ready, for the Get that
// follows), rather than reading every crawl's index for the time only.
func (f *Frontier) WaitReady(ctx context.Context, d time.Duration) {
	d = min(d, 200*time.Millisecond)
	next, found, fresh := f.cachedNextReady()
	if !fresh {
		if crawl, ok := f.cachedCrawl(); ok && f.claimRead(ctx, crawl, 1, allShards(f.shards)) == nil {
			next, found, fresh = f.cachedNextReady()
		}
	}
	if !fresh {
		next, found = f.nextReady(ctx)
	}
	if found {
		if w := time.Until(next); w < d {
			d = max(w, time.Millisecond)
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// nextReady returns the earliest ready time of any crawl's queues.
func (f *Frontier) nextReady(ctx context.Context) (time.Time, bool) {
	crawls, err := f.listCrawls(ctx)
	if err != nil || len(crawls) == 0 {
		return time.Time{}, false
	}
	var calls []*call
	for _, crawl := range crawls {
		for s := range f.shards {
			calls = append(calls, &call{s: peekScript, keys: f.indexKeys(crawl, s)[:1], args: []any{f.nowArg(), 0}})
		}
	}
	if err := f.run(ctx, "next ready", calls); err != nil {
		return time.Time{}, false
	}
	best, found := int64(0), false
	var serverNow int64
	for _, c := range calls {
		if len(c.res) < 2 {
			continue
		}
		first, _ := strconv.ParseFloat(fmt.Sprint(c.res[len(c.res)-2]), 64)
		serverNow, _ = asInt(c.res[len(c.res)-1])
		if first >= 0 && (!found || int64(first) < best) {
			best, found = int64(first), true
		}
	}
	if !found {
		return time.Time{}, false
	}
	// Ready times are on the scripts' clock: express the wait on ours.
	return time.Now().Add(time.Duration(best-serverNow) * time.Millisecond), true
}
