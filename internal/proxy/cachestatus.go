package proxy

import (
	"net/http"
	"strconv"

	"github.com/courtesy-crawler/courtesy/internal/httpcache"
)

// Cache-Status (RFC 9211), as current Squid, nginx and Varnish send it,
// beside X-Cache: one list member per cache that handled the response, the
// one nearest the origin first, so this proxy's member goes last.
//
//	courtesy; hit; ttl=3540                      served from the cache
//	courtesy; fwd=stale; fwd-status=304; ttl=60  revalidated, then served
//	courtesy; fwd=miss; fwd-status=200           forwarded: nothing usable stored
//	courtesy; fwd=stale; fwd-status=200          forwarded: a stored response was stale
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
		fwd = "stale"
	}
	return cacheStatusName + "; fwd=" + fwd + "; fwd-status=" + strconv.Itoa(status)
}
