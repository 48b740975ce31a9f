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
// queue another process served in between yields nothing, and the next
// ones are tried (a few rounds at most).
//
// With Options.ReadyCache the ready queues read and not taken are kept
// for that long, and the crawl's next Gets lease from them, in ascending
// ready time, before they read the index again: a crawl node asks for
// one or two queues at a time, as its workers free up, and would read
// every shard each time. Such a read claims what it returns for as long
// (claimScript): the other processes' cached reads skip those queues
// meanwhile, so that they do not all lease the same ones (all but one
// would lease nothing). It takes the earliest few of every shard (about
// four times what is wanted in all, at least 2 a shard): a shard's later
// queues wait for the next read, so queues go in roughly ascending ready
// time and no shard waits. When none is left, a Get reads (once at most)
// only the shards where the last reads saw a queue coming ready by now,
// or where this process's own writes made one ready (noteReady): none
// while nothing is due, and every shard again once the cache is
// ReadyCache old, which is when the other processes' writes are seen. A
// kept queue may still have been served, blocked or emptied since (by a
// process without the cache, or by an operator): its lease script, which
// checks everything again, then leases nothing, so a queue is never
// served early or twice, only tried in vain.
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
	src := &candidates{f: f, crawls: crawls, want: want, bound: p.MaxURLsPerQueue, cached: f.o.ReadyCache > 0 && !p.AnyCrawl}
	var out []frontier.Lease
	queues := 0
	for round := 0; round < 4 && queues < want && budget > 0; round++ {
		cands, err := src.take(ctx, want-queues)
		if err != nil {
			return nil, err
		}
		if len(cands) == 0 {
			break
		}
		ls, err := f.lease(ctx, cands, p, leaseDur, budget)
		if err != nil {
			return nil, err
		}
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
	claimed    bool // by this process's read (claimScript)
}

// candidates are the queues one Get may try: ready ones (ascending ready
// time) and, for a caller whose in-flight bound is not 1, parked ones.
type candidates struct {
	f      *Frontier
	crawls []string
	want   int
	bound  int
	// cached: the ready queues come from and go back to the Frontier's
	// cache (Options.ReadyCache; one crawl).
	cached bool
	// readyRead and parkedRead: this Get read the index's ready queues,
	// its parked ones.
	readyRead, parkedRead bool
	// ready (without the cache) and parked hold what the reads gave and
	// was not taken yet.
	ready, parked []candidate
}

// take returns up to n candidates not yet tried by this Get: ready ones
// first, then parked ones.
func (s *candidates) take(ctx context.Context, n int) ([]candidate, error) {
	f := s.f
	var out []candidate
	if s.cached {
		var shards []int
		out, shards = f.takeCached(s.crawls[0], n)
		if len(out) == 0 && len(shards) > 0 && !s.readyRead {
			s.readyRead = true
			if err := f.claimRead(ctx, s.crawls[0], s.want, shards); err != nil {
				return nil, err
			}
			out, _ = f.takeCached(s.crawls[0], n)
		}
	}
	readReady := !s.cached && !s.readyRead
	readParked := s.bound != 1 && !s.parkedRead
	if readReady || readParked {
		if err := s.read(ctx, readReady, readParked); err != nil {
			return nil, err
		}
	}
	if !s.cached {
		k := min(n, len(s.ready))
		out, s.ready = s.ready[:k:k], s.ready[k:]
	}
	if k := min(n-len(out), len(s.parked)); k > 0 {
		out, s.parked = append(out, s.parked[:k]...), s.parked[k:]
	}
	return out, nil
}

// read reads the index of the Get's crawls without the cache: the ready
// queues of every shard, the parked ones, or both, in one pipeline.
func (s *candidates) read(ctx context.Context, ready, parked bool) error {
	f := s.f
	// Other processes take from the same heads: peek further than
	// wanted, and when a queue taken meanwhile yields nothing, go on with
	// the next ones.
	perShard := min(4*s.want, 256)
	var peeks, parks []*call
	if ready {
		for _, crawl := range s.crawls {
			for sh := range f.shards {
				peeks = append(peeks, &call{s: peekScript, keys: f.indexKeys(crawl, sh)[:1], args: []any{f.nowArg(), perShard}})
			}
		}
	}
	// Queues parked at a lower in-flight bound than this caller's are
	// candidates too (after the ready ones): a crawler always asks for
	// one URL per queue, so it never reads them.
	if parked {
		bound := "+inf"
		if s.bound > 1 {
			bound = strconv.Itoa(s.bound - 1)
		}
		for _, crawl := range s.crawls {
			for sh := range f.shards {
				parks = append(parks, &call{s: parkedScript, keys: f.indexKeys(crawl, sh)[3:4], args: []any{bound, perShard}})
			}
		}
	}
	if err := f.run(ctx, "peek", append(peeks, parks...)); err != nil {
		return err
	}
	seen := map[[2]string]bool{}
	if ready {
		s.readyRead = true
		for i, cl := range peeks {
			crawl := s.crawls[i/f.shards]
			for _, c := range readyOf(crawl, cl.res, false) {
				s.ready = append(s.ready, c)
				seen[[2]string{crawl, c.key}] = true
			}
		}
		slices.SortStableFunc(s.ready, func(a, b candidate) int { return cmp.Compare(a.ready, b.ready) })
	}
	if parked {
		s.parkedRead = true
		for i, cl := range parks {
			crawl := s.crawls[i/f.shards]
			for _, v := range cl.res {
				k, _ := v.(string)
				if k != "" && !seen[[2]string{crawl, k}] {
					seen[[2]string{crawl, k}] = true
					s.parked = append(s.parked, candidate{crawl: crawl, key: k, ready: math.Inf(1)})
				}
			}
		}
	}
	return nil
}

// readyOf parses the queues of a peek or claim script's reply (key,
// ready time pairs, then two numbers).
func readyOf(crawl string, res []any, claimed bool) []candidate {
	var out []candidate
	for j := 0; j+1 < len(res)-2; j += 2 {
		k, _ := res[j].(string)
		r, _ := strconv.ParseFloat(fmt.Sprint(res[j+1]), 64)
		out = append(out, candidate{crawl: crawl, key: k, ready: r, claimed: claimed})
	}
	return out
}

// readyCache is what Get keeps of a crawl's reads of the ready queues
// (Options.ReadyCache).
type readyCache struct {
	at time.Time // of the last read of every shard (the Frontier's clock)
	// list holds the queues read (and claimed) and not taken since, in
	// ascending ready time.
	list []candidate
	// next holds, by shard, when the shard may next have a queue for
	// this process (the Frontier's clock; see claimScript), lowered by
	// noteReady; zero for none.
	next []time.Time
}

// takeCached takes up to n queues from crawl's ready cache while it is
// fresh, in ascending ready time. When it gives none, shards are the
// index shards to read: all when the cache is old (or there is none),
// else those where a queue may be ready by now (none: reading would find
// nothing new but what other processes wrote since the cache's read).
func (f *Frontier) takeCached(crawl string, n int) (out []candidate, shards []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.mu.ready[crawl]
	now := f.localNow()
	if c == nil || now.Sub(c.at) >= f.o.ReadyCache {
		return nil, allShards(f.shards)
	}
	if k := min(n, len(c.list)); k > 0 {
		out = slices.Clone(c.list[:k])
		c.list = c.list[k:]
		return out, nil
	}
	for i, t := range c.next {
		if !t.IsZero() && !t.After(now) {
			shards = append(shards, i)
		}
	}
	return nil, shards
}

func allShards(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// cachedCrawl returns the crawl of the most recent ready cache.
func (f *Frontier) cachedCrawl() (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var last *readyCache
	crawl := ""
	for k, c := range f.mu.ready {
		if last == nil || c.at.After(last.at) {
			last, crawl = c, k
		}
	}
	return crawl, last != nil
}

// claimRead reads and claims the ready queues of crawl's given index
// shards (claimScript) into its ready cache: a read of every shard starts
// a new cache, a read of some adds to the fresh one.
func (f *Frontier) claimRead(ctx context.Context, crawl string, want int, shards []int) error {
	k := min(max(2, (4*want+f.shards-1)/f.shards), 256)
	calls := make([]*call, len(shards))
	for i, sh := range shards {
		ks := f.indexKeys(crawl, sh)
		calls[i] = &call{s: claimScript, keys: []string{ks[0], ks[4]}, args: []any{f.nowArg(), k, f.o.ReadyCache.Milliseconds()}}
	}
	start := f.localNow()
	if err := f.run(ctx, "peek", calls); err != nil {
		return err
	}
	var cands []candidate
	next := make([]time.Time, len(shards))
	for i, cl := range calls {
		cands = append(cands, readyOf(crawl, cl.res, true)...)
		if len(cl.res) < 2 {
			continue
		}
		nx, _ := strconv.ParseFloat(fmt.Sprint(cl.res[len(cl.res)-2]), 64)
		sn, _ := asInt(cl.res[len(cl.res)-1])
		if nx >= 0 {
			// The scripts' clock, expressed on ours.
			next[i] = start.Add(time.Duration(int64(nx)-sn) * time.Millisecond)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.mu.ready[crawl]
	if len(shards) == f.shards || c == nil {
		c = &readyCache{at: start, next: make([]time.Time, f.shards)}
		f.mu.ready[crawl] = c
	}
	for i, sh := range shards {
		c.next[sh] = next[i]
	}
	c.list = append(c.list, cands...)
	slices.SortStableFunc(c.list, func(a, b candidate) int { return cmp.Compare(a.ready, b.ready) })
	return nil
}

// noteReady tells crawl's ready cache that a write of this process made
// key's queue ready at ready (ms of the scripts' clock, whose time was
// now; -1: not servable), so that the cache does not hide it (see
// takeCached).
func (f *Frontier) noteReady(crawl, key string, ready, now int64) {
	if f.o.ReadyCache <= 0 || ready < 0 {
		return
	}
	sh := f.shardOf(key)
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.mu.ready[crawl]; c != nil {
		t := f.localNow().Add(time.Duration(ready-now) * time.Millisecond)
		if c.next[sh].IsZero() || t.Before(c.next[sh]) {
			c.next[sh] = t
		}
	}
}

// cachedNextReady returns, from the most recent fresh ready cache, when a
// queue of its crawl is ready next for this process (now when some kept
// queue is), and whether there is such a cache; found is false when the
// reads saw none coming.
func (f *Frontier) cachedNextReady() (next time.Time, found, fresh bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var last *readyCache
	for _, c := range f.mu.ready {
		if last == nil || c.at.After(last.at) {
			last = c
		}
	}
	now := f.localNow()
	if last == nil || now.Sub(last.at) >= f.o.ReadyCache {
		return time.Time{}, false, false
	}
	if len(last.list) > 0 {
		return time.Now(), true, true
	}
	for _, t := range last.next {
		if !t.IsZero() && (!found || t.Before(next)) {
			next, found = t, true
		}
	}
	if !found {
		return time.Time{}, false, true
	}
	// The Frontier's clock, expressed on the wall clock WaitReady sleeps
	// by (they differ under a test's clock).
	return time.Now().Add(next.Sub(now)), true, true
}

// lease runs the lease script on each candidate queue, then the index
// updates of those it changed.
//
// A lease that leased nothing and changed nothing (the queue was taken,
// blocked or emptied by another process, whose own index update is on
// its way) sends no index update. Should that other update have been
// lost (its process died, or a master failover lost it), the index keeps
// offering the queue: so this process remembers the queues it left so,
// and the next time it tries one of them its lease script returns the
// state whatever happens, and the index is rewritten from it.
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
		refresh := "0"
		if f.unindexed(c.crawl, c.key) {
			refresh = "1"
		}
		calls[i] = &call{s: leaseScript, keys: f.queueKeys(c.crawl, c.key),
			args: []any{f.nowArg(), dd, per, max(p.MaxURLsPerQueue, 0), leaseDur.Milliseconds(), strconv.FormatUint(rand.Uint64(), 36), refresh}}
	}
	if err := f.run(ctx, "lease", calls); err != nil {
		return nil, err
	}
	var out []frontier.Lease
	index := make([]*call, 0, len(cands))
	for i, c := range cands {
		if len(calls[i].res) == 1 {
			if v, _ := asInt(calls[i].res[0]); v == -2 {
				f.emptyLeases.Add(1)
				f.leftUnindexed(c.crawl, c.key)
			}
			continue // unknown queue, or nothing changed
		}
		st, err := parseState(calls[i].res)
		if err != nil {
			return nil, err
		}
		ic := f.indexCall(c.crawl, c.key, st)
		if c.claimed {
			ic.keys = f.indexKeys(c.crawl, f.shardOf(c.key)) // and drop the claim
		}
		index = append(index, ic)
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

// maxUnindexed bounds the queues remembered by leftUnindexed; beyond it
// they are forgotten (their stale index entries, if any, wait for the
// next change of the queue or for Repair).
const maxUnindexed = 1 << 14

// leftUnindexed remembers that a lease of the queue changed nothing and
// sent no index update.
func (f *Frontier) leftUnindexed(crawl, key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.mu.unindexed) >= maxUnindexed {
		clear(f.mu.unindexed)
	}
	f.mu.unindexed[crawl+"\x00"+key] = struct{}{}
}

// unindexed reports whether a lease of the queue left it so since, and
// forgets it: this lease then returns the state, for an index update.
func (f *Frontier) unindexed(crawl, key string) bool {
	k := crawl + "\x00" + key
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.mu.unindexed[k]; !ok {
		return false
	}
	delete(f.mu.unindexed, k)
	return true
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
