// Package h1 is an HTTP/1.1 keep-alive client for body-less GET and HEAD
// requests over plain TCP (http:// URLs), and over TLS (https://) when
// given a TLS configuration: the commonest exchange of both the proxy
// (every cache miss of a naive script) and the crawler (every page).
//
// It keeps connections alive per origin address, like http.Transport,
// but runs the whole exchange on the caller's goroutine: the request is
// written and the response read by the caller itself. http.Transport
// hands every request to a per-connection writer goroutine and every
// response back from a reader goroutine, three or four goroutine wake-ups
// per request that, on a loaded machine, each wait for a core; measured
// at one proxy client they were most of the proxy's added latency, and in
// the crawl benchmark the two goroutines per connection were ~10 % of CPU
// (docs/performance.md). Over TLS it offers only HTTP/1.1 (ALPN), so that
// the exchange's bytes are known (WithWire). Everything else (request
// bodies, other methods, HTTP/2, upstream proxies) stays with
// http.Transport: Handles says which requests a Client takes.
//
// The framing of requests and responses is net/http's own (Request.Write,
// http.ReadResponse), so both clients put the same bytes on the wire and
// read responses with the same rules (RFC 9112).
//
//	c := h1.New(h1.Options{Dial: dialer.DialContext, MaxIdlePerHost: 4})
//	defer c.CloseIdle()
//	if c.Handles(req) {
//		resp, err := c.RoundTrip(req, 30*time.Second)
//		...
//		resp.Body.Close() // after reading it to the end, to keep the connection
//	}
//
// The hooks of an httptrace.ClientTrace in the request's context that a
// Client calls are GetConn, GotConn (Reused, WasIdle, IdleTime),
// TLSHandshakeStart and TLSHandshakeDone, WroteRequest and
// GotFirstResponseByte; the DNS and Connect hooks are
// net.Dialer's own, called when Dial is a net.Dialer's DialContext.
package h1
