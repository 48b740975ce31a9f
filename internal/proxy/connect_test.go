package proxy

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/httpcache"
	"github.com/courtesy-crawler/courtesy/internal/kv"
	"github.com/courtesy-crawler/courtesy/internal/mitm"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

func tlsOrigin(t *testing.T, robots string) *httptest.Server {
	t.Helper()
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, robots)
			return
		}
		io.WriteString(w, "secure "+r.URL.Path)
	}))
	t.Cleanup(s.Close)
	return s
}

func portOf(t *testing.T, s *httptest.Server) int {
	u, _ := url.Parse(s.URL)
	p, _ := strconv.Atoi(u.Port())
	return p
}

func TestConnectTunnel(t *testing.T) {
	before := runtime.NumGoroutine()
	open := tlsOrigin(t, "User-agent: *\nDisallow: /private/\n")
	closed := tlsOrigin(t, "User-agent: *\nDisallow: /\n")
	other := tlsOrigin(t, "")
	// The gate fetches robots.txt over TLS from the test origins.
	pool := open.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	gateClient := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	e := newEnv(t, envOpts{cfg: Config{ConnectPorts: []int{portOf(t, open), portOf(t, closed)}}, gateHTTP: gateClient})
	pu, _ := url.Parse(e.front.URL)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy:           http.ProxyURL(pu),
		TLSClientConfig: &tls.Config{RootCAs: pool},
	}}

	resp, err := client.Get(open.URL + "/hello")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "secure /hello" {
		t.Errorf("through the tunnel: %q", b)
	}
	// The open tunnel holds the host's slot (one connection per host, and
	// the test origins share the key 127.0.0.1): close it.
	client.CloseIdleConnections()
	// Inside the tunnel the path is invisible: /private/ is not checked.
	for _, tt := range []struct {
		name, url, want string
	}{
		{"host disallowing everything", closed.URL + "/x", "403"},
		{"port not allowed", other.URL + "/x", "403"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.Get(tt.url)
			if err == nil || !strings.Contains(err.Error(), tt.want) && !strings.Contains(err.Error(), http.StatusText(http.StatusForbidden)) {
				t.Errorf("got %v, want a %s from the proxy", err, tt.want)
			}
		})
	}
	client.CloseIdleConnections()
	waitFor(t, "tunnels to close", func() bool { return e.proxy.tunnelsActive.Load() == 0 })
	tr := e.proxy.Trace()
	found := false
	for _, x := range tr {
		if x.Outcome == "tunnel" && x.Method == "CONNECT" {
			found = true
		}
	}
	if !found {
		t.Errorf("no tunnel in the trace: %+v", tr)
	}
	e.front.Close()
	e.proxy.Close()
	open.Close()
	closed.Close()
	other.Close()
	checkGoroutines(t, before, 5)
}

func TestMITM(t *testing.T) {
	before := runtime.NumGoroutine()
	var hits atomic.Int64
	origin := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nDisallow: /private/\n")
			return
		}
		hits.Add(1)
		w.Header().Set("Cache-Control", "max-age=60")
		io.WriteString(w, "secure "+r.URL.Path)
	}))
	defer origin.Close()
	originPool := origin.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	ca, _, err := mitm.LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gateClient := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: originPool}}}
	g, err := politeness.New(politeness.Config{DefaultDelay: -1}, politeness.Backend{HTTPClient: gateClient})
	if err != nil {
		t.Fatal(err)
	}
	db, err := kv.Open(t.TempDir(), kv.Options{CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	cache, _ := httpcache.Open(db, httpcache.Options{})
	p, err := New(Config{AllowPrivate: true, ConnectPorts: []int{portOf(t, origin)}},
		Options{Gate: g, Cache: cache, MITM: ca, UpstreamTLS: &tls.Config{RootCAs: originPool}})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p.Handler(nil))
	pu, _ := url.Parse(front.URL)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: ca.Pool()},
	}}
	get := func(path string) (int, string, http.Header) {
		resp, err := client.Get(origin.URL + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	if code, body, _ := get("/a"); code != 200 || body != "secure /a" {
		t.Errorf("first: %d %q", code, body)
	}
	if code, body, h := get("/a"); code != 200 || body != "secure /a" || h.Get(HeaderCache) != "HIT" {
		t.Errorf("second: %d %q %v", code, body, h)
	}
	// Inside the intercepted tunnel robots.txt applies per path, and a
	// request for another host than the tunnel's never reaches the
	// pipeline (internal/mitm answers 421).
	if code, _, h := get("/private/x"); code != 403 || h.Get(HeaderReason) != "robots" {
		t.Errorf("private: %d %v", code, h)
	}
	if hits.Load() != 1 {
		t.Errorf("origin saw %d page requests, want 1", hits.Load())
	}
	found := false
	for _, e := range p.Trace() {
		if strings.HasPrefix(e.URL, "https://") && e.Outcome == "cache_hit" {
			found = true
		}
	}
	if !found {
		t.Errorf("no https cache hit in the trace: %+v", p.Trace())
	}
	client.CloseIdleConnections()
	front.Close()
	p.Close()
	cache.Close()
	db.Close()
	origin.Close()
	checkGoroutines(t, before, 5)
}

// memConn is one end of an in-memory connection that, unlike net.Pipe,
// can half-close (CloseWrite), as TCP can; it blocks only on channels, so
// it runs in a synctest bubble. Deadlines are ignored.
type memConn struct {
	r *io.PipeReader
	w *io.PipeWriter
}

func memPipe() (x, y *memConn) {
	r1, w1 := io.Pipe()
	r2, w2 := io.Pipe()
	return &memConn{r: r1, w: w2}, &memConn{r: r2, w: w1}
}

func (c *memConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *memConn) Write(p []byte) (int, error) { return c.w.Write(p) }
func (c *memConn) CloseWrite() error           { return c.w.Close() }
func (c *memConn) Close() error {
	_ = c.w.Close()
	return c.r.CloseWithError(net.ErrClosed)
}
func (c *memConn) LocalAddr() net.Addr              { return memAddr{} }
func (c *memConn) RemoteAddr() net.Addr             { return memAddr{} }
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

type memAddr struct{}

func (memAddr) Network() string { return "mem" }
func (memAddr) String() string  { return "mem" }

// peerRead is what one peer of a relay read: the bytes, and when (since
// the start) and how its reading ended.
type peerRead struct {
	data  string
	endAt time.Duration
	err   error
}

// readUntilEnd reads c until an error and sends what it read on the
// returned channel.
func readUntilEnd(c *memConn, start time.Time) <-chan peerRead {
	out := make(chan peerRead, 1)
	go func() {
		b, err := io.ReadAll(c)
		out <- peerRead{data: string(b), endAt: time.Since(start), err: err}
	}()
	return out
}

// ownClose marks a peer that closed its own connection: its read ends
// then, with io.ErrClosedPipe, rather than with the relay's EOF.
const ownClose time.Duration = -1

// TestRelayCloseGrace runs relay between an in-memory client (a) and
// origin (b) in a synctest bubble: with a grace (WebSocket), once one
// direction has ended the other gets exactly the grace before both
// connections are closed; without one (CONNECT), a half-closed tunnel
// keeps carrying the other direction for as long as it lasts.
func TestRelayCloseGrace(t *testing.T) {
	const grace = time.Second
	cases := []struct {
		name   string
		grace  time.Duration
		client func(c *memConn) // the client peer's actions
		origin func(c *memConn) // the origin peer's actions
		// end is how long after the start relay returns.
		end time.Duration
		// What each peer reads, and when it sees EOF (or ownClose).
		clientRead, originRead string
		clientEOF, originEOF   time.Duration
		// silent names the peer that neither sends nor closes: once relay
		// returns, its connection must be closed (a write fails).
		silent string
	}{
		{
			name:   "websocket: origin closes, client silent",
			grace:  grace,
			client: func(c *memConn) {},
			origin: func(c *memConn) {
				_, _ = c.Write([]byte("close frame"))
				_ = c.Close()
			},
			end:        grace,
			clientRead: "close frame", clientEOF: 0, // at once
			originEOF: ownClose,
			silent:    "client",
		},
		{
			name:  "websocket: client closes, origin silent",
			grace: grace,
			client: func(c *memConn) {
				_, _ = c.Write([]byte("close frame"))
				_ = c.Close()
			},
			origin:     func(c *memConn) {},
			end:        grace,
			clientEOF:  ownClose,
			originRead: "close frame", originEOF: 0, // the origin gets the close at once
			silent: "origin",
		},
		{
			name:  "websocket: client replies within the grace",
			grace: grace,
			client: func(c *memConn) {
				time.Sleep(200 * time.Millisecond)
				_, _ = c.Write([]byte("close reply"))
				_ = c.CloseWrite()
			},
			origin: func(c *memConn) {
				_, _ = c.Write([]byte("close frame"))
				_ = c.CloseWrite() // and reads the reply
			},
			end:        200 * time.Millisecond,
			clientRead: "close frame", clientEOF: 0,
			originRead: "close reply", originEOF: 200 * time.Millisecond,
		},
		{
			name:  "tunnel: half-close kept past any grace",
			grace: 0,
			client: func(c *memConn) {
				time.Sleep(5 * time.Second)
				_, _ = c.Write([]byte("late request"))
				_ = c.CloseWrite()
			},
			origin: func(c *memConn) {
				_, _ = c.Write([]byte("answer"))
				_ = c.CloseWrite()
			},
			end:        5 * time.Second,
			clientRead: "answer", clientEOF: 0,
			originRead: "late request", originEOF: 5 * time.Second,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				proxyA, client := memPipe()
				proxyB, origin := memPipe()
				start := time.Now()
				clientGot := readUntilEnd(client, start)
				originGot := readUntilEnd(origin, start)
				tn := &tunnel{hard: start.Add(time.Hour), idle: time.Hour}
				tn.touch()
				go tc.client(client)
				go tc.origin(origin)
				ab, ba, err := tn.relay(proxyA, proxyA, proxyB, proxyB, 0, tc.grace, nil)
				if got := time.Since(start); got != tc.end {
					t.Errorf("relay ended after %v, want %v", got, tc.end)
				}
				if err != nil {
					t.Errorf("relay error %v", err)
				}
				if ab != int64(len(tc.originRead)) || ba != int64(len(tc.clientRead)) {
					t.Errorf("relayed %d up, %d down; want %d, %d", ab, ba, len(tc.originRead), len(tc.clientRead))
				}
				peers := map[string]*memConn{"client": client, "origin": origin}
				if c := peers[tc.silent]; c != nil {
					if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
						t.Errorf("%s write after the relay: %v, want net.ErrClosed (the proxy closed it)", tc.silent, err)
					}
				}
				// Every reader ends by itself: on its peer's own close, or on
				// the EOF the relay passes on or its closing.
				for _, p := range []struct {
					name string
					got  peerRead
					data string
					eof  time.Duration
				}{
					{"client", <-clientGot, tc.clientRead, tc.clientEOF},
					{"origin", <-originGot, tc.originRead, tc.originEOF},
				} {
					if p.got.data != p.data {
						t.Errorf("%s read %q, want %q", p.name, p.got.data, p.data)
					}
					switch {
					case p.eof == ownClose:
						if !errors.Is(p.got.err, io.ErrClosedPipe) || p.got.endAt != 0 {
							t.Errorf("%s read ended after %v with %v, want its own close at once", p.name, p.got.endAt, p.got.err)
						}
					case p.got.err != nil || p.got.endAt != p.eof:
						t.Errorf("%s read ended after %v with %v, want EOF after %v", p.name, p.got.endAt, p.got.err, p.eof)
					}
				}
				_ = client.Close()
				_ = origin.Close()
			})
		})
	}
}
