package proxy

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// Mode is how the proxy treats a request that would break its host's
// politeness rules.
type Mode string

const (
	// ModeReject answers 429 with Retry-After (the polite-proxy thesis §4.7.1).
	ModeReject Mode = "reject"
	// ModeWait holds the request until its turn (bounded by MaxWait), so a
	// naive loop becomes polite without handling 429. The default.
	ModeWait Mode = "wait"
	// ModeSequential is ModeWait plus per-client ordering: responses to one
	// client are delivered in the order its requests arrived (the polite-proxy
	// thesis §4.7.2), each within SequentialTimeout.
	ModeSequential Mode = "sequential"
)

// ParseMode parses a mode name (case-insensitive); "" gives ModeWait.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return ModeWait, nil
	case ModeReject, ModeWait, ModeSequential:
		return m, nil
	}
	return "", fmt.Errorf("proxy: mode %q: want reject, wait or sequential", s)
}

// Request header fields a client may send to steer the proxy. They are
// removed before the request is forwarded.
const (
	// HeaderMode overrides Config.Mode for one request.
	HeaderMode = "X-Courtesy-Mode"
	// HeaderClient names the client for sequential ordering; without it the
	// client is its source IP address (all scripts on one machine then
	// share one order).
	HeaderClient = "X-Courtesy-Client"
	// HeaderTimeout overrides MaxWait / SequentialTimeout for one request:
	// a Go duration ("30s") or whole milliseconds ("30000").
	HeaderTimeout = "X-Courtesy-Timeout"
)

// Response header fields the proxy adds.
const (
	// HeaderReason says why the proxy answered itself (robots, delay,
	// queue-full, ...).
	HeaderReason = "X-Courtesy-Reason"
	// HeaderRetryAfterMs is the wait in milliseconds (Retry-After has whole
	// seconds only).
	HeaderRetryAfterMs = "X-Courtesy-Retry-After-Ms"
	// HeaderWaitedMs is how long a request was held (wait and sequential
	// modes).
	HeaderWaitedMs = "X-Courtesy-Waited-Ms"
	// HeaderCache is HIT, REVALIDATED or MISS.
	HeaderCache = "X-Cache"
)

// Config is the proxy's runtime configuration. Its zero value works (with
// the defaults documented on each field); SetConfig replaces it live.
type Config struct {
	// Mode is the default mode; requests may override it with the
	// X-Courtesy-Mode header. Default ModeWait.
	Mode Mode `yaml:"mode"`
	// MaxWait bounds how long a request is held in wait mode before it gets
	// 429. Default 30s.
	MaxWait time.Duration `yaml:"max-wait"`
	// SequentialTimeout bounds the life of a request in sequential mode
	// (waiting for its turn and its predecessors); past it the request gets
	// 504. Default 60s (the polite-proxy thesis §4.7.2: set at startup or per request).
	SequentialTimeout time.Duration `yaml:"sequential-timeout"`
	// MaxQueuePerHost bounds the requests held for one politeness key;
	// past it new ones get 503. Default 1000.
	MaxQueuePerHost int `yaml:"max-queue-per-host"`
	// MaxQueue bounds the requests held in total. Default 10000.
	MaxQueue int `yaml:"max-queue"`
	// MaxPerClient bounds the outstanding requests of one sequential
	// client. Default 1000.
	MaxPerClient int `yaml:"max-per-client"`

	// UpstreamHeaderTimeout bounds the wait for the origin's response
	// header. Default 30s.
	UpstreamHeaderTimeout time.Duration `yaml:"upstream-header-timeout"`
	// UpstreamTimeout bounds a whole exchange with the origin, body
	// included. Default 5m.
	UpstreamTimeout time.Duration `yaml:"upstream-timeout"`
	// MaxResponseBytes bounds a response body relayed to the client; a
	// longer one is cut (the client sees a truncated body). Default 1 GiB.
	MaxResponseBytes int64 `yaml:"max-response-bytes"`
	// MaxRequestBytes bounds a request body forwarded upstream. Default
	// 32 MiB.
	MaxRequestBytes int64 `yaml:"max-request-bytes"`
	// ClientBodyTimeout and ClientBodyMinRate bound the reading of a
	// request body, which is read whole before the request takes its
	// host's slot (body.go): the body must come within ClientBodyTimeout
	// plus one second per ClientBodyMinRate bytes received, or the client
	// gets 408. Defaults 20s and 500 bytes/s (Apache mod_reqtimeout's
	// body=20,MinRate=500).
	ClientBodyTimeout time.Duration `yaml:"client-body-timeout"`
	ClientBodyMinRate int64         `yaml:"client-body-min-rate"`
	// MaxIdleConnsPerHost is how many idle origin connections are kept per
	// host. Default 256 (net/http's 2 doubled the CPU per request).
	MaxIdleConnsPerHost int `yaml:"max-idle-conns-per-host"`
	// MaxIdleConns bounds the idle origin connections kept in all (by
	// each of the proxy's two origin clients); past it the oldest is
	// closed. Default 4096.
	MaxIdleConns int `yaml:"max-idle-conns"`
	// IdleConnTimeout closes an idle origin connection after this long,
	// whether or not another request comes. Default 90s (as net/http).
	IdleConnTimeout time.Duration `yaml:"idle-conn-timeout"`

	// AllowPrivate lets requests reach loopback, private and link-local
	// destinations (the SSRF guard refuses them by default).
	AllowPrivate bool `yaml:"allow-private"`
	// ConnectPorts are the ports CONNECT may reach. Default [443].
	ConnectPorts []int `yaml:"connect-ports"`
	// TunnelTimeout bounds the life of a CONNECT tunnel. Default 10m.
	TunnelTimeout time.Duration `yaml:"tunnel-timeout"`
	// TunnelIdleTimeout closes a tunnel with no traffic either way for
	// this long: it holds its host's politeness slot. Default 30s.
	TunnelIdleTimeout time.Duration `yaml:"tunnel-idle-timeout"`
	// AllowedClients are the client networks served; others get 403.
	// Default loopback and private networks (127.0.0.0/8, ::1/128,
	// 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7).
	AllowedClients []string `yaml:"allowed-clients"`
	// Users enables proxy authentication (Proxy-Authorization: Basic,
	// RFC 9110 §11.7.2): user name to password. Empty: no authentication.
	Users map[string]string `yaml:"users"`

	// ReadHeaderTimeout cuts off a client that has not sent a complete
	// request header in this time (slowloris). Default 10s. Applies at
	// NewServer.
	ReadHeaderTimeout time.Duration `yaml:"read-header-timeout"`
	// MaxHeaderBytes bounds a request header; larger ones get 431.
	// Default 64 KiB. Applies at NewServer.
	MaxHeaderBytes int `yaml:"max-header-bytes"`

	// TraceSize is how many recent requests GET /trace keeps. Default 200.
	TraceSize int `yaml:"trace-size"`

	// WebSocket tunes WebSocket handshakes through the proxy (upgrade.go).
	WebSocket WebSocketConfig `yaml:"websocket"`

	// LowLatency tunes the low-load mode (latency.go). It applies only
	// when the proxy governs its process (Options.GovernProcs, as
	// `courtesy proxy` does).
	LowLatency LowLatencyConfig `yaml:"low-latency"`
}

// LowLatencyConfig tunes the low-load mode: while at most two requests
// are in flight, the Go scheduler runs on one core and a read the proxy
// waits on polls its socket briefly before it sleeps, so that a request
// does not pay for waking idle cores (latency.go explains why).
type LowLatencyConfig struct {
	// Disabled keeps every core and never polls. Default false (on).
	Disabled bool `yaml:"disabled"`
	// Poll is how long a read polls its socket before sleeping, at low
	// load. Default 100µs; negative: no polling; at most 10ms.
	Poll time.Duration `yaml:"poll"`
}

// WebSocketConfig tunes WebSocket proxying (RFC 6455 over an absolute-form
// request with Upgrade: websocket). The handshake passes the whole
// pipeline except the cache; the host's politeness slot is freed when the
// handshake ends, so the open socket is bounded by these limits instead.
type WebSocketConfig struct {
	// Disabled turns WebSocket proxying off: Upgrade is then dropped as a
	// hop-by-hop field (RFC 9110 §7.6.1) and the origin sees a plain GET.
	// Default false (on).
	Disabled bool `yaml:"disabled"`
	// IdleTimeout closes a socket with no byte in either direction for
	// this long. Default 60s.
	IdleTimeout time.Duration `yaml:"idle-timeout"`
	// MaxLifetime closes a socket this long after its handshake. Default
	// 1h.
	MaxLifetime time.Duration `yaml:"max-lifetime"`
	// MaxBytes bounds the bytes relayed in each direction of one socket;
	// past it the socket is closed. Default 64 MiB.
	MaxBytes int64 `yaml:"max-bytes"`
	// MaxPerHost bounds the open sockets per politeness key; a handshake
	// past it gets 429 (reason websocket-limit). Default 4.
	MaxPerHost int `yaml:"max-per-host"`
	// MaxOpen bounds the open sockets in all; past it 503. Default 1000.
	MaxOpen int `yaml:"max-open"`
	// CloseGrace is how long the other direction of a socket may run
	// once one has ended (EOF or error), before both connections are
	// closed. RFC 6455 §7.1.1 has the server close TCP first, usually
	// right after its Close frame; the client's Close reply (§5.5.1) may
	// still be on its way, and a second is ample for one small frame,
	// while a client that never closes no longer keeps its socket, two
	// goroutines and a per-host count until IdleTimeout. The same grace
	// bounds an origin that ignores a client's close. Default 1s; at
	// most 1m.
	CloseGrace time.Duration `yaml:"close-grace"`
}

// Bounds on configurable sizes.
const (
	maxQueueLimit = 1_000_000
	maxTraceSize  = 100_000
)

// Validate reports settings that cannot work.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("proxy: "+format, args...)) }
	if _, err := ParseMode(string(c.Mode)); err != nil {
		errs = append(errs, err)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"max-wait", c.MaxWait}, {"sequential-timeout", c.SequentialTimeout}, {"upstream-header-timeout", c.UpstreamHeaderTimeout},
		{"upstream-timeout", c.UpstreamTimeout}, {"tunnel-timeout", c.TunnelTimeout}, {"tunnel-idle-timeout", c.TunnelIdleTimeout}, {"read-header-timeout", c.ReadHeaderTimeout}, {"client-body-timeout", c.ClientBodyTimeout}} {
		if d.v < 0 {
			bad("%s must not be negative, got %v", d.name, d.v)
		}
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"max-queue-per-host", c.MaxQueuePerHost}, {"max-queue", c.MaxQueue}, {"max-per-client", c.MaxPerClient}} {
		if n.v < 0 || n.v > maxQueueLimit {
			bad("%s %d outside 0..%d", n.name, n.v, maxQueueLimit)
		}
	}
	if c.MaxResponseBytes < 0 || c.MaxRequestBytes < 0 || c.ClientBodyMinRate < 0 {
		bad("byte limits must not be negative")
	}
	if c.MaxHeaderBytes < 0 || c.MaxHeaderBytes > 16<<20 {
		bad("max-header-bytes %d outside 0..%d", c.MaxHeaderBytes, 16<<20)
	}
	if c.MaxIdleConnsPerHost < 0 || c.MaxIdleConns < 0 || c.MaxIdleConns > maxQueueLimit || c.IdleConnTimeout < 0 {
		bad("max-idle-conns-per-host, max-idle-conns (at most %d) and idle-conn-timeout must not be negative", maxQueueLimit)
	}
	ws := c.WebSocket
	if ws.IdleTimeout < 0 || ws.MaxLifetime < 0 || ws.MaxBytes < 0 || ws.CloseGrace < 0 {
		bad("websocket: timeouts, close-grace and max-bytes must not be negative")
	}
	if ws.CloseGrace > time.Minute {
		bad("websocket: close-grace %v is more than 1m", ws.CloseGrace)
	}
	if ws.MaxPerHost < 0 || ws.MaxPerHost > maxQueueLimit || ws.MaxOpen < 0 || ws.MaxOpen > maxQueueLimit {
		bad("websocket: max-per-host and max-open must be within 0..%d", maxQueueLimit)
	}
	if c.LowLatency.Poll > 10*time.Millisecond {
		bad("low-latency: poll %v is more than 10ms", c.LowLatency.Poll)
	}
	if c.TraceSize < 0 || c.TraceSize > maxTraceSize {
		bad("trace-size %d outside 0..%d", c.TraceSize, maxTraceSize)
	}
	for _, p := range c.ConnectPorts {
		if p <= 0 || p > 65535 {
			bad("connect-ports: bad port %d", p)
		}
	}
	if _, err := parsePrefixes(c.AllowedClients); err != nil {
		errs = append(errs, err)
	}
	for u := range c.Users {
		if u == "" || strings.Contains(u, ":") {
			bad("users: bad user name %q", u)
		}
	}
	return errors.Join(errs...)
}

// withDefaults fills zero fields.
func (c Config) withDefaults() Config {
	c.Mode, _ = ParseMode(string(c.Mode))
	def := func(p *time.Duration, d time.Duration) {
		if *p == 0 {
			*p = d
		}
	}
	defInt := func(p *int, d int) {
		if *p == 0 {
			*p = d
		}
	}
	def(&c.MaxWait, 30*time.Second)
	def(&c.SequentialTimeout, 60*time.Second)
	def(&c.UpstreamHeaderTimeout, 30*time.Second)
	def(&c.UpstreamTimeout, 5*time.Minute)
	def(&c.TunnelTimeout, 10*time.Minute)
	def(&c.TunnelIdleTimeout, 30*time.Second)
	def(&c.ReadHeaderTimeout, 10*time.Second)
	def(&c.ClientBodyTimeout, 20*time.Second)
	if c.ClientBodyMinRate == 0 {
		c.ClientBodyMinRate = 500
	}
	defInt(&c.MaxHeaderBytes, 64<<10)
	defInt(&c.MaxQueuePerHost, 1000)
	defInt(&c.MaxQueue, 10000)
	defInt(&c.MaxPerClient, 1000)
	defInt(&c.MaxIdleConnsPerHost, 256)
	defInt(&c.MaxIdleConns, 4096)
	def(&c.IdleConnTimeout, 90*time.Second)
	defInt(&c.TraceSize, 200)
	def(&c.WebSocket.IdleTimeout, 60*time.Second)
	def(&c.WebSocket.MaxLifetime, time.Hour)
	defInt(&c.WebSocket.MaxPerHost, 4)
	defInt(&c.WebSocket.MaxOpen, 1000)
	def(&c.WebSocket.CloseGrace, time.Second)
	def(&c.LowLatency.Poll, 100*time.Microsecond)
	if c.WebSocket.MaxBytes == 0 {
		c.WebSocket.MaxBytes = 64 << 20
	}
	if c.MaxResponseBytes == 0 {
		c.MaxResponseBytes = 1 << 30
	}
	if c.MaxRequestBytes == 0 {
		c.MaxRequestBytes = 32 << 20
	}
	if len(c.ConnectPorts) == 0 {
		c.ConnectPorts = []int{443}
	}
	if len(c.AllowedClients) == 0 {
		c.AllowedClients = []string{"127.0.0.0/8", "::1/128", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"}
	}
	return c
}

// parsePrefixes parses CIDRs or single addresses.
func parsePrefixes(ss []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(ss))
	for _, s := range ss {
		s = strings.TrimSpace(s)
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("proxy: allowed-clients: %q is neither a network nor an address", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}
