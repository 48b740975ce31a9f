package httpcache

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/courtesy-crawler/courtesy/internal/kv"
)

// DefaultPrefix is the kv key prefix (bucket) the cache uses by default.
const DefaultPrefix = "httpcache/"

// MaxVaryFields is how many Vary field names a storable response may list.
const MaxVaryFields = 16

// Options tunes a Cache. The zero value is ready to use.
type Options struct {
	// Policy is the RFC 9111 policy; its zero value includes the thesis
	// override (seed 000 §4.6).
	Policy Policy
	// MaxBytes bounds the stored entries (encoded size, bytes); past it the
	// least recently used are evicted. 0 means 256 MiB.
	MaxBytes int64
	// MemoryBytes bounds the in-memory tier of hot entries (bytes); 0 means
	// 32 MiB, negative disables it.
	MemoryBytes int64
	// MaxEntryBytes is the largest body stored (bytes); larger responses are
	// passed through uncached. 0 means 8 MiB.
	MaxEntryBytes int64
	// MaxVariants bounds the variants kept per method and URL (different
	// Vary values or content types); the oldest is dropped. 0 means 4.
	MaxVariants int
	// Prefix is the kv key prefix; "" means DefaultPrefix.
	Prefix string
}

// Validate reports options that cannot work.
func (o Options) Validate() error {
	switch {
	case o.MaxBytes < 0:
		return errors.New("httpcache: MaxBytes must not be negative")
	case o.MaxEntryBytes < 0:
		return errors.New("httpcache: MaxEntryBytes must not be negative")
	case o.MaxVariants < 0:
		return errors.New("httpcache: MaxVariants must not be negative")
	case o.Policy.OverrideLifetime < 0 || o.Policy.HeuristicMax < 0 || o.Policy.HeuristicDefault < 0:
		return errors.New("httpcache: lifetimes must not be negative")
	case o.Policy.HeuristicFraction > 1:
		return errors.New("httpcache: HeuristicFraction must be at most 1")
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.MaxBytes == 0 {
		o.MaxBytes = 256 << 20
	}
	if o.MemoryBytes == 0 {
		o.MemoryBytes = 32 << 20
	}
	if o.MaxEntryBytes == 0 {
		o.MaxEntryBytes = 8 << 20
	}
	if o.MaxVariants == 0 {
		o.MaxVariants = 4
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	return o
}

// Stats are cache counters since Open (entries and bytes are current).
type Stats struct {
	Entries     int     // stored variants
	Bytes       int64   // their encoded size
	HotEntries  int     // variants held decoded in memory
	HotBytes    int64   // their size
	Hits        int64   // lookups answered Fresh
	Misses      int64   // lookups with nothing usable stored
	Stale       int64   // lookups that needed validation
	Revalidated int64   // validations answered 304 (Freshen calls)
	Stores      int64   // responses stored
	Evictions   int64   // variants evicted for space
	HitRatio    float64 // Hits / (Hits + Misses + Stale); 0 before any lookup
}

// Cache is a shared HTTP cache on the embedded store. It is safe for
// concurrent use; it owns one writer goroutine, stopped by Close.
type Cache struct {
	db     *pebble.DB
	bucket *kv.Bucket
	prefix []byte
	opts   Options

	// mu guards the index: groups, both LRU lists and the byte counts.
	// Pebble writes happen under it so that the index and the store agree;
	// disk reads do not.
	mu struct {
		sync.Mutex
		groups   map[string][]*variant // primary key -> variants, oldest first
		lru      list.List             // *variant, most recently used first
		hot      list.List             // *variant with entry != nil
		bytes    int64
		hotBytes int64
		closed   bool   // Close was called: no more writes are queued
		seq      uint64 // the last data record number given out
		// reserved holds the primary keys a response is about to be
		// stored for (Reserve), with what their lookups wait on.
		reserved map[string]*reservation
	}

	hits, misses, stale, revalidated, stores, evictions atomic.Int64

	// writes feeds the writer goroutine, which applies every change to the
	// store in order, many per Pebble batch (one WAL write for a burst of
	// stores instead of one each). Close stops it.
	writes    chan writeOp
	writerErr atomic.Pointer[error]
	done      chan struct{}
}

// ErrClosed is returned by Store and Freshen after Close.
var ErrClosed = errors.New("httpcache: closed")

// writeOp is one change to the store: an entry to write (encoded by the
// writer, off the request path), keys to delete, and done, which, when
// non-nil, receives the commit's result.
type writeOp struct {
	put  *pendingPut
	del  [][]byte
	done chan error
}

// pendingPut is an entry and its index record waiting for the writer. Both
// are immutable once queued (Entry by contract; the variant fields that
// encodeMeta reads are set before queueing and never changed).
type pendingPut struct {
	entry *Entry
	v     *variant
}

// Bounds of the writer: queued operations, operations per batch, and how
// long the writer gathers operations after the first of a batch when
// nobody waits for it. Each commit costs a WAL write and wakes Pebble's
// log writer; at one client a commit per store was a third of the
// writes the proxy made. Gathering for writeDelay makes one commit of
// many stores; the entries are served from the memory tier meanwhile
// (those too big for it are waited for and committed at once).
const (
	writeQueue = 1024
	writeBatch = 256
	writeDelay = 5 * time.Millisecond
)

// variant is the index record of one stored entry.
type variant struct {
	pk         string
	vk         [16]byte
	seq        uint64 // number of its data record: 'd' + 8 bytes big-endian
	mediaType  string
	varyNames  []string
	varyValues []string
	size       int64
	storedAt   int64 // unix nanoseconds, orders the LRU after a restart
	elem       *list.Element
	hotElem    *list.Element
	entry      *Entry // decoded entry while in the memory tier
}

// Open opens the cache stored in db, rebuilding the index from the stored
// metadata records (bodies are not read).
func Open(db *kv.DB, opts Options) (*Cache, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	c := &Cache{db: db.Pebble(), bucket: db.Bucket(opts.Prefix), prefix: []byte(opts.Prefix), opts: opts}
	c.mu.groups = map[string][]*variant{}
	c.mu.reserved = map[string]*reservation{}
	var loaded []*variant
	var corrupt [][]byte
	err := c.bucket.Scan([]byte("m"), func(key, value []byte) error {
		v, err := decodeMeta(value)
		if err != nil || len(key) != 17 {
			corrupt = append(corrupt, slices.Clone(key))
			return nil
		}
		copy(v.vk[:], key[1:])
		loaded = append(loaded, v)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("httpcache: open: %w", err)
	}
	slices.SortFunc(loaded, func(a, b *variant) int { return int(max(-1, min(1, b.storedAt-a.storedAt))) })
	for _, v := range loaded {
		c.mu.groups[v.pk] = append(c.mu.groups[v.pk], v)
		v.elem = c.mu.lru.PushBack(v)
		c.mu.bytes += v.size
		c.mu.seq = max(c.mu.seq, v.seq)
	}
	for _, vs := range c.mu.groups {
		slices.SortFunc(vs, func(a, b *variant) int { return int(max(-1, min(1, a.storedAt-b.storedAt))) })
	}
	b := c.db.NewBatch()
	for _, k := range corrupt {
		_ = b.Delete(c.key('m', k[1:]), nil)
	}
	if len(corrupt) > 0 {
		// The data records of corrupt metadata records (and those of the
		// earlier layout, keyed by variant key) are found by elimination:
		// a rare path, so a scan of the data keys is affordable.
		live := make(map[uint64]bool, len(loaded))
		for _, v := range loaded {
			live[v.seq] = true
		}
		err := c.bucket.Scan([]byte("d"), func(key, _ []byte) error {
			if len(key) != 9 || !live[binary.BigEndian.Uint64(key[1:])] {
				_ = b.Delete(c.key('d', key[1:]), nil)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("httpcache: open: %w", err)
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return nil, fmt.Errorf("httpcache: open: %w", err)
	}
	_ = b.Close()
	c.writes = make(chan writeOp, writeQueue)
	c.done = make(chan struct{})
	go c.writer()
	c.mu.Lock()
	c.deleteRecords(c.evictLocked())
	c.mu.Unlock()
	return c, nil
}

// writer applies queued writes in order until Close.
func (c *Cache) writer() {
	defer close(c.done)
	// scratch is reused for every encoding: Batch.Set copies the value,
	// so no record needs its own allocation.
	var scratch []byte
	for op := range c.writes {
		b := c.db.NewBatch()
		ops := []writeOp{op}
		apply := func(op writeOp) {
			if pp := op.put; pp != nil {
				scratch = appendEntry(scratch[:0], pp.entry)
				_ = b.Set(c.dataKey(pp.v.seq), scratch, nil)
				scratch = appendMeta(scratch[:0], pp.v)
				_ = b.Set(c.key('m', pp.v.vk[:]), scratch, nil)
				if cap(scratch) > 1<<20 {
					scratch = nil // do not pin a large body's buffer
				}
			}
			for _, k := range op.del {
				_ = b.Delete(k, nil)
			}
		}
		apply(op)
		if op.done == nil && len(c.writes) < writeBatch {
			// Sleep, not select on c.writes: a writer parked on the
			// channel would be woken by every store.
			time.Sleep(writeDelay)
		}
	more:
		for len(ops) < writeBatch {
			select {
			case op, ok := <-c.writes:
				if !ok {
					break more
				}
				apply(op)
				ops = append(ops, op)
				if op.done != nil {
					break more // someone waits: commit now
				}
			default:
				break more
			}
		}
		err := b.Commit(pebble.NoSync)
		_ = b.Close()
		if err != nil {
			err = fmt.Errorf("httpcache: store: %w", err)
			c.writerErr.Store(&err)
		}
		for _, op := range ops {
			if op.done != nil {
				op.done <- err
			}
		}
	}
}

// Close stops the writer after the queued writes are committed. The kv.DB
// must be closed after the cache. Close is idempotent.
func (c *Cache) Close() error {
	c.mu.Lock()
	if !c.mu.closed {
		c.mu.closed = true
		close(c.writes)
	}
	c.mu.Unlock()
	<-c.done
	if p := c.writerErr.Load(); p != nil {
		return *p
	}
	return nil
}

// dataKey is the key of a data record. Data records are numbered in store
// order, so that new ones sort after all older ones: Pebble's flushes and
// compactions then add new tables beside the old ones instead of merging
// into (rewriting) them, as random keys made it do for every store. The
// metadata records, small, stay keyed by variant key.
func (c *Cache) dataKey(seq uint64) []byte {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], seq)
	return c.key('d', n[:])
}

func (c *Cache) key(kind byte, vk []byte) []byte {
	k := make([]byte, 0, len(c.prefix)+1+len(vk))
	k = append(k, c.prefix...)
	k = append(k, kind)
	return append(k, vk...)
}

// PrimaryKey is the first part of the cache key: method and URL.
func PrimaryKey(method, url string) string { return method + " " + url }

// Result is the answer of Lookup.
type Result struct {
	Action Action
	// Entry is the stored variant for Fresh and Stale; nil otherwise.
	Entry *Entry
}

// Lookup finds a stored response for req (absolute URL in req.URL) and
// decides per RFC 9111 whether it may be served at now. HEAD is answered
// from stored GET responses. Methods other than GET and HEAD, and range
// requests, always miss.
func (c *Cache) Lookup(req *http.Request, now time.Time) Result {
	reqCC := ParseCacheControl(req.Header)
	if (req.Method != http.MethodGet && req.Method != http.MethodHead) || req.Header.Get("Range") != "" {
		return c.miss(reqCC)
	}
	pk := PrimaryKey(http.MethodGet, req.URL.String())
	c.mu.Lock()
	v := c.selectLocked(pk, req.Header)
	if v == nil {
		r := c.mu.reserved[pk]
		c.mu.Unlock()
		if r == nil || !r.wait() {
			return c.miss(reqCC)
		}
		// The reserved store is done: look again, once.
		c.mu.Lock()
		if v = c.selectLocked(pk, req.Header); v == nil {
			c.mu.Unlock()
			return c.miss(reqCC)
		}
	}
	c.mu.lru.MoveToFront(v.elem)
	e := v.entry
	if e != nil {
		c.mu.hot.MoveToFront(v.hotElem)
	}
	c.mu.Unlock()
	if e == nil {
		var err error
		e, err = c.load(v)
		if err != nil {
			return c.miss(reqCC)
		}
	}
	if e.Overridden && credentialed(req.Header) {
		// Stored thanks to the override, for a request without
		// credentials: never the answer to one with them (override.go).
		return c.miss(reqCC)
	}
	a := Decide(reqCC, PragmaNoCache(req.Header), e.Control, e.Overridden, e.Lifetime, e.Age(now))
	switch a {
	case Fresh:
		c.hits.Add(1)
	default:
		c.stale.Add(1)
	}
	if a == GatewayTimeout {
		return Result{Action: a}
	}
	return Result{Action: a, Entry: e}
}

// reserveWait bounds how long a Lookup waits for a reserved store. The
// store follows the reservation at once (CPU work only) unless the
// reserving client is slow to take its response; past the bound the
// lookup misses, as it would have without the reservation.
const reserveWait = 250 * time.Millisecond

// reservation is a store announced by Reserve: n reservers, and done,
// closed when the last one released it.
type reservation struct {
	n    int
	done chan struct{}
	// invalidated: an unsafe request invalidated the URL while the
	// reservation was held, so its store must not bring the old response
	// back (RFC 9111 §4.4): a client that reads a GET's response, POSTs,
	// then GETs again must miss, although the first GET stores after its
	// response was sent.
	invalidated bool
}

// wait waits for the reservation's release, at most reserveWait, and
// reports whether it came.
func (r *reservation) wait() bool {
	select {
	case <-r.done:
		return true
	default:
	}
	t := time.NewTimer(reserveWait)
	defer t.Stop()
	select {
	case <-r.done:
		return true
	case <-t.C:
		return false
	}
}

// Reserve announces that a response to a GET of url is about to be
// stored: until release is called, a Lookup of url that finds nothing
// stored waits for the store (at most reserveWait) instead of missing.
// The proxy reserves before it sends a response to its client and stores
// after, so that the store is not part of the client's latency while a
// client that asks again at once still hits the cache. release must be
// called exactly once, whether or not the response was stored.
func (c *Cache) Reserve(url string) (release func()) {
	pk := PrimaryKey(http.MethodGet, url)
	c.mu.Lock()
	r := c.mu.reserved[pk]
	if r == nil {
		r = &reservation{done: make(chan struct{})}
		c.mu.reserved[pk] = r
	}
	r.n++
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		if r.n--; r.n == 0 {
			delete(c.mu.reserved, pk)
			close(r.done)
		}
		c.mu.Unlock()
	}
}

func (c *Cache) miss(reqCC Directives) Result {
	c.misses.Add(1)
	if reqCC.OnlyIfCached {
		return Result{Action: GatewayTimeout}
	}
	return Result{Action: Miss}
}

// selectLocked picks the newest variant of pk matching the request's Vary
// values and Accept.
func (c *Cache) selectLocked(pk string, h http.Header) *variant {
	vs := c.mu.groups[pk]
	for i := len(vs) - 1; i >= 0; i-- {
		v := vs[i]
		if !Acceptable(h, v.mediaType) {
			continue
		}
		ok := true
		for j, name := range v.varyNames {
			if varyValue(h, name) != v.varyValues[j] {
				ok = false
				break
			}
		}
		if ok {
			return v
		}
	}
	return nil
}

// load reads a variant's entry from disk and adds it to the memory tier.
// A variant whose data is missing or corrupt is dropped.
func (c *Cache) load(v *variant) (*Entry, error) {
	raw, err := c.bucket.Get(binary.BigEndian.AppendUint64([]byte{'d'}, v.seq))
	var e *Entry
	if err == nil {
		e, err = decodeEntry(raw, c.opts.Policy)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v.elem == nil { // removed meanwhile
		if err != nil {
			return nil, err
		}
		return e, nil
	}
	if err != nil {
		c.removeLocked(v)
		c.deleteRecords([]*variant{v})
		return nil, fmt.Errorf("httpcache: load: %w", err)
	}
	if v.entry == nil {
		c.makeHotLocked(v, e)
	}
	return e, nil
}

func (c *Cache) makeHotLocked(v *variant, e *Entry) {
	if c.opts.MemoryBytes < 0 || v.size > c.opts.MemoryBytes/8 {
		return
	}
	v.entry = e
	v.hotElem = c.mu.hot.PushFront(v)
	c.mu.hotBytes += v.size
	for c.mu.hotBytes > c.opts.MemoryBytes {
		last := c.mu.hot.Back().Value.(*variant)
		c.dropHotLocked(last)
	}
}

func (c *Cache) dropHotLocked(v *variant) {
	if v.hotElem == nil {
		return
	}
	c.mu.hot.Remove(v.hotElem)
	c.mu.hotBytes -= v.size
	v.hotElem, v.entry = nil, nil
}

// varyValue is the request's normalized value of a Vary field: its field
// lines joined by commas, with whitespace around the commas removed
// (RFC 9111 §4.1 allows such normalization).
func varyValue(h http.Header, name string) string {
	vs := h.Values(name)
	if len(vs) == 0 {
		return ""
	}
	var b strings.Builder
	for i, v := range vs {
		for j, part := range strings.Split(v, ",") {
			if i > 0 || j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strings.TrimSpace(part))
		}
	}
	return b.String()
}

// varyNames returns the canonical field names of h's Vary fields, sorted
// and without duplicates, and false when there are too many.
func varyNames(h http.Header) ([]string, bool) {
	var names []string
	for _, v := range h.Values("Vary") {
		for f := range strings.SplitSeq(v, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			names = append(names, http.CanonicalHeaderKey(f))
			if len(names) > MaxVaryFields {
				return nil, false
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names), true
}

// Store stores the response to req if RFC 9111 §3 (with the cache's Policy)
// allows it, and reports whether it did and, if not, why. header must hold
// only end-to-end fields; it and body are copied, so the caller may reuse
// them. requestTime and responseTime are when the request was sent and the
// response received.
func (c *Cache) Store(req *http.Request, status int, header http.Header, body []byte, requestTime, responseTime time.Time) (bool, string, error) {
	return c.store(req, status, header, body, requestTime, responseTime, true)
}

// StoreOwned is Store for a caller that hands header and body over: the
// cache keeps them without copying, so the caller must not change them
// afterwards (the proxy stores the header and body it has just relayed).
func (c *Cache) StoreOwned(req *http.Request, status int, header http.Header, body []byte, requestTime, responseTime time.Time) (bool, string, error) {
	return c.store(req, status, header, body, requestTime, responseTime, false)
}

func (c *Cache) store(req *http.Request, status int, header http.Header, body []byte, requestTime, responseTime time.Time, copyIn bool) (bool, string, error) {
	reqCC := ParseCacheControl(req.Header)
	respCC := ParseCacheControl(header)
	if ok, why := Storable(req.Method, req.Header, reqCC, status, header, respCC, c.opts.Policy); !ok {
		return false, why, nil
	}
	if int64(len(body)) > c.opts.MaxEntryBytes {
		return false, "body larger than the entry limit", nil
	}
	names, ok := varyNames(header)
	if !ok {
		return false, "too many Vary fields", nil
	}
	if copyIn {
		header, body = header.Clone(), slices.Clone(body)
	}
	e := &Entry{
		Method:       req.Method,
		URL:          req.URL.String(),
		Status:       status,
		Header:       header,
		Body:         body,
		RequestTime:  requestTime,
		ResponseTime: responseTime,
		MediaType:    MediaType(header.Get("Content-Type")),
		VaryNames:    names,
	}
	if e.Body == nil {
		e.Body = []byte{}
	}
	for _, n := range names {
		e.VaryValues = append(e.VaryValues, varyValue(req.Header, n))
	}
	e.deriveWith(c.opts.Policy, respCC)
	if err := c.put(e); err != nil {
		if errors.Is(err, errInvalidated) {
			return false, "invalidated while the response was sent", nil
		}
		return false, "", err
	}
	c.stores.Add(1)
	return true, "", nil
}

// errInvalidated: put of a URL invalidated while its store was reserved.
var errInvalidated = errors.New("httpcache: invalidated during the store")

// Freshen updates a stored entry after its validation was answered 304
// (RFC 9111 §4.3.4): the stored header fields are replaced by those the 304
// carries (except the framing fields of §3.2), the times by those of the
// validation. It returns the updated entry to serve.
func (c *Cache) Freshen(old *Entry, header304 http.Header, requestTime, responseTime time.Time) (*Entry, error) {
	e := *old
	e.Header = old.Header.Clone()
	for k, vs := range header304 {
		switch k {
		case "Content-Length", "Content-Range", "Transfer-Encoding", "Content-Encoding":
			continue
		}
		e.Header[k] = slices.Clone(vs)
	}
	e.RequestTime, e.ResponseTime = requestTime, responseTime
	e.derive(c.opts.Policy)
	c.revalidated.Add(1)
	if err := c.put(&e); err != nil && !errors.Is(err, errInvalidated) {
		return &e, err
	}
	return &e, nil
}

// put writes e to the store and the index, replacing the variant with the
// same key, dropping the oldest variant past MaxVariants and evicting past
// MaxBytes.
func (c *Cache) put(e *Entry) error {
	pk := PrimaryKey(e.Method, e.URL)
	v := &variant{
		pk:         pk,
		mediaType:  e.MediaType,
		varyNames:  e.VaryNames,
		varyValues: e.VaryValues,
		storedAt:   e.ResponseTime.UnixNano(),
	}
	v.vk = variantKey(pk, e.MediaType, e.VaryNames, e.VaryValues)
	// The encoding is left to the writer goroutine; only its size is
	// needed here, for the byte accounting.
	v.size = int64(entrySize(e))

	// The index changes first, under mu; the records go to the writer,
	// which commits them in order with other writes (the disk is never
	// waited for under mu). An entry kept in the memory tier is served from
	// there until it is on disk; one too big for the tier is waited for,
	// so that a lookup never finds it in the index but not on disk.
	var drop []*variant
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	if r := c.mu.reserved[pk]; r != nil && r.invalidated {
		c.mu.Unlock()
		return errInvalidated
	}
	var replaced []byte
	for _, old := range c.mu.groups[pk] {
		if old.vk == v.vk {
			// Its metadata record is overwritten below; its data record,
			// numbered differently, is deleted.
			c.removeLocked(old)
			replaced = c.dataKey(old.seq)
			break
		}
	}
	for vs := c.mu.groups[pk]; len(vs) >= c.opts.MaxVariants; vs = c.mu.groups[pk] {
		drop = append(drop, vs[0])
		c.removeLocked(vs[0])
	}
	c.mu.seq++
	v.seq = c.mu.seq
	c.mu.groups[pk] = append(c.mu.groups[pk], v)
	v.elem = c.mu.lru.PushFront(v)
	c.mu.bytes += v.size
	c.makeHotLocked(v, e)
	hot := v.entry != nil
	drop = append(drop, c.evictLocked()...)
	op := writeOp{put: &pendingPut{entry: e, v: v}, del: c.recordKeys(drop)}
	if replaced != nil {
		op.del = append(op.del, replaced)
	}
	if !hot {
		op.done = make(chan error, 1)
	}
	// Queued under mu, so the writer sees the operations in index order.
	c.writes <- op
	c.mu.Unlock()
	if op.done != nil {
		return <-op.done
	}
	return nil
}

// recordKeys returns the record keys of variants dropped from the index.
func (c *Cache) recordKeys(vs []*variant) [][]byte {
	var keys [][]byte
	for _, v := range vs {
		keys = append(keys, c.dataKey(v.seq), c.key('m', v.vk[:]))
	}
	return keys
}

// deleteRecords queues the deletion of the records of variants already
// dropped from the index. Call it with mu held so that the deletion is
// queued in index order (the writer never takes mu, so this cannot
// deadlock).
func (c *Cache) deleteRecords(vs []*variant) {
	if len(vs) == 0 || c.mu.closed {
		return
	}
	c.writes <- writeOp{del: c.recordKeys(vs)}
}

// removeLocked drops v from the index (its records stay until
// deleteRecords).
func (c *Cache) removeLocked(v *variant) {
	if v.elem == nil {
		return
	}
	c.dropHotLocked(v)
	c.mu.lru.Remove(v.elem)
	v.elem = nil
	c.mu.bytes -= v.size
	vs := c.mu.groups[v.pk]
	vs = slices.DeleteFunc(vs, func(x *variant) bool { return x == v })
	if len(vs) == 0 {
		delete(c.mu.groups, v.pk)
	} else {
		c.mu.groups[v.pk] = vs
	}
}

// evictLocked removes least recently used variants from the index until
// the store fits, and returns them for deleteRecords.
func (c *Cache) evictLocked() []*variant {
	var out []*variant
	for c.mu.bytes > c.opts.MaxBytes && c.mu.lru.Len() > 0 {
		v := c.mu.lru.Back().Value.(*variant)
		c.removeLocked(v)
		out = append(out, v)
		c.evictions.Add(1)
	}
	return out
}

// Invalidate removes every stored variant for url (RFC 9111 §4.4: a
// successful unsafe request invalidates the target URI).
func (c *Cache) Invalidate(url string) error {
	pk := PrimaryKey(http.MethodGet, url)
	c.mu.Lock()
	if r := c.mu.reserved[pk]; r != nil {
		r.invalidated = true // its store, still to come, is dropped
	}
	vs := slices.Clone(c.mu.groups[pk])
	for _, v := range vs {
		c.removeLocked(v)
	}
	c.deleteRecords(vs)
	c.mu.Unlock()
	return nil
}

// MaxEntryBytes is the largest body the cache stores, so that callers need
// not buffer more.
func (c *Cache) MaxEntryBytes() int64 { return c.opts.MaxEntryBytes }

// Stats returns the current counters.
func (c *Cache) Stats() Stats {
	s := Stats{
		Hits:        c.hits.Load(),
		Misses:      c.misses.Load(),
		Stale:       c.stale.Load(),
		Revalidated: c.revalidated.Load(),
		Stores:      c.stores.Load(),
		Evictions:   c.evictions.Load(),
	}
	c.mu.Lock()
	s.Entries = c.mu.lru.Len()
	s.Bytes = c.mu.bytes
	s.HotEntries = c.mu.hot.Len()
	s.HotBytes = c.mu.hotBytes
	c.mu.Unlock()
	if n := s.Hits + s.Misses + s.Stale; n > 0 {
		s.HitRatio = float64(s.Hits) / float64(n)
	}
	return s
}

func variantKey(pk, mediaType string, names, values []string) [16]byte {
	h := sha256.New()
	h.Write([]byte(pk))
	h.Write([]byte{0})
	h.Write([]byte(mediaType))
	for i := range names {
		h.Write([]byte{0})
		h.Write([]byte(names[i]))
		h.Write([]byte{1})
		h.Write([]byte(values[i]))
	}
	var k [16]byte
	copy(k[:], h.Sum(nil))
	return k
}

// metaVersion is the layout of the metadata records: 2 added the data
// record number; 3 has the same layout, and marks caches written since
// the override was refused to requests with credentials (override.go).
// Records of earlier versions are dropped at Open as corrupt, with their
// data records: those of version 1 had data keyed by variant key, and
// those of version 2 may hold a no-store page fetched with one user's
// cookie, which no other user may be served.
const metaVersion = 3

// encodeMeta serializes the index record of v (without its key).
func encodeMeta(v *variant) []byte { return appendMeta(nil, v) }

// appendMeta appends the index record of v to b.
func appendMeta(b []byte, v *variant) []byte {
	b = append(b, metaVersion)
	b = appendString(b, v.pk)
	b = appendString(b, v.mediaType)
	b = binary.AppendUvarint(b, uint64(v.size))
	b = binary.AppendVarint(b, v.storedAt)
	b = binary.AppendUvarint(b, v.seq)
	b = binary.AppendUvarint(b, uint64(len(v.varyNames)))
	for i := range v.varyNames {
		b = appendString(b, v.varyNames[i])
		b = appendString(b, v.varyValues[i])
	}
	return b
}

func decodeMeta(raw []byte) (*variant, error) {
	d := decoder{b: raw}
	if ver := d.byte(); ver != metaVersion {
		return nil, fmt.Errorf("%w: meta version %d", errCorrupt, ver)
	}
	v := &variant{}
	v.pk = d.string()
	v.mediaType = d.string()
	v.size = int64(d.uvarint(1 << 40))
	v.storedAt = d.varint()
	v.seq = d.uvarint(1<<64 - 1)
	n := int(d.uvarint(MaxVaryFields))
	for i := 0; i < n && d.err == nil; i++ {
		v.varyNames = append(v.varyNames, d.string())
		v.varyValues = append(v.varyValues, d.string())
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: meta trailing bytes", errCorrupt)
	}
	if d.err != nil {
		return nil, d.err
	}
	return v, nil
}
