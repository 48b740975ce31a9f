// Over 600 lines: the HTTP/1.1 client's framing and connection reuse cases,
// each against a raw TCP origin built from the same helpers.

package h1

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// testPool is a Client dialling plain TCP on loopback.
func testPool(headerTimeout time.Duration, maxHeader int64) *Client {
	var d net.Dialer
	return New(Options{Dial: d.DialContext, MaxIdlePerHost: 4, MaxIdle: 16, IdleTimeout: time.Minute, HeaderTimeout: headerTimeout, MaxHeaderBytes: maxHeader})
}

// countingServer is an httptest server on 127.0.0.1 that counts the
// connections it accepted.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	s := httptest.NewUnstartedServer(h)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s, &conns
}

// rawServer accepts connections on 127.0.0.1 and runs serve on each.
func rawServer(t *testing.T, serve func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// requestServer is a rawServer that reads the requests of each connection
// one after the other and passes each to respond; it counts connections.
func requestServer(t *testing.T, respond func(c net.Conn, req *http.Request)) (string, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	addr := rawServer(t, func(c net.Conn) {
		conns.Add(1)
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			respond(c, req)
		}
	})
	return addr, &conns
}

func getReq(t *testing.T, ctx context.Context, method, rawURL string) *http.Request {
	t.Helper()
	r, err := http.NewRequestWithContext(ctx, method, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// roundTripBody sends one request through o and reads the body.
func roundTripBody(t *testing.T, o *Client, method, rawURL string) (*http.Response, string, error) {
	t.Helper()
	resp, err := o.RoundTrip(getReq(t, context.Background(), method, rawURL), time.Minute)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

func TestClientReuse(t *testing.T) {
	for _, tc := range []struct {
		name      string
		method    string
		handler   http.HandlerFunc
		body      string
		wantConns int64
		wantIdle  int
	}{
		{"content-length", http.MethodGet, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }, "hello", 1, 1},
		{"chunked", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "he")
			w.(http.Flusher).Flush()
			io.WriteString(w, "llo")
		}, "hello", 1, 1},
		{"head", http.MethodHead, func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Content-Length", "5") }, "", 1, 1},
		{"no-content", http.MethodGet, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }, "", 1, 1},
		{"connection-close", http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Connection", "close")
			io.WriteString(w, "hello")
		}, "hello", 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, conns := countingServer(t, tc.handler)
			o := testPool(5*time.Second, 64<<10)
			defer o.CloseIdle()
			for i := range 3 {
				resp, body, err := roundTripBody(t, o, tc.method, s.URL+"/p")
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if body != tc.body || resp.StatusCode >= 300 {
					t.Fatalf("request %d: %d %q, want %q", i, resp.StatusCode, body, tc.body)
				}
			}
			if got := conns.Load(); got != tc.wantConns {
				t.Errorf("connections = %d, want %d", got, tc.wantConns)
			}
			if got := o.IdleCount(); got != tc.wantIdle {
				t.Errorf("idle = %d, want %d", got, tc.wantIdle)
			}
		})
	}
}

// An origin that closes an idle keep-alive connection: the next request
// on it fails before any response byte and is sent again on a new one.
func TestClientRetriesClosedIdleConn(t *testing.T) {
	var conns atomic.Int64
	addr := rawServer(t, func(c net.Conn) {
		conns.Add(1)
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_ = req.Body.Close()
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		// Close without "Connection: close", as an idle timeout does.
	})
	o := testPool(5*time.Second, 64<<10)
	defer o.CloseIdle()
	for i := range 3 {
		if _, body, err := roundTripBody(t, o, http.MethodGet, "http://"+addr+"/"); err != nil || body != "ok" {
			t.Fatalf("request %d: %q %v", i, body, err)
		}
	}
	if got := conns.Load(); got != 3 {
		t.Errorf("connections = %d, want 3", got)
	}
}

func TestClientFailures(t *testing.T) {
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	for _, tc := range []struct {
		name    string
		serve   func(c net.Conn)
		cancel  bool // cancel the request's context after 50 ms
		check   func(err error) bool
		explain string
	}{
		{"header-timeout", func(c net.Conn) { <-hang }, false, func(err error) bool {
			var ne net.Error
			return errors.As(err, &ne) && ne.Timeout()
		}, "a net.Error with Timeout()"},
		{"header-too-long", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Big: "+strings.Repeat("a", 8<<10)+"\r\n\r\n")
			<-hang
		}, false, func(err error) bool { return errors.Is(err, errHeaderTooLong) }, "errHeaderTooLong"},
		{"cancelled", func(c net.Conn) { <-hang }, true, func(err error) bool { return errors.Is(err, context.Canceled) }, "context.Canceled"},
		{"switching-protocols", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\n\r\n")
			<-hang
		}, false, func(err error) bool { return err != nil && strings.Contains(err.Error(), "unexpected 101") }, "unexpected 101"},
		{"garbage", func(c net.Conn) {
			io.WriteString(c, "NOT HTTP\r\n\r\n")
		}, false, func(err error) bool { return err != nil && strings.Contains(err.Error(), "malformed") }, "a malformed response error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := rawServer(t, tc.serve)
			o := testPool(300*time.Millisecond, 1<<10)
			if tc.cancel {
				o.headerTimeout = 0
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				time.AfterFunc(50*time.Millisecond, cancel)
			}
			resp, err := o.RoundTrip(getReq(t, ctx, http.MethodGet, "http://"+addr+"/"), 0)
			if err == nil {
				resp.Body.Close()
				t.Fatal("no error")
			}
			if !tc.check(err) {
				t.Errorf("error %v, want %s", err, tc.explain)
			}
			if o.IdleCount() != 0 {
				t.Errorf("a failed connection was kept idle")
			}
		})
	}
}

// 1xx responses before the final one are skipped (RFC 9110 §15.2).
func TestClientSkipsInformational(t *testing.T) {
	addr := rawServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n"+
			"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		_, _ = br.ReadByte() // hold the connection open until the client closes it
	})
	o := testPool(5*time.Second, 64<<10)
	defer o.CloseIdle()
	resp, body, err := roundTripBody(t, o, http.MethodGet, "http://"+addr+"/")
	if err != nil || resp.StatusCode != 200 || body != "ok" {
		t.Fatalf("got %v %q %v, want 200 ok", resp, body, err)
	}
}

// A body closed before its end closes the connection instead of keeping it.
func TestClientEarlyClose(t *testing.T) {
	s, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", 64<<10))
	})
	o := testPool(5*time.Second, 64<<10)
	defer o.CloseIdle()
	for range 2 {
		resp, err := o.RoundTrip(getReq(t, context.Background(), http.MethodGet, s.URL), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 10)
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if _, err := resp.Body.Read(buf); err == nil {
			t.Error("read after Close succeeded")
		}
	}
	if got := conns.Load(); got != 2 {
		t.Errorf("connections = %d, want 2 (none reused)", got)
	}
	if o.IdleCount() != 0 {
		t.Error("a half-read connection was kept idle")
	}
}

func TestClientHandles(t *testing.T) {
	for _, tc := range []struct {
		name   string
		method string
		url    string
		body   bool
		header string
		want   bool
	}{
		{"get", "GET", "http://a.test/x", false, "", true},
		{"head", "HEAD", "http://a.test/x", false, "", true},
		{"post", "POST", "http://a.test/x", false, "", false},
		{"get-with-body", "GET", "http://a.test/x", true, "", false},
		{"https", "GET", "https://a.test/x", false, "", false},
		{"upgrade", "GET", "http://a.test/x", false, "Upgrade", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, _ := url.Parse(tc.url)
			r := &http.Request{Method: tc.method, URL: u, Header: http.Header{}}
			if tc.body {
				r.Body = io.NopCloser(strings.NewReader("b"))
			}
			if tc.header != "" {
				r.Header.Set(tc.header, "websocket")
			}
			if got := (&Client{}).Handles(r); got != tc.want {
				t.Errorf("handles = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAddr(t *testing.T) {
	for in, want := range map[string]string{
		"a.test":       "a.test:80",
		"a.test:8080":  "a.test:8080",
		"[::1]":        "[::1]:80",
		"[::1]:81":     "[::1]:81",
		"127.0.0.1":    "127.0.0.1:80",
		"127.0.0.1:90": "127.0.0.1:90",
	} {
		if got := Addr(in); got != want {
			t.Errorf("Addr(%q) = %q, want %q", in, got, want)
		}
	}
}

// deadlineConn records the deadlines set on a connection.
type deadlineConn struct {
	net.Conn
	mu          sync.Mutex
	read, write time.Time
}

func (c *deadlineConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.read, c.write = t, t
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.read = t
	c.mu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

func (c *deadlineConn) deadlines() (read, write time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.read, c.write
}

// The exchange's timeout covers the body; a connection goes back to the
// pool without a deadline, so a later exchange on it is not cut short.
func TestClientTimeout(t *testing.T) {
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	s, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			w.Header().Set("Content-Length", "10")
			io.WriteString(w, "12345")
			w.(http.Flusher).Flush()
			select {
			case <-hang:
			case <-r.Context().Done():
			}
			return
		}
		io.WriteString(w, "ok")
	})
	var (
		mu     sync.Mutex
		dialed []*deadlineConn
	)
	var d net.Dialer
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		dc := &deadlineConn{Conn: c}
		mu.Lock()
		dialed = append(dialed, dc)
		mu.Unlock()
		return dc, nil
	}
	o := New(Options{Dial: dial, MaxIdlePerHost: 4, MaxIdle: 16, IdleTimeout: time.Minute, HeaderTimeout: 30 * time.Second, MaxHeaderBytes: 64 << 10})
	defer o.CloseIdle()
	for i := range 2 {
		resp, err := o.RoundTrip(getReq(t, context.Background(), http.MethodGet, s.URL+"/fast"), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "ok" {
			t.Fatalf("request %d: %q %v", i, b, err)
		}
		resp.Body.Close()
		mu.Lock()
		dc := dialed[len(dialed)-1]
		mu.Unlock()
		if r, w := dc.deadlines(); !r.IsZero() || !w.IsZero() {
			t.Errorf("request %d: idle connection keeps deadlines %v / %v", i, r, w)
		}
	}
	if got := conns.Load(); got != 1 {
		t.Errorf("connections = %d, want 1", got)
	}
	resp, err := o.RoundTrip(getReq(t, context.Background(), http.MethodGet, s.URL+"/slow"), 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("slow body: error %v, want a timeout", err)
	}
}

// FuzzResponse feeds arbitrary bytes as an origin's answer: the pool
// returns a response or an error, never panics, and never reads a body
// longer than what the origin sent.
func FuzzResponse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-T: 1\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nuntil close",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
		"HTTP/1.1 101 Switching Protocols\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA",
		"NOT HTTP",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, s := net.Pipe()
			go func() {
				defer s.Close()
				if _, err := http.ReadRequest(bufio.NewReader(s)); err != nil {
					return
				}
				_, _ = io.WriteString(s, raw)
			}()
			return c, nil
		}
		o := New(Options{Dial: dial, MaxIdlePerHost: 2, MaxIdle: 4, IdleTimeout: time.Minute, HeaderTimeout: 2 * time.Second, MaxHeaderBytes: 4 << 10})
		defer o.CloseIdle()
		var w Wire
		resp, err := o.RoundTrip(getReq(t, WithWire(context.Background(), &w), http.MethodGet, "http://a.test/"), 2*time.Second)
		if err != nil {
			if w.Request != nil || w.Response != nil {
				t.Fatalf("failed round trip left wire bytes %q, %q", w.Request, w.Response)
			}
			return
		}
		wire := w.Response
		// The raw header is the final response's, in what was sent,
		// starting at a status line and ending at an empty line.
		if !strings.Contains(raw, string(wire)) || !strings.HasPrefix(string(wire), "HTTP/") || !strings.HasSuffix(string(wire), "\n\n") && !strings.HasSuffix(string(wire), "\n\r\n") {
			t.Fatalf("raw header %q is not a header block of %q", wire, raw)
		}
		n, _ := io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if n > int64(len(raw)) {
			t.Fatalf("read a body of %d bytes from %d bytes", n, len(raw))
		}
	})
}

// pipeOrigin is an in-memory origin for tests in a synctest bubble: dial
// returns one end of a net.Pipe whose other end answers every request
// with "ok" until the pool closes it. It counts dials and closes, per
// address.
type pipeOrigin struct {
	mu     sync.Mutex
	dials  map[string]int
	closed map[string]int
}

func newPipeOrigin() *pipeOrigin {
	return &pipeOrigin{dials: map[string]int{}, closed: map[string]int{}}
}

func (p *pipeOrigin) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, s := net.Pipe()
	p.mu.Lock()
	p.dials[addr]++
	p.mu.Unlock()
	go func() {
		defer s.Close()
		br := bufio.NewReader(s)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				p.mu.Lock()
				p.closed[addr]++ // the pool closed its end
				p.mu.Unlock()
				return
			}
			_ = req.Body.Close()
			if _, err := io.WriteString(s, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"); err != nil {
				return
			}
		}
	}()
	return c, nil
}

// counts returns the dials and closes seen for addr.
func (p *pipeOrigin) counts(addr string) (dials, closed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dials[addr], p.closed[addr]
}

// get sends one GET for http://addr/ through o and reads the body.
func (p *pipeOrigin) get(t *testing.T, o *Client, addr string) {
	t.Helper()
	if _, body, err := roundTripBody(t, o, http.MethodGet, "http://"+addr+"/"); err != nil || body != "ok" {
		t.Fatalf("GET %s: %q %v", addr, body, err)
	}
}

// An idle connection is closed when it has been idle for idleTimeout,
// without any request to its origin or any other; one used again in the
// meantime counts its idle time from its last use.
func TestClientReaperClosesIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		po := newPipeOrigin()
		o := New(Options{Dial: po.dial, MaxIdlePerHost: 4, MaxIdle: 16, IdleTimeout: time.Minute, MaxHeaderBytes: 64 << 10})
		defer o.CloseIdle()
		po.get(t, o, "a.test:80")
		po.get(t, o, "b.test:80")
		time.Sleep(30 * time.Second)
		po.get(t, o, "a.test:80") // reused: idle again from now
		synctest.Wait()
		if n := o.IdleCount(); n != 2 {
			t.Fatalf("after 30 s: %d idle, want 2", n)
		}

		time.Sleep(30*time.Second + time.Millisecond) // b idle for 1 min
		synctest.Wait()
		if d, c := po.counts("b.test:80"); d != 1 || c != 1 {
			t.Errorf("b after 1 min idle: %d dials, %d closed, want 1, 1", d, c)
		}
		if d, c := po.counts("a.test:80"); d != 1 || c != 0 {
			t.Errorf("a after 30 s idle: %d dials, %d closed, want 1, 0", d, c)
		}
		if n := o.IdleCount(); n != 1 {
			t.Errorf("idle = %d, want 1", n)
		}

		time.Sleep(30 * time.Second) // a idle for 1 min
		synctest.Wait()
		if _, c := po.counts("a.test:80"); c != 1 {
			t.Errorf("a after 1 min idle: %d closed, want 1", c)
		}
		if n := o.IdleCount(); n != 0 {
			t.Errorf("idle = %d, want 0", n)
		}

		// The reaper is scheduled again for the next idle connection.
		po.get(t, o, "a.test:80")
		time.Sleep(time.Minute)
		synctest.Wait()
		if d, c := po.counts("a.test:80"); d != 2 || c != 2 {
			t.Errorf("a, second connection: %d dials, %d closed, want 2, 2", d, c)
		}
	})
}

// trackedConn records whether it was closed.
type trackedConn struct {
	net.Conn
	closed atomic.Bool
}

func (c *trackedConn) Close() error {
	c.closed.Store(true)
	return c.Conn.Close()
}

// The idle bounds: maxIdlePerHost per origin (the new connection is
// closed past it) and maxIdle in all (the oldest is closed past it).
func TestClientIdleCaps(t *testing.T) {
	for _, tc := range []struct {
		name            string
		perHost, total  int
		keys            []string // connections put back, one a second
		wantIdle        int
		wantClosed      []int // indexes into keys
		wantGetNewestOf string
		wantGetIndex    int // the connection get(wantGetNewestOf) returns
	}{
		{"under the caps", 2, 4, []string{"a", "b", "a"}, 3, nil, "a", 2},
		{"per host: the new one closed", 2, 8, []string{"a", "a", "a", "b"}, 3, []int{2}, "a", 1},
		{"total: the oldest closed", 4, 3, []string{"a", "b", "c", "d", "e"}, 3, []int{0, 1}, "c", 2},
		{"total: the oldest of the same host", 4, 2, []string{"a", "a", "a"}, 2, []int{0}, "a", 2},
		{"total, oldest host emptied", 4, 2, []string{"a", "b", "b"}, 2, []int{0}, "b", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				o := New(Options{MaxIdlePerHost: tc.perHost, MaxIdle: tc.total, IdleTimeout: time.Hour, MaxHeaderBytes: 64 << 10})
				defer o.CloseIdle()
				conns := make([]*trackedConn, len(tc.keys))
				for i, k := range tc.keys {
					c, s := net.Pipe()
					defer s.Close()
					conns[i] = &trackedConn{Conn: c}
					o.put(newConn(conns[i], k))
					time.Sleep(time.Second)
				}
				if got := o.IdleCount(); got != tc.wantIdle {
					t.Errorf("idle = %d, want %d", got, tc.wantIdle)
				}
				for i, c := range conns {
					want := false
					for _, j := range tc.wantClosed {
						want = want || i == j
					}
					if c.closed.Load() != want {
						t.Errorf("connection %d (%s): closed %v, want %v", i, tc.keys[i], c.closed.Load(), want)
					}
				}
				oc, ok := o.get(tc.wantGetNewestOf)
				if !ok || oc.c != conns[tc.wantGetIndex] {
					t.Errorf("get(%s) did not return connection %d", tc.wantGetNewestOf, tc.wantGetIndex)
				}
				if got := o.IdleCount(); got != tc.wantIdle-1 {
					t.Errorf("idle after get = %d, want %d", got, tc.wantIdle-1)
				}
				checkIdleList(t, o)
			})
		})
	}
}

// checkIdleList checks the pool's invariants: the list of all idle
// connections holds exactly those of the per-key lists, in the order they
// became idle, and n counts them.
func checkIdleList(t *testing.T, o *Client) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	inKeys := map[*conn]bool{}
	for k, l := range o.mu.idle {
		if len(l) == 0 {
			t.Errorf("key %s has an empty list", k)
		}
		for _, c := range l {
			inKeys[c] = true
		}
	}
	n := 0
	var prev *conn
	for c := o.mu.oldest; c != nil; c = c.next {
		if c.prev != prev {
			t.Fatal("idle list: broken prev link")
		}
		if prev != nil && c.idleSince.Before(prev.idleSince) {
			t.Error("idle list out of order")
		}
		if !inKeys[c] {
			t.Error("idle list holds a connection of no key")
		}
		prev = c
		n++
	}
	if prev != o.mu.newest || n != len(inKeys) || n != o.mu.n {
		t.Errorf("idle list of %d, keys hold %d, n = %d", n, len(inKeys), o.mu.n)
	}
}

// closeIdle closes every idle connection and stops the reaper: nothing
// is left running (synctest.Test fails on a goroutine left blocked), and
// a connection released later is reaped again.
func TestClientCloseIdleNoLeak(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		po := newPipeOrigin()
		o := New(Options{Dial: po.dial, MaxIdlePerHost: 4, MaxIdle: 16, IdleTimeout: time.Minute, MaxHeaderBytes: 64 << 10})
		for _, a := range []string{"a.test:80", "b.test:80", "c.test:80"} {
			po.get(t, o, a)
		}
		o.CloseIdle()
		synctest.Wait() // the origins' goroutines saw the close and ended
		for _, a := range []string{"a.test:80", "b.test:80", "c.test:80"} {
			if _, c := po.counts(a); c != 1 {
				t.Errorf("%s: %d closed, want 1", a, c)
			}
		}
		if n := o.IdleCount(); n != 0 {
			t.Errorf("idle after closeIdle = %d", n)
		}
		po.get(t, o, "a.test:80")
		time.Sleep(time.Minute)
		synctest.Wait()
		if d, c := po.counts("a.test:80"); d != 2 || c != 2 {
			t.Errorf("after closeIdle, a: %d dials, %d closed, want 2, 2", d, c)
		}
		o.CloseIdle()
	})
}

// A 204 that announces content and sends it after its header, in another
// packet, as a Python http.server handler easily does: the connection is
// not reused, so the stray bytes are never read as the next response.
func TestClientNoContentWithStrayBody(t *testing.T) {
	for _, tc := range []struct {
		name, head string
		wantConns  int64
	}{
		{"content-length", "HTTP/1.1 204 No Content\r\nContent-Length: 12\r\n\r\n", 2},
		{"chunked", "HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n", 2},
		{"content-length 0", "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n", 1},
		{"plain", "HTTP/1.1 204 No Content\r\n\r\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, conns := requestServer(t, func(c net.Conn, req *http.Request) {
				if req.URL.Path == "/204" {
					io.WriteString(c, tc.head)
					time.Sleep(20 * time.Millisecond) // the body in its own packet, after the pool took the conn back
					if strings.Contains(tc.head, "Content-Length: 12") || strings.Contains(tc.head, "chunked") {
						io.WriteString(c, "hello /204 1")
					}
					return
				}
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			})
			o := testPool(5*time.Second, 64<<10)
			defer o.CloseIdle()
			if resp, _, err := roundTripBody(t, o, http.MethodGet, "http://"+addr+"/204"); err != nil || resp.StatusCode != http.StatusNoContent {
				t.Fatalf("204: %v %v", resp, err)
			}
			time.Sleep(50 * time.Millisecond)
			resp, body, err := roundTripBody(t, o, http.MethodGet, "http://"+addr+"/next")
			if err != nil || resp.StatusCode != http.StatusOK || body != "ok" {
				t.Fatalf("next: %v %q %v", resp, body, err)
			}
			if got := conns.Load(); got != tc.wantConns {
				t.Errorf("connections = %d, want %d", got, tc.wantConns)
			}
		})
	}
}

// TestClientUnsolicitedResponse: bytes an origin sends on a connection
// after the response it owed (a whole second response, or a body longer
// than its Content-Length), arriving once the connection is idle, are
// never read as the answer to the next request, which a proxy may be
// sending for another user: the connection is closed and a new one dialled.
func TestClientUnsolicitedResponse(t *testing.T) {
	for _, tc := range []struct{ name, extra string }{
		{"second response", "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecret"},
		{"long body", "secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, conns := requestServer(t, func(c net.Conn, req *http.Request) {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				if req.URL.Path == "/a" {
					time.Sleep(20 * time.Millisecond) // after the pool took the connection back
					io.WriteString(c, tc.extra)
				}
			})
			o := testPool(5*time.Second, 64<<10)
			defer o.CloseIdle()
			if _, body, err := roundTripBody(t, o, http.MethodGet, "http://"+addr+"/a"); err != nil || body != "ok" {
				t.Fatalf("/a: %q %v", body, err)
			}
			time.Sleep(100 * time.Millisecond)
			resp, body, err := roundTripBody(t, o, http.MethodGet, "http://"+addr+"/b")
			if err != nil || resp.StatusCode != http.StatusOK || body != "ok" {
				t.Fatalf("/b: %v %q %v, want its own answer", resp, body, err)
			}
			if got := conns.Load(); got != 2 {
				t.Errorf("connections = %d, want 2 (the first closed)", got)
			}
		})
	}
}
