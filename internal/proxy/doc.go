// Package proxy is Courtesy's polite forward proxy (the polite-proxy
// thesis §4.7.1-§4.7.2, §5.1): naive scripts point http_proxy at it and
// become polite without changing code.
//
// Every absolute-form request passes, in order:
//
//	access control  client network (Config.AllowedClients), Proxy-Authorization
//	loop check      a request for the proxy itself, or one carrying its Via token → 508
//	SSRF guard      loopback/private/link-local destinations → 403 (Config.AllowPrivate)
//	cache           RFC 9111 via internal/httpcache: fresh → served, stale → revalidated;
//	                Cache-Status (RFC 9211) beside X-Cache
//	request body    read whole before admission, at a minimum rate (→ 408), so a
//	                slow client holds no host's slot
//	robots.txt      disallowed → 403 with a plain-text or JSON reason (by Accept)
//	gate            reject mode: 429 + Retry-After (seconds, rounded up) and
//	                X-Courtesy-Retry-After-Ms; wait mode: held in a per-host FIFO
//	                until the gate grants a permit (bounded by MaxWait → 429;
//	                queues bounded per host and in total → 503)
//	forward         hop-by-hop fields removed (RFC 9110 §7.6.1); GET and HEAD to
//	                http:// origins on the proxy's own keep-alive pool, run on the
//	                handler's goroutine (internal/h1), the rest on a tuned http.Transport
//	cache store     complete bodies up to the cache's entry limit, after the
//	                response is sent (the URL reserved meanwhile: httpcache.Reserve);
//	                a body cut at MaxResponseBytes aborts the client connection
//
// Modes (Config.Mode, or per request with X-Courtesy-Mode): reject, wait
// (the default) and sequential, in which the responses to one client are
// delivered in the order its requests arrived, each within
// SequentialTimeout (or X-Courtesy-Timeout). A client is its
// X-Courtesy-Client header, else its source IP address.
//
// CONNECT is tunnelled to the allowed ports (443 by default) with the gate
// applied per host and robots.txt at host level ("/" disallowed → 403).
// With Options.MITM (a CA from LoadOrCreateCA) the proxy terminates TLS
// itself and the requests inside pass the whole pipeline as https URLs.
//
// Files: proxy.go (New, Config, Handler), serve.go (the ServeHTTP
// pipeline), admit.go (the admission prelude and the gate's refusals),
// forward.go (to the origin and back), cache.go (cache answers,
// Cache-Status), body.go (request bodies), record.go (trace, metrics,
// log), respond.go (refusal bodies), connect.go and upgrade.go (tunnels,
// WebSocket), guard.go and tlsverify.go (destinations), queue.go and
// sequence.go (wait and sequential modes), latency.go (low-load mode).
//
// Use:
//
//	p, _ := proxy.New(proxy.Config{}, proxy.Options{Gate: gate, Cache: cache})
//	srv := proxy.NewServer(p.Handler(api), cfg, logger)  // origin-form → api
//	srv.Serve(ln)
package proxy
