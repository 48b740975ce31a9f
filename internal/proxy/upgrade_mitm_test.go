package proxy

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/mitm"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// wss:// through --mitm: the client CONNECTs, the proxy intercepts the
// tunnel's TLS with its local CA, and the WebSocket handshake read inside
// takes upgrade.go's path over TLS to the origin.

const wsGreeting = "welcome"

// wsEchoLoop is a WebSocket origin handler: after its 101 it sends a
// greeting frame in the same write (so the proxy gets the frame together
// with the 101), then echoes every frame until a close frame, which it
// answers, or an error. Anything that is not a handshake gets 400.
func wsEchoLoop(w http.ResponseWriter, r *http.Request) {
	conn, br, b, ok := wsHijack(w, r)
	if !ok {
		return
	}
	defer conn.Close()
	if err := writeFrame(b, 1, []byte(wsGreeting), false); err != nil {
		return
	}
	if _, err := io.WriteString(conn, b.String()); err != nil {
		return
	}
	for range 100 {
		op, payload, err := readFrame(br)
		if err != nil {
			return
		}
		if err := writeFrame(conn, op, payload, false); err != nil || op == 8 {
			return
		}
	}
}

// wssOrigin is a TLS origin on 127.0.0.1: robots.txt (404 when empty),
// /ws (wsEchoLoop), /close (wsCloser), hello for the rest. It records the requests it saw.
type wssOrigin struct {
	*httptest.Server
	mu   sync.Mutex
	seen []*http.Request // path and header of every request but robots.txt
}

func newWSSOrigin(t *testing.T, robots string) *wssOrigin {
	t.Helper()
	o := &wssOrigin{}
	o.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			if robots == "" {
				http.NotFound(w, r)
				return
			}
			io.WriteString(w, robots)
			return
		}
		o.mu.Lock()
		o.seen = append(o.seen, &http.Request{URL: r.URL, Header: r.Header.Clone()})
		o.mu.Unlock()
		switch r.URL.Path {
		case "/ws":
			wsEchoLoop(w, r)
			return
		case "/close":
			wsCloser(w, r)
			return
		}
		hello(w, r)
	}))
	o.StartTLS()
	t.Cleanup(o.Close)
	return o
}

// handshakes returns the headers of the requests for path the origin saw.
func (o *wssOrigin) handshakes(path string) []http.Header {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []http.Header
	for _, r := range o.seen {
		if r.URL.Path == path {
			out = append(out, r.Header)
		}
	}
	return out
}

// mitmEnv is a proxy with --mitm in front of one TLS origin.
type mitmEnv struct {
	t      *testing.T
	origin *wssOrigin
	ca     *mitm.CA
	proxy  *Proxy
	front  *httptest.Server
}

func newMITMEnv(t *testing.T, robots string, cfg Config) *mitmEnv {
	t.Helper()
	o := newWSSOrigin(t, robots)
	roots := o.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	ca, _, err := mitm.LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The gate fetches robots.txt over TLS from the origin.
	gateClient := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	t.Cleanup(gateClient.CloseIdleConnections)
	g, err := politeness.New(politeness.Config{DefaultDelay: -1}, politeness.Backend{HTTPClient: gateClient})
	if err != nil {
		t.Fatal(err)
	}
	cfg.AllowPrivate = true
	cfg.ConnectPorts = []int{portOf(t, o.Server)}
	p, err := New(cfg, Options{Gate: g, MITM: ca, UpstreamTLS: &tls.Config{RootCAs: roots}})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewUnstartedServer(nil)
	front.Config = NewServer(p.Handler(nil), cfg, nil)
	front.Start()
	p.AddSelf(front.Listener.Addr().String())
	t.Cleanup(func() {
		front.Close()
		p.Close()
	})
	return &mitmEnv{t: t, origin: o, ca: ca, proxy: p, front: front}
}

// wssDial opens a tunnel to the origin through the proxy, does TLS
// trusting the proxy's CA, and sends a WebSocket handshake for path. It
// returns the TLS connection, its reader and the handshake's response
// (its body unread).
func (e *mitmEnv) wssDial(path string) (*tls.Conn, *bufio.Reader, *http.Response) {
	e.t.Helper()
	c, err := net.Dial("tcp", e.front.Listener.Addr().String())
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	authority := e.origin.Listener.Addr().String()
	if _, err := fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", authority, authority); err != nil {
		e.t.Fatal(err)
	}
	// Read the 200 byte by byte: bytes after it belong to TLS.
	resp, err := http.ReadResponse(bufio.NewReaderSize(oneByteReader{c}, 16), &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != http.StatusOK {
		e.t.Fatalf("CONNECT: %v %v", resp, err)
	}
	tc := tls.Client(c, &tls.Config{RootCAs: e.ca.Pool(), ServerName: "127.0.0.1"})
	if err := tc.Handshake(); err != nil {
		e.t.Fatalf("TLS with the proxy: %v", err)
	}
	fmt.Fprintf(tc, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n%s: reject\r\n\r\n",
		path, authority, HeaderMode)
	br := bufio.NewReader(tc)
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		e.t.Fatalf("handshake response: %v", err)
	}
	return tc, br, resp
}

// oneByteReader reads one byte at a time, so that a bufio.Reader over it
// never reads past what it is asked for.
type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return o.r.Read(p)
}

func TestWebSocketThroughMITM(t *testing.T) {
	before := runtime.NumGoroutine()
	cases := []struct {
		name       string
		robots     string
		cfg        Config
		wantStatus int
		wantReason string
		// after the 101 and the greeting
		frames    []string // echoed one by one
		overCap   bool     // send a frame past MaxBytes: the proxy closes
		idle      bool     // send nothing more: the proxy closes the idle socket
		wantTrace string   // substring of the socket's trace error
	}{
		{name: "echo", robots: "User-agent: *\nDisallow: /private\n", wantStatus: 101,
			frames: []string{"hello, polite world", "", strings.Repeat("large frame ", 8000), "last"}},
		{name: "robots disallow the path", robots: "User-agent: *\nDisallow: /ws\n", wantStatus: 403, wantReason: "robots"},
		{name: "byte cap", cfg: Config{WebSocket: WebSocketConfig{MaxBytes: 64}}, wantStatus: 101,
			frames: []string{"short"}, overCap: true, wantTrace: "byte cap"},
		// No echo before the wait: under load a round trip could take
		// longer than the timeout. The greeting arrives with the 101.
		{name: "idle timeout", cfg: Config{WebSocket: WebSocketConfig{IdleTimeout: 200 * time.Millisecond}}, wantStatus: 101,
			idle: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newMITMEnv(t, tc.robots, tc.cfg)
			c, br, resp := e.wssDial("/ws")
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, resp.Header.Get(HeaderReason), tc.wantStatus)
			}
			if tc.wantReason != "" && resp.Header.Get(HeaderReason) != tc.wantReason {
				t.Fatalf("reason %q, want %q", resp.Header.Get(HeaderReason), tc.wantReason)
			}
			seen := e.origin.handshakes("/ws")
			if tc.wantStatus != 101 {
				if len(seen) != 0 {
					t.Fatalf("the origin saw %d handshakes, want none", len(seen))
				}
				return
			}

			// The handshake went through the proxy, with the upgrade
			// fields restored and the control fields removed.
			if got := resp.Header.Get("Sec-WebSocket-Accept"); got != wsAccept("dGhlIHNhbXBsZSBub25jZQ==") {
				t.Errorf("Sec-WebSocket-Accept %q", got)
			}
			if !strings.Contains(resp.Header.Get("Via"), "courtesy-") {
				t.Errorf("101 without our Via: %v", resp.Header)
			}
			if len(seen) != 1 {
				t.Fatalf("the origin saw %d handshakes, want 1", len(seen))
			}
			if h := seen[0]; h.Get("Upgrade") != "websocket" || h.Get("Connection") != "Upgrade" ||
				h.Get("Sec-WebSocket-Key") == "" || !strings.Contains(h.Get("Via"), "courtesy-") || h.Get(HeaderMode) != "" {
				t.Errorf("origin saw header %v", h)
			}
			if n := e.proxy.WebSockets(); n != 1 {
				t.Errorf("WebSockets = %d, want 1", n)
			}

			// Origin to client: the greeting sent with the 101.
			if op, got, err := readFrame(br); err != nil || op != 1 || string(got) != wsGreeting {
				t.Fatalf("greeting: op %d %q %v", op, got, err)
			}
			// Client to origin and back.
			for _, f := range tc.frames {
				wsEchoOnce(t, c, br, f)
			}
			switch {
			case tc.overCap:
				if err := writeFrame(c, 1, []byte(strings.Repeat("y", 80)), true); err != nil {
					t.Fatal(err)
				}
				if _, _, err := readFrame(br); err == nil || isTimeout(err) {
					t.Fatalf("read after passing the cap: %v, want the proxy's close", err)
				}
			case tc.idle:
				if _, _, err := readFrame(br); err == nil || isTimeout(err) {
					t.Fatalf("read on an idle socket: %v, want the proxy's close", err)
				}
			default:
				// A close frame, echoed, ends the socket from the origin.
				if err := writeFrame(c, 8, []byte{0x03, 0xe8}, true); err != nil {
					t.Fatal(err)
				}
				if op, _, err := readFrame(br); err != nil || op != 8 {
					t.Fatalf("close: op %d %v", op, err)
				}
				// The origin then closes its connection; the proxy passes
				// that on (TLS close_notify) and the client closes too.
				if _, _, err := readFrame(br); err != io.EOF {
					t.Fatalf("read after the close frame: %v, want EOF", err)
				}
				c.Close()
			}
			waitFor(t, "socket closed", func() bool { return e.proxy.WebSockets() == 0 })
			c.Close()

			var entry *TraceEntry
			for _, x := range e.proxy.Trace() {
				if x.Outcome == "websocket" {
					entry = &x
					break
				}
			}
			if entry == nil || entry.Status != 101 || !strings.HasPrefix(entry.URL, "https://") || !strings.HasSuffix(entry.URL, "/ws") {
				t.Fatalf("trace %+v, want a websocket entry for https://.../ws", e.proxy.Trace())
			}
			if tc.wantTrace != "" && !strings.Contains(entry.Error, tc.wantTrace) {
				t.Errorf("trace error %q, want %q", entry.Error, tc.wantTrace)
			}
			if tc.wantTrace == "" && entry.Error != "" {
				t.Errorf("trace error %q, want none", entry.Error)
			}
		})
	}
	checkGoroutines(t, before, 12)
}

// Closing the proxy ends a wss:// socket inside an intercepted tunnel, and
// Close waits for it.
func TestWebSocketThroughMITMProxyClose(t *testing.T) {
	e := newMITMEnv(t, "", Config{})
	c, br, resp := e.wssDial("/ws")
	if resp.StatusCode != 101 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if _, _, err := readFrame(br); err != nil {
		t.Fatal(err)
	}
	wsEchoOnce(t, c, br, "x")
	closeWithSocketOpen(t, e.proxy, br)
	if n := e.proxy.WebSockets(); n != 0 {
		t.Errorf("WebSockets = %d after Close", n)
	}
}

// TestWebSocketThroughMITMOriginCloses is TestWebSocketOriginCloses for
// wss://: the origin's Close frame and TLS close reach the client (as
// close_notify, EOF), and the socket is released after the grace although
// the client stays silent and IdleTimeout is an hour.
func TestWebSocketThroughMITMOriginCloses(t *testing.T) {
	before := runtime.NumGoroutine()
	e := newMITMEnv(t, "", Config{WebSocket: WebSocketConfig{IdleTimeout: time.Hour}})
	c, br, resp := e.wssDial("/close")
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d (%s), want 101", resp.StatusCode, resp.Header.Get(HeaderReason))
	}
	expectOriginClose(t, br)
	waitFor(t, "the socket's release", func() bool { return e.proxy.WebSockets() == 0 })
	if x := wsTraceEntry(t, e.proxy); x.Status != 101 || x.Error != "" || !strings.HasPrefix(x.URL, "https://") {
		t.Errorf("trace entry %+v, want https, status 101, no error", x)
	}
	c.Close()
	e.front.CloseClientConnections()
	e.origin.CloseClientConnections()
	checkGoroutines(t, before, 12)
}
