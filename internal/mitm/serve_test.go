package mitm

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/poll"
)

// echo answers with what the proxy's handler would see of the request.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	info, ok := FromContext(r.Context())
	fmt.Fprintf(w, "hello from mitm\nurl=%s\nhost=%s\nrequestURI=%s\ntls=%v\ninfo=%v %+v\n",
		r.URL, r.Host, r.RequestURI, r.TLS != nil, ok, info)
})

// testServer accepts TCP connections on 127.0.0.1 and intercepts each
// with ServeConn as a tunnel to "site.test:PORT" (or target, if set), as
// the proxy does after answering CONNECT.
type testServer struct {
	addr   string
	port   int
	served atomic.Int64 // ServeConn calls returned
	errs   chan error   // their results, for tests that look
	stop   func()       // ends the accept loop and every session; idempotent
}

func startServer(t *testing.T, srv *Server, target string, h http.Handler) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{addr: ln.Addr().String(), port: ln.Addr().(*net.TCPAddr).Port, errs: make(chan error, 1000)}
	if target == "" {
		target = "site.test:" + strconv.Itoa(ts.port)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 1000 { // bounded: no test opens more
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				err := srv.ServeConn(ctx, c, target, h)
				ts.served.Add(1)
				select {
				case ts.errs <- err:
				default:
				}
			})
		}
	})
	var once sync.Once
	ts.stop = func() {
		once.Do(func() {
			cancel()
			ln.Close()
			wg.Wait()
		})
	}
	t.Cleanup(ts.stop)
	return ts
}

// client returns an HTTP client that trusts ca and dials ts for any
// address.
func (ts *testServer) client(ca *CA) *http.Client {
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: ca.Pool()},
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, "tcp", ts.addr)
			},
			ForceAttemptHTTP2: true, // offered, and refused by ALPN
		},
	}
}

func TestServeConnGoClient(t *testing.T) {
	t.Parallel()
	ca, _ := newTestCA(t, Options{})
	ts := startServer(t, &Server{CA: ca}, "", echo)
	c := ts.client(ca)
	defer c.CloseIdleConnections()
	base := "https://site.test:" + strconv.Itoa(ts.port)
	for i := range 3 { // keep-alive: three requests, one connection
		resp, err := c.Get(base + "/a/b?q=" + strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.ProtoMajor != 1 {
			t.Fatalf("status %d proto %s", resp.StatusCode, resp.Proto)
		}
		for _, want := range []string{
			"url=" + base + "/a/b?q=" + strconv.Itoa(i),
			"host=site.test:" + strconv.Itoa(ts.port),
			"requestURI=" + base + "/a/b?q=",
			"tls=true",
			"info=true {Authority:site.test:" + strconv.Itoa(ts.port) + " ServerName:site.test}",
		} {
			if !strings.Contains(string(body), want) {
				t.Errorf("request %d: body lacks %q:\n%s", i, want, body)
			}
		}
	}
	c.CloseIdleConnections()
	waitFor(t, func() bool { return ts.served.Load() == 1 }, "ServeConn to return after the client closed")
	if err := <-ts.errs; err != nil {
		t.Errorf("ServeConn after a client close: %v, want nil", err)
	}
}

func TestRewriter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, authority, target, host string
		wantStatus                    int
		wantURL                       string
	}{
		{"origin form, port 443 dropped", "site.test:443", "/p?q=1", "site.test", 200, "https://site.test/p?q=1"},
		{"explicit default port", "site.test:443", "/p", "SITE.test:443", 200, "https://site.test/p"},
		{"other port kept", "site.test:8443", "/p", "site.test:8443", 200, "https://site.test:8443/p"},
		{"absolute form inside", "site.test:443", "https://site.test/x", "site.test", 200, "https://site.test/x"},
		{"ipv6", "[::1]:443", "/p", "[::1]", 200, "https://[::1]/p"},
		{"ipv6 other port", "[::1]:8443", "/p", "[::1]:8443", 200, "https://[::1]:8443/p"},
		{"no host (HTTP/1.0)", "site.test:443", "/p", "", 200, "https://site.test/p"},
		{"other host", "site.test:443", "/p", "evil.test", http.StatusMisdirectedRequest, ""},
		{"same host other port", "site.test:443", "/p", "site.test:8443", http.StatusMisdirectedRequest, ""},
		{"absolute form other host", "site.test:443", "https://evil.test/x", "evil.test", http.StatusMisdirectedRequest, ""},
		{"asterisk", "site.test:443", "*", "site.test", http.StatusBadRequest, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			auth, _, err := splitAuthority(tt.authority)
			if err != nil {
				t.Fatal(err)
			}
			var got string
			rw := &rewriter{info: Info{Authority: auth}, next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = r.URL.String()
				if r.RequestURI != got || r.Host != r.URL.Host {
					t.Errorf("RequestURI %q Host %q URL %q disagree", r.RequestURI, r.Host, got)
				}
			})}
			method := http.MethodGet
			if tt.target == "*" {
				method = http.MethodOptions
			}
			req := httptest.NewRequest(method, "http://placeholder/", nil)
			req.RequestURI = tt.target
			req.URL, _ = req.URL.Parse(tt.target)
			if tt.target == "*" {
				req.URL.Path = "*"
			}
			req.Host = tt.host
			rec := httptest.NewRecorder()
			rw.ServeHTTP(rec, req)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status %d, want %d (%s)", rec.Code, tt.wantStatus, rec.Body)
			}
			if got != tt.wantURL {
				t.Errorf("handler saw %q, want %q", got, tt.wantURL)
			}
		})
	}
}

// rawTLS opens a TLS connection to ts as site.test and writes req.
func rawTLS(t *testing.T, ca *CA, ts *testServer, req string) (*tls.Conn, *bufio.Reader) {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", ts.addr, &tls.Config{ServerName: "site.test", RootCAs: ca.Pool()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	return c, bufio.NewReader(c)
}

func TestServeConnRefusals(t *testing.T) {
	t.Parallel()
	ca, _ := newTestCA(t, Options{})
	var reached atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) })
	ts := startServer(t, &Server{CA: ca, MaxHeaderBytes: 4 << 10}, "", h)
	port := strconv.Itoa(ts.port)
	tests := []struct {
		name, req  string
		wantStatus int
	}{
		{"misdirected", "GET / HTTP/1.1\r\nHost: evil.test:" + port + "\r\n\r\n", http.StatusMisdirectedRequest},
		{"connect inside", "CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n", http.StatusMethodNotAllowed},
		{"header too large", "GET / HTTP/1.1\r\nHost: site.test:" + port + "\r\nX-Big: " + strings.Repeat("a", 16<<10) + "\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge},
		{"malformed", "GET / HTTP/1.1\r\nHost: site.test:" + port + "\r\nBad Header\r\n\r\n", http.StatusBadRequest},
		{"smuggling CL+CL", "POST / HTTP/1.1\r\nHost: site.test:" + port + "\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, br := rawTLS(t, ca, ts, tt.req)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.wantStatus)
			}
		})
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("handler reached %d times by refused requests", n)
	}
}

func TestServeConnBadTarget(t *testing.T) {
	t.Parallel()
	ca, _ := newTestCA(t, Options{})
	for _, target := range []string{"", "bad host:443", "site.test:0", "site.test:99999", "site.test:http"} {
		a, b := net.Pipe()
		err := (&Server{CA: ca}).ServeConn(context.Background(), a, target, echo)
		if err == nil || !strings.HasPrefix(err.Error(), "mitm: ") {
			t.Errorf("target %q: err %v, want a mitm error", target, err)
		}
		// The conn was closed: the peer sees EOF at once.
		if _, rerr := b.Read(make([]byte, 1)); rerr == nil {
			t.Errorf("target %q: conn left open", target)
		}
	}
	if err := (&Server{}).ServeConn(context.Background(), nopConn(), "site.test", echo); err == nil {
		t.Errorf("nil CA accepted")
	}
}

func nopConn() net.Conn { a, b := net.Pipe(); b.Close(); return a }

// TestServeConnHandshakeTimeout: a client that connects and says nothing
// is dropped after HandshakeTimeout (fake clock).
func TestServeConnHandshakeTimeout(t *testing.T) {
	ca, _ := newTestCA(t, Options{})
	synctest.Test(t, func(t *testing.T) {
		srvSide, cliSide := net.Pipe()
		defer cliSide.Close()
		start := time.Now()
		err := (&Server{CA: ca, HandshakeTimeout: 3 * time.Second}).ServeConn(context.Background(), srvSide, "site.test", echo)
		if err == nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v, want a handshake deadline error", err)
		}
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("returned after %v, want 3s", d)
		}
	})
}

type sessionResult struct {
	err error
	at  time.Duration // from start to ServeConn's return, on the bubble's clock
}

// session runs, inside a synctest bubble, one intercepted connection over
// net.Pipe: a TLS handshake, req, then silence until the server closes.
// It returns what the client read and how ServeConn ended.
func session(t *testing.T, ctx context.Context, srv *Server, h http.Handler, req string) (string, sessionResult) {
	t.Helper()
	srvSide, cliSide := net.Pipe()
	defer cliSide.Close()
	start := time.Now()
	done := make(chan sessionResult, 1)
	go func() {
		err := srv.ServeConn(ctx, srvSide, "site.test", h)
		done <- sessionResult{err, time.Since(start)}
	}()
	tc := tls.Client(cliSide, &tls.Config{ServerName: "site.test", RootCAs: srv.CA.Pool()})
	if err := tc.Handshake(); err != nil {
		t.Fatalf("handshake: %v", err)
	}
	if _, err := io.WriteString(tc, req); err != nil {
		t.Fatalf("write: %v", err)
	}
	read := make(chan string, 1)
	go func() { // reads until the server closes
		b, _ := io.ReadAll(tc)
		read <- string(b)
	}()
	res := <-done
	return <-read, res
}

// TestServeConnIdleTimeout: an idle connection is closed after
// IdleTimeout (fake clock) and ServeConn returns nil.
func TestServeConnIdleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Made inside the bubble: its clock starts in 2000.
		ca, _ := newTestCA(t, Options{})
		resp, res := session(t, context.Background(), &Server{CA: ca, IdleTimeout: 5 * time.Second}, echo,
			"GET / HTTP/1.1\r\nHost: site.test\r\n\r\n")
		if res.err != nil {
			t.Errorf("err %v, want nil after idle close", res.err)
		}
		if res.at != 5*time.Second {
			t.Errorf("closed after %v, want the 5s idle timeout", res.at)
		}
		if !strings.Contains(resp, "url=https://site.test/") {
			t.Errorf("response %q", resp)
		}
	})
}

// TestServeConnCancel: ending ctx ends the connection and the request in
// flight, and ServeConn reports ctx's error.
func TestServeConnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Made inside the bubble: its clock starts in 2000.
		ca, _ := newTestCA(t, Options{})
		ctx, cancel := context.WithCancel(context.Background())
		handlerDone := make(chan error, 1)
		slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
			handlerDone <- r.Context().Err()
		})
		time.AfterFunc(2*time.Second, cancel)
		_, res := session(t, ctx, &Server{CA: ca, IdleTimeout: 5 * time.Second}, slow,
			"GET / HTTP/1.1\r\nHost: site.test\r\n\r\n")
		if !errors.Is(res.err, context.Canceled) {
			t.Errorf("err %v, want context.Canceled", res.err)
		}
		if res.at != 2*time.Second {
			t.Errorf("returned after %v, want 2s", res.at)
		}
		if err := <-handlerDone; !errors.Is(err, context.Canceled) {
			t.Errorf("handler context: %v", err)
		}
	})
}

// TestServeConnNoGoroutineLeak: sessions ending every way leave no
// goroutine behind.
func TestServeConnNoGoroutineLeak(t *testing.T) {
	ca, _ := newTestCA(t, Options{})
	if _, err := ca.Certificate("site.test"); err != nil { // warm the cache outside the count
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	func() {
		ts := startServer(t, &Server{CA: ca, HandshakeTimeout: 200 * time.Millisecond}, "site.test", echo)
		c := ts.client(ca)
		for range 10 {
			resp, err := c.Get("https://site.test/")
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			c.CloseIdleConnections()
		}
		// A client that never handshakes.
		raw, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		// A client that handshakes and then hangs up mid-request.
		tc, _ := rawTLS(t, ca, ts, "GET / HTTP/1.1\r\nHost: site")
		tc.Close()
		waitFor(t, func() bool { return ts.served.Load() == 12 }, "all sessions to end")
		ts.stop()
	}()
	waitFor(t, func() bool { return runtime.NumGoroutine() <= before }, "goroutines to return to the baseline")
}

// waitFor waits up to 10 s for cond (goroutines that end on their own:
// a bounded wait, not a timing assertion) and dumps every goroutine when
// it does not hold.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	if poll.Within(10*time.Second, cond) {
		return
	}
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	t.Fatalf("timed out waiting for %s; goroutines:\n%s", what, buf[:n])
}

// TestBufferedConn: bytes of the ClientHello already read into the
// hijacked connection's bufio.Reader are not lost.
func TestBufferedConn(t *testing.T) {
	t.Parallel()
	ca, _ := newTestCA(t, Options{})
	srvSide, cliSide := net.Pipe()
	defer cliSide.Close()
	done := make(chan error, 1)
	go func() {
		br := bufio.NewReader(srvSide)
		if _, err := br.Peek(1); err != nil { // as http.Server's reader would have buffered
			done <- err
			srvSide.Close()
			return
		}
		if br.Buffered() == 0 {
			done <- errors.New("nothing buffered")
			srvSide.Close()
			return
		}
		done <- (&Server{CA: ca}).ServeConn(context.Background(), BufferedConn(srvSide, br), "site.test", echo)
	}()
	tc := tls.Client(cliSide, &tls.Config{ServerName: "site.test", RootCAs: ca.Pool()})
	_ = tc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(tc, "GET /buffered HTTP/1.1\r\nHost: site.test\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatalf("handshake or write: %v", err)
	}
	cbr := bufio.NewReader(tc)
	resp, err := http.ReadResponse(cbr, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	_, _ = io.Copy(io.Discard, cbr) // net.Pipe is unbuffered: take the close_notify
	if !strings.Contains(string(body), "url=https://site.test/buffered") {
		t.Errorf("body %q", body)
	}
	if err := <-done; err != nil {
		t.Errorf("ServeConn: %v", err)
	}
	if c := BufferedConn(srvSide, bufio.NewReader(srvSide)); c != srvSide {
		t.Errorf("BufferedConn wrapped a connection with nothing buffered")
	}
}
