package proxy

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/courtesy-crawler/courtesy/internal/h1"
	"github.com/courtesy-crawler/courtesy/internal/httpcache"
	"github.com/courtesy-crawler/courtesy/internal/mitm"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
	"github.com/courtesy-crawler/courtesy/internal/resolve"
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
	// Observe, when set, is called with each finished request as it is
	// traced (the web console's tally); it must be quick and safe for
	// concurrent use.
	Observe func(TraceEntry)
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
	via10     string // the same for an HTTP/1.0 message: "1.0 courtesy-<id>"
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
	observe       func(TraceEntry)
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
		observe: o.Observe,
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
	p.via10 = "1.0 " + p.viaToken
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

// Tunnels returns the number of CONNECT tunnels open now.
func (p *Proxy) Tunnels() int64 { return p.tunnelsActive.Load() }

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

// done ends the permit with the outcome so far. The permit takes the
// first call only, so the host's slot can be freed as soon as the
// origin's part is over (before the client has its last byte) and again,
// harmlessly, when forward returns.
func (f *fetch) done() { _ = f.permit.Done(f.outcome) }

// viaFor is our Via entry for a message received in HTTP/major.minor: RFC
// 9110 §7.6.3 names the protocol the proxy received, so a request from an
// HTTP/1.0 client (or a response from an HTTP/1.0 origin) says 1.0.
func (p *Proxy) viaFor(major, minor int) string {
	if major == 1 && minor == 0 {
		return p.via10
	}
	return p.via
}
