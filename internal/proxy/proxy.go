package proxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/courtesy-crawler/courtesy/internal/extract"
	"github.com/courtesy-crawler/courtesy/internal/h1"
	"github.com/courtesy-crawler/courtesy/internal/httpcache"
	"github.com/courtesy-crawler/courtesy/internal/mitm"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
	"github.com/courtesy-crawler/courtesy/internal/robots"
)

// Options are the proxy's collaborators.
type Options struct {
	// Gate is the politeness authority. Required.
	Gate *politeness.Gate
	// Cache is the shared HTTP cache; nil disables caching.
	Cache *httpcache.Cache
	// Resolver holds the --resolve rules for origin connections; nil means
	// none.
	Resolver *resolve.Resolver
	// Logger receives one line per request at info level; nil discards.
	Logger *slog.Logger
	// Registry receives the proxy's metrics; nil registers none.
	Registry prometheus.Registerer
	// Counters are the gate's observer counters, exported as
	// courtesy_politeness_robots_fetches_total; nil leaves them out.
	Counters *politeness.Counters
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MITM, when set, intercepts CONNECT tunnels with certificates signed
	// by this CA (internal/mitm), so that HTTPS requests pass the whole
	// pipeline.
	MITM *mitm.CA
	// UpstreamTLS configures TLS to origins (intercepted HTTPS); nil
	// means the system roots.
	UpstreamTLS *tls.Config
	// InsecureHosts reports the origin hosts whose certificates are not
	// verified (an operator's upstream-insecure-hosts; TLSDialer); nil
	// means none. Asked on every connection.
	InsecureHosts func(host string) bool
	// GovernProcs lets the proxy switch the process to one core and
	// polling reads while its load is low (latency.go, Config.LowLatency).
	// GOMAXPROCS is process-wide: set it only when the proxy owns the
	// process, and serve through Listener. Default false.
	GovernProcs bool
}

// Proxy is the polite forward proxy: an http.Handler for absolute-form
// requests and CONNECT. Build it with New; it is safe for concurrent use.
type Proxy struct {
	gate      *politeness.Gate
	cache     *httpcache.Cache
	log       *slog.Logger
	now       func() time.Time
	transport *http.Transport
	origin    *h1.Client // GET and HEAD to http:// origins (internal/h1)
	dial      func(ctx context.Context, network, addr string) (net.Conn, error)
	queues    *queues
	seq       *sequencer
	m         *metrics
	via       string // our Via entry: "1.1 courtesy-<id>"
	viaToken  string // "courtesy-<id>", to detect loops

	cfg   atomic.Pointer[runtimeConfig]
	trace atomic.Pointer[ring]

	// self guards the addresses the proxy listens on (loop check).
	self struct {
		sync.Mutex
		addrs map[string]bool
	}
	// active guards the count of requests in flight per key.
	active struct {
		sync.Mutex
		keys map[string]int
	}
	mitm          *mitm.CA
	ws            wsSockets // open WebSockets (upgrade.go)
	tunnelsActive atomic.Int64
	bodiesReading atomic.Int64 // request bodies being read (body.go)
	tunnels       sync.WaitGroup
	closing       chan struct{}
	closeOnce     sync.Once
	gov           *governor // nil unless Options.GovernProcs
}

// runtimeConfig is a Config with its derived values, swapped atomically.
type runtimeConfig struct {
	Config
	nets  []netip.Prefix
	ports map[int]bool
}

// New builds a proxy. cfg's zero fields take their defaults.
func New(cfg Config, o Options) (*Proxy, error) {
	if o.Gate == nil {
		return nil, errors.New("proxy: a politeness gate is required")
	}
	p := &Proxy{
		gate:    o.Gate,
		cache:   o.Cache,
		log:     o.Logger,
		now:     o.Now,
		queues:  newQueues(),
		seq:     newSequencer(),
		closing: make(chan struct{}),
		mitm:    o.MITM,
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.now == nil {
		p.now = time.Now
	}
	p.self.addrs = map[string]bool{}
	p.active.keys = map[string]int{}
	var id [6]byte
	_, _ = rand.Read(id[:])
	p.viaToken = "courtesy-" + hex.EncodeToString(id[:])
	p.via = "1.1 " + p.viaToken
	if err := p.SetConfig(cfg); err != nil {
		return nil, err
	}
	rc := p.cfg.Load()
	var lookup func(string) (string, bool)
	if o.Resolver != nil {
		lookup = o.Resolver.Lookup
	}
	p.dial = dialer(lookup, func() bool { return p.cfg.Load().AllowPrivate })
	p.transport = &http.Transport{
		Proxy:       nil, // never chain to the environment's proxy
		DialContext: p.dial,
		// Bounds of the idle connections (the origin pool reads them from
		// here too): the total is large, because many hosts each keep a
		// few and a small total would close and reopen them all the time.
		MaxIdleConns:           rc.MaxIdleConns,
		MaxIdleConnsPerHost:    rc.MaxIdleConnsPerHost,
		IdleConnTimeout:        rc.IdleConnTimeout,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  rc.UpstreamHeaderTimeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 256 << 10,
		// Content codings pass through untouched: the client asked for them.
		DisableCompression: true,
		TLSClientConfig:    o.UpstreamTLS,
	}
	if o.InsecureHosts != nil {
		p.transport.DialTLSContext = TLSDialer(p.dial, o.UpstreamTLS, o.InsecureHosts)
	}
	ho := h1.Options{
		Dial:           p.dial,
		MaxIdlePerHost: rc.MaxIdleConnsPerHost,
		MaxIdle:        p.transport.MaxIdleConns,
		IdleTimeout:    p.transport.IdleConnTimeout,
		HeaderTimeout:  rc.UpstreamHeaderTimeout,
		MaxHeaderBytes: p.transport.MaxResponseHeaderBytes,
	}
	if o.GovernProcs {
		p.gov = newGovernor(func() LowLatencyConfig { return p.cfg.Load().LowLatency }, runtime.GOMAXPROCS, time.Now)
		ho.Wrap = func(c net.Conn) net.Conn { return p.gov.wrap(c, 1) }
		go p.gov.run(p.closing)
	}
	p.origin = h1.New(ho)
	p.m = newMetrics(p, o.Registry, o.Counters)
	return p, nil
}

// Listener returns l with its connections' reads polling in low-load
// mode (Options.GovernProcs); l itself otherwise.
func (p *Proxy) Listener(l net.Listener) net.Listener {
	if p.gov == nil {
		return l
	}
	return pollListener{Listener: l, g: p.gov}
}

// SetConfig replaces the runtime configuration (the config file watcher
// calls it). UpstreamHeaderTimeout, MaxIdleConnsPerHost, MaxIdleConns and
// IdleConnTimeout apply only at New.
func (p *Proxy) SetConfig(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg = cfg.withDefaults()
	nets, err := parsePrefixes(cfg.AllowedClients)
	if err != nil {
		return err
	}
	rc := &runtimeConfig{Config: cfg, nets: nets, ports: map[int]bool{}}
	for _, port := range cfg.ConnectPorts {
		rc.ports[port] = true
	}
	old := p.cfg.Swap(rc)
	if old == nil || old.TraceSize != cfg.TraceSize {
		p.trace.Store(newRing(cfg.TraceSize))
	}
	return nil
}

// Config returns the configuration in force, defaults filled in.
func (p *Proxy) Config() Config { return p.cfg.Load().Config }

// AddSelf records an address the proxy listens on ("host:port"), so that
// requests for it are refused as loops.
func (p *Proxy) AddSelf(addr string) {
	p.self.Lock()
	defer p.self.Unlock()
	p.self.addrs[strings.ToLower(addr)] = true
	if host, port, err := net.SplitHostPort(addr); err == nil {
		if a, err := netip.ParseAddr(host); err == nil && a.IsUnspecified() {
			p.self.addrs["localhost:"+port] = true
			p.self.addrs["127.0.0.1:"+port] = true
			p.self.addrs["[::1]:"+port] = true
		}
	}
}

// Trace returns the recent requests, newest first.
func (p *Proxy) Trace() []TraceEntry { return p.trace.Load().entries() }

// Close closes idle origin connections and open tunnels and waits for the
// tunnels' goroutines.
func (p *Proxy) Close() error {
	p.closeOnce.Do(func() { close(p.closing) })
	p.transport.CloseIdleConnections()
	p.origin.CloseIdle()
	p.tunnels.Wait()
	if p.gov != nil {
		<-p.gov.done
	}
	return nil
}

// Handler returns the proxy's front door: CONNECT and absolute-form
// requests are proxied, origin-form requests go to api (the services and
// monitoring); a nil api answers them 400.
func (p *Proxy) Handler(api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.gov != nil {
			p.gov.begin()
			defer p.gov.end()
		}
		if r.Method == http.MethodConnect || r.URL.IsAbs() {
			p.ServeHTTP(w, r)
			return
		}
		if api != nil {
			if !clientAllowed(r.RemoteAddr, p.cfg.Load().nets) {
				refusal{http.StatusForbidden, "client-forbidden", "this client network is not allowed to use the proxy", 0}.write(w, r, r.URL.String())
				return
			}
			api.ServeHTTP(w, r)
			return
		}
		refusal{http.StatusBadRequest, "not-a-proxy-request", "this is a forward proxy: send absolute-form requests (http_proxy=...) or CONNECT", 0}.write(w, r, r.URL.String())
	})
}

// NewServer returns an http.Server with the timeouts and limits a proxy
// facing untrusted clients needs: a slowloris client is cut off after
// cfg.ReadHeaderTimeout, headers over cfg.MaxHeaderBytes get 431. Go's
// server answers 400 to malformed request lines and headers and to
// differing Content-Length fields, 501 to unknown transfer codings, and
// frames a request with both Content-Length and Transfer-Encoding by the
// latter alone, dropping Content-Length (RFC 9112 §6.3), so the request
// forwarded to the origin is framed unambiguously (no smuggling).
func NewServer(h http.Handler, cfg Config, log *slog.Logger) *http.Server {
	cfg = cfg.withDefaults()
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    cfg.MaxHeaderBytes,
	}
	if log != nil {
		srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelDebug)
	}
	return srv
}

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

	refuse := func(f refusal) {
		x.status, x.outcome = f.status, strings.ReplaceAll(f.reason, "-", "_")
		if x.Error == "" {
			x.Error = f.message
		}
		p.deliver(r.Context(), w, r, x, func() { f.write(w, r, x.URL) })
	}
	if !clientAllowed(r.RemoteAddr, rc.nets) {
		refuse(refusal{http.StatusForbidden, "client-forbidden", "this client network is not allowed to use the proxy", 0})
		return
	}
	// A request read from an intercepted tunnel was authenticated by its
	// CONNECT (clients do not repeat Proxy-Authorization inside).
	_, intercepted := mitm.FromContext(r.Context())
	if !intercepted && !checkProxyAuth(r.Header, rc.Users) {
		refuse(refusal{http.StatusProxyAuthRequired, "auth-required", "proxy authentication required", 0})
		return
	}
	mode, timeout, err := requestMode(r.Header, rc)
	if err != nil {
		refuse(refusal{http.StatusBadRequest, "bad-request", err.Error(), 0})
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
		refuse(refusal{http.StatusBadRequest, "not-a-proxy-request", "send absolute-form requests (http://host/path)", 0})
		return
	case u.Scheme != "http" && !(intercepted && u.Scheme == "https"):
		refuse(refusal{http.StatusBadRequest, "bad-scheme", "only http:// is proxied in absolute form; use CONNECT for https", 0})
		return
	case p.isLoop(r, u.Host, "80"):
		refuse(refusal{http.StatusLoopDetected, "loop", "the request targets the proxy itself", 0})
		return
	case !rc.AllowPrivate && literalInternal(u.Hostname()):
		refuse(refusal{http.StatusForbidden, "private-destination", "loopback, private and link-local destinations are refused", 0})
		return
	}
	if r.ContentLength > rc.MaxRequestBytes {
		refuse(refusal{http.StatusRequestEntityTooLarge, "request-too-large", fmt.Sprintf("request bodies are limited to %d bytes", rc.MaxRequestBytes), 0})
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
			refuse(refusal{http.StatusServiceUnavailable, "queue-full", "too many outstanding requests for this client", time.Second})
			return
		}
		x.ticket = t
		defer t.finish()
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, errSequentialTimeout)
		defer cancel()
	}

	// Cache (seed 000 §5.4, RFC 9111).
	var stale *httpcache.Entry
	if p.cache != nil {
		res := p.cache.Lookup(r, p.now())
		switch res.Action {
		case httpcache.Fresh:
			x.Cache = "HIT"
			p.deliver(ctx, w, r, x, func() { p.serveEntry(w, r, x, res.Entry, "HIT", "cache_hit") })
			return
		case httpcache.GatewayTimeout:
			x.Cache = "MISS"
			refuse(refusal{http.StatusGatewayTimeout, "only-if-cached", "only-if-cached: no usable stored response", 0})
			return
		case httpcache.Stale:
			stale = res.Entry
		}
	}

	if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
		p.bodiesReading.Add(1)
		body, err := readBody(w, r, rc.MaxRequestBytes, rc, p.now)
		p.bodiesReading.Add(-1)
		if err != nil {
			refuse(bodyRefusal(w, err, rc))
			return
		}
		defer body.close()
		x.body = body
	}
	permit, f := p.admit(ctx, r.Context(), u, mode, timeout, rc, x)
	if permit == nil {
		refuse(f)
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

// admit asks the gate for a permit in the request's mode. waitCtx bounds
// the whole request (sequential timeout); clientCtx ends when the client
// goes away. A nil permit comes with the refusal to send.
func (p *Proxy) admit(waitCtx, clientCtx context.Context, u *url.URL, mode Mode, timeout time.Duration, rc *runtimeConfig, x *exchange) (*politeness.Permit, refusal) {
	key, err := p.gate.Config().KeyFunc(waitCtx, u)
	if err != nil {
		return nil, refusal{http.StatusBadRequest, "bad-request", err.Error(), 0}
	}
	x.key = key
	if mode == ModeReject {
		permit, d, err := p.gate.Try(waitCtx, u)
		if err != nil {
			return nil, gateError(x, err)
		}
		if permit == nil {
			return nil, decisionRefusal(d)
		}
		return permit, refusal{}
	}

	// Fast path: nobody is held for this key, so asking the gate at once
	// keeps arrival order. With the gate open (the common case) no request
	// ever queues, and no turn is handed between goroutines.
	if p.queues.idle(key) {
		permit, d, err := p.gate.Try(waitCtx, u)
		switch {
		case err != nil:
			return nil, gateError(x, err)
		case permit != nil:
			return permit, refusal{}
		case d.Reason == politeness.ReasonRobots || d.Reason == politeness.ReasonRobotsUnavailable:
			return nil, decisionRefusal(d)
		}
	}
	kq, err := p.queues.enter(key, rc.MaxQueuePerHost, rc.MaxQueue)
	if err != nil {
		return nil, refusal{http.StatusServiceUnavailable, "queue-full",
			fmt.Sprintf("too many requests are waiting (at most %d for one host, %d in all)", rc.MaxQueuePerHost, rc.MaxQueue), time.Second}
	}
	defer p.queues.leave(key, kq)
	started := p.now()
	ctx, cancel := context.WithTimeoutCause(waitCtx, timeout, errWaitTimeout)
	defer cancel()
	var permit *politeness.Permit
	if err = kq.acquire(ctx); err == nil {
		permit, err = p.gate.Wait(ctx, u)
		kq.pass()
	}
	waited := p.now().Sub(started)
	x.WaitMs = waited.Milliseconds()
	p.m.wait.Observe(waited.Seconds())
	if err == nil {
		return permit, refusal{}
	}
	if d, ok := politeness.Denied(err); ok {
		return nil, decisionRefusal(d)
	}
	switch {
	case clientCtx.Err() != nil:
		return nil, refusal{499, "client-gone", "the client went away while waiting", 0}
	case errors.Is(context.Cause(ctx), errSequentialTimeout) || errors.Is(context.Cause(waitCtx), errSequentialTimeout):
		return nil, refusal{http.StatusGatewayTimeout, "sequential-timeout",
			fmt.Sprintf("the request did not get its turn within %v", timeout), 0}
	case errors.Is(context.Cause(ctx), errWaitTimeout):
		retry := time.Second
		if d, err := p.gate.Peek(clientCtx, u); err == nil && d.RetryAfter > 0 {
			retry = d.RetryAfter
		}
		return nil, refusal{http.StatusTooManyRequests, "wait-timeout",
			fmt.Sprintf("the host's turn did not come within %v", timeout), retry}
	}
	return nil, gateError(x, err)
}

var errWaitTimeout = errors.New("proxy: wait timeout")

// decisionRefusal turns a gate Decision into the answer of seed 000
// §4.7.1: 403 for robots.txt, 429 with the wait for the rest.
func decisionRefusal(d politeness.Decision) refusal {
	msg := d.Detail
	switch d.Reason {
	case politeness.ReasonRobots:
		if msg == "" {
			msg = "Blocked because URL is excluded from allowed URLs."
		}
		return refusal{http.StatusForbidden, "robots", msg, 0}
	case politeness.ReasonRobotsUnavailable:
		// robots.txt could not be fetched; say why when the cause is the
		// destination, not the origin's robots.txt. The robots cache keeps
		// the fetch error as text, hence the text match.
		switch {
		case strings.Contains(msg, ErrPrivateDestination.Error()):
			return refusal{http.StatusForbidden, "private-destination", "the host name resolves to a loopback, private or link-local address, which is refused", 0}
		case tlsVerifyFailed(msg):
			return refusal{http.StatusBadGateway, "tls-verify-failed",
				"the origin's TLS certificate could not be verified (" + msg + "); an operator may allow this host with upstream-insecure-hosts", max(d.RetryAfter, 0)}
		}
		if msg == "" {
			msg = "robots.txt is unavailable: the host is treated as disallowing everything"
		}
		return refusal{http.StatusForbidden, "robots-unavailable", msg, max(d.RetryAfter, 0)}
	}
	if msg == "" {
		msg = fmt.Sprintf("There must be a delay of %d milliseconds between each request.", d.Delays.Effective.Milliseconds())
	}
	return refusal{http.StatusTooManyRequests, string(d.Reason), msg, max(d.RetryAfter, time.Millisecond)}
}

// gateError is the answer when the politeness state fails (Redis down):
// the client is told so without the cause, which names addresses; the
// log and the admin-only trace have it.
func gateError(x *exchange, err error) refusal {
	x.Error = err.Error()
	return refusal{http.StatusBadGateway, "gate-error", "the politeness state is unavailable", 0}
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

// forward sends the request to the origin and relays the response,
// storing it in the cache when allowed.
func (p *Proxy) forward(ctx context.Context, w http.ResponseWriter, r *http.Request, permit *politeness.Permit, stale *httpcache.Entry, rc *runtimeConfig, x *exchange) {
	var outcome politeness.Outcome
	defer func() { _ = permit.Done(outcome) }()

	// A shallow copy with its own header (one pass: outHeader); URL and
	// the rest are only read.
	out := r.WithContext(ctx)
	out.RequestURI, out.Host, out.Close = "", "", false
	out.Header = outHeader(r.Header, p.via)
	out.Body, out.GetBody, out.ContentLength, out.TransferEncoding = nil, nil, 0, nil
	if b := x.body; b != nil && b.n > 0 {
		// Framed by its length: the whole body is here (body.go).
		rd, err := b.reader()
		if err != nil {
			outcome = politeness.Outcome{Err: err}
			p.deliver(ctx, w, r, x, func() { p.upstreamError(w, r, x, err) })
			return
		}
		out.Body, out.ContentLength = io.NopCloser(rd), b.n
		out.GetBody = func() (io.ReadCloser, error) {
			rd, err := b.reader()
			return io.NopCloser(rd), err
		}
	}
	revalidating := stale != nil && !conditional(r.Header)
	if revalidating {
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

	// UpstreamTimeout bounds the whole exchange: a deadline on the
	// connection for the pool (no context and timer per request), a
	// context for http.Transport and for a sequential client's turn.
	var resp *http.Response
	var err error
	pooled := p.origin.Handles(out)
	if !pooled || x.ticket != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, rc.UpstreamTimeout)
		defer cancel()
		out = out.WithContext(ctx)
	}
	sent := p.now()
	if pooled {
		resp, err = p.origin.RoundTrip(out, rc.UpstreamTimeout)
	} else {
		resp, err = p.transport.RoundTrip(out)
	}
	received := p.now()
	x.UpstreamMs = received.Sub(sent).Milliseconds()
	if err != nil {
		outcome = politeness.Outcome{Err: err}
		_ = permit.Done(outcome) // before the client hears of it (see relay)
		p.deliver(ctx, w, r, x, func() { p.upstreamError(w, r, x, err) })
		return
	}
	defer resp.Body.Close()
	p.m.upstream.Observe(received.Sub(sent).Seconds())
	outcome = politeness.Outcome{Status: resp.StatusCode, RetryAfter: politeness.RetryAfter(resp.Header, received)}

	if revalidating && resp.StatusCode == http.StatusNotModified {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		// The 304's connection fields (Connection: keep-alive, Keep-Alive)
		// describe this hop only: never merged into the stored response,
		// or every later hit would send them (RFC 9111 §3.2).
		removeHopByHop(resp.Header)
		e, err := p.cache.Freshen(stale, resp.Header, sent, received)
		if err != nil {
			p.log.Warn("cache freshen failed", "url", x.URL, "err", err)
		}
		x.Cache = "REVALIDATED"
		_ = permit.Done(outcome)
		p.deliver(ctx, w, r, x, func() { p.serveEntry(w, r, x, e, "REVALIDATED", "revalidated") })
		return
	}
	if p.cache != nil && r.Method != http.MethodGet && r.Method != http.MethodHead && resp.StatusCode < 400 {
		_ = p.cache.Invalidate(r.URL.String()) // RFC 9111 §4.4
	}

	removeHopByHop(resp.Header)
	var src io.Reader = resp.Body
	if x.ticket != nil && !x.ticket.ready() {
		// Sequential mode, and earlier responses of this client are still
		// pending: read the body now (bounded) and free the host's slot,
		// so that other clients of the host are not held behind this one.
		b, err := io.ReadAll(io.LimitReader(resp.Body, seqBufferBytes+1))
		if err == nil && len(b) <= seqBufferBytes {
			outcome.Bytes = int64(len(b))
			_ = permit.Done(outcome)
			src = bytes.NewReader(b)
		} else {
			src = io.MultiReader(bytes.NewReader(b), resp.Body)
		}
	}
	store := p.cache != nil && r.Method == http.MethodGet && resp.StatusCode != http.StatusNotModified &&
		storableCandidate(r, resp)
	x.Cache = "MISS"
	x.status, x.outcome = resp.StatusCode, "forwarded"
	var body []byte
	complete := false
	p.deliver(ctx, w, r, x, func() {
		h := w.Header()
		for k, v := range resp.Header {
			h[k] = v
		}
		// Capped, so that the append never writes into resp.Header's
		// backing array (the cache keeps resp.Header).
		via := h["Via"]
		h["Via"] = append(via[:len(via):len(via)], p.via)
		h.Set(HeaderCache, "MISS")
		addCacheStatus(h, p.fwdStatus(r, stale, resp.StatusCode))
		if x.WaitMs > 0 {
			h.Set(HeaderWaitedMs, strconv.FormatInt(x.WaitMs, 10))
		}
		w.WriteHeader(resp.StatusCode)
		var n int64
		body, n, complete, err = relay(w, src, rc.MaxResponseBytes, store, p.cacheLimit(), resp.ContentLength, func(n int64) {
			outcome.Bytes = n // bandwidth classes
			_ = permit.Done(outcome)
		})
		x.Bytes, outcome.Bytes = n, n
		if err != nil {
			x.Error = err.Error()
			outcome.Err = err
			x.outcome = relayOutcome(err)
			// The status line and part of the body are out. Ending the
			// response normally would end a chunked body with its last
			// chunk, and the client would take the cut body for the whole:
			// the only way left to say it is incomplete is to abort the
			// connection (net/http closes it without the last chunk).
			// The trace and the metrics have it first; finish logs it.
			p.record(x)
			panic(http.ErrAbortHandler)
		}
		// A client that asks again at once must hit the cache, not cost
		// the origin another request; yet the store (the noarchive scan,
		// RFC 9111 §3, the index) need not delay this response. So the URL
		// is reserved first (a lookup of it waits for the store), the
		// response sent, and the store made after.
		keep := store && complete
		var release func()
		if keep {
			release = p.cache.Reserve(r.URL.String())
		}
		// A response of known length is sent now rather than when the
		// handler returns, so that the store, the log line and the trace
		// are not part of the client's latency. (One of unknown length was
		// flushed as it streamed; its framing is left to the server.)
		if resp.ContentLength >= 0 {
			p.record(x)
			_ = http.NewResponseController(w).Flush()
		}
		if keep {
			// The cache keeps resp.Header and body without copying them:
			// nothing here changes them after this point (the client's
			// header map is a different map; its Via is appended to a
			// capped slice). The disk write happens on the cache's writer
			// goroutine.
			if !p.noArchive(r.URL, resp.Header, body) {
				if _, _, err := p.cache.StoreOwned(r, resp.StatusCode, resp.Header, body, sent, received); err != nil {
					p.log.Warn("cache store failed", "url", x.URL, "err", err)
				}
			}
			release()
		}
	})
}

// noArchive reports whether the page asks not to be kept in a cache:
// X-Robots-Tag or, in HTML, a robots meta tag with noarchive (or nocache)
// for our agent or all robots (seed 000 §7: meta tags). The thesis
// override never outranks it. The HTML is only parsed when the word
// occurs in it, so ordinary pages cost one scan.
func (p *Proxy) noArchive(u *url.URL, h http.Header, body []byte) bool {
	agent := p.gate.Config().Agent
	if len(h["X-Robots-Tag"]) > 0 && robots.XRobotsTag(h.Values("X-Robots-Tag"), agent).NoArchive {
		return true
	}
	if httpcache.MediaType(h.Get("Content-Type")) != "text/html" || !mentionsNoArchive(body) {
		return false
	}
	page, err := extract.HTML(u, body, h.Get("Content-Type"), extract.Options{Agent: agent})
	return err == nil && page.Robots.NoArchive
}

// containsFold reports whether b contains the lower-case ASCII word s in
// any case, without allocating. It runs on every HTML body the proxy
// stores, so it is a plain byte loop: OR-ing 0x20 folds exactly the upper-
// case ASCII letters onto the lower-case ones, and the first letter is
// tested before anything else (bytes.IndexAny rebuilt its byte set on
// every call, which cost more than the loop).
func containsFold(b []byte, s string) bool {
	if len(s) == 0 {
		return true
	}
	c0 := s[0]
	for i, last := 0, len(b)-len(s); i <= last; i++ {
		if b[i]|0x20 != c0 {
			continue
		}
		j := 1
		for j < len(s) && b[i+j]|0x20 == s[j] {
			j++
		}
		if j == len(s) {
			return true
		}
	}
	return false
}

// mentionsNoArchive is containsFold(b, "noarchive") || containsFold(b,
// "nocache") in one pass over b: both words start with "no".
func mentionsNoArchive(b []byte) bool {
	for i, last := 0, len(b)-len("nocache"); i <= last; i++ {
		if b[i]|0x20 != 'n' || b[i+1]|0x20 != 'o' {
			continue
		}
		if rest := b[i+2:]; hasPrefixFold(rest, "cache") || hasPrefixFold(rest, "archive") {
			return true
		}
	}
	return false
}

// hasPrefixFold reports whether b starts with the lower-case ASCII word s
// in any case.
func hasPrefixFold(b []byte, s string) bool {
	if len(b) < len(s) {
		return false
	}
	for j := 0; j < len(s); j++ {
		if b[j]|0x20 != s[j] {
			return false
		}
	}
	return true
}

// conditional reports whether the client's own request is conditional;
// its 304 then belongs to the client, not to our revalidation.
func conditional(h http.Header) bool {
	return h.Get("If-None-Match") != "" || h.Get("If-Modified-Since") != "" ||
		h.Get("If-Match") != "" || h.Get("If-Unmodified-Since") != "" || h.Get("If-Range") != ""
}

// storableCandidate: a whole response, to a request without credentials
// in its URL (user:password@ is Authorization in disguise, RFC 9111 §3.5).
func storableCandidate(r *http.Request, resp *http.Response) bool {
	return resp.Header.Get("Content-Range") == "" && r.Header.Get("Range") == "" && r.URL.User == nil
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

// serveEntry answers from a stored response (RFC 9111 §4), with Age, and
// 304 when the client's own validator matches.
func (p *Proxy) serveEntry(w http.ResponseWriter, r *http.Request, x *exchange, e *httpcache.Entry, label, outcome string) {
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
		addCacheStatus(h, cacheStatusName+"; fwd=stale; fwd-status=304; ttl="+ttl)
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
		t, err := http.ParseTime(ims)
		lm, err2 := http.ParseTime(stored.Get("Last-Modified"))
		return err == nil && err2 == nil && !lm.After(t)
	}
	return false
}

func (p *Proxy) trackActive(key string, d int) {
	p.active.Lock()
	defer p.active.Unlock()
	if p.active.keys[key] += d; p.active.keys[key] <= 0 {
		delete(p.active.keys, key)
	}
}

// activeHosts counts keys with requests in flight or queued.
func (p *Proxy) activeHosts() int {
	p.active.Lock()
	n := len(p.active.keys)
	p.active.Unlock()
	_, queued := p.queues.depth()
	return max(n, queued)
}

// record adds a finished request to the trace and counts it, once. A
// response sent before its handler returns is recorded just before it is
// flushed, so that a client that has its response finds its request in
// GET /trace and /metrics; both cost a lock and a counter, unlike the
// log line, which finish writes after.
func (p *Proxy) record(x *exchange) {
	if x.recorded {
		return
	}
	x.recorded = true
	if x.outcome == "" {
		x.outcome = "unknown"
	}
	x.Status, x.Outcome = x.status, x.outcome
	p.trace.Load().add(x.TraceEntry)
	p.m.request(x.outcome)
}

// finish logs, traces and counts a finished request.
func (p *Proxy) finish(r *http.Request, x *exchange) {
	p.record(x)
	if !p.log.Enabled(r.Context(), slog.LevelInfo) {
		return
	}
	attrs := []slog.Attr{
		slog.String("client", x.Client),
		slog.String("method", x.Method),
		slog.String("url", x.URL),
		slog.String("mode", string(x.Mode)),
		slog.Int("status", x.status),
		slog.String("outcome", x.outcome),
		slog.Int64("wait_ms", x.WaitMs),
		slog.Int64("upstream_ms", x.UpstreamMs),
		slog.Int64("bytes", x.Bytes),
		slog.Duration("took", p.now().Sub(x.start)),
	}
	if x.Cache != "" {
		attrs = append(attrs, slog.String("cache", x.Cache))
	}
	if x.Error != "" {
		attrs = append(attrs, slog.String("error", x.Error))
	}
	p.log.LogAttrs(r.Context(), slog.LevelInfo, "proxy request", attrs...)
}
