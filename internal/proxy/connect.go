package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/mitm"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// connect tunnels a CONNECT request (RFC 9110 §9.3.6). The path is
// invisible inside TLS, so robots.txt applies at host level only: a host
// whose robots.txt disallows "/" gets 403. The gate is applied per host as
// for plain requests; the permit is held for the life of the tunnel, so a
// host gets at most MaxInFlight tunnels at once (the polite-proxy thesis §4.2: one
// connection per host) and its delay counts from the tunnel's end. A tunnel
// idle for TunnelIdleTimeout is closed so it does not keep the slot.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request, rc *runtimeConfig, x *exchange, mode Mode, timeout time.Duration) {
	host, portStr, err := net.SplitHostPort(r.Host)
	port, perr := strconv.Atoi(portStr)
	switch {
	case err != nil || host == "" || perr != nil:
		p.refuse(w, r, x, refusal{http.StatusBadRequest, "bad-request", "CONNECT needs host:port", 0})
		return
	case !rc.ports[port]:
		p.refuse(w, r, x, refusal{http.StatusForbidden, "connect-port", "CONNECT to port " + portStr + " is not allowed", 0})
		return
	case p.isLoop(r, r.Host, portStr):
		p.refuse(w, r, x, refusal{http.StatusLoopDetected, "loop", "the request targets the proxy itself", 0})
		return
	case !rc.AllowPrivate && literalInternal(host):
		p.refuse(w, r, x, refusal{http.StatusForbidden, "private-destination", "loopback, private and link-local destinations are refused", 0})
		return
	}
	if p.mitm != nil {
		p.intercept(w, r, rc, x)
		return
	}
	u := &url.URL{Scheme: "https", Host: r.Host, Path: "/"}
	if port == 443 {
		u.Host = host
		if net.ParseIP(host) != nil && net.ParseIP(host).To4() == nil {
			u.Host = "[" + host + "]"
		}
	}
	if mode == ModeSequential {
		mode = ModeWait // a tunnel carries its own order
	}
	permit := p.admitOrRefuse(r.Context(), w, r, u, mode, timeout, rc, x)
	if permit == nil {
		return
	}
	p.trackActive(x.key, 1)
	defer p.trackActive(x.key, -1)
	var outcome politeness.Outcome
	defer func() { _ = permit.Done(outcome) }()

	dctx, cancel := context.WithTimeout(r.Context(), rc.UpstreamHeaderTimeout)
	upstream, err := p.dial(dctx, "tcp", r.Host)
	cancel()
	if err != nil {
		outcome.Err = err
		p.upstreamError(w, r, x, err)
		return
	}
	defer upstream.Close()
	client, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		outcome.Err = err
		p.refuse(w, r, x, refusal{http.StatusInternalServerError, "hijack", "cannot take over the connection", 0})
		return
	}
	defer client.Close()
	x.status, x.outcome = http.StatusOK, "tunnel"
	outcome.Status = http.StatusOK
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\nVia: "+p.via+"\r\n\r\n"); err != nil {
		return
	}
	p.tunnelsActive.Add(1)
	defer p.tunnelsActive.Add(-1)
	p.tunnels.Add(1)
	defer p.tunnels.Done()

	// Bytes the server already buffered from the client go first.
	if n := brw.Reader.Buffered(); n > 0 {
		b, _ := brw.Reader.Peek(n)
		if _, err := upstream.Write(b); err != nil {
			return
		}
	}
	t := &tunnel{hard: time.Now().Add(rc.TunnelTimeout), idle: rc.TunnelIdleTimeout}
	t.touch()
	up, down, _ := t.relay(client, client, upstream, upstream, 0, 0, p.closing)
	x.Bytes = up + down
}

// tunnel bounds a CONNECT tunnel's life: hard is the absolute end, idle
// the longest time without a byte in either direction. The tunnel holds
// its host's politeness slot, so an idle one must not keep it.
type tunnel struct {
	hard time.Time
	idle time.Duration
	last atomic.Int64 // unix nanoseconds of the last byte either way
}

func (t *tunnel) touch() { t.last.Store(time.Now().UnixNano()) }

// relay copies bytes both ways between a and b (reading them through aR
// and bR, which may hold bytes already read) until both directions end
// or closing is closed. A direction that ends normally half-closes its
// destination so the other drains; one that passes limit bytes (limit >
// 0) closes both and its error is returned.
//
// grace 0 keeps TCP's half-close semantics, right for a CONNECT tunnel:
// a peer may shut down its sending side and still read the answer (RFC
// 9293 §3.6), so the other direction runs until it ends by itself or a
// timeout. grace > 0 is for protocols with no half-open state (a
// WebSocket is closed once its TCP connection is, RFC 6455 §7.1.1): once
// either direction has ended, the other gets grace to end too, and then
// both connections are closed.
func (t *tunnel) relay(a net.Conn, aR io.Reader, b net.Conn, bR io.Reader, limit int64, grace time.Duration, closing <-chan struct{}) (ab, ba int64, err error) {
	var errAB, errBA error
	// ended gets one value per direction; receiving both orders their
	// results before this function reads them.
	ended := make(chan struct{}, 2)
	one := func(dst, src net.Conn, srcR io.Reader, n *int64, e *error) {
		defer func() { ended <- struct{}{} }()
		*n, *e = t.pipeLimited(dst, src, srcR, limit)
		if *e != nil {
			_ = a.Close() // a capped connection ends both ways
			_ = b.Close()
			return
		}
		closeWrite(dst)
	}
	closeBoth := func() {
		_ = a.Close() // unblocks both directions' reads and writes
		_ = b.Close()
	}
	go one(b, a, aR, &ab, &errAB)
	go one(a, b, bR, &ba, &errBA)
	var (
		timer    *time.Timer
		graceEnd <-chan time.Time // set once the first direction ends
	)
	for running := 2; running > 0; {
		select {
		case <-ended:
			running--
			if running == 1 && grace > 0 {
				timer = time.NewTimer(grace)
				graceEnd = timer.C
			}
		case <-graceEnd:
			graceEnd = nil
			closeBoth()
		case <-closing:
			closing = nil
			closeBoth()
		}
	}
	if timer != nil {
		timer.Stop()
	}
	return ab, ba, errors.Join(errAB, errBA)
}

// pipeLimited is pipe reading through src (src itself, or a buffered
// reader over srcConn holding bytes already read) and, when limit > 0,
// stopping with errWebSocketCap before more than limit bytes pass.
func (t *tunnel) pipeLimited(dst, srcConn net.Conn, src io.Reader, limit int64) (int64, error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	var n int64
	for {
		deadline := time.Unix(0, t.last.Load()).Add(t.idle)
		if deadline.After(t.hard) {
			deadline = t.hard
		}
		_ = srcConn.SetReadDeadline(deadline)
		m, err := src.Read(buf)
		if m > 0 {
			if limit > 0 && n+int64(m) > limit {
				return n, errWebSocketCap
			}
			t.touch()
			_ = dst.SetWriteDeadline(t.hard)
			if _, werr := dst.Write(buf[:m]); werr != nil {
				return n, nil
			}
			n += int64(m)
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && time.Now().Before(t.hard) &&
				time.Since(time.Unix(0, t.last.Load())) < t.idle {
				continue // the other direction was busy: not idle
			}
			return n, nil
		}
	}
}

// closeWrite half-closes a TCP connection so the other side sees EOF while
// the reverse direction drains.
func closeWrite(c net.Conn) {
	if tc, ok := c.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
		return
	}
	_ = c.Close()
}

// intercept answers CONNECT itself (--mitm, internal/mitm): it completes
// the TLS handshake with a certificate for the host signed by the local CA
// and serves the HTTP/1.1 requests inside through the whole pipeline
// (path-level robots.txt, the gate per request, the cache) as https URLs.
// The tunnel ends when the client closes it, after TunnelIdleTimeout
// without a request, after TunnelTimeout, or when the proxy closes.
func (p *Proxy) intercept(w http.ResponseWriter, r *http.Request, rc *runtimeConfig, x *exchange) {
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		x.status, x.outcome, x.Error = http.StatusInternalServerError, "hijack", err.Error()
		return
	}
	x.status, x.outcome = http.StatusOK, "intercept"
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\nVia: "+p.via+"\r\n\r\n"); err != nil {
		conn.Close()
		return
	}
	p.tunnelsActive.Add(1)
	defer p.tunnelsActive.Add(-1)
	p.tunnels.Add(1)
	defer p.tunnels.Done()

	ctx, cancel := context.WithTimeout(context.Background(), rc.TunnelTimeout)
	defer cancel()
	go func() {
		select {
		case <-p.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	srv := &mitm.Server{
		CA:                p.mitm,
		ReadHeaderTimeout: rc.ReadHeaderTimeout,
		IdleTimeout:       rc.TunnelIdleTimeout,
		MaxHeaderBytes:    rc.MaxHeaderBytes,
		Logger:            p.log,
	}
	remote := r.RemoteAddr
	err = srv.ServeConn(ctx, mitm.BufferedConn(conn, brw.Reader), r.Host, http.HandlerFunc(func(w2 http.ResponseWriter, r2 *http.Request) {
		r2.RemoteAddr = remote
		p.ServeHTTP(w2, r2)
	}))
	if err != nil && ctx.Err() == nil {
		x.Error = err.Error()
	}
}
