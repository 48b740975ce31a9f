// Package fetch is the crawler's HTTP client: one
// request per call, no redirects followed, bounded in time and size, with
// the bytes kept as transferred for WARC records. The politeness gate is
// not in here: the crawler asks the gate, then calls Fetch.
//
//	c, err := fetch.New(fetch.Config{UserAgent: "mybot/1.0 (+https://example.org/bot)"})
//	defer c.Close()
//	r, err := c.Fetch(ctx, u, fetch.Request{AcceptLanguage: "pt, en;q=0.5"})
//	if err != nil {
//		switch fetch.KindOf(err) { // KindDNS, KindConnect, KindTLS, KindTimeout, KindReset, ...
//		}
//	}
//	// r.Status, r.Header, r.RawBody (content-coded), r.Body (decoded),
//	// r.Truncated/r.TruncReason, r.Redirect (3xx Location, resolved),
//	// r.HTTPHeaderBytes() and r.RequestHeaderBytes() for WARC.
//
// What a Client does on every request:
//
//   - sends an identifying User-Agent (name, version, contact URL; the Viuva Negra report
//     §5.4), Accept, and Accept-Encoding "gzip, deflate, br" (its own,
//     with net/http's transparent decompression off);
//   - speaks HTTP/1.1, and HTTP/2 over TLS when the server offers it;
//     keeps at least 4 idle connections per host; http:// GETs and HEADs
//     run on the caller's goroutine through internal/h1, the rest through
//     http.Transport (same dialer, bounds and records);
//   - dials through the --resolve rules (internal/resolve), then a DNS
//     cache with a TTL, a negative TTL and an LRU size bound;
//   - keeps cookies per site (registrable domain), bounded, so that sites
//     do not fall back to session ids in URLs;
//   - bounds connect time (10 s), total time (30 s; a body cut by it is
//     returned truncated), raw body size (2 MB, the Viuva Negra report §6, truncation
//     recorded, not an error) and decoded size (decompression bombs);
//   - returns 3xx responses as they are, with the Location resolved in
//     Result.Redirect: the crawler queues it as a link;
//   - optionally sends a HEAD first for URLs whose extension suggests a
//     non-HTML format and skips the GET when the type is not wanted (the Viuva Negra report
//     §5.1).
//
// Per request, the REGP directives Language, Encoding and Cookie (REGP
// §3.2.9-3.2.10) are passed in Request.
package fetch
