// Lookup, with the reservation a store announces before it happens.

package httpcache

import (
	"encoding/binary"
	"fmt"
	"net/http"
	"time"
)

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
