package cluster

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
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
	// KeepCompletedURLs keeps the URL and metadata of completed URLs, so
	// that ListURLs lists them, CountURLs counts them with a filter and
	// PurgeURLs filters them, as in the embedded frontier (URLFrontier
	// clients expect it). It costs the URL's length and its metadata per
	// completed URL, on top of the 33-85 bytes of its hash; false keeps
	// the hash only. It acts where a URL is acknowledged: give every
	// process of a deployment the same.
	KeepCompletedURLs bool
	// DefaultDelay is the minimum time between two servings of a queue
	// without its own delay, in a crawl without a default delay of its
	// own (SetDelay with no key, which every process shares). It is this
	// process's: give every process the same. 0 means none.
	DefaultDelay time.Duration
	// KnownCache, when > 0, remembers in this process up to that many
	// URLs it has seen stored (discovered, found already known, or
	// acknowledged), and Put answers Skipped for such a discovered URL
	// without asking Redis: on a crawl most links found are URLs the
	// crawl already holds (a site's navigation repeats on every page),
	// and each costs two scripts otherwise. The answer is the one Redis
	// would give, except after another process deleted or purged the URL
	// (DeleteQueue, DeleteCrawl, PurgeURLs on this process forget the
	// whole cache) or a master failover lost its write: this process then
	// does not add it again until the cache forgets it. About 40 bytes a
	// URL; at most MaxKnownCache. 0 means none: every Put asks Redis.
	KnownCache int
	// ReadyCache, when > 0, is how long Get keeps the ready queues it
	// read from a crawl's index and did not take, to lease from them
	// before it reads the index again; the read claims them for as long,
	// so that other processes with the option skip them (see Get).
	// WaitReady then waits on that read too. A crawl node asks for one
	// or two queues at a time: without it each Get reads every index
	// shard. A queue another process made ready after a read waits for
	// the next full read (ReadyCache at most), and so may a queue behind
	// the few a read takes from its shard, or claimed by another
	// process. Give every process of a crawl that Gets often the same. 0
	// means none: every Get reads the index, and claims nothing.
	ReadyCache time.Duration
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
	if o.ReadyCache < 0 {
		return fmt.Errorf("cluster: negative ready cache %v", o.ReadyCache)
	}
	if o.KnownCache < 0 || o.KnownCache > MaxKnownCache {
		return fmt.Errorf("cluster: known-URL cache of %d (want 0..%d)", o.KnownCache, MaxKnownCache)
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

	known *knownCache // nil without Options.KnownCache

	ops         ops
	retries     atomic.Uint64
	staleAcks   atomic.Uint64
	emptyLeases atomic.Uint64
	waitShort   atomic.Uint64
	lastErr     atomic.Pointer[string]

	// repairRead, when set (tests only), runs in Repair's forced pass
	// between reading the queues' state and writing the index.
	repairRead func()

	mu struct {
		sync.Mutex
		// leases holds the fencing tokens of the leases this process
		// was handed, by leaseKey, until acked, released or expired.
		leases map[string]heldLease
		// delays caches crawls' default delays (SetDelay with no key).
		delays map[string]cachedDelay
		// registered holds when this process last added a crawl to the
		// crawl set (again every registerEvery: DeleteCrawl on another
		// process removes it).
		registered map[string]time.Time
		// paused caches the shared SetActive flag.
		paused cachedFlag
		// replicas caches the replicas connected to masters that
		// answered a WAIT short, by address (Options.WaitReplicas).
		replicas map[string]replicaCount
		// ready is Get's cache of ready queues by crawl
		// (Options.ReadyCache).
		ready map[string]*readyCache
		// unindexed holds the queues (crawl NUL key) whose last lease
		// here changed nothing and sent no index update (see lease).
		unindexed map[string]struct{}
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
	if o.KnownCache > 0 {
		f.known = newKnownCache(o.KnownCache)
	}
	f.mu.leases = map[string]heldLease{}
	f.mu.delays = map[string]cachedDelay{}
	f.mu.registered = map[string]time.Time{}
	f.mu.replicas = map[string]replicaCount{}
	f.mu.ready = map[string]*readyCache{}
	f.mu.unindexed = map[string]struct{}{}
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

// indexKeys are the keys of one shard of a crawl's index: r, q, s, p
// (indexScript) and c (claimScript).
func (f *Frontier) indexKeys(crawl string, shard int) []string {
	base := f.o.Prefix + "{i\x1f" + tagEscape(crawl) + "\x1f" + strconv.Itoa(shard) + "}:"
	return []string{base + "r", base + "q", base + "s", base + "p", base + "c"}
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
	// parked is the URLs in flight when the lease script left the queue
	// at the caller's in-flight bound (0: not parked).
	parked int64
	rest   []any
}

func parseState(res []any) (queueState, error) {
	var s queueState
	if len(res) < 8 {
		return s, fmt.Errorf("cluster: script returned %d values", len(res))
	}
	var n [8]int64
	for i := range n {
		v, ok := asInt(res[i])
		if !ok {
			return s, fmt.Errorf("cluster: script value %d is %T", i, res[i])
		}
		n[i] = v
	}
	s = queueState{ver: n[0], ready: n[1], queued: n[2], inflight: n[3], completed: n[4], retired: n[5] == 1, now: n[6], parked: n[7], rest: res[8:]}
	return s, nil
}

// indexCall is the index update for a queue's new state (and tells Get's
// ready cache when the queue is ready).
func (f *Frontier) indexCall(crawl, key string, s queueState) *call {
	f.noteReady(crawl, key, s.ready, s.now)
	r := 0
	if s.retired {
		r = 1
	}
	return &call{s: indexScript, keys: f.indexKeys(crawl, f.shardOf(key))[:4],
		args: []any{key, s.ver, s.ready, s.queued, s.inflight, s.completed, r, s.parked, "0"}}
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
		f.ops.add("delay", 1, 1)
		v, err := f.c.HGet(ctx, f.delaysKey(), crawl).Int64()
		if errors.Is(err, redis.Nil) {
			ms = max(f.o.DefaultDelay, 0).Milliseconds()
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

// registerEvery is how often a process adds a crawl it puts to again.
const registerEvery = 5 * time.Second

func (f *Frontier) register(ctx context.Context, crawl string) error {
	f.mu.Lock()
	at, done := f.mu.registered[crawl]
	f.mu.Unlock()
	if done && time.Since(at) < registerEvery {
		return nil
	}
	err := f.retry(ctx, "register crawl", func(ctx context.Context) error {
		f.ops.add("register", 1, 1)
		return f.c.SAdd(ctx, f.crawlsKey(), crawl).Err()
	})
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.mu.registered[crawl] = time.Now()
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
	sums       []uint64 // known-cache sums, with Options.KnownCache
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
		h := hashURL(it.Info.URL)
		var sum uint64
		if f.known != nil {
			sum = f.known.sum(crawl, key, h)
			if !it.Known && f.known.has(sum) {
				statuses[i] = frontier.Skipped // what Redis would answer
				continue
			}
		}
		gk := [2]string{crawl, key}
		g := groups[gk]
		if g == nil || len(g.idx) >= putItemsPerCall {
			g = &putGroup{crawl: crawl, key: key}
			groups[gk] = g
			order = append(order, g)
		}
		g.idx = append(g.idx, i)
		g.hashes = append(g.hashes, h)
		g.sums = append(g.sums, sum)
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
		args := make([]any, 0, 5+8*len(g.idx))
		args = append(args, f.nowArg(), dd, g.crawl, g.key, len(g.idx))
		f.mu.Lock()
		for j, i := range g.idx {
			it := &items[i]
			kind, due, token, hold := "d", int64(0), "", int64(0)
			if it.Dated {
				due = 1 // dated by the script's clock
			}
			if it.Known {
				if !it.Hold.IsZero() {
					hold = max(msCeil(it.Hold), 0)
				}
				kind, due = "k", -1
				if f.o.KeepCompletedURLs {
					kind = "K"
				}
				if !it.RefetchFrom.IsZero() {
					due = max(msCeil(it.RefetchFrom), 0)
				}
				if l, ok := f.mu.leases[leaseKey(g.crawl, g.key, g.hashes[j])]; ok {
					token = l.token
				}
			}
			depth := min(max(it.Info.Depth, 0), 65535)
			args = append(args, kind, g.hashes[j], int(it.Info.Priority), depth, due, token, encodeData(it.Info.URL, it.Info.Metadata), hold)
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
			if f.known != nil && (code == 0 || code == 1 && !items[i].Known) {
				f.known.add(g.sums[j]) // stored, or already there
			}
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
	if err := f.run(ctx, "put index", index); err != nil {
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
	// EmptyLeases counts lease scripts that leased nothing: the queue a
	// Get chose was taken by another caller, blocked or at its in-flight
	// bound by then.
	EmptyLeases uint64
}

// Counters returns the client's counters.
func (f *Frontier) Counters() Counters {
	return Counters{Retries: f.retries.Load(), StaleAcks: f.staleAcks.Load(), WaitShort: f.waitShort.Load(), EmptyLeases: f.emptyLeases.Load()}
}

// LastError returns the last Redis error seen (retried or not), or "".
func (f *Frontier) LastError() string {
	if p := f.lastErr.Load(); p != nil {
		return *p
	}
	return ""
}

var _ frontier.API = (*Frontier)(nil)
