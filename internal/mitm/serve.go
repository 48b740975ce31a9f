package mitm

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// Defaults of Server.
const (
	DefaultHandshakeTimeout  = 10 * time.Second
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultMaxHeaderBytes    = 64 << 10
)

// Server serves intercepted connections. The zero value (with CA set)
// uses the documented defaults; a Server may be shared by any number of
// concurrent ServeConn calls.
type Server struct {
	// CA mints the certificates presented to clients. Required.
	CA *CA
	// HandshakeTimeout bounds the TLS handshake. Default 10 s; zero means
	// the default.
	HandshakeTimeout time.Duration
	// ReadHeaderTimeout bounds the reading of each request's header, which
	// cuts off slowloris clients. Default 10 s; zero means the default.
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes a connection with no request for this long.
	// Default 2 min (as the proxy's own server); zero means the default.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request header (request line and fields);
	// larger ones get 431. Default 64 KiB (as the proxy); zero means the
	// default.
	MaxHeaderBytes int
	// Logger receives the HTTP server's own errors (malformed requests)
	// at debug level. Nil discards them.
	Logger *slog.Logger
}

// Info describes the tunnel an intercepted request came through; the
// handler finds it in the request's context with FromContext.
type Info struct {
	// Authority is the CONNECT target as host:port, normalized (lowercase
	// name or canonical address, IPv6 in brackets). Every request on the
	// tunnel was checked to be for this authority.
	Authority string
	// ServerName is the name the client sent in SNI; empty when it sent
	// none.
	ServerName string
}

type infoKey struct{}

// FromContext returns the tunnel of an intercepted request; ok is false
// for a request that did not come through ServeConn. The proxy uses it to
// know the request is already authenticated by its CONNECT (clients do not
// repeat Proxy-Authorization inside the tunnel) and to label it.
func FromContext(ctx context.Context) (Info, bool) {
	i, ok := ctx.Value(infoKey{}).(Info)
	return i, ok
}

// ServeConn is (&Server{CA: ca}).ServeConn: ServeConn with the defaults.
func (ca *CA) ServeConn(ctx context.Context, conn net.Conn, host string, h http.Handler) error {
	return (&Server{CA: ca}).ServeConn(ctx, conn, host, h)
}

// ServeConn intercepts conn, the client side of a CONNECT tunnel to host
// (host:port, or host alone for port 443) that has already been answered
// 200: it completes a TLS handshake as host (SNI if the client sent one,
// else host; see ServerConfig), then serves the HTTP/1.1 requests that
// follow on conn to h. Each request reaches h in absolute form, as a plain
// proxied request does: r.URL is https://host[:port]/path?query (the port
// only when not 443), r.Host and r.RequestURI match it, r.TLS is set, and
// FromContext(r.Context()) gives the tunnel. A request for another host
// than the tunnel's gets 421 Misdirected Request (RFC 9110 §15.5.20) and
// never reaches h, so a tunnel admitted for one host cannot carry requests
// for another.
//
// ServeConn returns when the client closes the connection, it is idle for
// IdleTimeout, or ctx ends (then with ctx's error; requests in flight see
// their contexts cancelled and the connection is closed). It returns only
// once the connection's goroutines have ended and always closes conn,
// unless h hijacked it, in which case h owns it.
func (s *Server) ServeConn(ctx context.Context, conn net.Conn, host string, h http.Handler) error {
	if s.CA == nil {
		_ = conn.Close()
		return errors.New("mitm: Server.CA is nil")
	}
	authority, name, err := splitAuthority(host)
	if err != nil {
		_ = conn.Close()
		return err
	}
	tc := tls.Server(conn, s.CA.ServerConfig(name))
	hctx, cancel := context.WithTimeout(ctx, orDefault(s.HandshakeTimeout, DefaultHandshakeTimeout))
	err = tc.HandshakeContext(hctx)
	cancel()
	if err != nil {
		_ = tc.Close()
		if ctx.Err() != nil {
			return fmt.Errorf("mitm: TLS handshake with client for %s: %w", authority, ctx.Err())
		}
		return fmt.Errorf("mitm: TLS handshake with client for %s: %w", authority, err)
	}
	info := Info{Authority: authority, ServerName: tc.ConnectionState().ServerName}

	ln := newOneConnListener(tc)
	connDone := make(chan struct{})
	var doneOnce sync.Once
	errLog := log.New(io.Discard, "", 0)
	if s.Logger != nil {
		errLog = slog.NewLogLogger(s.Logger.Handler(), slog.LevelDebug)
	}
	srv := &http.Server{
		Handler:           &rewriter{info: info, next: h},
		ReadHeaderTimeout: orDefault(s.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		IdleTimeout:       orDefault(s.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes:    orDefault(s.MaxHeaderBytes, DefaultMaxHeaderBytes),
		// Requests' contexts derive from ctx, so ending ctx cancels them.
		BaseContext: func(net.Listener) context.Context { return ctx },
		// An empty map turns HTTP/2 off; ALPN never selects it anyway.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
		ErrorLog:     errLog,
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateClosed || st == http.StateHijacked {
				// The one connection is over: stop the accept loop.
				doneOnce.Do(func() { close(connDone) })
				_ = ln.Close()
			}
		},
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // owner: this call; ends when Serve returns or ctx ends
		defer wg.Done()
		select {
		case <-ctx.Done():
			_ = srv.Close() // closes the listener and the connection
		case <-stop:
		}
	}()
	_ = srv.Serve(ln) // returns once the listener is closed
	close(stop)
	wg.Wait()
	if ln.accepted() {
		<-connDone // the connection's goroutine has finished (or hijacked)
	} else {
		_ = tc.Close() // Serve stopped before taking the connection
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("mitm: serving %s: %w", authority, err)
	}
	return nil
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// splitAuthority normalizes a CONNECT target into host:port (IPv6 in
// brackets, port 443 when absent) and the bare name or address.
func splitAuthority(host string) (authority, name string, err error) {
	port := "443"
	h := host
	if hh, p, err := net.SplitHostPort(host); err == nil {
		n, perr := strconv.Atoi(p)
		if perr != nil || n < 1 || n > 65535 {
			return "", "", fmt.Errorf("mitm: bad port in %q", host)
		}
		h, port = hh, strconv.Itoa(n)
	}
	key, ip, err := normalizeHost(h)
	if err != nil {
		return "", "", err
	}
	if ip.IsValid() {
		return netip.AddrPortFrom(ip, mustPort(port)).String(), key, nil
	}
	return net.JoinHostPort(key, port), key, nil
}

func mustPort(p string) uint16 {
	n, _ := strconv.Atoi(p)
	return uint16(n)
}

// rewriter turns the origin-form requests read inside the tunnel into the
// absolute-form requests the proxy handles.
type rewriter struct {
	info Info
	next http.Handler
}

func (rw *rewriter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		http.Error(w, "mitm: CONNECT inside an intercepted tunnel is not supported", http.StatusMethodNotAllowed)
		return
	case r.URL.Path == "*" || r.RequestURI == "*":
		http.Error(w, "mitm: asterisk-form requests are not forwarded", http.StatusBadRequest)
		return
	}
	// r.Host is the Host field, or the authority of an absolute-form
	// request line (RFC 9112 §3.2.2), which Go's server put there.
	// An HTTP/1.0 request may lack Host (RFC 9112 §3.2): the tunnel's
	// authority is then the only one it can mean.
	got, err := rw.info.Authority, error(nil)
	if r.Host != "" {
		got, _, err = splitAuthority(r.Host)
	}
	if err != nil || got != rw.info.Authority {
		http.Error(w, fmt.Sprintf("mitm: request for %q on a tunnel to %s", r.Host, rw.info.Authority), http.StatusMisdirectedRequest)
		return
	}
	host := rw.info.Authority
	if ap, err := netip.ParseAddrPort(host); err == nil && ap.Port() == 443 {
		host = ap.Addr().String()
		if ap.Addr().Is6() {
			host = "[" + host + "]"
		}
	} else if h, p, err := net.SplitHostPort(host); err == nil && p == "443" {
		host = h
	}
	u := *r.URL
	u.Scheme, u.Host, u.Opaque, u.User = "https", host, "", nil
	r2 := r.WithContext(context.WithValue(r.Context(), infoKey{}, rw.info))
	r2.URL = &u
	r2.Host = host
	r2.RequestURI = u.String()
	rw.next.ServeHTTP(w, r2)
}

// oneConnListener hands out one connection, then blocks in Accept until
// closed, so http.Server can serve a connection it did not accept.
type oneConnListener struct {
	conn   net.Conn
	ch     chan net.Conn // holds conn until accepted
	closed chan struct{}
	once   sync.Once
	mu     sync.Mutex
	took   bool // conn was handed out; guarded by mu
}

func newOneConnListener(c net.Conn) *oneConnListener {
	l := &oneConnListener{conn: c, ch: make(chan net.Conn, 1), closed: make(chan struct{})}
	l.ch <- c
	return l
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	select {
	case <-l.closed:
		return nil, net.ErrClosed
	default:
	}
	select {
	case c := <-l.ch:
		l.mu.Lock()
		l.took = true
		l.mu.Unlock()
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *oneConnListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *oneConnListener) Addr() net.Addr { return l.conn.LocalAddr() }

func (l *oneConnListener) accepted() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.took
}

// BufferedConn returns c reading through br, for a connection taken over
// with http.Hijacker whose bufio.Reader may already hold bytes the client
// sent after its CONNECT (the start of its TLS ClientHello). Reads drain
// br first, then c; everything else is c's.
func BufferedConn(c net.Conn, br *bufio.Reader) net.Conn {
	if br == nil || br.Buffered() == 0 {
		return c
	}
	return &bufferedConn{Conn: c, r: br}
}

type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }
