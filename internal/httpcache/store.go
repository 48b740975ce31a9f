// Storing: Store, Freshen after a 304, Invalidate after an unsafe method.

package httpcache

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"
)

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
	respCC := ParseCacheControl(header).forStatus(status)
	if ok, why := Storable(req.Method, req.Header, reqCC, status, header, respCC, c.opts.Policy); !ok {
		return false, why, nil
	}
	if int64(len(body)) > c.opts.MaxEntryBytes {
		return false, "body larger than the entry limit", nil
	}
	names, ok := varyNames(header)
	for _, f := range implicitVary(req.Header, header) {
		if ok && !slices.Contains(names, f) {
			names = append(names, f)
			slices.Sort(names)
			ok = len(names) <= MaxVaryFields
		}
	}
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

// implicitVary returns the request fields a response varies on although
// it may not say so, which store adds to its Vary fields:
//
//   - Cookie and Authorization, when the request has them: the response
//     may be one user's page even when the origin forgot to mark it (no
//     private, no Vary: Cookie; must-revalidate or s-maxage on an
//     authenticated answer, which RFC 9111 §3.5 lets a shared cache
//     reuse), so only a request with the same cookies or credentials may
//     be answered from it;
//   - Accept-Encoding, when the response has a content coding: an origin
//     that compresses for clients that ask, without Vary: Accept-Encoding,
//     would otherwise have its gzip served to a client that cannot read
//     it (Python's urllib, curl without --compressed).
func implicitVary(reqHeader, respHeader http.Header) []string {
	var fs []string
	for _, f := range credentialFields {
		if len(reqHeader.Values(f)) > 0 {
			fs = append(fs, f)
		}
	}
	if ce := strings.TrimSpace(respHeader.Get("Content-Encoding")); ce != "" && !strings.EqualFold(ce, "identity") {
		fs = append(fs, "Accept-Encoding")
	}
	return fs
}

// errInvalidated: put of a URL invalidated while its store was reserved.
var errInvalidated = errors.New("httpcache: invalidated during the store")

// Freshen updates a stored entry after its validation was answered 304
// (RFC 9111 §4.3.4): the stored header fields are replaced by those the 304
// carries (except the framing fields of §3.2), the times by those of the
// validation. It returns the updated entry to serve.
//
// A Set-Cookie on the 304 belongs to the client whose request was
// validated: the entry returned carries it, the stored one does not
// (unless Policy.StoreSetCookie), or every later client would be handed
// that client's session.
func (c *Cache) Freshen(old *Entry, header304 http.Header, requestTime, responseTime time.Time) (*Entry, error) {
	e := *old
	e.Header = old.Header.Clone()
	var cookies []string
	for k, vs := range header304 {
		switch k {
		case "Content-Length", "Content-Range", "Transfer-Encoding", "Content-Encoding":
			continue
		case "Set-Cookie":
			if !c.opts.Policy.StoreSetCookie {
				cookies = slices.Clone(vs)
				continue
			}
		}
		e.Header[k] = slices.Clone(vs)
	}
	e.RequestTime, e.ResponseTime = requestTime, responseTime
	e.derive(c.opts.Policy)
	c.revalidated.Add(1)
	var err error
	if ok, _ := Storable(http.MethodGet, http.Header{}, ParseCacheControlValues(nil), e.Status, e.Header, e.Control, c.opts.Policy); ok {
		err = c.put(&e)
	} else {
		// The 304 made the stored response one a shared cache must not
		// keep (private, no-store, Vary: *): it answers the client whose
		// request was validated, and is no longer stored for the next.
		c.drop(&e)
	}
	if errors.Is(err, errInvalidated) {
		err = nil
	}
	if len(cookies) > 0 {
		served := e
		served.Header = e.Header.Clone()
		served.Header["Set-Cookie"] = cookies
		return &served, err
	}
	return &e, err
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

// drop removes the stored variant e replaces, if any.
func (c *Cache) drop(e *Entry) {
	pk := PrimaryKey(e.Method, e.URL)
	vk := variantKey(pk, e.MediaType, e.VaryNames, e.VaryValues)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, v := range c.mu.groups[pk] {
		if v.vk == vk {
			c.removeLocked(v)
			c.deleteRecords([]*variant{v})
			return
		}
	}
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
