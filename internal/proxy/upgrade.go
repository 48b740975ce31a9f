package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// WebSocket through the proxy (RFC 6455 §4.1). A client that opens ws://
// through an HTTP proxy either tunnels with CONNECT (handled by connect.go)
// or, as many libraries do for plain ws://, sends the handshake itself in
// absolute form:
//
//	GET http://host/chat HTTP/1.1
//	Connection: Upgrade
//	Upgrade: websocket
//	Sec-WebSocket-Key: ...
//
// Upgrade and Connection are hop-by-hop fields (RFC 9110 §7.6.1, §7.8)
// that the ordinary forward path drops, so such a handshake is handled
// here: it passes access control, the loop check, the SSRF guard, robots
// (at path level: the URL is visible) and the politeness gate like any
// request, and is then sent to the origin with the upgrade fields
// restored. The cache is skipped (a 101 is not storable). On 101 the
// client and origin connections are spliced byte for byte.
//
// The host's politeness slot is freed when the handshake ends: the
// handshake is the request the gate spaces, and a socket that may stay
// open for an hour must not close its host to every other client (seed
// 000 §4.2's one connection per host is about request traffic). The open
// socket is bounded instead by WebSocketConfig: MaxPerHost open sockets
// per politeness key, MaxOpen in all, IdleTimeout without a byte either
// way, MaxLifetime, and MaxBytes per direction. Once either side has
// closed, the other gets WebSocketConfig.CloseGrace and the socket is closed.

// isWebSocket reports whether r is a WebSocket opening handshake: Upgrade
// naming websocket and Connection naming upgrade (RFC 6455 §4.1 items 5
// and 6; tokens are case-insensitive).
func isWebSocket(r *http.Request) bool {
	return headerHasToken(r.Header, "Upgrade", "websocket") && headerHasToken(r.Header, "Connection", "upgrade")
}

// headerHasToken reports whether a comma-separated field of h contains
// token, ASCII case-insensitively (httpguts: no Unicode folding, so
// "webſocket" is not websocket). Protocol tokens may carry a version
// ("websocket/13" is not websocket, RFC 9110 §7.8), so the match is exact.
func headerHasToken(h http.Header, name, token string) bool {
	return httpguts.HeaderValuesContainsToken(h[textproto.CanonicalMIMEHeaderKey(name)], token)
}

// wsSockets counts the open WebSockets, per politeness key and in all.
// The zero value is ready.
type wsSockets struct {
	// mu guards open and byKey.
	mu    sync.Mutex
	open  int
	byKey map[string]int
}

// take reserves a socket for key; it reports "" on success, else the limit
// that was hit ("host" or "total").
func (s *wsSockets) take(key string, perKey, total int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open >= total {
		return "total"
	}
	if s.byKey[key] >= perKey {
		return "host"
	}
	if s.byKey == nil {
		s.byKey = make(map[string]int)
	}
	s.open++
	s.byKey[key]++
	return ""
}

// drop returns a socket taken for key.
func (s *wsSockets) drop(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open--
	if s.byKey[key]--; s.byKey[key] <= 0 {
		delete(s.byKey, key)
	}
}

// count returns the open sockets.
func (s *wsSockets) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}

// WebSockets returns the number of open WebSockets (handshakes in
// progress included).
func (p *Proxy) WebSockets() int { return p.ws.count() }

// errWebSocketCap marks a socket closed because it relayed MaxBytes in one
// direction.
var errWebSocketCap = errors.New("proxy: websocket byte cap reached")

// upgrade proxies a WebSocket handshake and, on 101, the socket (see the
// comment at the top of this file). ServeHTTP calls it after the loop
// check and the SSRF guard.
func (p *Proxy) upgrade(w http.ResponseWriter, r *http.Request, u *url.URL, rc *runtimeConfig, x *exchange, mode Mode, timeout time.Duration) {
	switch {
	case r.Method != http.MethodGet || !r.ProtoAtLeast(1, 1):
		p.refuse(w, r, x, refusal{http.StatusBadRequest, "bad-request", "a WebSocket handshake is an HTTP/1.1 GET (RFC 6455 §4.1)", 0})
		return
	case r.ContentLength != 0:
		p.refuse(w, r, x, refusal{http.StatusBadRequest, "bad-request", "a WebSocket handshake has no body", 0})
		return
	}
	if mode == ModeSequential {
		mode = ModeWait // a socket carries its own order
	}
	permit := p.admitOrRefuse(r.Context(), w, r, u, mode, timeout, rc, x)
	if permit == nil {
		return
	}
	ws := rc.WebSocket
	switch p.ws.take(x.key, ws.MaxPerHost, ws.MaxOpen) {
	case "host":
		_ = permit.Release()
		p.refuse(w, r, x, refusal{http.StatusTooManyRequests, "websocket-limit",
			fmt.Sprintf("%s already has %d open WebSocket(s) through this proxy", x.key, ws.MaxPerHost), ws.IdleTimeout})
		return
	case "total":
		_ = permit.Release()
		p.refuse(w, r, x, refusal{http.StatusServiceUnavailable, "websocket-limit", "too many open WebSockets", time.Second})
		return
	}
	// The socket is recorded (trace, metrics; finish still writes the
	// log line) before it stops counting, so that whoever sees
	// WebSockets() drop finds it in the trace; and both happen before
	// the socket's tunnels count ends, so that Close returns with none.
	released := false
	release := func() {
		if !released {
			released = true
			p.record(x)
			p.ws.drop(x.key)
		}
	}
	defer release()

	// The handshake is the request the gate spaces: it holds the slot
	// until the origin's answer (or failure), and no longer.
	var outcome politeness.Outcome
	handshaking := true
	p.trackActive(x.key, 1)
	endHandshake := func() {
		if handshaking {
			handshaking = false
			p.trackActive(x.key, -1)
			_ = permit.Done(outcome)
		}
	}
	defer endHandshake()

	upstream, resp, err := p.handshake(r, u, rc, x)
	if err != nil {
		outcome.Err = err
		p.upstreamError(w, r, x, err)
		return
	}
	defer upstream.Close()
	defer resp.Body.Close()
	outcome.Status = resp.StatusCode
	outcome.RetryAfter = politeness.RetryAfter(resp.Header, p.now())

	if resp.StatusCode != http.StatusSwitchingProtocols {
		// The origin declined (or redirected, or refused): relay its
		// answer like any response, then drop the connection.
		_ = upstream.SetReadDeadline(time.Now().Add(rc.UpstreamTimeout))
		removeHopByHop(resp.Header)
		h := w.Header()
		for k, v := range resp.Header {
			h[k] = v
		}
		h.Add("Via", p.via)
		noSniff(h)
		x.status, x.outcome = resp.StatusCode, "forwarded"
		w.WriteHeader(resp.StatusCode)
		_, n, _, err := relay(w, resp.Body, rc.MaxResponseBytes, false, 0, resp.ContentLength, nil)
		x.Bytes, outcome.Bytes = n, n
		if err != nil {
			x.Error, outcome.Err = err.Error(), err
		}
		return
	}
	// RFC 6455 §4.1: the client must fail a 101 without these; so does
	// the proxy, rather than splice an unknown protocol.
	if !headerHasToken(resp.Header, "Upgrade", "websocket") || !headerHasToken(resp.Header, "Connection", "upgrade") {
		outcome.Err = errors.New("proxy: 101 without Upgrade: websocket")
		p.refuse(w, r, x, refusal{http.StatusBadGateway, "bad-upgrade", "the origin switched protocols without Upgrade: websocket", 0})
		return
	}
	// The origin's 101 ends the handshake: free the host's slot before
	// the client hears of it, so that its next request finds it free.
	endHandshake()
	// Counted from before the hijack: inside an intercepted tunnel
	// (--mitm) the tunnel stops counting when its connection is hijacked
	// (mitm.Server.ServeConn returns then), and Close must not see no
	// tunnel in between and return with this socket about to open.
	p.tunnels.Add(1)
	defer p.tunnels.Done()
	client, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		outcome.Err = err
		p.refuse(w, r, x, refusal{http.StatusInternalServerError, "hijack", "cannot take over the connection", 0})
		return
	}
	defer client.Close()
	hdr := resp.Header.Clone()
	removeHopByHop(hdr)
	hdr["Connection"] = []string{"Upgrade"}
	hdr["Upgrade"] = resp.Header.Values("Upgrade")
	hdr.Add("Via", p.via)
	if x.WaitMs > 0 {
		hdr.Set(HeaderWaitedMs, strconv.FormatInt(x.WaitMs, 10))
	}
	_ = client.SetWriteDeadline(time.Now().Add(rc.UpstreamHeaderTimeout))
	bw := bufio.NewWriter(client)
	_, _ = io.WriteString(bw, "HTTP/1.1 101 Switching Protocols\r\n")
	_ = hdr.Write(bw)
	_, _ = io.WriteString(bw, "\r\n")
	if err := bw.Flush(); err != nil {
		outcome.Err = err
		x.status, x.outcome, x.Error = http.StatusSwitchingProtocols, "client_gone", err.Error()
		return
	}
	x.status, x.outcome = http.StatusSwitchingProtocols, "websocket"

	_ = upstream.SetDeadline(time.Time{})
	_ = client.SetDeadline(time.Time{})
	// The readers may hold bytes already: a frame the origin sent right
	// after its 101, or one the client sent early.
	x.Bytes, x.Error = p.splice(client, brw.Reader, upstream, resp.body(), ws)
	release() // before the deferred tunnels.Done
}

// handshake dials the origin and sends the handshake with the upgrade
// fields restored; it returns the connection and the origin's answer,
// whose Body reads from the connection's buffer.
func (p *Proxy) handshake(r *http.Request, u *url.URL, rc *runtimeConfig, x *exchange) (net.Conn, *upgradeResponse, error) {
	sent := p.now()
	ctx, cancel := context.WithTimeout(r.Context(), rc.UpstreamHeaderTimeout)
	defer cancel()
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	conn, err := p.dial(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return nil, nil, err
	}
	if u.Scheme == "https" {
		// An intercepted wss:// (--mitm): TLS to the origin as for any
		// intercepted request, HTTP/1.1 only (RFC 6455 has no h2 here).
		cfg := &tls.Config{}
		if base := p.transport.TLSClientConfig; base != nil {
			cfg = base.Clone()
		}
		cfg.ServerName, cfg.NextProtos = u.Hostname(), []string{"http/1.1"}
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, nil, err
		}
		conn = tc
	}
	out := &http.Request{
		Method:     http.MethodGet,
		URL:        &url.URL{Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery},
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Host:       u.Host,
		Header:     r.Header.Clone(),
	}
	if out.URL.Path == "" {
		out.URL.Path = "/"
	}
	removeHopByHop(out.Header)
	removeControl(out.Header)
	out.Header["Connection"] = []string{"Upgrade"}
	out.Header["Upgrade"] = r.Header.Values("Upgrade")
	out.Header.Add("Via", p.via)
	if _, ok := r.Header["User-Agent"]; !ok {
		out.Header["User-Agent"] = []string{""} // do not let Go add its own
	}
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) }) // client gone
	defer stop()
	bw := bufio.NewWriter(conn)
	err = out.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("proxy: websocket handshake to %s: %w", u.Host, err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, out)
	if err != nil {
		conn.Close()
		if ctx.Err() != nil {
			err = fmt.Errorf("proxy: websocket handshake to %s: %w", u.Host, ctx.Err())
		}
		return nil, nil, err
	}
	x.UpstreamMs = p.now().Sub(sent).Milliseconds()
	return conn, &upgradeResponse{Response: resp, br: br}, nil
}

// upgradeResponse is the origin's answer to a handshake and the reader
// that holds what followed it on the connection.
type upgradeResponse struct {
	*http.Response
	br *bufio.Reader
}

// body returns what the origin sent after its 101: for a 101,
// ReadResponse leaves Body empty and the socket's first bytes in br.
func (u *upgradeResponse) body() *bufio.Reader { return u.br }

// splice copies bytes both ways between the client and the origin until
// either side closes (the other then gets ws.CloseGrace), the
// socket idles for IdleTimeout, MaxLifetime passes, a direction relays
// MaxBytes, or the proxy closes. It returns the bytes relayed in all and
// why it ended early ("" for a close).
func (p *Proxy) splice(client net.Conn, clientBuf io.Reader, origin net.Conn, originBuf io.Reader, ws WebSocketConfig) (int64, string) {
	t := &tunnel{hard: time.Now().Add(ws.MaxLifetime), idle: ws.IdleTimeout}
	t.touch()
	up, down, err := t.relay(client, clientBuf, origin, originBuf, ws.MaxBytes, ws.CloseGrace, p.closing)
	why := ""
	if err != nil {
		why = err.Error()
	}
	return up + down, why
}
