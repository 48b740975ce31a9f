// Forwarding: the request sent to the origin, the response relayed to
// the client, the cache store after it.

package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/httpcache"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// fetch is one request's exchange with its origin, as forward drives it.
type fetch struct {
	permit         *politeness.Permit
	outcome        politeness.Outcome // reported to the gate by done
	stale          *httpcache.Entry   // the stored response being revalidated, or nil
	resp           *http.Response
	sent, received time.Time
}

// forward sends the request to the origin and relays the response,
// storing it in the cache when allowed.
func (p *Proxy) forward(ctx context.Context, w http.ResponseWriter, r *http.Request, permit *politeness.Permit, stale *httpcache.Entry, rc *runtimeConfig, x *exchange) {
	f := &fetch{permit: permit, stale: stale}
	defer f.done()
	fail := func(err error) {
		f.outcome = politeness.Outcome{Err: err}
		f.done() // before the client hears of it (see relay)
		p.deliver(ctx, w, r, x, func() { p.upstreamError(w, r, x, err) })
	}
	out, revalidating, err := p.outRequest(ctx, r, stale, x)
	if err != nil {
		fail(err)
		return
	}
	// UpstreamTimeout bounds the whole exchange: a deadline on the
	// connection for the pool (no context and timer per request), a
	// context for http.Transport and for a sequential client's turn.
	pooled := p.origin.Handles(out)
	if !pooled || x.ticket != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, rc.UpstreamTimeout)
		defer cancel()
		out = out.WithContext(ctx)
	}
	roundTrip := func(out *http.Request) error {
		var err error
		f.sent = p.now()
		if pooled {
			f.resp, err = p.origin.RoundTrip(out, rc.UpstreamTimeout)
		} else {
			f.resp, err = p.transport.RoundTrip(out)
		}
		f.received = p.now()
		x.UpstreamMs += f.received.Sub(f.sent).Milliseconds()
		if err != nil {
			return err
		}
		p.m.upstream.Observe(f.received.Sub(f.sent).Seconds())
		f.outcome = politeness.Outcome{Status: f.resp.StatusCode, RetryAfter: politeness.RetryAfter(f.resp.Header, f.received)}
		return nil
	}
	if err := roundTrip(out); err != nil {
		fail(err)
		return
	}
	defer func() {
		if f.resp != nil {
			f.resp.Body.Close() // the last response (see below)
		}
	}()
	if revalidating && f.resp.StatusCode == http.StatusNotModified {
		if selects(f.resp.Header, stale.Header) {
			p.revalidated(ctx, w, r, f, x)
			return
		}
		// RFC 9111 §4.3.4: a 304 whose validator is not the stored
		// response's updates nothing (served, it would pair the old
		// body with the new validator). Ask once more, as the client
		// asked, within the same permit; the answer replaces the entry.
		_, _ = io.Copy(io.Discard, io.LimitReader(f.resp.Body, 64<<10))
		f.resp.Body.Close()
		if out, _, err = p.outRequest(ctx, r, nil, x); err == nil {
			err = roundTrip(out)
		}
		if err != nil {
			fail(err)
			return
		}
	}
	resp := f.resp
	if p.cache != nil && r.Method != http.MethodGet && r.Method != http.MethodHead && resp.StatusCode < 400 {
		p.invalidate(r.URL, resp.Header)
	}
	removeHopByHop(resp.Header)
	src := p.sequentialBody(f, x)
	x.Cache = "MISS"
	x.status, x.outcome = resp.StatusCode, "forwarded"
	p.deliver(ctx, w, r, x, func() { p.relayResponse(w, r, f, src, rc, x) })
}

// outRequest is the request forwarded to the origin: a shallow copy of r
// with its own header (one pass: outHeader), the body read before
// admission, and the validators of a stale entry (in place of the
// client's own If-None-Match / If-Modified-Since, unless it has other
// preconditions: replaceableConditions); revalidating says it is our
// validation.
func (p *Proxy) outRequest(ctx context.Context, r *http.Request, stale *httpcache.Entry, x *exchange) (out *http.Request, revalidating bool, err error) {
	out = r.WithContext(ctx) // URL and the rest are only read
	out.RequestURI, out.Host, out.Close = "", "", false
	out.Header = outHeader(r.Header, p.viaFor(r.ProtoMajor, r.ProtoMinor))
	out.Body, out.GetBody, out.ContentLength, out.TransferEncoding = nil, nil, 0, nil
	if e := out.Header["Expect"]; len(e) == 1 && strings.EqualFold(textproto.TrimString(e[0]), "100-continue") {
		// The client's expectation was met here (serve.go sent the 100
		// and read the body before admission). Passed on, it would make
		// the transport wait up to a second for an origin's 100 that an
		// origin need not send (RFC 9110 §10.1.1) before the body goes.
		delete(out.Header, "Expect")
	}
	if b := x.body; b != nil && b.n > 0 {
		// Framed by its length: the whole body is here (body.go).
		rd, err := b.reader()
		if err != nil {
			return nil, false, err
		}
		out.Body, out.ContentLength = io.NopCloser(rd), b.n
		out.GetBody = func() (io.ReadCloser, error) {
			rd, err := b.reader()
			return io.NopCloser(rd), err
		}
	}
	revalidating = stale != nil && (!conditional(r.Header) || replaceableConditions(r.Header, stale.Header))
	if revalidating {
		// The client's own If-None-Match / If-Modified-Since, if any, are
		// answered from the validated entry (serveEntry), not by the
		// origin: our validators replace them.
		out.Header.Del("If-None-Match")
		out.Header.Del("If-Modified-Since")
		if etag := stale.Header.Get("ETag"); etag != "" {
			out.Header.Set("If-None-Match", etag)
		}
		if lm := stale.Header.Get("Last-Modified"); lm != "" {
			out.Header.Set("If-Modified-Since", lm)
		}
	}
	if _, ok := r.Header["User-Agent"]; !ok {
		out.Header["User-Agent"] = []string{""} // do not let Go add its own
	}
	return out, revalidating, nil
}

// revalidated answers from the stale entry that the origin's 304 has
// freshened.
func (p *Proxy) revalidated(ctx context.Context, w http.ResponseWriter, r *http.Request, f *fetch, x *exchange) {
	resp := f.resp
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	// The 304's connection fields (Connection: keep-alive, Keep-Alive)
	// describe this hop only: never merged into the stored response, or
	// every later hit would send them (RFC 9111 §3.2).
	removeHopByHop(resp.Header)
	e, err := p.cache.Freshen(f.stale, resp.Header, f.sent, f.received)
	if err != nil {
		p.log.Warn("cache freshen failed", "url", x.URL, "err", err)
	}
	x.Cache = "REVALIDATED"
	fwd := p.fwdReason(f.stale)
	f.done()
	p.deliver(ctx, w, r, x, func() { p.serveEntry(w, r, x, e, "REVALIDATED", "revalidated", fwd) })
}

// sequentialBody is the body to relay. In sequential mode, with earlier
// responses of this client still pending, it is read now (bounded) and
// the host's slot freed, so that other clients of the host are not held
// behind this one.
func (p *Proxy) sequentialBody(f *fetch, x *exchange) io.Reader {
	if x.ticket == nil || x.ticket.ready() {
		return f.resp.Body
	}
	b, err := io.ReadAll(io.LimitReader(f.resp.Body, seqBufferBytes+1))
	if err == nil && len(b) <= seqBufferBytes {
		f.outcome.Bytes = int64(len(b))
		f.done()
		return bytes.NewReader(b)
	}
	return io.MultiReader(bytes.NewReader(b), f.resp.Body)
}

// relayResponse sends the origin's response to the client and stores it
// in the cache when allowed, after the client has it.
func (p *Proxy) relayResponse(w http.ResponseWriter, r *http.Request, f *fetch, src io.Reader, rc *runtimeConfig, x *exchange) {
	resp := f.resp
	store := p.cache != nil && r.Method == http.MethodGet && resp.StatusCode != http.StatusNotModified &&
		storableCandidate(r, resp)
	h := w.Header()
	for k, v := range resp.Header {
		h[k] = v
	}
	// Capped, so that the append never writes into resp.Header's backing
	// array (the cache keeps resp.Header).
	via := h["Via"]
	h["Via"] = append(via[:len(via):len(via)], p.viaFor(resp.ProtoMajor, resp.ProtoMinor))
	noSniff(h)
	h.Set(HeaderCache, "MISS")
	addCacheStatus(h, p.fwdStatus(r, f.stale, resp.StatusCode))
	if x.WaitMs > 0 {
		h.Set(HeaderWaitedMs, strconv.FormatInt(x.WaitMs, 10))
	}
	w.WriteHeader(resp.StatusCode)
	body, n, complete, err := relay(w, src, rc.MaxResponseBytes, store, p.cacheLimit(), resp.ContentLength, func(n int64) {
		f.outcome.Bytes = n // bandwidth classes
		f.done()
	})
	x.Bytes, f.outcome.Bytes = n, n
	if err != nil {
		x.Error = err.Error()
		f.outcome.Err = err
		x.outcome = relayOutcome(err)
		// The status line and part of the body are out. Ending the
		// response normally would end a chunked body with its last chunk,
		// and the client would take the cut body for the whole: the only
		// way left to say it is incomplete is to abort the connection
		// (net/http closes it without the last chunk). The trace and the
		// metrics have it first; finish logs it.
		p.record(x)
		panic(http.ErrAbortHandler)
	}
	// A client that asks again at once must hit the cache, not cost the
	// origin another request; yet the store (the noarchive scan, RFC 9111
	// §3, the index) need not delay this response. So the URL is reserved
	// first (a lookup of it waits for the store), the response sent, and
	// the store made after.
	keep := store && complete
	var release func()
	if keep {
		release = p.cache.Reserve(r.URL.String())
	}
	// A response of known length is sent now rather than when the handler
	// returns, so that the store, the log line and the trace are not part
	// of the client's latency. (One of unknown length was flushed as it
	// streamed; its framing is left to the server.)
	if resp.ContentLength >= 0 {
		p.record(x)
		_ = http.NewResponseController(w).Flush()
	}
	if keep {
		// The cache keeps resp.Header and body without copying them:
		// nothing here changes them after this point (the client's header
		// map is a different map; its Via is appended to a capped slice).
		// The disk write happens on the cache's writer goroutine.
		if !p.noArchive(r.URL, resp.Header, body) {
			if _, _, err := p.cache.StoreOwned(r, resp.StatusCode, resp.Header, body, f.sent, f.received); err != nil {
				p.log.Warn("cache store failed", "url", x.URL, "err", err)
			}
		}
		release()
	}
}

// selects reports whether a 304 to the cache's validation, with header
// h304, selects the stored response with header stored for update (RFC
// 9111 §4.3.4): its entity tag, if it has one, is the stored one (strong
// with strong, else weakly equal); without one, its Last-Modified, if
// any, is the stored one. A 304 with neither answers the validators sent.
func selects(h304, stored http.Header) bool {
	if et := h304.Get("ETag"); et != "" {
		have := stored.Get("ETag")
		if !strings.HasPrefix(et, "W/") && !strings.HasPrefix(have, "W/") {
			return et == have
		}
		return have != "" && strings.TrimPrefix(et, "W/") == strings.TrimPrefix(have, "W/")
	}
	if lm := h304.Get("Last-Modified"); lm != "" {
		if have := stored.Get("Last-Modified"); have != "" {
			t1, ok1 := httpcache.ParseHTTPDate(lm)
			t2, ok2 := httpcache.ParseHTTPDate(have)
			return ok1 && ok2 && t1.Equal(t2)
		}
	}
	return true
}

// replaceableConditions reports whether a client's conditional request
// may be sent as the validation of a stale entry with header stored
// instead (RFC 9111 §4.3.2): its only conditions are If-None-Match and
// If-Modified-Since, which serveEntry evaluates against the validated
// entry, and the entry has a validator of its own. Otherwise the client's
// request goes as it is, and its 304 is the client's.
func replaceableConditions(req, stored http.Header) bool {
	if req.Get("If-Match") != "" || req.Get("If-Unmodified-Since") != "" || req.Get("If-Range") != "" {
		return false
	}
	return stored.Get("ETag") != "" || stored.Get("Last-Modified") != ""
}

// invalidate removes what a successful unsafe request has made outdated
// (RFC 9111 §4.4): the stored responses for its URL, and for the URLs in
// its response's Location and Content-Location when they are of the same
// origin — never another origin's, or any site could empty the cache of
// another by naming it.
func (p *Proxy) invalidate(target *url.URL, h http.Header) {
	_ = p.cache.Invalidate(target.String())
	for _, k := range []string{"Location", "Content-Location"} {
		v := h.Get(k)
		if v == "" {
			continue
		}
		u, err := target.Parse(v)
		if err != nil || !sameOrigin(u, target) {
			continue
		}
		u.Fragment, u.RawFragment = "", ""
		_ = p.cache.Invalidate(u.String())
	}
}

// sameOrigin reports whether a and b have the same scheme, host and port
// (RFC 9110 §4.3.1), default ports included.
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// conditional reports whether the client's own request is conditional;
// its 304 then belongs to the client, not to our revalidation.
func conditional(h http.Header) bool {
	return h.Get("If-None-Match") != "" || h.Get("If-Modified-Since") != "" ||
		h.Get("If-Match") != "" || h.Get("If-Unmodified-Since") != "" || h.Get("If-Range") != ""
}

// storableCandidate: a whole response (not a 206, to a request without
// Range), to a request without credentials in its URL (user:password@ is
// Authorization in disguise, RFC 9111 §3.5). A Content-Range field on a
// 200 has no meaning (RFC 9110 §14.4) and is stored like any other field
// (RFC 9111 §3.1); refusing it left such responses uncached.
func storableCandidate(r *http.Request, resp *http.Response) bool {
	return resp.StatusCode != http.StatusPartialContent && r.Header.Get("Range") == "" && r.URL.User == nil
}

// redactURL is u as the log, the trace and refusals show it: credentials
// in the URL (http://user:password@host/) never appear, whoever may read
// them.
func redactURL(u *url.URL) string {
	if u.User == nil {
		return u.String()
	}
	c := *u
	c.User = url.User("redacted")
	return c.String()
}

func (p *Proxy) cacheLimit() int64 {
	if p.cache == nil {
		return 0
	}
	return p.cache.MaxEntryBytes()
}

// copyBufs recycles relay buffers.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// relay copies body to w, at most limit bytes, keeping a copy of up to
// keepMax bytes when keep is set. size is the body's announced length, -1
// when unknown: then every read is flushed to the client at once (a
// streamed response), and otherwise the copy is allocated in one piece.
// complete is true when the whole body was read and kept. end, when not
// nil, is called once the origin's body is all read and before the
// client can have its last byte: the host's slot is freed there, so a
// client that asks again the moment its response ends never finds the
// host still busy with the request it has just seen answered.
func relay(w http.ResponseWriter, body io.Reader, limit int64, keep bool, keepMax int64, size int64, end func(n int64)) (kept []byte, n int64, complete bool, err error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	flush := size < 0
	if keep && size >= 0 && size <= keepMax {
		kept = make([]byte, 0, size)
	}
	rc := http.NewResponseController(w)
	for {
		m, rerr := body.Read(buf)
		if m > 0 {
			if n+int64(m) > limit {
				m = int(limit - n)
				rerr = fmt.Errorf("%w: longer than %d bytes: cut", errResponseTooLarge, limit)
			}
			if end != nil && size >= 0 && n+int64(m) >= size {
				end(n + int64(m))
				end = nil
			}
			if _, werr := w.Write(buf[:m]); werr != nil {
				return nil, n, false, fmt.Errorf("%w: %w", errClientWrite, werr)
			}
			n += int64(m)
			if keep {
				if int64(len(kept)+m) > keepMax {
					keep, kept = false, nil
				} else {
					kept = append(kept, buf[:m]...)
				}
			}
			if flush {
				_ = rc.Flush()
			}
		}
		if rerr == io.EOF {
			if end != nil {
				end(n)
			}
			return kept, n, keep, nil
		}
		if rerr != nil {
			if !strings.HasPrefix(rerr.Error(), "proxy:") {
				rerr = fmt.Errorf("proxy: read from origin: %w", rerr)
			}
			return nil, n, false, rerr
		}
	}
}

// Errors of relay, told apart for the trace and the metrics.
var (
	errResponseTooLarge = errors.New("proxy: response body over max-response-bytes")
	errClientWrite      = errors.New("proxy: write to client")
)

// relayOutcome names a relay error for the trace and the metrics: the
// body was cut at the limit, the client went away, or the origin broke
// off.
func relayOutcome(err error) string {
	switch {
	case errors.Is(err, errResponseTooLarge):
		return "response_too_large"
	case errors.Is(err, errClientWrite):
		return "client_gone"
	}
	return "upstream_cut"
}

// upstreamError answers a failed exchange with the origin.
func (p *Proxy) upstreamError(w http.ResponseWriter, r *http.Request, x *exchange, err error) {
	f := refusal{http.StatusBadGateway, "upstream-error", "the origin could not be reached: " + err.Error(), 0}
	var ne net.Error
	switch {
	case errors.Is(err, ErrPrivateDestination):
		f = refusal{http.StatusForbidden, "private-destination", "loopback, private and link-local destinations are refused", 0}
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		f = refusal{http.StatusGatewayTimeout, "upstream-timeout", "the origin did not answer in time", 0}
	case r.Context().Err() != nil:
		f = refusal{499, "client-gone", "the client went away", 0}
	}
	x.status, x.outcome, x.Error = f.status, strings.ReplaceAll(f.reason, "-", "_"), err.Error()
	f.write(w, r, x.URL)
}
