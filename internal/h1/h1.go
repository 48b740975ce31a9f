package h1

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"syscall"
	"time"
)

// Client is an HTTP/1.1 keep-alive client for body-less GET and HEAD to
// http:// origins, and to https:// ones with Options.TLSConfig. It is safe
// for concurrent use. It starts no goroutine of its own except the idle
// reaper's timer, which CloseIdle stops.
type Client struct {
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// wrap, when set, wraps each new connection (Options.Wrap).
	wrap func(net.Conn) net.Conn
	// maxIdlePerHost bounds the idle connections kept per origin address,
	// maxIdle those kept in all.
	maxIdlePerHost, maxIdle int
	// idleTimeout: a connection idle for this long is closed by the
	// reaper (reap), whether or not another request comes.
	idleTimeout time.Duration
	// headerTimeout bounds the wait for the response header; 0: none.
	headerTimeout time.Duration
	// maxHeaderBytes bounds the response header read.
	maxHeaderBytes int64
	// tlsConf, when set, lets the client take https:// requests
	// (Options.TLSConfig); handshakeTimeout bounds their handshakes.
	tlsConf          *tls.Config
	handshakeTimeout time.Duration

	// reapMu is held by reap until it has closed what it took, and by
	// CloseIdle, which so waits for a reap in progress. Taken before mu.
	reapMu sync.Mutex

	// mu guards the idle connections: idle, n, the list through
	// oldest/newest and the reaper's timer.
	mu struct {
		sync.Mutex
		idle map[string][]*conn // address -> idle connections, oldest first
		n    int                // idle connections in all
		// oldest and newest end the list of all idle connections in the
		// order they became idle (conn.prev/next), so that the reaper and
		// the total cap find the oldest at once.
		oldest, newest *conn
		// reaper runs reap when the oldest idle connection times out;
		// armed: it is scheduled. One timer for the client, created at
		// the first put, rather than one per connection: a put costs a
		// flag test, not a timer.
		reaper *time.Timer
		armed  bool
	}
}

// conn is one connection to an origin.
type conn struct {
	c   net.Conn
	br  *bufio.Reader
	bw  *bufio.Writer
	key string
	// limit is how many more bytes may be read while reading a response
	// header (math.MaxInt64 otherwise), so that an endless header is cut at
	// MaxHeaderBytes.
	limit int64
	// rec, while recording, collects what Read returns: the bytes of a
	// response header, and what the buffered reader read past it
	// (WithWire).
	rec       []byte
	recording bool
	idleSince time.Time
	// prev and next link the client's list of idle connections (guarded
	// by the client's mu); nil while the connection is in use.
	prev, next *conn
}

// errHeaderTooLong is returned when an origin's response header exceeds
// Options.MaxHeaderBytes.
var errHeaderTooLong = errors.New("h1: response header too long")

// newConn wraps c, a new connection to key.
func newConn(c net.Conn, key string) *conn {
	oc := &conn{c: c, key: key, limit: math.MaxInt64}
	oc.br = bufio.NewReaderSize(oc, 4<<10)
	oc.bw = bufio.NewWriterSize(c, 4<<10)
	return oc
}

func (oc *conn) Read(p []byte) (int, error) {
	if oc.limit <= 0 {
		return 0, errHeaderTooLong
	}
	if int64(len(p)) > oc.limit {
		p = p[:oc.limit]
	}
	n, err := oc.c.Read(p)
	if oc.limit != math.MaxInt64 {
		oc.limit -= int64(n)
	}
	if oc.recording {
		oc.rec = append(oc.rec, p[:n]...)
	}
	return n, err
}

// Wire is an exchange's bytes as they went over the connection, for an
// archive that keeps what was sent and received (field order, case,
// repeated fields), not net/http's maps of them (WithWire).
type Wire struct {
	// Request is the request as written: its line and header fields
	// through the empty line (GET and HEAD have no body).
	Request []byte
	// Response is the final response's status line and header fields,
	// through the empty line; 1xx responses before it are left out.
	Response []byte
}

// wireKey is the context key of WithWire's destination.
type wireKey struct{}

// WithWire returns a context that asks RoundTrip to fill *w with the
// exchange's bytes. After a failed exchange both are nil.
func WithWire(ctx context.Context, w *Wire) context.Context {
	return context.WithValue(ctx, wireKey{}, w)
}

// startRecording begins collecting the bytes of a response header, with
// what the buffered reader already holds.
func (oc *conn) startRecording() {
	held, _ := oc.br.Peek(oc.br.Buffered())
	oc.rec = append(oc.rec[:0], held...)
	oc.recording = true
}

// header returns the bytes of the response header http.ReadResponse has
// just read (those recorded, less what the reader holds past it) and
// keeps recording after them.
func (oc *conn) header() []byte {
	n := len(oc.rec) - oc.br.Buffered()
	h := append([]byte(nil), oc.rec[:n]...)
	oc.rec = oc.rec[:copy(oc.rec, oc.rec[n:])]
	return h
}

// stopRecording ends the recording; a big buffer is not kept.
func (oc *conn) stopRecording() {
	oc.recording = false
	oc.rec = oc.rec[:0]
	if cap(oc.rec) > 64<<10 {
		oc.rec = nil
	}
}

// New returns a Client for opts (see Options for defaults). A nil
// opts.Dial makes every RoundTrip fail.
func New(opts Options) *Client {
	opts = opts.withDefaults()
	o := &Client{
		dial:             opts.Dial,
		wrap:             opts.Wrap,
		maxIdlePerHost:   opts.MaxIdlePerHost,
		maxIdle:          opts.MaxIdle,
		idleTimeout:      opts.IdleTimeout,
		headerTimeout:    opts.HeaderTimeout,
		maxHeaderBytes:   opts.MaxHeaderBytes,
		tlsConf:          opts.TLSConfig,
		handshakeTimeout: opts.HandshakeTimeout,
	}
	o.mu.idle = map[string][]*conn{}
	return o
}

// Options returns the options in force, defaults filled in.
func (o *Client) Options() Options {
	return Options{Dial: o.dial, Wrap: o.wrap, MaxIdlePerHost: o.maxIdlePerHost, MaxIdle: o.maxIdle,
		IdleTimeout: o.idleTimeout, HeaderTimeout: o.headerTimeout, MaxHeaderBytes: o.maxHeaderBytes,
		TLSConfig: o.tlsConf, HandshakeTimeout: o.handshakeTimeout}
}

// Handles reports whether o takes req: an http:// GET or HEAD without a
// body and without Upgrade, or an https:// one when o has a TLSConfig. The
// rest is for http.Transport.
func (o *Client) Handles(req *http.Request) bool {
	return (req.URL.Scheme == "http" || req.URL.Scheme == "https" && o.tlsConf != nil) && req.Body == nil &&
		(req.Method == http.MethodGet || req.Method == http.MethodHead) &&
		req.Header["Upgrade"] == nil && req.URL.Host != ""
}

// Addr is the address to dial for the URL host host of an http:// URL:
// host:port, port 80 by default.
func Addr(host string) string { return addrPort(host, "80") }

// addrPort is host:port, with port when host has none.
func addrPort(host, port string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	if len(host) > 1 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
	}
	return net.JoinHostPort(host, port)
}

// maxInformational bounds the 1xx responses skipped before the final one.
const maxInformational = 5

// RoundTrip sends req (see Handles) and returns the response; timeout,
// when positive, bounds the whole exchange, body included (a deadline on
// the connection), and the request's context cancels it at any point
// (RoundTrip's error then wraps context.Cause; a body's Read fails with
// a timeout, the connection's deadline having been moved). The body must
// be read to the end or closed; a body read to the end returns the
// connection to the pool. A request that fails on a reused connection
// before any byte of a response arrived (the origin had closed it while
// idle) is sent once more on a new connection: GET and HEAD are
// idempotent (RFC 9110 §9.2.2), and http.Transport does the same.
func (o *Client) RoundTrip(req *http.Request, timeout time.Duration) (*http.Response, error) {
	ctx := req.Context()
	addr, key := origin(req.URL.Scheme, req.URL.Host)
	if ctx.Err() != nil {
		// Checked first, as http.Transport does: an idle connection
		// would otherwise race the cancellation.
		return nil, fmt.Errorf("h1: %s: %w", key, context.Cause(ctx))
	}
	if o.dial == nil {
		return nil, errors.New("h1: no Dial function")
	}
	secure := req.URL.Scheme == "https"
	if secure && o.tlsConf == nil {
		return nil, errors.New("h1: https without a TLSConfig")
	}
	if err := validHeader(req.Header); err != nil {
		return nil, err
	}
	trace := httptrace.ContextClientTrace(ctx)
	closing := wantsClose(req)
	for attempt := 0; ; attempt++ {
		if trace != nil && trace.GetConn != nil {
			trace.GetConn(addr)
		}
		oc, reused := o.get(key)
		if oc == nil {
			c, err := o.dial(ctx, "tcp", addr)
			if err != nil {
				return nil, err
			}
			if o.wrap != nil {
				c = o.wrap(c)
			}
			if secure {
				if c, err = o.handshake(ctx, c, req.URL.Hostname(), trace); err != nil {
					return nil, err
				}
			}
			oc = newConn(c, key)
		}
		if trace != nil && trace.GotConn != nil {
			info := httptrace.GotConnInfo{Conn: oc.c, Reused: reused, WasIdle: reused}
			if reused {
				info.IdleTime = time.Since(oc.idleSince)
			}
			trace.GotConn(info)
		}
		resp, retry, err := o.exchange(ctx, oc, req, timeout, closing, trace)
		if err == nil {
			return resp, nil
		}
		_ = oc.c.Close()
		if !(retry && reused && attempt == 0 && ctx.Err() == nil) {
			return nil, err
		}
	}
}

// exchange writes req on oc and reads the response header. retry reports
// that nothing of a response was read.
func (o *Client) exchange(ctx context.Context, oc *conn, req *http.Request, timeout time.Duration, closing bool, trace *httptrace.ClientTrace) (resp *http.Response, retry bool, err error) {
	now := time.Now()
	var deadline time.Time // of the whole exchange; zero: none
	if timeout > 0 {
		deadline = now.Add(timeout)
		_ = oc.c.SetDeadline(deadline)
	}
	headerDeadline := deadline
	if ht := o.headerTimeout; ht > 0 && (deadline.IsZero() || ht < timeout) {
		headerDeadline = now.Add(ht)
	}
	// Cancellation (the client gone, a caller's deadline) interrupts any
	// blocked read or write by moving the deadline into the past.
	stop := context.AfterFunc(ctx, func() { _ = oc.c.SetDeadline(time.Unix(1, 0)) })
	wire, _ := ctx.Value(wireKey{}).(*Wire)
	fail := func(err error, retry bool) (*http.Response, bool, error) {
		stop()
		if wire != nil {
			oc.stopRecording()
			*wire = Wire{}
		}
		if ctx.Err() != nil {
			return nil, false, fmt.Errorf("h1: %s: %w", oc.key, context.Cause(ctx))
		}
		return nil, retry, err
	}
	var w io.Writer = oc.bw
	var sent bytes.Buffer // the request as written, for wire
	if wire != nil {
		w = io.MultiWriter(oc.bw, &sent)
	}
	if err := req.Write(w); err != nil {
		return fail(fmt.Errorf("h1: write to %s: %w", oc.key, err), true)
	}
	if wire != nil {
		wire.Request = sent.Bytes()
	}
	if err := oc.bw.Flush(); err != nil {
		return fail(fmt.Errorf("h1: write to %s: %w", oc.key, err), true)
	}
	if trace != nil && trace.WroteRequest != nil {
		trace.WroteRequest(httptrace.WroteRequestInfo{})
	}
	if !headerDeadline.Equal(deadline) {
		_ = oc.c.SetReadDeadline(headerDeadline)
	}
	oc.limit = o.maxHeaderBytes
	if wire != nil {
		oc.startRecording()
	}
	if _, err := oc.br.Peek(1); err != nil {
		var ne net.Error
		timeout := errors.As(err, &ne) && ne.Timeout()
		return fail(fmt.Errorf("h1: read from %s: %w", oc.key, err), !timeout)
	}
	if trace != nil && trace.GotFirstResponseByte != nil {
		trace.GotFirstResponseByte()
	}
	for i := 0; ; i++ {
		resp, err = http.ReadResponse(oc.br, req)
		if err != nil {
			return fail(fmt.Errorf("h1: read from %s: %w", oc.key, err), false)
		}
		if wire != nil {
			if h := oc.header(); resp.StatusCode >= 200 {
				wire.Response = h
			}
		}
		if resp.StatusCode >= 200 {
			break
		}
		// 1xx: informational, without a body (RFC 9110 §15.2); the final
		// response follows. 101 cannot come: the request has no Upgrade.
		if resp.StatusCode == http.StatusSwitchingProtocols || i == maxInformational {
			return fail(fmt.Errorf("h1: %s: unexpected %s", oc.key, resp.Status), false)
		}
	}
	oc.limit = math.MaxInt64
	if wire != nil {
		// Before the connection can go back to the pool, to another
		// request.
		oc.stopRecording()
	}
	if !headerDeadline.Equal(deadline) {
		_ = oc.c.SetReadDeadline(deadline)
		// A cancellation that came before this would be lost: check
		// after it (one that comes later moves the deadline again).
		if ctx.Err() != nil {
			return fail(nil, false)
		}
	}
	reuse := !resp.Close && !closing && !strayContent(resp)
	if resp.Body == http.NoBody {
		o.release(oc, stop, reuse, !deadline.IsZero())
		return resp, false, nil
	}
	resp.Body = &body{pool: o, oc: oc, body: resp.Body, stop: stop, reuse: reuse, deadline: !deadline.IsZero()}
	return resp, false, nil
}

// strayContent reports whether resp is a 204 that announces content
// anyway (Content-Length other than 0, or Transfer-Encoding), which RFC
// 9110 §8.6 and RFC 9112 §6.1 forbid. A 204 ends at its header, so such
// content, if the origin does send it (Python's http.server lets a
// handler write a body after send_response(204)), would be read as the
// next response on the connection: it is not reused. (304 and responses
// to HEAD carry Content-Length lawfully, for the body they do not send.)
func strayContent(resp *http.Response) bool {
	if resp.StatusCode != http.StatusNoContent {
		return false
	}
	cl := resp.Header.Get("Content-Length")
	return cl != "" && cl != "0" || len(resp.TransferEncoding) > 0 || resp.Header.Get("Transfer-Encoding") != ""
}

// release ends an exchange: the connection goes back to the pool when the
// response was read to its end, no cancellation touched it and nothing
// unread is left; it is closed otherwise.
func (o *Client) release(oc *conn, stop func() bool, reuse, deadline bool) {
	if stop() && reuse && oc.br.Buffered() == 0 {
		if deadline {
			_ = oc.c.SetDeadline(time.Time{})
		}
		o.put(oc)
		return
	}
	_ = oc.c.Close()
}

// get takes the newest idle connection to key that is not too old; nil
// when there is none. (The reaper closes old ones on time; one it has not
// reached yet is closed here.)
func (o *Client) get(key string) (*conn, bool) {
	for {
		oc, ok := o.take(key)
		if !ok || oc.quiet() {
			return oc, ok
		}
		_ = oc.c.Close()
	}
}

// quiet reports whether an idle connection has nothing waiting to be
// read. Bytes that an origin sent after the response it owed (a second
// response, a body longer than its framing said) would otherwise be read
// as the answer to the next request on the connection, which may be
// another user's (http.Transport closes such a connection too: "Unsolicited
// response received on idle HTTP channel"); an end of file means the
// origin closed it. The check is one non-blocking peek at the socket
// (pending, per platform); a connection without a socket is taken as quiet.
func (oc *conn) quiet() bool {
	if oc.br.Buffered() > 0 {
		return false
	}
	sc, ok := rawConn(oc.c).(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	return !pending(rc)
}

// take removes and returns the newest idle connection to key that has not
// been idle too long, closing those that have.
func (o *Client) take(key string) (*conn, bool) {
	now := time.Now()
	var stale []*conn
	o.mu.Lock()
	var oc *conn
	for l := o.mu.idle[key]; len(l) > 0; l = o.mu.idle[key] {
		c := l[len(l)-1]
		l[len(l)-1] = nil
		if l = l[:len(l)-1]; len(l) == 0 {
			delete(o.mu.idle, key)
		} else {
			o.mu.idle[key] = l
		}
		o.unlinkLocked(c)
		if now.Sub(c.idleSince) < o.idleTimeout {
			oc = c
			break
		}
		stale = append(stale, c)
	}
	o.mu.Unlock()
	for _, c := range stale {
		_ = c.c.Close()
	}
	return oc, oc != nil
}

// put keeps an idle connection. A key that has MaxIdlePerHost already
// closes the new one (its older ones are as good); a client that has
// MaxIdle closes its oldest, which is the least likely to be asked for
// again, as http.Transport does.
func (o *Client) put(oc *conn) {
	oc.idleSince = time.Now()
	var drop *conn
	o.mu.Lock()
	l := o.mu.idle[oc.key]
	if len(l) >= o.maxIdlePerHost || o.maxIdle <= 0 {
		o.mu.Unlock()
		_ = oc.c.Close()
		return
	}
	if o.mu.n >= o.maxIdle {
		drop = o.mu.oldest
		o.removeOldestLocked()
		l = o.mu.idle[oc.key] // drop may have been of this key
	}
	o.mu.idle[oc.key] = append(l, oc)
	o.linkLocked(oc)
	if !o.mu.armed {
		// The list was empty (reap disarms only then): oc is the
		// oldest, and times out first.
		o.mu.armed = true
		if o.mu.reaper == nil {
			o.mu.reaper = time.AfterFunc(o.idleTimeout, o.reap)
		} else {
			o.mu.reaper.Reset(o.idleTimeout)
		}
	}
	o.mu.Unlock()
	if drop != nil {
		_ = drop.c.Close()
	}
}

// reap closes the connections idle for IdleTimeout or longer and
// schedules itself for the next oldest; it runs on the reaper timer's
// goroutine. Without it a connection would stay open until its key was
// asked for again: a proxy that was busy with 1,000 hosts would keep up
// to 1,000 sockets open to them indefinitely.
func (o *Client) reap() {
	o.reapMu.Lock()
	defer o.reapMu.Unlock()
	now := time.Now()
	var expired []*conn
	o.mu.Lock()
	if !o.mu.armed {
		o.mu.Unlock() // stopped by CloseIdle after firing
		return
	}
	for c := o.mu.oldest; c != nil && now.Sub(c.idleSince) >= o.idleTimeout; c = o.mu.oldest {
		o.removeOldestLocked()
		expired = append(expired, c)
	}
	if c := o.mu.oldest; c != nil {
		o.mu.reaper.Reset(c.idleSince.Add(o.idleTimeout).Sub(now))
	} else {
		o.mu.armed = false
	}
	o.mu.Unlock()
	for _, c := range expired {
		_ = c.c.Close()
	}
}

// removeOldestLocked takes the oldest idle connection out of the pool. It
// is the oldest of its key too (both lists are in the order connections
// became idle), so it is the first of its key's list.
func (o *Client) removeOldestLocked() {
	c := o.mu.oldest
	l := o.mu.idle[c.key]
	l[0] = nil
	if l = l[1:]; len(l) == 0 {
		delete(o.mu.idle, c.key)
	} else {
		o.mu.idle[c.key] = l
	}
	o.unlinkLocked(c)
}

// linkLocked appends c to the list of idle connections, as the newest.
func (o *Client) linkLocked(c *conn) {
	c.prev, c.next = o.mu.newest, nil
	if o.mu.newest != nil {
		o.mu.newest.next = c
	} else {
		o.mu.oldest = c
	}
	o.mu.newest = c
	o.mu.n++
}

// unlinkLocked removes c from the list of idle connections.
func (o *Client) unlinkLocked(c *conn) {
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		o.mu.oldest = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		o.mu.newest = c.prev
	}
	c.prev, c.next = nil, nil
	o.mu.n--
}

// CloseIdle closes every idle connection and stops the reaper, waiting
// for a reap in progress. Like http.Transport.CloseIdleConnections it
// does not disable the client: a connection released later is kept, and
// the reaper scheduled again.
func (o *Client) CloseIdle() {
	o.reapMu.Lock() // after a reap in progress has closed what it took
	defer o.reapMu.Unlock()
	o.mu.Lock()
	idle := o.mu.idle
	o.mu.idle = map[string][]*conn{}
	o.mu.n = 0
	o.mu.oldest, o.mu.newest = nil, nil
	if o.mu.armed {
		o.mu.reaper.Stop()
		o.mu.armed = false
	}
	o.mu.Unlock()
	for _, l := range idle {
		for _, c := range l {
			_ = c.c.Close()
		}
	}
}

// IdleCount returns the number of idle connections kept.
func (o *Client) IdleCount() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.mu.n
}

// body is a response body from the client. Its Read and Close are called
// by one goroutine (the caller's).
type body struct {
	pool  *Client
	oc    *conn
	body  io.ReadCloser
	stop  func() bool
	reuse bool
	// deadline: the exchange set one on the connection, to clear before
	// it is reused.
	deadline bool
	done     bool // the exchange ended (end of body, error or Close)
	eof      bool // it ended at the end of the body
}

var errBodyClosed = errors.New("h1: read on a closed response body")

func (b *body) Read(p []byte) (int, error) {
	if b.done {
		if b.eof {
			return 0, io.EOF
		}
		return 0, errBodyClosed
	}
	n, err := b.body.Read(p)
	switch {
	case err == io.EOF:
		b.done, b.eof = true, true
		b.pool.release(b.oc, b.stop, b.reuse, b.deadline)
	case err != nil:
		b.done = true
		b.stop()
		_ = b.oc.c.Close()
	}
	return n, err
}

// Close ends the exchange; a body not read to its end closes the
// connection (draining an unknown remainder could take long).
func (b *body) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	b.stop()
	return b.oc.c.Close()
}
