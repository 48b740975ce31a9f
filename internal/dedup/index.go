package dedup

import (
	"container/list"
	"errors"
	"fmt"
	"sync"

	"github.com/courtesy-crawler/courtesy/internal/kv"
)

// Defaults of IndexOptions.
const (
	// DefaultMaxPerSite follows the Viúva Negra report §6: a site is cut at 5,000 URLs,
	// so remembering 5,000 pages covers a whole site.
	DefaultMaxPerSite = 5000
	// DefaultMaxSites is high enough that a crawl serving thousands of
	// hosts round-robin does not evict (and, with a DB, reload) a site
	// before every page; DefaultMaxHashes bounds the memory instead.
	DefaultMaxSites = 16384
	// DefaultMaxHashes is about 125 MB of hashes and tables in all.
	DefaultMaxHashes = 2 << 20
	// DefaultDistance is Manku et al.'s threshold for 64-bit simhashes.
	DefaultDistance = 3
	// maxDistance: 4 blocks find every match within 3 bits (pigeonhole).
	maxDistance = 3
)

// IndexOptions bound an Index. The zero value uses the defaults.
type IndexOptions struct {
	// MaxPerSite is how many hashes a site keeps; the oldest is forgotten
	// first. Default 5,000. About 60 bytes per hash.
	MaxPerSite int
	// MaxSites is how many sites are kept; the least recently used site is
	// forgotten first. Default 16,384 (a few hundred bytes each when
	// empty).
	MaxSites int
	// MaxHashes bounds the hashes held in memory over all sites (about 60
	// bytes each); past it the least recently used sites are forgotten
	// (with a DB they are loaded again when next used). Default 2 Mi.
	MaxHashes int
	// Distance is the largest Hamming distance Near reports; 0..3,
	// default 3. Zero means the default; use Exact for distance 0 only.
	Distance int
	// Exact makes Near report identical hashes only.
	Exact bool
	// DB, when set, persists every site's hashes (bucket "dedup/near/",
	// see store.go) so that a resumed crawl still knows them: a site's
	// hashes are loaded the first time the site is used after a restart
	// (or after the site was evicted from memory). nil keeps the index in
	// memory only.
	DB *kv.DB
	// OnError is told when the store fails (the index then goes on in
	// memory for that site); nil ignores store errors.
	OnError func(error)
}

// Validate reports a bad option.
func (o *IndexOptions) Validate() error {
	if o.MaxPerSite < 0 || o.MaxSites < 0 || o.MaxHashes < 0 {
		return errors.New("dedup: negative MaxPerSite, MaxSites or MaxHashes")
	}
	if o.Distance < 0 || o.Distance > maxDistance {
		return fmt.Errorf("dedup: Distance %d not in 0..%d (four 16-bit blocks find at most 3)", o.Distance, maxDistance)
	}
	return nil
}

// Index remembers the simhashes of recent pages per site and finds near
// duplicates: a 64-bit hash is split into four 16-bit blocks; two hashes
// within distance 3 agree on at least one block (pigeonhole), so four
// exact-match tables, one per block, yield every candidate, and only
// candidates are compared bit by bit. Safe for concurrent use.
type Index struct {
	opts  IndexOptions
	store *store // nil: memory only
	mu    struct {
		sync.Mutex
		sites  map[string]*list.Element // of *site
		lru    list.List                // front: most recently used
		hashes int                      // held over all sites
	}
}

// site holds one site's hashes in a ring and the four block tables that
// point into it.
type site struct {
	name   string
	hashes []uint64 // ring of up to MaxPerSite
	urls   []string // URL of each hash, by slot ("" when not known, as after a reload)
	next   int      // slot the next hash goes to
	tables [4]map[uint16][]int32
	seq    uint64 // sequence number of the next hash added (its store key)
}

// NewIndex returns an empty index.
func NewIndex(opts IndexOptions) (*Index, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.MaxPerSite == 0 {
		opts.MaxPerSite = DefaultMaxPerSite
	}
	if opts.MaxSites == 0 {
		opts.MaxSites = DefaultMaxSites
	}
	if opts.MaxHashes == 0 {
		opts.MaxHashes = DefaultMaxHashes
	}
	if opts.Distance == 0 && !opts.Exact {
		opts.Distance = DefaultDistance
	}
	if opts.Exact {
		opts.Distance = 0
	}
	x := &Index{opts: opts}
	if opts.DB != nil {
		x.store = &store{db: opts.DB.Pebble(), w: opts.DB.Bucket(storePrefix).Deferred()}
	}
	x.mu.sites = map[string]*list.Element{}
	return x, nil
}

func block(h uint64, i int) uint16 { return uint16(h >> (16 * i)) }

// Near returns the stored hash of site closest to h, if one lies within
// the configured distance.
func (x *Index) Near(siteName string, h uint64) (match uint64, dist int, ok bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	el, found := x.mu.sites[siteName]
	if !found {
		if x.store == nil {
			return 0, 0, false
		}
		// A site not in memory may still be in the store.
		return x.lockedSite(siteName).near(h, x.opts.Distance)
	}
	x.mu.lru.MoveToFront(el)
	return el.Value.(*site).near(h, x.opts.Distance)
}

func (s *site) near(h uint64, maxDist int) (uint64, int, bool) {
	best, bestDist := uint64(0), maxDist+1
	for i := range 4 {
		for _, slot := range s.tables[i][block(h, i)] {
			c := s.hashes[slot]
			if d := Hamming(c, h); d < bestDist {
				best, bestDist = c, d
				if d == 0 {
					return best, 0, true
				}
			}
		}
	}
	if bestDist > maxDist {
		return 0, 0, false
	}
	return best, bestDist, true
}

// Add remembers h for site. An identical hash already stored is not added
// twice.
func (x *Index) Add(siteName string, h uint64) {
	x.mu.Lock()
	s := x.lockedSite(siteName)
	seq, added := x.addLocked(s, h)
	x.mu.Unlock()
	if added {
		x.persist(siteName, seq, h)
	}
}

// Check returns the closest stored near-duplicate of h like Near, and adds
// h when there is none: the crawler's one call per page.
func (x *Index) Check(siteName string, h uint64) (match uint64, dist int, ok bool) {
	x.mu.Lock()
	s := x.lockedSite(siteName)
	if m, d, ok := s.near(h, x.opts.Distance); ok {
		x.mu.Unlock()
		return m, d, true
	}
	seq, added := x.addLocked(s, h)
	x.mu.Unlock()
	if added {
		x.persist(siteName, seq, h)
	}
	return 0, 0, false
}

// Match is a near-duplicate CheckURL found.
type Match struct {
	// Hash is the stored hash, Dist its distance from the one checked.
	Hash uint64
	Dist int
	// URL is the page the stored hash came from: "" when it was added
	// without one, or loaded from the store after a restart (URLs are
	// kept in memory only).
	URL string
}

// CheckURL is Check for the page at url: it also remembers url with h,
// and names the page a near-duplicate copies, so that the crawler can
// tell traps (package traps) and report example pairs. The URLs cost
// their length in memory per hash held (bounded by MaxHashes).
func (x *Index) CheckURL(siteName, url string, h uint64) (Match, bool) {
	x.mu.Lock()
	s := x.lockedSite(siteName)
	if m, d, ok := s.near(h, x.opts.Distance); ok {
		u := s.urlOf(m)
		x.mu.Unlock()
		return Match{Hash: m, Dist: d, URL: u}, true
	}
	seq, added := x.addLocked(s, h)
	if added {
		s.setURL(h, url)
	}
	x.mu.Unlock()
	if added {
		x.persist(siteName, seq, h)
	}
	return Match{}, false
}

// urlOf returns the URL stored with hash h, or "".
func (s *site) urlOf(h uint64) string {
	for _, slot := range s.tables[0][block(h, 0)] {
		if s.hashes[slot] == h && int(slot) < len(s.urls) {
			return s.urls[slot]
		}
	}
	return ""
}

// setURL records url for the slot holding h (the one just added).
func (s *site) setURL(h uint64, url string) {
	slot := (s.next - 1 + len(s.hashes)) % len(s.hashes)
	if s.hashes[slot] != h {
		return
	}
	for len(s.urls) <= slot {
		s.urls = append(s.urls, "")
	}
	s.urls[slot] = url
}

// Flush commits the hashes added since the last Flush, without an fsync
// (see store). The crawler calls it right before each synced frontier
// commit, which then makes them durable too.
func (x *Index) Flush() error {
	if x.store == nil {
		return nil
	}
	return x.store.w.Flush()
}

// persist writes one added hash to the store, outside the index lock.
func (x *Index) persist(siteName string, seq, h uint64) {
	if x.store == nil {
		return
	}
	if err := x.store.append(siteName, seq, h, x.opts.MaxPerSite); err != nil && x.opts.OnError != nil {
		x.opts.OnError(err)
	}
}

// lockedSite returns the site like siteLocked, loading its hashes from
// the store first when it is not in memory. It is called with x.mu held
// and returns with it held, but drops it while reading the store, so a
// slow disk read of one site does not stall the others.
func (x *Index) lockedSite(name string) *site {
	if el, ok := x.mu.sites[name]; ok {
		x.mu.lru.MoveToFront(el)
		return el.Value.(*site)
	}
	if x.store == nil {
		return x.siteLocked(name)
	}
	x.mu.Unlock()
	// The site's newest hashes may still be queued (Flush).
	hashes, next, err := x.store.loadFlushed(name, x.opts.MaxPerSite)
	x.mu.Lock()
	if err != nil && x.opts.OnError != nil {
		x.opts.OnError(err)
	}
	if el, ok := x.mu.sites[name]; ok {
		// Another caller loaded it meanwhile.
		x.mu.lru.MoveToFront(el)
		return el.Value.(*site)
	}
	s := x.siteLocked(name)
	for _, h := range hashes {
		x.addLocked(s, h)
	}
	s.seq = next
	return s
}

// Forget drops a site from memory (e.g. when its crawl is done). With a
// DB the site's hashes stay stored and are loaded again if it is used
// again.
func (x *Index) Forget(siteName string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if el, ok := x.mu.sites[siteName]; ok {
		x.mu.lru.Remove(el)
		delete(x.mu.sites, siteName)
		x.mu.hashes -= len(el.Value.(*site).hashes)
	}
}

// Len returns the number of sites and of hashes held.
func (x *Index) Len() (sites, hashes int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, el := range x.mu.sites {
		hashes += len(el.Value.(*site).hashes)
	}
	return len(x.mu.sites), hashes
}

// siteLocked returns the site, creating it and evicting the least
// recently used one beyond MaxSites.
func (x *Index) siteLocked(name string) *site {
	if el, ok := x.mu.sites[name]; ok {
		x.mu.lru.MoveToFront(el)
		return el.Value.(*site)
	}
	for len(x.mu.sites) >= x.opts.MaxSites {
		x.evictLocked()
	}
	s := &site{name: name}
	for i := range s.tables {
		s.tables[i] = map[uint16][]int32{}
	}
	x.mu.sites[name] = x.mu.lru.PushFront(s)
	return s
}

// addLocked adds h to s, counts it, and forgets least recently used
// other sites while the index holds more than MaxHashes.
func (x *Index) addLocked(s *site, h uint64) (seq uint64, added bool) {
	n := len(s.hashes)
	seq, added = s.add(h, x.opts.MaxPerSite)
	x.mu.hashes += len(s.hashes) - n
	for x.mu.hashes > x.opts.MaxHashes && x.mu.lru.Len() > 1 && x.mu.lru.Back().Value.(*site) != s {
		x.evictLocked()
	}
	return seq, added
}

// evictLocked forgets the least recently used site.
func (x *Index) evictLocked() {
	old := x.mu.lru.Back()
	x.mu.lru.Remove(old)
	s := old.Value.(*site)
	delete(x.mu.sites, s.name)
	x.mu.hashes -= len(s.hashes)
}

// add stores h unless it is there already; it reports the sequence
// number h got and whether it was added.
func (s *site) add(h uint64, limit int) (seq uint64, added bool) {
	// Skip exact repeats: they add nothing and would grow one bucket.
	for _, slot := range s.tables[0][block(h, 0)] {
		if s.hashes[slot] == h {
			return 0, false
		}
	}
	slot := s.next
	if len(s.hashes) < limit {
		s.hashes = append(s.hashes, h)
	} else {
		// Forget the oldest hash in this slot.
		old := s.hashes[slot]
		for i := range 4 {
			b := block(old, i)
			slots := s.tables[i][b]
			for j, v := range slots {
				if int(v) == slot {
					slots[j] = slots[len(slots)-1]
					slots = slots[:len(slots)-1]
					break
				}
			}
			if len(slots) == 0 {
				delete(s.tables[i], b)
			} else {
				s.tables[i][b] = slots
			}
		}
		s.hashes[slot] = h
		if slot < len(s.urls) {
			s.urls[slot] = "" // the URL of the forgotten hash
		}
	}
	for i := range 4 {
		b := block(h, i)
		s.tables[i][b] = append(s.tables[i][b], int32(slot))
	}
	s.next = (slot + 1) % limit
	seq = s.seq
	s.seq++
	return seq, true
}
