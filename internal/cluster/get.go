// Get: the ready-queue index read and the lease scripts.

package cluster

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
)

// Get implements frontier.API. It reads the ready queues of every index
// shard of the crawl (one pipelined script per shard), takes those ready
// longest ago, and leases their due URLs (one pipelined script per
// queue). Queues are taken in ascending ready time across the shards; a
// queue another process served in between yields nothing.
func (f *Frontier) Get(ctx context.Context, p frontier.GetParams) ([]frontier.Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !f.active(ctx) {
		return nil, nil
	}
	leaseDur := p.Lease
	if leaseDur <= 0 {
		leaseDur = f.o.DefaultLease
	}
	budget := f.o.MaxURLsPerGet
	if p.Key != "" {
		crawl := normCrawl(p.CrawlID)
		return f.lease(ctx, []candidate{{crawl: crawl, key: p.Key}}, p, leaseDur, budget)
	}
	var crawls []string
	if p.AnyCrawl {
		var err error
		if crawls, err = f.listCrawls(ctx); err != nil {
			return nil, err
		}
	} else {
		crawls = []string{normCrawl(p.CrawlID)}
	}
	want := budget
	if p.MaxQueues > 0 {
		want = min(want, p.MaxQueues)
	}
	// Other processes take from the same heads: peek further than
	// wanted, and when a queue taken meanwhile yields nothing, go on with
	// the next ones (a few rounds at most).
	perShard := min(4*want, 256)
	var calls []*call
	for _, crawl := range crawls {
		for s := range f.shards {
			calls = append(calls, &call{s: peekScript, keys: f.indexKeys(crawl, s)[:1], args: []any{f.nowArg(), perShard}, res: nil})
		}
	}
	// Queues parked at a lower in-flight bound than this caller's are
	// candidates too (after the ready ones): a crawler always asks for
	// one URL per queue, so it never peeks them.
	var parked []*call
	if p.MaxURLsPerQueue != 1 {
		bound := "+inf"
		if p.MaxURLsPerQueue > 1 {
			bound = strconv.Itoa(p.MaxURLsPerQueue - 1)
		}
		for _, crawl := range crawls {
			for s := range f.shards {
				parked = append(parked, &call{s: parkedScript, keys: f.indexKeys(crawl, s)[3:4], args: []any{bound, perShard}})
			}
		}
	}
	if err := f.run(ctx, "peek", append(calls, parked...)); err != nil {
		return nil, err
	}
	var cands []candidate
	seen := map[[2]string]bool{}
	for i, cl := range calls {
		crawl := crawls[i/f.shards]
		res := cl.res
		if len(res) < 2 {
			continue
		}
		for j := 0; j+1 < len(res)-2; j += 2 {
			k, _ := res[j].(string)
			r, _ := strconv.ParseFloat(fmt.Sprint(res[j+1]), 64)
			cands = append(cands, candidate{crawl: crawl, key: k, ready: r})
			seen[[2]string{crawl, k}] = true
		}
	}
	slices.SortStableFunc(cands, func(a, b candidate) int { return cmp.Compare(a.ready, b.ready) })
	for i, cl := range parked {
		crawl := crawls[i/f.shards]
		for _, v := range cl.res {
			k, _ := v.(string)
			if k != "" && !seen[[2]string{crawl, k}] {
				seen[[2]string{crawl, k}] = true
				cands = append(cands, candidate{crawl: crawl, key: k, ready: math.Inf(1)})
			}
		}
	}
	var out []frontier.Lease
	queues := 0
	for round := 0; round < 4 && len(cands) > 0 && queues < want && budget > 0; round++ {
		n := min(want-queues, len(cands))
		ls, err := f.lease(ctx, cands[:n], p, leaseDur, budget)
		if err != nil {
			return nil, err
		}
		cands = cands[n:]
		out = append(out, ls...)
		budget -= len(ls)
		seen := map[[2]string]bool{}
		for _, l := range ls {
			seen[[2]string{l.CrawlID, l.Key}] = true
		}
		queues += len(seen)
	}
	return out, nil
}

type candidate struct {
	crawl, key string
	ready      float64
}

// lease runs the lease script on each candidate queue.
func (f *Frontier) lease(ctx context.Context, cands []candidate, p frontier.GetParams, leaseDur time.Duration, budget int) ([]frontier.Lease, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	per := budget
	if p.MaxURLsPerQueue > 0 {
		per = min(per, p.MaxURLsPerQueue)
	} else {
		per = max(1, budget/len(cands))
	}
	calls := make([]*call, len(cands))
	for i, c := range cands {
		dd, err := f.defaultDelay(ctx, c.crawl)
		if err != nil {
			return nil, err
		}
		calls[i] = &call{s: leaseScript, keys: f.queueKeys(c.crawl, c.key),
			args: []any{f.nowArg(), dd, per, max(p.MaxURLsPerQueue, 0), leaseDur.Milliseconds(), strconv.FormatUint(rand.Uint64(), 36)}}
	}
	if err := f.run(ctx, "lease", calls); err != nil {
		return nil, err
	}
	var out []frontier.Lease
	index := make([]*call, 0, len(cands))
	for i, c := range cands {
		if len(calls[i].res) == 1 {
			continue // unknown queue
		}
		st, err := parseState(calls[i].res)
		if err != nil {
			return nil, err
		}
		index = append(index, f.indexCall(c.crawl, c.key, st))
		if len(st.rest) == 0 {
			f.emptyLeases.Add(1)
		}
		expires := time.UnixMilli(st.now + leaseDur.Milliseconds())
		for j := 0; j+2 < len(st.rest); j += 3 {
			tok, _ := st.rest[j].(string)
			mem, _ := st.rest[j+1].(string)
			data, _ := st.rest[j+2].(string)
			if len(mem) != 8+hashLen {
				return nil, fmt.Errorf("cluster: get: queue member of %d bytes", len(mem))
			}
			url, md, err := decodeData([]byte(data))
			if err != nil {
				return nil, fmt.Errorf("cluster: get %s: %w", c.key, err)
			}
			h := mem[8:]
			f.mu.Lock()
			if len(f.mu.leases) >= maxHeldLeases {
				f.pruneLeasesLocked()
			}
			f.mu.leases[leaseKey(c.crawl, c.key, h)] = heldLease{token: tok, expires: expires}
			f.mu.Unlock()
			out = append(out, frontier.Lease{
				URLInfo: frontier.URLInfo{URL: url, Key: c.key, CrawlID: c.crawl, Metadata: md,
					Priority: int8(127 - int(mem[0])), Depth: int(mem[1])<<8 | int(mem[2])},
				Expires: expires,
			})
		}
	}
	if err := f.run(ctx, "lease index", index); err != nil {
		return nil, err
	}
	return out, nil
}

// pruneLeasesLocked drops the tokens of expired leases, and if that is
// not enough, all of them (their acks then go without a token).
func (f *Frontier) pruneLeasesLocked() {
	now := f.localNow()
	for k, l := range f.mu.leases {
		if now.After(l.expires) {
			delete(f.mu.leases, k)
		}
	}
	if len(f.mu.leases) >= maxHeldLeases {
		clear(f.mu.leases)
	}
}

// Release implements frontier.API: it ends this process's lease on a URL
// so that it may be served again at once.
func (f *Frontier) Release(info frontier.URLInfo) {
	ctx, cancel := context.WithTimeout(context.Background(), f.o.RetryFor)
	defer cancel()
	_ = f.ReleaseContext(ctx, info)
}

// ReleaseContext is Release with a context and an error.
func (f *Frontier) ReleaseContext(ctx context.Context, info frontier.URLInfo) error {
	crawl := normCrawl(info.CrawlID)
	key := info.Key
	if key == "" {
		key = frontier.DefaultKey(info.URL)
	}
	if key == "" {
		return nil
	}
	h := hashURL(info.URL)
	f.mu.Lock()
	l, ok := f.mu.leases[leaseKey(crawl, key, h)]
	delete(f.mu.leases, leaseKey(crawl, key, h))
	f.mu.Unlock()
	if !ok {
		return nil // not ours: leave it to its holder
	}
	dd, err := f.defaultDelay(ctx, crawl)
	if err != nil {
		return err
	}
	c := &call{s: releaseScript, keys: f.queueKeys(crawl, key), args: []any{f.nowArg(), dd, h, l.token}}
	if err := f.run(ctx, "release", []*call{c}); err != nil {
		return err
	}
	st, err := parseState(c.res)
	if err != nil {
		return err
	}
	return f.run(ctx, "release index", []*call{f.indexCall(crawl, key, st)})
}
