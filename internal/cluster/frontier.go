package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
)

// ErrStaleLease is returned by Ack when the URL is leased to someone else
// now: this caller's lease expired and the URL was served again. The ack
// changed nothing (fencing): the new holder's ack counts.
var ErrStaleLease = errors.New("cluster: lease expired and the URL was leased again")

// Options tunes New. The zero value is ready to use.
type Options struct {
	// Prefix starts every Redis key; it must not hold '{' or '}'.
	// Default "courtesy:frontier:".
	Prefix string
	// IndexShards is the number of sorted sets (each in its own slot)
	// that index a crawl's ready queues. It is fixed for a deployment:
	// the first process stores it in Redis and every later one uses the
	// stored value. 0 means 16.
	IndexShards int
	// DefaultLease is the lease of Get when GetParams.Lease is 0; 0 means
	// 30 s.
	DefaultLease time.Duration
	// MaxURLLength bounds the bytes of a URL; longer ones are Skipped. 0
	// means 8192.
	MaxURLLength int
	// MaxMetadataBytes bounds a URL's metadata; 0 means 64 KiB.
	MaxMetadataBytes int
	// MaxURLsPerGet bounds what one Get returns; 0 means 10,000.
	MaxURLsPerGet int
	// RetryFor is how long a call retries through failovers and network
	// errors before it fails; 0 means 30 s.
	RetryFor time.Duration
	// WaitReplicas, when > 0, makes Put and Ack wait (Redis WAIT) until
	// that many replicas of the queue's master have the write, so that
	// an acknowledged write survives the master's death; 0 does not wait
	// (asynchronous replication: a failover may lose the last writes).
	WaitReplicas int
	// WaitTimeout bounds that wait; 0 means 1 s. A write not replicated
	// in time is retried as a failure, unless its master has fewer
	// replicas connected than WaitReplicas (after a failover the new
	// master has none until the old one comes back): then it is taken
	// and counted in Counters.WaitShort.
	WaitTimeout time.Duration
	// Now is the clock for leases, due times and blocks. nil means Redis
	// server time (the TIME command inside each script), so that the
	// machines' clocks need not agree; tests inject a fake clock.
	Now func() time.Time
}

// Validate reports whether o is usable.
func (o Options) Validate() error {
	if strings.ContainsAny(o.Prefix, "{}") {
		return fmt.Errorf("cluster: prefix %q holds a brace (it would become the hash tag)", o.Prefix)
	}
	if o.IndexShards < 0 || o.IndexShards > 16384 {
		return fmt.Errorf("cluster: %d index shards (want 1..16384)", o.IndexShards)
	}
	return nil
}

func (o *Options) fill() {
	if o.Prefix == "" {
		o.Prefix = "courtesy:frontier:"
	}
	if o.IndexShards == 0 {
		o.IndexShards = 16
	}
	if o.DefaultLease <= 0 {
		o.DefaultLease = 30 * time.Second
	}
	if o.MaxURLLength <= 0 {
		o.MaxURLLength = 8192
	}
	if o.MaxMetadataBytes <= 0 {
		o.MaxMetadataBytes = 64 << 10
	}
	if o.MaxURLsPerGet <= 0 {
		o.MaxURLsPerGet = 10000
	}
	if o.RetryFor <= 0 {
		o.RetryFor = 30 * time.Second
	}
	if o.WaitTimeout <= 0 {
		o.WaitTimeout = time.Second
	}
}

// Frontier is the URL frontier of a crawl shared by many processes
// through Redis (Cluster). It implements frontier.API. It is safe for
// concurrent use.
type Frontier struct {
	c      redis.UniversalClient
	o      Options
	shards int

	retries   atomic.Uint64
	staleAcks atomic.Uint64
	waitShort atomic.Uint64
	lastErr   atomic.Pointer[string]

	mu struct {
		sync.Mutex
		// leases holds the fencing tokens of the leases this process
		// was handed, by leaseKey, until acked, released or expired.
		leases map[string]heldLease
		// delays caches crawls' default delays (SetDelay with no key).
		delays map[string]cachedDelay
		// registered lists the crawls this process has added to the
		// crawl set.
		registered map[string]bool
		// replicas caches the replicas connected to masters that
		// answered a WAIT short, by address (Options.WaitReplicas).
		replicas map[string]replicaCount
	}
}

type heldLease struct {
	token   string
	expires time.Time
}

type cachedDelay struct {
	ms      int64
	fetched time.Time
}

// maxHeldLeases bounds the tokens kept; beyond it the oldest are acked
// without a token (as a URLFrontier client would).
const maxHeldLeases = 1 << 20

// New returns a Frontier on c (a *redis.ClusterClient, or a *redis.Client
// for a single server). The caller owns c.
func New(ctx context.Context, c redis.UniversalClient, o Options) (*Frontier, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o.fill()
	f := &Frontier{c: c, o: o}
	f.mu.leases = map[string]heldLease{}
	f.mu.delays = map[string]cachedDelay{}
	f.mu.registered = map[string]bool{}
	f.mu.replicas = map[string]replicaCount{}
	var shards int
	err := f.retry(ctx, "config", func(ctx context.Context) error {
		k := o.Prefix + "{crawls}:config"
		if err := c.HSetNX(ctx, k, "shards", o.IndexShards).Err(); err != nil {
			return err
		}
		v, err := c.HGet(ctx, k, "shards").Int()
		shards = v
		return err
	})
	if err != nil {
		return nil, err
	}
	if shards <= 0 || shards > 16384 {
		return nil, fmt.Errorf("cluster: stored index shards %d out of range", shards)
	}
	f.shards = shards
	return f, nil
}

// Close implements frontier.API; the Redis client stays open (its owner
// closes it).
func (f *Frontier) Close() error { return nil }

func normCrawl(id string) string {
	id = strings.TrimSpace(id)
	if id == "" {
		return frontier.DefaultCrawl
	}
	return id
}

// queueKeys are the six keys of a queue, under one hash tag.
func (f *Frontier) queueKeys(crawl, key string) []string {
	base := f.o.Prefix + "{q\x1f" + tagEscape(crawl) + "\x1f" + tagEscape(key) + "}:"
	return []string{base + "m", base + "z", base + "u", base + "l", base + "t", base + "d"}
}

func (f *Frontier) shardOf(key string) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(f.shards))
}

// indexKeys are the keys of one shard of a crawl's index.
func (f *Frontier) indexKeys(crawl string, shard int) []string {
	base := f.o.Prefix + "{i\x1f" + tagEscape(crawl) + "\x1f" + strconv.Itoa(shard) + "}:"
	return []string{base + "r", base + "q", base + "s"}
}

func (f *Frontier) crawlsKey() string { return f.o.Prefix + "{crawls}" }
func (f *Frontier) delaysKey() string { return f.o.Prefix + "{crawls}:delay" }

func leaseKey(crawl, key, h string) string { return crawl + "\x00" + key + "\x00" + h }

// nowArg is the clock argument of the scripts: the injected time in ms,
// or -1 for Redis server time.
func (f *Frontier) nowArg() int64 {
	if f.o.Now == nil {
		return -1
	}
	return f.o.Now().UnixMilli()
}

func (f *Frontier) localNow() time.Time {
	if f.o.Now == nil {
		return time.Now()
	}
	return f.o.Now()
}

// msCeil is t in unix ms, rounded up so that nothing is served early.
func msCeil(t time.Time) int64 {
	ns := t.UnixNano()
	return (ns + 999_999) / 1_000_000
}

// queueState is what every queue script returns first.
type queueState struct {
	ver, ready, queued, inflight, completed int64
	retired                                 bool
	now                                     int64
	rest                                    []any
}

func parseState(res []any) (queueState, error) {
	var s queueState
	if len(res) < 7 {
		return s, fmt.Errorf("cluster: script returned %d values", len(res))
	}
	var n [7]int64
	for i := range n {
		v, ok := asInt(res[i])
		if !ok {
			return s, fmt.Errorf("cluster: script value %d is %T", i, res[i])
		}
		n[i] = v
	}
	s = queueState{ver: n[0], ready: n[1], queued: n[2], inflight: n[3], completed: n[4], retired: n[5] == 1, now: n[6], rest: res[7:]}
	return s, nil
}

// indexCall is the index update for a queue's new state.
func (f *Frontier) indexCall(crawl, key string, s queueState) *call {
	r := 0
	if s.retired {
		r = 1
	}
	return &call{s: indexScript, keys: f.indexKeys(crawl, f.shardOf(key)),
		args: []any{key, s.ver, s.ready, s.queued, s.inflight, s.completed, r, "0"}}
}

// defaultDelay returns a crawl's default delay in ms, cached for a second.
func (f *Frontier) defaultDelay(ctx context.Context, crawl string) (int64, error) {
	f.mu.Lock()
	d, ok := f.mu.delays[crawl]
	f.mu.Unlock()
	if ok && time.Since(d.fetched) < time.Second {
		return d.ms, nil
	}
	var ms int64
	err := f.retry(ctx, "default delay", func(ctx context.Context) error {
		v, err := f.c.HGet(ctx, f.delaysKey(), crawl).Int64()
		if errors.Is(err, redis.Nil) {
			ms = 0
			return nil
		}
		ms = v
		return err
	})
	if err != nil {
		return 0, err
	}
	f.mu.Lock()
	f.mu.delays[crawl] = cachedDelay{ms: ms, fetched: time.Now()}
	f.mu.Unlock()
	return ms, nil
}

func (f *Frontier) register(ctx context.Context, crawl string) error {
	f.mu.Lock()
	done := f.mu.registered[crawl]
	f.mu.Unlock()
	if done {
		return nil
	}
	err := f.retry(ctx, "register crawl", func(ctx context.Context) error {
		return f.c.SAdd(ctx, f.crawlsKey(), crawl).Err()
	})
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.mu.registered[crawl] = true
	f.mu.Unlock()
	return nil
}

// putItemsPerCall bounds the items of one put script, so that one script
// does not hold its master for long.
const putItemsPerCall = 256

// Put implements frontier.API: discovered items are stored if unknown in
// their queue, known items overwrite (ending any lease). Items without a
// host, with a key over frontier.MaxKeyLength or over the size limits are
// Skipped; so is an acknowledgement fenced off by a newer lease (see Ack).
func (f *Frontier) Put(ctx context.Context, items []frontier.Item) ([]frontier.Status, error) {
	statuses, _, err := f.put(ctx, items)
	return statuses, err
}

type putGroup struct {
	crawl, key string
	idx        []int
	hashes     []string
}

func (f *Frontier) put(ctx context.Context, items []frontier.Item) ([]frontier.Status, []bool, error) {
	statuses := make([]frontier.Status, len(items))
	stale := make([]bool, len(items))
	groups := map[[2]string]*putGroup{}
	var order []*putGroup
	for i := range items {
		it := &items[i]
		key := it.Info.Key
		if key == "" {
			key = frontier.DefaultKey(it.Info.URL)
		}
		if key == "" || len(key) > frontier.MaxKeyLength || it.Info.URL == "" || len(it.Info.URL) > f.o.MaxURLLength ||
			metadataSize(it.Info.Metadata) > f.o.MaxMetadataBytes {
			statuses[i] = frontier.Skipped
			continue
		}
		crawl := normCrawl(it.Info.CrawlID)
		gk := [2]string{crawl, key}
		g := groups[gk]
		if g == nil || len(g.idx) >= putItemsPerCall {
			g = &putGroup{crawl: crawl, key: key}
			groups[gk] = g
			order = append(order, g)
		}
		g.idx = append(g.idx, i)
		g.hashes = append(g.hashes, hashURL(it.Info.URL))
	}
	if len(order) == 0 {
		return statuses, stale, nil
	}
	calls := make([]*call, len(order))
	for gi, g := range order {
		if err := f.register(ctx, g.crawl); err != nil {
			return nil, nil, err
		}
		dd, err := f.defaultDelay(ctx, g.crawl)
		if err != nil {
			return nil, nil, err
		}
		args := make([]any, 0, 5+7*len(g.idx))
		args = append(args, f.nowArg(), dd, g.crawl, g.key, len(g.idx))
		f.mu.Lock()
		for j, i := range g.idx {
			it := &items[i]
			kind, due, token := "d", int64(0), ""
			if it.Known {
				kind, due = "k", -1
				if !it.RefetchFrom.IsZero() {
					due = max(msCeil(it.RefetchFrom), 0)
				}
				if l, ok := f.mu.leases[leaseKey(g.crawl, g.key, g.hashes[j])]; ok {
					token = l.token
				}
			}
			depth := min(max(it.Info.Depth, 0), 65535)
			args = append(args, kind, g.hashes[j], int(it.Info.Priority), depth, due, token, encodeData(it.Info.URL, it.Info.Metadata))
		}
		f.mu.Unlock()
		calls[gi] = &call{s: putScript, keys: f.queueKeys(g.crawl, g.key), args: args}
	}
	var err error
	if f.o.WaitReplicas > 0 {
		err = f.runWait(ctx, "put", calls)
	} else {
		err = f.run(ctx, "put", calls)
	}
	if err != nil {
		return nil, nil, err
	}
	index := make([]*call, 0, len(order))
	for gi, g := range order {
		st, err := parseState(calls[gi].res)
		if err != nil {
			return nil, nil, err
		}
		if len(st.rest) != len(g.idx) {
			return nil, nil, fmt.Errorf("cluster: put returned %d statuses for %d items", len(st.rest), len(g.idx))
		}
		f.mu.Lock()
		for j, i := range g.idx {
			code, _ := asInt(st.rest[j])
			switch code {
			case 0:
				statuses[i] = frontier.OK
				if items[i].Known {
					delete(f.mu.leases, leaseKey(g.crawl, g.key, g.hashes[j]))
				}
			case 2:
				statuses[i] = frontier.Skipped
				stale[i] = true
				f.staleAcks.Add(1)
				delete(f.mu.leases, leaseKey(g.crawl, g.key, g.hashes[j]))
			default:
				statuses[i] = frontier.Skipped
			}
		}
		f.mu.Unlock()
		index = append(index, f.indexCall(g.crawl, g.key, st))
	}
	if err := f.run(ctx, "index", index); err != nil {
		return nil, nil, err
	}
	return statuses, stale, nil
}

// Ack implements frontier.API: refetchFrom zero marks the URL completed,
// otherwise it is queued again for that time. An ack carries the fencing
// token of the lease this process was given: if the lease expired and the
// URL is now leased to another caller, the ack changes nothing and
// returns ErrStaleLease (the other caller's ack will count). A URL this
// process holds no lease for is acknowledged as a URLFrontier known item.
func (f *Frontier) Ack(ctx context.Context, info frontier.URLInfo, refetchFrom time.Time) error {
	st, stale, err := f.put(ctx, []frontier.Item{{Info: info, Known: true, RefetchFrom: refetchFrom}})
	if err != nil {
		return err
	}
	if stale[0] {
		return fmt.Errorf("cluster: ack %s: %w", info.URL, ErrStaleLease)
	}
	if st[0] != frontier.OK {
		return fmt.Errorf("cluster: ack %s: skipped (no host, or over a size limit)", info.URL)
	}
	return nil
}

// Get implements frontier.API. It reads the ready queues of every index
// shard of the crawl (one pipelined script per shard), takes those ready
// longest ago, and leases their due URLs (one pipelined script per
// queue). Queues are taken in ascending ready time across the shards; a
// queue another process served in between yields nothing.
func (f *Frontier) Get(ctx context.Context, p frontier.GetParams) ([]frontier.Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
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
	if err := f.run(ctx, "get", calls); err != nil {
		return nil, err
	}
	var cands []candidate
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
		}
	}
	slices.SortStableFunc(cands, func(a, b candidate) int { return cmp.Compare(a.ready, b.ready) })
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
	if err := f.run(ctx, "get", calls); err != nil {
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
	if err := f.run(ctx, "index", index); err != nil {
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
	return f.run(ctx, "index", []*call{f.indexCall(crawl, key, st)})
}

// admin sets one field of a known queue's record and reindexes it; it
// reports false for an unknown queue.
func (f *Frontier) admin(ctx context.Context, what, crawlID, key, field, value string) (queueState, bool, error) {
	crawl := normCrawl(crawlID)
	dd, err := f.defaultDelay(ctx, crawl)
	if err != nil {
		return queueState{}, false, err
	}
	c := &call{s: adminScript, keys: f.queueKeys(crawl, key), args: []any{f.nowArg(), dd, field, value}}
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
	return st, true, f.run(ctx, "index", []*call{f.indexCall(crawl, key, st)})
}

// BlockQueueUntil implements frontier.API (the zero time unblocks;
// unknown queues are ignored).
func (f *Frontier) BlockQueueUntil(ctx context.Context, crawlID, key string, t time.Time) error {
	v := ""
	if !t.IsZero() {
		v = strconv.FormatInt(msCeil(t), 10)
	}
	_, _, err := f.admin(ctx, "block queue", crawlID, key, "blocked", v)
	return err
}

// SetDelay implements frontier.API. With an empty key it sets the crawl's
// default delay, which every process reads within a second.
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
	_, _, err := f.admin(ctx, "set delay", crawlID, key, "delay", strconv.FormatInt(ms, 10))
	return err
}

// SetCrawlLimit implements frontier.API (0 removes the limit; an unknown
// queue is frontier.ErrNotFound).
func (f *Frontier) SetCrawlLimit(ctx context.Context, crawlID, key string, limit uint64) error {
	v := ""
	if limit > 0 {
		v = strconv.FormatUint(min(limit, math.MaxInt64), 10)
	}
	_, ok, err := f.admin(ctx, "crawl limit", crawlID, key, "limit", v)
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
	_, ok, err := f.admin(ctx, "retire", crawlID, key, "retired", reason)
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
		st, ok, err := f.admin(ctx, "stats", crawlID, key, "", "")
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
	if len(c.res) != 2 {
		return frontier.URLStatus{}, fmt.Errorf("cluster: lookup returned %d values", len(c.res))
	}
	rec, _ := c.res[0].(string)
	leased, _ := asInt(c.res[1])
	if rec == "" {
		return frontier.URLStatus{}, frontier.ErrNotFound
	}
	st := frontier.URLStatus{URL: rawURL, Key: key, Leased: leased == 1}
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
		out, err = f.c.SMembers(ctx, f.crawlsKey()).Result()
		return err
	})
	slices.Sort(out)
	return out, err
}

// WaitReady implements frontier.API: it sleeps until the earliest ready
// time in the crawls' indexes, at most d and at most 200 ms (other
// processes' Puts are not signalled, so it looks again soon).
func (f *Frontier) WaitReady(ctx context.Context, d time.Duration) {
	d = min(d, 200*time.Millisecond)
	if next, ok := f.nextReady(ctx); ok {
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

// Counters are the frontier client's own counts since New.
type Counters struct {
	// Retries counts Redis calls repeated after a failover or network
	// error.
	Retries uint64
	// StaleAcks counts acknowledgements refused by fencing.
	StaleAcks uint64
	// WaitShort counts writes taken with fewer replicas than
	// WaitReplicas, because their master had fewer connected.
	WaitShort uint64
}

// Counters returns the client's counters.
func (f *Frontier) Counters() Counters {
	return Counters{Retries: f.retries.Load(), StaleAcks: f.staleAcks.Load(), WaitShort: f.waitShort.Load()}
}

// LastError returns the last Redis error seen (retried or not), or "".
func (f *Frontier) LastError() string {
	if p := f.lastErr.Load(); p != nil {
		return *p
	}
	return ""
}

var _ frontier.API = (*Frontier)(nil)
