// Package httpcache is the proxy's shared HTTP cache: RFC 9111 freshness,
// validation and storage rules as pure functions, and a Cache that keeps
// responses in the embedded store (internal/kv) with a size bound, LRU
// eviction, a bounded in-memory tier of hot entries and statistics.
//
// The pure part answers the questions of RFC 9111 one by one:
//
//	ParseCacheControl  the Cache-Control field (§5.2), request or response
//	Storable           may this response be stored at all (§3)
//	OverrideRefusal    may the no-store override apply to it (override.go)
//	Lifetime           its freshness lifetime (§4.2.1, heuristics §4.2.2)
//	InitialAge         its corrected initial age (§4.2.3)
//	Decide             serve, validate, or answer 504 (§4.2, §5.2.1)
//
// The Cache is what the proxy calls:
//
//	c, _ := httpcache.Open(db, httpcache.Options{})
//	defer c.Close()                                    // before db.Close
//	res := c.Lookup(req, now)                          // Fresh, Stale (validate), Miss, or GatewayTimeout
//	ok, why, err := c.Store(req, status, header, body, sent, received)
//	e, err := c.Freshen(res.Entry, header304, sent, received) // after a 304 to our validation
//	release := c.Reserve(url)                          // a store is coming: lookups wait for it
//	c.Invalidate(url)                                  // after a successful unsafe request (§4.4)
//
// StoreOwned is Store for a caller that hands header and body over
// without a copy (the proxy, which has just relayed them).
//
// Keys: an entry is found by method and URL, then one of up to
// Options.MaxVariants stored variants is chosen by the request's values
// of the response's Vary fields (RFC 9111 §4.1; a response to a request
// with Cookie or Authorization varies on it whatever it says, a request
// with one matches only such a variant, and a compressed response varies
// on Accept-Encoding: implicitVary) and by content type: a
// request whose Accept field names specific media types is only served a
// variant of an acceptable type. (The polite-proxy thesis keyed on the
// request's Content-Type field; Accept is the field HTTP defines for this,
// and it gives the thesis' three keys — exact type, "*/*" and none — for
// free.)
//
// The thesis' no-store override is on unless Policy.DisableOverride: a
// response marked no-cache or no-store is still stored and treated as
// fresh for Policy.OverrideLifetime (one day), except when it is tied to
// one user (OverrideRefusal: Cookie, Authorization, Set-Cookie, private,
// Vary on *, Cookie or Authorization). Clients keep full control through
// request directives (no-cache, max-age, ...), which are always honoured.
//
// Files: options.go (Options), cache.go (Cache, Open, Close, Stats),
// lookup.go (Lookup, Reserve), variants.go (Vary and media-type
// selection), store.go (Store, Freshen, Invalidate), lru.go (eviction and
// the memory tier), writer.go (the batching writer goroutine), meta.go and
// entry.go (record encodings), freshness.go, cachecontrol.go, accept.go
// and override.go (the pure rules).
package httpcache
