// Package httpcache is the proxy's shared HTTP cache: RFC 9111 freshness,
// validation and storage rules as pure functions, and a Cache that keeps
// responses in the embedded store (internal/kv) with a size bound, LRU
// eviction, a bounded in-memory tier of hot entries and statistics.
//
// The pure part answers the questions of RFC 9111 one by one:
//
//	ParseCacheControl  the Cache-Control field (§5.2), request or response
//	Storable           may this response be stored at all (§3)
//	Lifetime           its freshness lifetime (§4.2.1, heuristics §4.2.2)
//	InitialAge         its corrected initial age (§4.2.3)
//	Decide             serve, validate, or answer 504 (§4.2, §5.2.1)
//
// The Cache is what the proxy calls:
//
//	c, _ := httpcache.Open(db, httpcache.Options{})
//	defer c.Close()               // before db.Close
//	res := c.Lookup(req, now)     // Fresh, Stale (validate), Miss, or GatewayTimeout
//	c.Store(req, resp, body, t0, t1)
//	c.Freshen(res.Entry, resp304, t0, t1) // after a successful revalidation
//
// Keys follow seed 000 §5.4: an entry is found by method and URL, then one
// of up to Options.MaxVariants stored variants is chosen by the request's
// values of the response's Vary fields (RFC 9111 §4.1) and by content type:
// a request whose Accept field names specific media types is only served a
// variant of an acceptable type. (The thesis keyed on the request's
// Content-Type field; Accept is the field HTTP defines for this, and it
// gives the thesis' three keys — exact type, "*/*" and none — for free.)
//
// The thesis' override (seed 000 §4.6) is Options.Override, on by default:
// a response marked no-cache or no-store is still stored and treated as
// fresh for Options.OverrideLifetime (one day). Clients keep full control
// through request directives (no-cache, max-age, ...), which are always
// honoured.
package httpcache
