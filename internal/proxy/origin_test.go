package proxy

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
	"time"
)

// testPool is an originPool dialling plain TCP on loopback.
func testPool(headerTimeout time.Duration, maxHeader int64) *originPool {
	var d net.Dialer
	return newOriginPool(d.DialContext, 4, 16, time.Minute, headerTimeout, maxHeader)
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

func getReq(t *testing.T, ctx context.Context, method, rawURL string) *http.Request {
	t.Helper()
	r, err := http.NewRequestWithContext(ctx, method, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// roundTripBody sends one request through o and reads the body.
func roundTripBody(t *testing.T, o *originPool, method, rawURL string) (*http.Response, string, error) {
	t.Helper()
	resp, err := o.roundTrip(getReq(t, context.Background(), method, rawURL), time.Minute)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

func TestOriginPoolReuse(t *testing.T) {
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
			defer o.closeIdle()
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
			if got := o.idleCount(); got != tc.wantIdle {
				t.Errorf("idle = %d, want %d", got, tc.wantIdle)
			}
		})
	}
}

// An origin that closes an idle keep-alive connection: the next request
// on it fails before any response byte and is sent again on a new one.
func TestOriginPoolRetriesClosedIdleConn(t *testing.T) {
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
	defer o.closeIdle()
	for i := range 3 {
		if _, body, err := roundTripBody(t, o, http.MethodGet, "http://"+addr+"/"); err != nil || body != "ok" {
			t.Fatalf("request %d: %q %v", i, body, err)
		}
	}
	if got := conns.Load(); got != 3 {
		t.Errorf("connections = %d, want 3", got)
	}
}

func TestOriginPoolFailures(t *testing.T) {
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
			resp, err := o.roundTrip(getReq(t, ctx, http.MethodGet, "http://"+addr+"/"), 0)
			if err == nil {
				resp.Body.Close()
				t.Fatal("no error")
			}
			if !tc.check(err) {
				t.Errorf("error %v, want %s", err, tc.explain)
			}
			if o.idleCount() != 0 {
				t.Errorf("a failed connection was kept idle")
			}
		})
	}
}

// 1xx responses before the final one are skipped (RFC 9110 §15.2).
func TestOriginPoolSkipsInformational(t *testing.T) {
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
	defer o.closeIdle()
	resp, body, err := roundTripBody(t, o, http.MethodGet, "http://"+addr+"/")
	if err != nil || resp.StatusCode != 200 || body != "ok" {
		t.Fatalf("got %v %q %v, want 200 ok", resp, body, err)
	}
}

// A body closed before its end closes the connection instead of keeping it.
func TestOriginPoolEarlyClose(t *testing.T) {
	s, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", 64<<10))
	})
	o := testPool(5*time.Second, 64<<10)
	defer o.closeIdle()
	for range 2 {
		resp, err := o.roundTrip(getReq(t, context.Background(), http.MethodGet, s.URL), time.Minute)
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
	if o.idleCount() != 0 {
		t.Error("a half-read connection was kept idle")
	}
}

func TestOriginPoolHandles(t *testing.T) {
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
			if got := (&originPool{}).handles(r); got != tc.want {
				t.Errorf("handles = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOriginAddr(t *testing.T) {
	for in, want := range map[string]string{
		"a.test":       "a.test:80",
		"a.test:8080":  "a.test:8080",
		"[::1]":        "[::1]:80",
		"[::1]:81":     "[::1]:81",
		"127.0.0.1":    "127.0.0.1:80",
		"127.0.0.1:90": "127.0.0.1:90",
	} {
		if got := originAddr(in); got != want {
			t.Errorf("originAddr(%q) = %q, want %q", in, got, want)
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
func TestOriginPoolTimeout(t *testing.T) {
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
	o := newOriginPool(func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		dc := &deadlineConn{Conn: c}
		mu.Lock()
		dialed = append(dialed, dc)
		mu.Unlock()
		return dc, nil
	}, 4, 16, time.Minute, 30*time.Second, 64<<10)
	defer o.closeIdle()
	for i := range 2 {
		resp, err := o.roundTrip(getReq(t, context.Background(), http.MethodGet, s.URL+"/fast"), time.Minute)
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
	resp, err := o.roundTrip(getReq(t, context.Background(), http.MethodGet, s.URL+"/slow"), 100*time.Millisecond)
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

// FuzzOriginResponse feeds arbitrary bytes as an origin's answer: the pool
// returns a response or an error, never panics, and never reads a body
// longer than what the origin sent.
func FuzzOriginResponse(f *testing.F) {
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
		o := newOriginPool(dial, 2, 4, time.Minute, 2*time.Second, 4<<10)
		defer o.closeIdle()
		resp, err := o.roundTrip(getReq(t, context.Background(), http.MethodGet, "http://a.test/"), 2*time.Second)
		if err != nil {
			return
		}
		n, _ := io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if n > int64(len(raw)) {
			t.Fatalf("read a body of %d bytes from %d bytes", n, len(raw))
		}
	})
}
