package frontier

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/courtesy-crawler/courtesy/internal/kv"
)

// DefaultCrawl is the crawl ID used when none is given (as in URLFrontier).
const DefaultCrawl = "DEFAULT"

// MaxKeyLength is the longest queue key accepted (URLFrontier: 255).
const MaxKeyLength = 255

var (
	// ErrClosed is returned by calls on a closed Frontier.
	ErrClosed = errors.New("frontier: closed")
	// ErrNotFound is returned for an unknown crawl, queue or URL.
	ErrNotFound = errors.New("frontier: not found")
)

// Options tunes Open. The zero value is ready to use.
type Options struct {
	// DefaultDelay is the minimum time between two servings of a queue
	// that has no delay of its own (SetDelay). 0 means no delay: the
	// crawler's politeness gate spaces requests and tells the frontier with
	// BlockQueueUntil. (The URLFrontier reference server uses 1 s; a gRPC
	// front end sets that.)
	DefaultDelay time.Duration
	// DefaultLease is the lease used when GetParams.Lease is 0; 0 means 30 s
	// (URLFrontier's delay_requestable default).
	DefaultLease time.Duration
	// MaxURLLength bounds the bytes of a URL; longer ones are Skipped. 0
	// means 8192.
	MaxURLLength int
	// MaxMetadataBytes bounds a URL's encoded metadata; larger items are
	// Skipped. 0 means 64 KiB.
	MaxMetadataBytes int
	// SeenCacheEntries sizes the in-memory cache of known URL
	// fingerprints (8 bytes each) that answers most seen-tests without a
	// disk lookup; 0 means 4 Mi entries (32 MiB).
	SeenCacheEntries int
	// SeenFilterBytes bounds the Bloom filter of the stored URLs that
	// answers the seen-test of new URLs without a store lookup (about 1.25
	// bytes per URL; past the bound it answers fewer). 0 means 64 MiB;
	// negative disables it.
	SeenFilterBytes int64
	// MaxURLsPerGet bounds the URLs one Get returns whatever its parameters
	// ask; 0 means 10,000.
	MaxURLsPerGet int
	// ReadAhead is how many entries of a queue Get reads beyond those it
	// hands out, and keeps in memory so that the next Gets of the queue
	// need not read the store (one Pebble seek per queue served
	// otherwise; docs/frontier.md). 0 means 8 (a store read every ninth
	// Get of a queue served one URL at a time); negative disables it; at
	// most 1,024.
	ReadAhead int
	// ReadAheadBytes bounds the memory of all queues' read-ahead entries
	// (their stored bytes plus about 64 bytes each); the queues served
	// least recently lose theirs first. 0 means 8 MiB: 8 entries of
	// 20,000 queues with URLs of about 100 bytes.
	ReadAheadBytes int
	// Now is the clock; nil means time.Now. Tests inject a fake one.
	Now func() time.Time

	// manualRefill (tests) starts no refiller goroutine: the test calls
	// refillOnce itself.
	manualRefill bool
}

func (o *Options) fill() {
	if o.DefaultLease <= 0 {
		o.DefaultLease = 30 * time.Second
	}
	if o.MaxURLLength <= 0 {
		o.MaxURLLength = 8192
	}
	if o.MaxMetadataBytes <= 0 {
		o.MaxMetadataBytes = 64 << 10
	}
	if o.SeenCacheEntries <= 0 {
		o.SeenCacheEntries = 4 << 20
	}
	if o.SeenFilterBytes == 0 {
		o.SeenFilterBytes = 64 << 20
	}
	if o.MaxURLsPerGet <= 0 {
		o.MaxURLsPerGet = 10000
	}
	if o.ReadAhead == 0 {
		o.ReadAhead = 8
	}
	o.ReadAhead = min(o.ReadAhead, 1024)
	if o.ReadAheadBytes <= 0 {
		o.ReadAheadBytes = 8 << 20
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// URLInfo is a URL with its queue, crawl and metadata (URLFrontier URLInfo),
// plus the two scheduling hints Courtesy's crawler sets.
type URLInfo struct {
	// URL is the (already normalized) URL. The frontier does no
	// normalization or filtering: that is the crawler's job.
	URL string
	// Key is the queue key; "" means the URL's lower-cased host name.
	Key string
	// CrawlID is the crawl namespace; "" means DefaultCrawl.
	CrawlID string
	// Metadata is stored with the URL and returned by Get.
	Metadata map[string][]string
	// Priority orders URLs within a queue: higher first; 0 is normal.
	// Courtesy's crawler uses 2 for seeds and 1 for sitemap entries and
	// REGP Index-page/Change-* URLs.
	Priority int8
	// Depth is the number of link hops from a seed; within a priority the
	// queue is breadth-first. Values above 65535 are clamped.
	Depth int
}

// Item is one PutURLs item.
type Item struct {
	Info URLInfo
	// Known marks an update of a URL (URLFrontier KnownURLItem): it always
	// overwrites the stored URL and ends its lease. Otherwise the item is a
	// discovered URL, stored only if unknown in its crawl.
	Known bool
	// RefetchFrom (Known only) reschedules the URL for that time; the zero
	// time marks it completed (refetchable_from_date = 0).
	RefetchFrom time.Time
	// Dated (discovered only) makes a new URL due at its creation time,
	// to the second, rather than as soon as possible (ahead of every URL due at a time),
	// so that it takes its place by date among the URLs rescheduled to a
	// time: URLFrontier orders a queue by next-fetch date and dates a
	// discovered URL at its discovery.
	Dated bool
	// Hold (Known only), when not zero, also keeps the item's queue from
	// being served before it, keeping any later block (BlockQueueUntil
	// sets the block, Hold only raises it). A crawler acknowledging a
	// fetched URL passes the politeness gate's next time for the host:
	// the URL's lease kept the queue from being served until the
	// acknowledgement, which then holds it, so the queue needs no call of
	// its own. (URLFrontier has no such field: the URLFrontier client
	// blocks the queue before it sends the acknowledgement.)
	Hold time.Time
}

// Status is a Put outcome (URLFrontier AckMessage.Status).
type Status uint8

const (
	// OK: stored (or updated).
	OK Status = iota
	// Skipped: not stored and should not be resent (already known, no host,
	// too long).
	Skipped
	// Fail: not stored; may be resent.
	Fail
)

func (s Status) String() string {
	switch s {
	case OK:
		return "OK"
	case Skipped:
		return "SKIPPED"
	default:
		return "FAIL"
	}
}

// Lease is a URL handed out by Get. It stays invisible to other Gets until
// it is acknowledged (Put with Known) or Expires passes.
type Lease struct {
	URLInfo
	Expires time.Time
}

// GetParams are URLFrontier GetParams.
type GetParams struct {
	// MaxQueues bounds the queues that contribute; 0 means no limit.
	MaxQueues int
	// MaxURLsPerQueue bounds the URLs per queue in this response and the
	// URLs of a queue in flight (a queue with that many leased is skipped);
	// 0 means no limit.
	MaxURLsPerQueue int
	// Key restricts the call to one queue (CrawlID must then name its
	// crawl; "" is DefaultCrawl).
	Key string
	// CrawlID restricts the call to one crawl; ignored when AnyCrawl.
	CrawlID string
	// AnyCrawl serves every crawl.
	AnyCrawl bool
	// Lease is how long the URLs stay invisible (delay_requestable); 0
	// means Options.DefaultLease.
	Lease time.Duration
}

// Frontier is an open frontier. It is safe for concurrent use.
type Frontier struct {
	db   *pebble.DB
	opts Options

	// seen caches fingerprints of known URLs (lock-free).
	seen *seenCache
	// filter tells URLs the store does not hold (nil when disabled);
	// filterDone is closed when its open scan has ended.
	filter     *seenFilter
	filterDone chan struct{}
	// gen counts committed groups; recent and recentRing (committer only)
	// remember the inserts of the last recentGroups groups.
	gen        atomic.Uint64
	recent     map[seenKey]uint64
	recentRing [recentGroups][]seenKey
	// recentCount is the number of inserts in recentRing; recentFloor the
	// oldest gen whose group's inserts are all still remembered
	// (forgetRecentGroup; committer only).
	recentCount int
	recentFloor uint64
	// recentMax is maxRecent; tests lower it.
	recentMax int

	// scratch is the commit group's working memory (committer only).
	scratch commitScratch
	// queueWrites counts the queue records the committer wrote; tests
	// read it.
	queueWrites atomic.Uint64
	// recordReads counts the URL records the committer read for Known
	// items (acks not answered by their lease); tests read it.
	recordReads atomic.Uint64
	// storeReads counts the queue reads Get positioned in the store, and
	// aheadHits the queues it served from their read-ahead alone (ahead.go).
	storeReads atomic.Uint64
	aheadHits  atomic.Uint64
	// refills counts the read-aheads the refiller extended (refill.go).
	refills atomic.Uint64
	// refillWake wakes the refiller (nil without read-ahead); refillDone
	// is closed when it has stopped.
	refillWake chan struct{}
	refillDone chan struct{}

	// testHookBeforeApply, when set (tests only, before the first Put),
	// runs in the committer after a group's batch is built and Frontier.mu
	// released, before the batch is applied; testHookAfterApply once it is
	// applied, before Frontier.mu is taken again.
	testHookBeforeApply func()
	testHookAfterApply  func()
	// testHookYield, when set (tests only, before the first Put), runs in
	// the committer each time it lets Frontier.mu go between two slices
	// of a group (yieldLocked), while the lock is free.
	testHookYield func()
	// testHookRefillRead, when set (tests only), runs between the
	// refiller's store read and its taking the lock again.
	testHookRefillRead func()

	// syncErr is the first failed WAL fsync (set by the sync waiter); every
	// later operation fails with it.
	syncErr atomic.Pointer[error]

	// cids maps the crawls' names to their ids, a copy replaced under
	// Frontier.mu whenever a crawl appears or goes (setCIDsLocked), so that
	// Put finds them without taking the lock Get and the committer hold.
	cids atomic.Pointer[map[string]uint32]
	// closed mirrors mu.closed for Put.
	closed atomic.Bool

	ops    chan *op
	stop   chan struct{}
	doneCh chan struct{}

	// mu guards everything below and the queues' in-memory state.
	mu struct {
		sync.Mutex
		closing  bool // Close was called
		closed   bool // Close is past its last commit
		active   bool
		crawls   map[string]*crawl
		nextCID  uint32
		seq      uint64
		leases   leaseHeap
		gets     uint64 // Get calls, numbering them (getter.id)
		dirty    map[*queue]struct{}
		dirtyCrw map[*crawl]struct{}
		wake     chan struct{}
		// ahead lists the queues' read-aheads (ahead.go).
		ahead aheadList
		// pending holds SetDelay and BlockQueueUntil calls on queues that
		// do not exist yet, applied when the queue appears (pending.go).
		pending map[pendingKey]pendingQueue
		// refill lists the queues whose read-ahead the refiller is asked
		// to extend (refill.go).
		refill []*queue
		// purged lists the URLs PurgeURLs removed in the commit group
		// being built (committer only; list.go).
		purged map[seenKey]bool
	}
}

// crawl is the in-memory state of one crawl namespace.
type crawl struct {
	name    string
	cid     uint32
	nextQID uint32
	queues  map[string]*queue
	ready   queueHeap
	deleted bool
	// qidIndex maps queue ids to queues; built lazily by byQID.
	qidIndex map[uint32]*queue
	// parkedAt holds the queues parked at each in-flight limit
	// (queue.parkLimit; parkLocked).
	parkedAt map[int]map[*queue]struct{}
}

// Open opens the frontier stored in db (creating it if empty) and starts its
// committer. Every lease of a previous run is void.
func Open(db *kv.DB, opts Options) (*Frontier, error) {
	opts.fill()
	f := &Frontier{
		db:     db.Pebble(),
		opts:   opts,
		ops:    make(chan *op, 4096),
		stop:   make(chan struct{}),
		doneCh: make(chan struct{}),
		seen:   newSeenCache(opts.SeenCacheEntries),
		recent: map[seenKey]uint64{},

		recentMax: maxRecent,
	}
	f.mu.active = true
	f.mu.crawls = map[string]*crawl{}
	f.mu.dirty = map[*queue]struct{}{}
	f.mu.dirtyCrw = map[*crawl]struct{}{}
	f.mu.wake = make(chan struct{})
	// The sequence only orders URLs of equal due time, priority and depth;
	// starting from the clock keeps it increasing across restarts.
	f.mu.seq = uint64(time.Now().UnixNano())
	if err := f.load(); err != nil {
		return nil, err
	}
	f.setCIDsLocked()
	f.startFilter()
	go f.commitLoop()
	if f.aheadOn() {
		f.refillWake = make(chan struct{}, 1)
		if !opts.manualRefill {
			f.refillDone = make(chan struct{})
			go f.refillLoop()
		}
	}
	return f, nil
}

// load reads the crawl and queue records.
func (f *Frontier) load() error {
	byCID := map[uint32]*crawl{}
	err := scan(f.db, []byte(prefixCrawl), func(k, v []byte) error {
		r, err := decodeCrawlRecord(v)
		if err != nil {
			return corrupt("crawl "+string(k[len(prefixCrawl):]), err)
		}
		c := &crawl{name: string(k[len(prefixCrawl):]), cid: r.cid, nextQID: r.nextQID, queues: map[string]*queue{}}
		f.mu.crawls[c.name] = c
		byCID[c.cid] = c
		f.mu.nextCID = max(f.mu.nextCID, c.cid+1)
		return nil
	})
	if err != nil {
		return err
	}
	return scan(f.db, []byte(prefixQueue), func(k, v []byte) error {
		if len(k) < len(prefixQueue)+4 {
			return corrupt("queue key", errCorrupt)
		}
		cid := uint32(k[len(prefixQueue)])<<24 | uint32(k[len(prefixQueue)+1])<<16 | uint32(k[len(prefixQueue)+2])<<8 | uint32(k[len(prefixQueue)+3])
		c := byCID[cid]
		if c == nil {
			return nil // orphan of a deleted crawl
		}
		r, err := decodeQueueRecord(v)
		if err != nil {
			return corrupt("queue "+string(k[len(prefixQueue)+4:]), err)
		}
		q := &queue{crawl: c, key: string(k[len(prefixQueue)+4:]), rec: r, heapIdx: -1}
		c.queues[q.key] = q
		c.nextQID = max(c.nextQID, r.qid+1)
		f.rescheduleLocked(q)
		return nil
	})
}

func scan(db *pebble.DB, prefix []byte, fn func(k, v []byte) error) error {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: kv.PrefixEnd(prefix)})
	if err != nil {
		return fmt.Errorf("frontier: scan: %w", err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return fmt.Errorf("frontier: scan: %w", err)
		}
		if err := fn(it.Key(), v); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("frontier: scan: %w", err)
	}
	return nil
}

// Close stops the committer after it has written every pending operation.
// The kv.DB stays open; its owner closes it.
func (f *Frontier) Close() error {
	f.mu.Lock()
	if f.mu.closing {
		f.mu.Unlock()
		return nil
	}
	f.mu.closing = true
	f.mu.Unlock()
	// One last synced commit writes what rides on the next commit
	// (BlockQueueUntil, SetDelay).
	err := f.submit(context.Background(), &op{fn: func(*pebble.Batch) error { return nil }, done: make(chan error, 1)})
	f.mu.Lock()
	f.mu.closed = true
	f.closed.Store(true)
	f.mu.Unlock()
	close(f.stop)
	<-f.doneCh
	if f.filterDone != nil {
		<-f.filterDone
	}
	if f.refillDone != nil {
		<-f.refillDone
	}
	return err
}

func normCrawl(id string) string {
	id = strings.TrimSpace(id)
	if id == "" {
		return DefaultCrawl
	}
	return id
}

// DefaultKey returns the queue key used for a URL when none is given: its
// lower-cased host name (without port), or "" if it has none.
func DefaultKey(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

// crawlLocked returns the crawl named name, creating it (in memory; it is
// persisted by the next commit) when create is set.
func (f *Frontier) crawlLocked(name string, create bool) *crawl {
	c := f.mu.crawls[name]
	if c == nil && create {
		c = &crawl{name: name, cid: f.mu.nextCID, queues: map[string]*queue{}}
		f.mu.nextCID++
		f.mu.crawls[name] = c
		f.setCIDsLocked()
		f.mu.dirtyCrw[c] = struct{}{}
	}
	return c
}

// setCIDsLocked publishes the crawl ids for Put (Frontier.cids).
func (f *Frontier) setCIDsLocked() {
	m := make(map[string]uint32, len(f.mu.crawls))
	for name, c := range f.mu.crawls {
		m[name] = c.cid
	}
	f.cids.Store(&m)
}

// queueLocked returns the queue key of c, creating it when create is set.
func (f *Frontier) queueLocked(c *crawl, key string, create bool) *queue {
	q := c.queues[key]
	if q == nil && create {
		q = &queue{crawl: c, key: key, rec: queueRecord{qid: c.nextQID, delay: -1}, heapIdx: -1}
		c.nextQID++
		c.queues[key] = q
		if c.qidIndex != nil {
			c.qidIndex[q.rec.qid] = q
		}
		f.mu.dirtyCrw[c] = struct{}{}
		f.mu.dirty[q] = struct{}{}
		f.applyPendingLocked(q)
	}
	return q
}

// wakeLocked tells waiters (WaitReady) that something changed.
func (f *Frontier) wakeLocked() {
	close(f.mu.wake)
	f.mu.wake = make(chan struct{})
}

// WaitReady blocks until a queue may have become servable, or until d
// passes, or ctx is done; it returns early when a Put, an ack or an admin
// call changes the frontier. Crawlers call it when Get returned nothing.
// While serving is paused (SetActive(false)) nothing becomes servable: it
// waits for d or a change (a resume wakes it).
func (f *Frontier) WaitReady(ctx context.Context, d time.Duration) {
	f.mu.Lock()
	wake := f.mu.wake
	if next, ok := f.nextReadyLocked(); ok && f.mu.active {
		if w := time.Until(next); w < d {
			d = max(w, time.Millisecond)
		}
	}
	f.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-wake:
	case <-t.C:
	}
}

// nextReadyLocked returns the earliest time a queue of any crawl becomes
// servable.
func (f *Frontier) nextReadyLocked() (time.Time, bool) {
	var best int64
	found := false
	for _, c := range f.mu.crawls {
		if len(c.ready) > 0 {
			if t := c.ready[0].readyAt; !found || t < best {
				best, found = t, true
			}
		}
	}
	if len(f.mu.leases) > 0 {
		if t := f.mu.leases[0].expires; !found || t < best {
			best, found = t, true
		}
	}
	return time.Unix(0, best), found
}

// NextReady returns when the next queue becomes servable (or a lease
// expires), and false when nothing is queued.
func (f *Frontier) NextReady() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nextReadyLocked()
}

// NormalizeCrawlID returns the crawl ID a request names: blank means
// DefaultCrawl (URLFrontier CrawlID), surrounding space is dropped.
func NormalizeCrawlID(id string) string { return normCrawl(id) }
