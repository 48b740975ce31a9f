// The ServeHTTP pipeline: the checks every absolute-form request passes
// in order, up to the cache and the gate, and the sequential mode's
// ordering of answers.

package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/httpcache"
	"github.com/courtesy-crawler/courtesy/internal/mitm"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// exchange is the state of one proxied request, for the log line, the
// trace and the metrics.
type exchange struct {
	TraceEntry
	start   time.Time
	key     string
	status  int
	outcome string
	ticket  *ticket
	body    *bufferedBody // the request body, read before admission
	// recorded: the trace entry and the request count were taken
	// (record), before the response was flushed.
	recorded bool
}

// ServeHTTP proxies one request: access control → loop check → cache →
// politeness gate (robots 403, reject 429, wait) → forward → cache store.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc := p.cfg.Load()
	x := &exchange{start: p.now()}
	x.Time, x.Client, x.Method = x.start, clientIP(r.RemoteAddr), r.Method
	x.URL = redactURL(r.URL)
	if r.Method == http.MethodConnect {
		x.URL = r.Host
	}
	defer p.finish(r, x)

	if !clientAllowed(r.RemoteAddr, rc.nets) {
		p.refuse(w, r, x, refusal{http.StatusForbidden, "client-forbidden", "this client network is not allowed to use the proxy", 0})
		return
	}
	// A request read from an intercepted tunnel was authenticated by its
	// CONNECT (clients do not repeat Proxy-Authorization inside).
	_, intercepted := mitm.FromContext(r.Context())
	if !intercepted && !checkProxyAuth(r.Header, rc.Users) {
		p.refuse(w, r, x, refusal{http.StatusProxyAuthRequired, "auth-required", "proxy authentication required", 0})
		return
	}
	mode, timeout, err := requestMode(r.Header, rc)
	if err != nil {
		p.refuse(w, r, x, refusal{http.StatusBadRequest, "bad-request", err.Error(), 0})
		return
	}
	x.Mode = mode
	if r.Method == http.MethodConnect {
		p.connect(w, r, rc, x, mode, timeout)
		return
	}
	u := r.URL
	switch {
	case !u.IsAbs() || u.Host == "":
		p.refuse(w, r, x, refusal{http.StatusBadRequest, "not-a-proxy-request", "send absolute-form requests (http://host/path)", 0})
		return
	case u.Scheme != "http" && !(intercepted && u.Scheme == "https"):
		p.refuse(w, r, x, refusal{http.StatusBadRequest, "bad-scheme", "only http:// is proxied in absolute form; use CONNECT for https", 0})
		return
	case p.isLoop(r, u.Host, "80"):
		p.refuse(w, r, x, refusal{http.StatusLoopDetected, "loop", "the request targets the proxy itself", 0})
		return
	case !rc.AllowPrivate && literalInternal(u.Hostname()):
		p.refuse(w, r, x, refusal{http.StatusForbidden, "private-destination", "loopback, private and link-local destinations are refused", 0})
		return
	}
	if r.ContentLength > rc.MaxRequestBytes {
		p.refuse(w, r, x, refusal{http.StatusRequestEntityTooLarge, "request-too-large", fmt.Sprintf("request bodies are limited to %d bytes", rc.MaxRequestBytes), 0})
		return
	}
	if !rc.WebSocket.Disabled && isWebSocket(r) {
		p.upgrade(w, r, u, rc, x, mode, timeout) // upgrade.go
		return
	}
	ctx := r.Context()
	if mode == ModeSequential {
		t, err := p.seq.take(clientName(r), rc.MaxPerClient)
		if err != nil {
			p.refuse(w, r, x, refusal{http.StatusServiceUnavailable, "queue-full", "too many outstanding requests for this client", time.Second})
			return
		}
		x.ticket = t
		defer t.finish()
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, errSequentialTimeout)
		defer cancel()
	}

	// Cache (the polite-proxy thesis §5.4, RFC 9111).
	var stale *httpcache.Entry
	if p.cache != nil {
		res := p.cache.Lookup(r, p.now())
		switch res.Action {
		case httpcache.Fresh:
			x.Cache = "HIT"
			p.deliver(ctx, w, r, x, func() { p.serveEntry(w, r, x, res.Entry, "HIT", "cache_hit", "") })
			return
		case httpcache.GatewayTimeout:
			x.Cache = "MISS"
			p.refuse(w, r, x, refusal{http.StatusGatewayTimeout, "only-if-cached", "only-if-cached: no usable stored response", 0})
			return
		case httpcache.Stale:
			stale = res.Entry
		}
	}

	if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
		// A URL robots.txt refuses is refused before its body is read:
		// a client that sent Expect: 100-continue then gets the 403
		// instead of a 100 (RFC 9110 §10.1.1) and uploads nothing.
		// (Peek takes no slot; admission asks again after the body.)
		if d, err := p.gate.Peek(ctx, u); err == nil &&
			(d.Reason == politeness.ReasonRobots || d.Reason == politeness.ReasonRobotsUnavailable) {
			p.refuse(w, r, x, decisionRefusal(d))
			return
		}
		p.bodiesReading.Add(1)
		body, err := readBody(w, r, rc.MaxRequestBytes, rc, p.now)
		p.bodiesReading.Add(-1)
		if err != nil {
			p.refuse(w, r, x, bodyRefusal(w, err, rc))
			return
		}
		defer body.close()
		x.body = body
	}
	permit := p.admitOrRefuse(ctx, w, r, u, mode, timeout, rc, x)
	if permit == nil {
		return
	}
	p.trackActive(x.key, 1)
	defer p.trackActive(x.key, -1)
	p.forward(ctx, w, r, permit, stale, rc, x)
}

var errSequentialTimeout = errors.New("proxy: sequential timeout")

// seqBufferBytes bounds the response body buffered for a sequential
// client while earlier responses are pending.
const seqBufferBytes = 8 << 20

// requestMode applies the X-Courtesy-Mode and X-Courtesy-Timeout headers.
func requestMode(h http.Header, rc *runtimeConfig) (Mode, time.Duration, error) {
	mode := rc.Mode
	if v := h.Get(HeaderMode); v != "" {
		m, err := ParseMode(v)
		if err != nil {
			return "", 0, err
		}
		mode = m
	}
	timeout := rc.MaxWait
	if mode == ModeSequential {
		timeout = rc.SequentialTimeout
	}
	if v := strings.TrimSpace(h.Get(HeaderTimeout)); v != "" {
		d, err := parseTimeout(v)
		if err != nil {
			return "", 0, err
		}
		timeout = d
	}
	return mode, timeout, nil
}

// maxHeaderTimeout bounds X-Courtesy-Timeout, so one header cannot pin a
// queue slot for a day.
const maxHeaderTimeout = 10 * time.Minute

func parseTimeout(v string) (time.Duration, error) {
	var d time.Duration
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		d = time.Duration(min(n, int64(maxHeaderTimeout/time.Millisecond))) * time.Millisecond
	} else if d, err = time.ParseDuration(v); err != nil {
		return 0, fmt.Errorf("proxy: %s %q: want a duration (30s) or milliseconds", HeaderTimeout, v)
	}
	if d <= 0 || d > maxHeaderTimeout {
		return 0, fmt.Errorf("proxy: %s %q: want more than 0 and at most %v", HeaderTimeout, v, maxHeaderTimeout)
	}
	return d, nil
}

// clientName identifies a sequential client: the X-Courtesy-Client header
// (bounded), else the source IP address.
func clientName(r *http.Request) string {
	if v := r.Header.Get(HeaderClient); v != "" {
		if len(v) > 256 {
			v = v[:256]
		}
		return "h:" + v
	}
	return "a:" + clientIP(r.RemoteAddr)
}

// isLoop reports whether a request for hostport targets the proxy itself:
// one of its listen addresses, or a request that already passed through it
// (its Via token, RFC 9110 §7.6.3).
func (p *Proxy) isLoop(r *http.Request, hostport, defPort string) bool {
	for _, v := range r.Header.Values("Via") {
		if strings.Contains(v, p.viaToken) {
			return true
		}
	}
	if _, _, err := net.SplitHostPort(hostport); err != nil {
		hostport = net.JoinHostPort(strings.Trim(hostport, "[]"), defPort)
	}
	p.self.Lock()
	defer p.self.Unlock()
	return p.self.addrs[strings.ToLower(hostport)]
}

// refuse answers the request with the proxy's own refusal f, recording
// why for the log, the trace and the metrics: the one way every path
// (plain requests, CONNECT, WebSocket handshakes) refuses. In sequential
// mode the answer waits for the client's earlier requests (deliver).
func (p *Proxy) refuse(w http.ResponseWriter, r *http.Request, x *exchange, f refusal) {
	x.status, x.outcome = f.status, strings.ReplaceAll(f.reason, "-", "_")
	if x.Error == "" {
		x.Error = f.message
	}
	p.deliver(r.Context(), w, r, x, func() { f.write(w, r, x.URL) })
}

// deliver runs write when the request's turn has come: at once, or in
// sequential mode after every earlier request of the same client; then it
// flushes and lets the client's next request go. A request whose turn does
// not come in time gets 504.
func (p *Proxy) deliver(ctx context.Context, w http.ResponseWriter, r *http.Request, x *exchange, write func()) {
	if x.ticket == nil {
		write()
		return
	}
	defer x.ticket.finish()
	if err := x.ticket.turn(ctx); err != nil {
		f := refusal{http.StatusGatewayTimeout, "sequential-timeout", "earlier requests of this client did not finish in time", 0}
		x.status, x.outcome, x.Error = f.status, "sequential_timeout", f.message
		f.write(w, r, x.URL)
		return
	}
	write()
	_ = http.NewResponseController(w).Flush()
}
