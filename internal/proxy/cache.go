// Cache answers: responses served from the cache, and Cache-Status.

package proxy

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/httpcache"
)

// serveEntry answers from a stored response (RFC 9111 §4), with Age, and
// 304 when the client's own validator matches. fwd is why the cache asked
// the origin first (fwdReason), "" for a hit.
func (p *Proxy) serveEntry(w http.ResponseWriter, r *http.Request, x *exchange, e *httpcache.Entry, label, outcome, fwd string) {
	h := w.Header()
	for k, v := range e.Header {
		h[k] = v // shared, never appended to: Entry is immutable
	}
	via := e.Header["Via"]
	h["Via"] = append(via[:len(via):len(via)], p.via)
	now := p.now()
	h.Set("Age", strconv.FormatInt(int64(e.Age(now)/time.Second), 10))
	h.Set(HeaderCache, label)
	ttl := strconv.FormatInt(int64((e.Lifetime-e.Age(now))/time.Second), 10)
	if label == "HIT" {
		addCacheStatus(h, cacheStatusName+"; hit; ttl="+ttl)
	} else {
		addCacheStatus(h, cacheStatusName+"; fwd="+fwd+"; fwd-status=304; ttl="+ttl)
	}
	x.Cache, x.outcome, x.status = label, outcome, e.Status
	if e.Status == http.StatusOK && notModified(r.Header, e.Header) {
		x.status = http.StatusNotModified
		for _, k := range []string{"Content-Length", "Content-Type", "Content-Encoding"} {
			delete(h, k)
		}
		w.WriteHeader(http.StatusNotModified)
		return
	}
	noSniff(h)
	if _, ok := h["Content-Length"]; !ok && e.Status != http.StatusNoContent && e.Status >= 200 {
		// Stored whole: the length is known even when the origin
		// streamed it (chunked or close-delimited), so the client need
		// not be sent chunks, nor an HTTP/1.0 client a closed connection.
		h["Content-Length"] = []string{strconv.Itoa(len(e.Body))}
	}
	w.WriteHeader(e.Status)
	if r.Method != http.MethodHead {
		n, _ := w.Write(e.Body)
		x.Bytes = int64(n)
	}
	// Sent now, as forward does, so that the log line, the trace and the
	// metrics are not part of the client's latency; only when the framing
	// is known, or the server would have to chunk what it can send whole.
	if _, ok := h["Content-Length"]; ok {
		p.record(x)
		_ = http.NewResponseController(w).Flush()
	}
}

// notModified evaluates the client's If-None-Match (weak comparison) or,
// without it, If-Modified-Since against a stored response (RFC 9110
// §13.1.2, §13.1.3).
func notModified(req, stored http.Header) bool {
	if inm := req.Get("If-None-Match"); inm != "" {
		etag := strings.TrimPrefix(stored.Get("ETag"), "W/")
		for t := range strings.SplitSeq(inm, ",") {
			t = strings.TrimSpace(t)
			if t == "*" || (etag != "" && strings.TrimPrefix(t, "W/") == etag) {
				return true
			}
		}
		return false
	}
	if ims := req.Get("If-Modified-Since"); ims != "" {
		// An invalid date is ignored (§13.1.3), by the strict parser.
		t, ok := httpcache.ParseHTTPDate(ims)
		lm, ok2 := httpcache.ParseHTTPDate(stored.Get("Last-Modified"))
		return ok && ok2 && !lm.After(t)
	}
	return false
}

// Cache-Status (RFC 9211), as current Squid, nginx and Varnish send it,
// beside X-Cache: one list member per cache that handled the response, the
// one nearest the origin first, so this proxy's member goes last.
//
//	courtesy; hit; ttl=3540                      served from the cache
//	courtesy; fwd=stale; fwd-status=304; ttl=60  revalidated, then served
//	courtesy; fwd=miss; fwd-status=200           forwarded: nothing usable stored
//	courtesy; fwd=stale; fwd-status=200          forwarded: a stored response was stale
//	courtesy; fwd=request; fwd-status=304; ttl=60 the stored response was fresh, but the request (no-cache, max-age=0) asked for validation
//	courtesy; fwd=method; fwd-status=201         forwarded: the method is not cached
//	courtesy; fwd=bypass; fwd-status=200         forwarded: the cache is off

// cacheStatusName is this cache's name in Cache-Status.
const cacheStatusName = "courtesy"

// addCacheStatus appends member to h's Cache-Status. The append is capped,
// so that a field shared with a stored entry is never written into.
func addCacheStatus(h http.Header, member string) {
	cs := h["Cache-Status"]
	h["Cache-Status"] = append(cs[:len(cs):len(cs)], member)
}

// fwdStatus is the Cache-Status member of a forwarded response: why the
// cache did not answer (RFC 9211 §2.2's fwd) and the origin's status.
func (p *Proxy) fwdStatus(r *http.Request, stale *httpcache.Entry, status int) string {
	fwd := "miss"
	switch {
	case p.cache == nil:
		fwd = "bypass"
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		fwd = "method"
	case stale != nil:
		fwd = p.fwdReason(stale)
	}
	return cacheStatusName + "; fwd=" + fwd + "; fwd-status=" + strconv.Itoa(status)
}

// fwdReason is why a stored response e was not served without asking the
// origin (RFC 9211 §2.2): "stale", or "request" when it was fresh and
// only the request's directives (no-cache, max-age, min-fresh, Pragma)
// ruled it out.
func (p *Proxy) fwdReason(e *httpcache.Entry) string {
	if e.Lifetime > e.Age(p.now()) && (!e.Control.NoCache || e.Overridden) {
		return "request"
	}
	return "stale"
}
