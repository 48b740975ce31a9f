// Over 600 lines: a minimal hand-written WebSocket client and server
// (RFC 6455 framing) and the tests that drive the proxy's upgrade path
// with them; the helpers are used by these tests only.

package proxy

import (
	"bufio"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/config"
	"github.com/courtesy-crawler/courtesy/internal/politeness"
)

// A minimal WebSocket (RFC 6455) written by hand for the tests: the
// opening handshake and single unfragmented frames.

const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11" // RFC 6455 §1.3

func wsAccept(key string) string {
	h := sha1.Sum([]byte(key + wsGUID))
	return base64.StdEncoding.EncodeToString(h[:])
}

// writeFrame writes one final frame; clients mask (RFC 6455 §5.3).
func writeFrame(w io.Writer, opcode byte, payload []byte, mask bool) error {
	hdr := []byte{0x80 | opcode, 0}
	var mbit byte
	if mask {
		mbit = 0x80
	}
	switch n := len(payload); {
	case n < 126:
		hdr[1] = mbit | byte(n)
	case n <= 0xffff:
		hdr[1] = mbit | 126
		hdr = binary.BigEndian.AppendUint16(hdr, uint16(n))
	default:
		hdr[1] = mbit | 127
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	body := append([]byte(nil), payload...)
	if mask {
		var key [4]byte
		_, _ = rand.Read(key[:])
		hdr = append(hdr, key[:]...)
		for i := range body {
			body[i] ^= key[i%4]
		}
	}
	_, err := w.Write(append(hdr, body...))
	return err
}

// readFrame reads one frame (payloads up to 1 MiB) and unmasks it.
func readFrame(r io.Reader) (opcode byte, payload []byte, err error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, nil, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if n > 1<<20 {
		return 0, nil, fmt.Errorf("frame of %d bytes", n)
	}
	var key [4]byte
	masked := h[1]&0x80 != 0
	if masked {
		if _, err := io.ReadFull(r, key[:]); err != nil {
			return 0, nil, err
		}
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, nil, err
	}
	if masked {
		for i := range payload {
			payload[i] ^= key[i%4]
		}
	}
	return h[0] & 0x0f, payload, nil
}

// wsEcho is an origin handler: a WebSocket that echoes one frame and then
// holds the connection until the peer closes it (bounded); anything that
// is not a handshake gets 400.
func wsEcho(w http.ResponseWriter, r *http.Request) {
	conn, br, b, ok := wsHijack(w, r)
	if !ok {
		return
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, b.String()); err != nil {
		return
	}
	op, payload, err := readFrame(br)
	if err != nil {
		return
	}
	if err := writeFrame(conn, op, payload, false); err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, br)
}

// wsHijack answers 400 to a request that is not a WebSocket handshake;
// otherwise it takes the connection over (with a 10 s deadline) and
// returns it, its reader, and the 101 response in a builder, to which the
// handler may append frames before writing it all at once.
func wsHijack(w http.ResponseWriter, r *http.Request) (net.Conn, *bufio.Reader, *strings.Builder, bool) {
	if !isWebSocket(r) {
		http.Error(w, "not a websocket handshake", http.StatusBadRequest)
		return nil, nil, nil, false
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, nil, nil, false
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	b := &strings.Builder{}
	fmt.Fprintf(b, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
		wsAccept(r.Header.Get("Sec-WebSocket-Key")))
	return conn, brw.Reader, b, true
}

// expectOriginClose reads the origin's Close frame (status 1000) and then
// the end of the stream.
func expectOriginClose(t *testing.T, br *bufio.Reader) {
	t.Helper()
	if op, payload, err := readFrame(br); err != nil || op != 8 || string(payload) != "\x03\xe8" {
		t.Fatalf("close frame: op %d %q %v", op, payload, err)
	}
	if _, _, err := readFrame(br); err != io.EOF {
		t.Fatalf("read after the close frame: %v, want EOF", err)
	}
}

// wsCloser is an origin handler that closes at once, as RFC 6455 §7.1.1
// has a server do: after its 101 it sends a Close frame (status 1000) in
// the same write and closes the TCP connection without waiting for the
// client's reply.
func wsCloser(w http.ResponseWriter, r *http.Request) {
	conn, _, b, ok := wsHijack(w, r)
	if !ok {
		return
	}
	defer conn.Close()
	if err := writeFrame(b, 8, []byte{0x03, 0xe8}, false); err != nil {
		return
	}
	_, _ = io.WriteString(conn, b.String())
}

// wsOrigin serves robots.txt (robots; 404 when empty), /ws (wsEcho),
// /close (wsCloser) and hello for the rest.
func wsOrigin(t *testing.T, robots string) *origin {
	return newOrigin(t, robots, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ws":
			wsEcho(w, r)
			return
		case "/close":
			wsCloser(w, r)
			return
		case "/bad101": // switches to something that is not a WebSocket
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n")
				conn.Close()
			}
			return
		}
		hello(w, r)
	})
}

// wsDial sends a handshake for url through the proxy and returns the
// connection, its reader and the response (its body unread).
func (e *env) wsDial(url string, header ...string) (net.Conn, *bufio.Reader, *http.Response) {
	e.t.Helper()
	c, err := net.Dial("tcp", e.front.Listener.Addr().String())
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n",
		url, hostOf(e.t, url))
	for i := 0; i+1 < len(header); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", header[i], header[i+1])
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(c, b.String()); err != nil {
		e.t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		e.t.Fatalf("handshake response: %v", err)
	}
	return c, br, resp
}

// wsEchoOnce sends payload and checks that it comes back.
func wsEchoOnce(t *testing.T, c net.Conn, br *bufio.Reader, payload string) {
	t.Helper()
	if err := writeFrame(c, 1, []byte(payload), true); err != nil {
		t.Fatal(err)
	}
	op, got, err := readFrame(br)
	if err != nil || op != 1 || string(got) != payload {
		t.Fatalf("echo: op %d payload %q err %v, want text %q", op, got, err, payload)
	}
}

func TestWebSocketEcho(t *testing.T) {
	before := runtime.NumGoroutine()
	o := wsOrigin(t, "")
	e := newEnv(t, envOpts{})
	c, br, resp := e.wsDial(o.URL+"/ws", HeaderMode, "reject")
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("handshake status %d, want 101", resp.StatusCode)
	}
	if got := resp.Header.Get("Sec-WebSocket-Accept"); got != wsAccept("dGhlIHNhbXBsZSBub25jZQ==") {
		t.Fatalf("Sec-WebSocket-Accept %q", got)
	}
	if !headerHasToken(resp.Header, "Upgrade", "websocket") || !headerHasToken(resp.Header, "Connection", "upgrade") ||
		!strings.Contains(resp.Header.Get("Via"), "courtesy-") {
		t.Fatalf("101 header %v lacks Upgrade, Connection or Via", resp.Header)
	}
	wsEchoOnce(t, c, br, "hello, polite world")

	// The slot was freed at the handshake: with one request in flight
	// per host allowed, an ordinary request to the same host still goes
	// through (reject mode: it would get 429 otherwise).
	if r, body := e.get(o.URL+"/page", HeaderMode, "reject"); r.StatusCode != http.StatusOK || body != "hello /page" {
		t.Fatalf("request while the socket is open: %d %q", r.StatusCode, body)
	}
	if n := e.proxy.WebSockets(); n != 1 {
		t.Fatalf("WebSockets = %d, want 1", n)
	}
	c.Close()
	waitFor(t, "socket closed", func() bool { return e.proxy.WebSockets() == 0 })

	// The origin records the handshake when its handler returns, which
	// may be a moment after the proxy closed its side.
	var seen http.Header
	waitFor(t, "the origin to record the handshake", func() bool {
		for _, r := range o.pages() {
			if r.path == "/ws" {
				seen = r.header
			}
		}
		return seen != nil
	})
	if seen.Get("Upgrade") != "websocket" || seen.Get("Connection") != "Upgrade" ||
		seen.Get("Sec-WebSocket-Key") == "" || !strings.Contains(seen.Get("Via"), "courtesy-") || seen.Get(HeaderMode) != "" {
		t.Fatalf("origin saw header %v", seen)
	}
	if tr := e.proxy.Trace(); len(tr) == 0 {
		t.Fatal("no trace entry")
	}
	e.front.CloseClientConnections()
	checkGoroutines(t, before, 12)
}

func TestWebSocketPipeline(t *testing.T) {
	cases := []struct {
		name       string
		robots     string
		cfg        Config
		delay      time.Duration
		first      bool   // make a request to the host first (delay cases)
		path       string // default /ws
		method     string
		selfTarget bool
		wantStatus int
		wantReason string
		wantBody   string
	}{
		{name: "robots disallow", robots: "User-agent: *\nDisallow: /ws\n", wantStatus: 403, wantReason: "robots"},
		{name: "robots allows another path", robots: "User-agent: *\nDisallow: /private\n", wantStatus: 101},
		{name: "delay in reject mode", delay: time.Hour, first: true, wantStatus: 429, wantReason: "delay"},
		{name: "origin declines the upgrade", path: "/plain", wantStatus: 200, wantBody: "hello /plain"},
		{name: "origin switches to another protocol", path: "/bad101", wantStatus: 502, wantReason: "bad-upgrade"},
		{name: "disabled: upgrade dropped", cfg: Config{WebSocket: WebSocketConfig{Disabled: true}}, wantStatus: 400, wantBody: "not a websocket handshake\n"},
		{name: "private destination", cfg: Config{AllowedClients: []string{"127.0.0.0/8"}}, wantStatus: 403, wantReason: "private-destination"},
		{name: "loop", selfTarget: true, wantStatus: 508, wantReason: "loop"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := wsOrigin(t, tc.robots)
			pol := newEnvPolicy(tc.delay)
			e := newEnv(t, envOpts{cfg: tc.cfg, pol: pol})
			if tc.first {
				// Fetches robots.txt, which takes the host's slot and
				// starts its delay (the answer itself is a 429).
				e.get(o.URL+"/first", HeaderMode, "reject")
			}
			path := tc.path
			if path == "" {
				path = "/ws"
			}
			target := o.URL + path
			if tc.selfTarget {
				target = e.front.URL + path
			}
			c, br, resp := e.wsDial(target, HeaderMode, "reject")
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, resp.Header.Get(HeaderReason), tc.wantStatus)
			}
			if tc.wantReason != "" && resp.Header.Get(HeaderReason) != tc.wantReason {
				t.Fatalf("reason %q, want %q", resp.Header.Get(HeaderReason), tc.wantReason)
			}
			if tc.wantStatus == 101 {
				wsEchoOnce(t, c, br, "x")
				return
			}
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			if tc.wantBody != "" && string(body) != tc.wantBody {
				t.Fatalf("body %q, want %q", body, tc.wantBody)
			}
		})
	}
}

// newEnvPolicy is the politeness config of a pipeline case: no delay
// unless d > 0.
func newEnvPolicy(d time.Duration) (pol politeness.Config) {
	if d > 0 {
		pol.DefaultDelay = d
	}
	return pol
}

func TestWebSocketBadHandshake(t *testing.T) {
	o := wsOrigin(t, "")
	e := newEnv(t, envOpts{})
	cases := []struct {
		name, raw string
		want      string
	}{
		{name: "POST", raw: "POST " + o.URL + "/ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: 0\r\n\r\n", want: "HTTP/1.1 400"},
		{name: "body", raw: "GET " + o.URL + "/ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: 3\r\n\r\nabc", want: "HTTP/1.1 400"},
		{name: "HTTP/1.0", raw: "GET " + o.URL + "/ws HTTP/1.0\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", want: "HTTP/1.0 400"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := e.rawRequest(tc.raw); !strings.HasPrefix(got, tc.want) {
				t.Fatalf("response %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWebSocketLimits(t *testing.T) {
	t.Run("idle timeout", func(t *testing.T) {
		o := wsOrigin(t, "")
		e := newEnv(t, envOpts{cfg: Config{WebSocket: WebSocketConfig{IdleTimeout: 300 * time.Millisecond}}})
		c, br, resp := e.wsDial(o.URL + "/ws")
		if resp.StatusCode != 101 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		wsEchoOnce(t, c, br, "x")
		// Nothing more is sent: the proxy closes the idle socket, long
		// before the test's 10 s connection deadline.
		if _, _, err := readFrame(br); err == nil || isTimeout(err) {
			t.Fatalf("read on an idle socket: %v, want the proxy's close", err)
		}
		waitFor(t, "socket closed", func() bool { return e.proxy.WebSockets() == 0 })
	})
	t.Run("byte cap", func(t *testing.T) {
		o := wsOrigin(t, "")
		e := newEnv(t, envOpts{cfg: Config{WebSocket: WebSocketConfig{MaxBytes: 16}}})
		c, br, resp := e.wsDial(o.URL + "/ws")
		if resp.StatusCode != 101 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if err := writeFrame(c, 1, []byte(strings.Repeat("y", 40)), true); err != nil {
			t.Fatal(err)
		}
		if _, _, err := readFrame(br); err == nil || isTimeout(err) {
			t.Fatalf("read after passing the cap: %v, want the proxy's close", err)
		}
		waitFor(t, "socket closed", func() bool { return e.proxy.WebSockets() == 0 })
		if tr := e.proxy.Trace(); len(tr) == 0 || !strings.Contains(tr[0].Error, "byte cap") {
			t.Fatalf("trace %+v, want the byte cap as the error", tr)
		}
	})
	t.Run("per host", func(t *testing.T) {
		o := wsOrigin(t, "")
		e := newEnv(t, envOpts{cfg: Config{WebSocket: WebSocketConfig{MaxPerHost: 1}}})
		c1, br1, resp := e.wsDial(o.URL + "/ws")
		if resp.StatusCode != 101 {
			t.Fatalf("first: status %d", resp.StatusCode)
		}
		_, _, resp = e.wsDial(o.URL+"/ws", HeaderMode, "reject")
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get(HeaderReason) != "websocket-limit" {
			t.Fatalf("second: %d %s, want 429 websocket-limit", resp.StatusCode, resp.Header.Get(HeaderReason))
		}
		wsEchoOnce(t, c1, br1, "still open")
		c1.Close()
		waitFor(t, "socket closed", func() bool { return e.proxy.WebSockets() == 0 })
		c3, br3, resp := e.wsDial(o.URL + "/ws")
		if resp.StatusCode != 101 {
			t.Fatalf("third: status %d", resp.StatusCode)
		}
		wsEchoOnce(t, c3, br3, "again")
	})
	t.Run("proxy close ends sockets", func(t *testing.T) {
		o := wsOrigin(t, "")
		e := newEnv(t, envOpts{})
		c, br, resp := e.wsDial(o.URL + "/ws")
		if resp.StatusCode != 101 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		wsEchoOnce(t, c, br, "x")
		closeWithSocketOpen(t, e.proxy, br)
	})
}

// wsTraceEntry returns the trace entry of the one WebSocket, failing the
// test if there is none.
func wsTraceEntry(t *testing.T, p *Proxy) TraceEntry {
	t.Helper()
	for _, x := range p.Trace() {
		if x.Outcome == "websocket" {
			return x
		}
	}
	t.Fatalf("trace %+v has no websocket entry", p.Trace())
	return TraceEntry{}
}

// TestWebSocketOriginCloses: the origin sends its Close frame and closes
// TCP while the client stays silent (no reply, no close). The client sees
// the frame and EOF, and the proxy closes the socket and releases its
// count after WebSocketConfig.CloseGrace (1 s), not IdleTimeout (an hour here: a
// release within waitFor's bound can only be the grace's).
func TestWebSocketOriginCloses(t *testing.T) {
	before := runtime.NumGoroutine()
	o := wsOrigin(t, "")
	e := newEnv(t, envOpts{cfg: Config{WebSocket: WebSocketConfig{IdleTimeout: time.Hour}}})
	c, br, resp := e.wsDial(o.URL + "/close")
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d (%s), want 101", resp.StatusCode, resp.Header.Get(HeaderReason))
	}
	expectOriginClose(t, br)
	waitFor(t, "the socket's release", func() bool { return e.proxy.WebSockets() == 0 })
	if x := wsTraceEntry(t, e.proxy); x.Status != 101 || x.Error != "" || x.Bytes != 4 {
		t.Errorf("trace entry %+v, want status 101, 4 bytes, no error", x)
	}
	// The proxy closed its end, not just half: the client's writes fail
	// once the proxy's stack has answered the first with a reset.
	waitFor(t, "a write to fail", func() bool { return writeFrame(c, 1, []byte("late"), true) != nil })
	c.Close()
	e.front.CloseClientConnections()
	checkGoroutines(t, before, 12)
}

// TestWebSocketCloseGraceConfigured: a longer close-grace is honoured:
// the socket the origin closed stays open for the silent client until the
// grace ends, and the client's own close then releases it at once.
func TestWebSocketCloseGraceConfigured(t *testing.T) {
	o := wsOrigin(t, "")
	e := newEnv(t, envOpts{cfg: Config{WebSocket: WebSocketConfig{IdleTimeout: time.Hour, CloseGrace: 30 * time.Second}}})
	c, br, resp := e.wsDial(o.URL + "/close")
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d (%s), want 101", resp.StatusCode, resp.Header.Get(HeaderReason))
	}
	expectOriginClose(t, br)
	time.Sleep(1500 * time.Millisecond) // past the default grace of 1 s
	if n := e.proxy.WebSockets(); n != 1 {
		t.Fatalf("%d sockets open 1.5 s into a 30 s grace, want 1", n)
	}
	c.Close()
	waitFor(t, "the socket's release after the client's close", func() bool { return e.proxy.WebSockets() == 0 })
}

// TestWebSocketClientCloses: the client closes first (a TCP half-close)
// and the origin ignores it. The origin gets the close at once (EOF), and
// the proxy closes both connections after WebSocketConfig.CloseGrace (1 s) rather than
// keep the socket until IdleTimeout.
func TestWebSocketClientCloses(t *testing.T) {
	before := runtime.NumGoroutine()
	sawEOF := make(chan error, 1)
	release := make(chan struct{}) // lets the deaf origin go
	letGo := sync.OnceFunc(func() { close(release) })
	t.Cleanup(letGo)
	o := newOrigin(t, "", func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(conn, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
			wsAccept(r.Header.Get("Sec-WebSocket-Key")))
		_, err = io.Copy(io.Discard, brw.Reader)
		sawEOF <- err
		select { // deaf: does not close after the client's EOF
		case <-release:
		case <-time.After(10 * time.Second):
		}
	})
	e := newEnv(t, envOpts{cfg: Config{WebSocket: WebSocketConfig{IdleTimeout: time.Hour}}})
	c, br, resp := e.wsDial(o.URL + "/ws")
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d (%s), want 101", resp.StatusCode, resp.Header.Get(HeaderReason))
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-sawEOF:
		if err != nil {
			t.Fatalf("origin read ended with %v, want EOF", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the origin did not get the client's close")
	}
	// The half-closed client still reads: it sees the proxy's close.
	if _, _, err := readFrame(br); err != io.EOF {
		t.Fatalf("client read: %v, want EOF", err)
	}
	waitFor(t, "the socket's release", func() bool { return e.proxy.WebSockets() == 0 })
	if x := wsTraceEntry(t, e.proxy); x.Status != 101 || x.Error != "" {
		t.Errorf("trace entry %+v, want status 101, no error", x)
	}
	letGo()
	c.Close()
	e.front.CloseClientConnections()
	checkGoroutines(t, before, 12)
}

// closeWithSocketOpen closes p while a WebSocket read through br is open:
// Close must return, and the client must see its socket end.
func closeWithSocketOpen(t *testing.T, p *Proxy, br *bufio.Reader) {
	t.Helper()
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return with a socket open")
	}
	if _, _, err := readFrame(br); err == nil || isTimeout(err) {
		t.Fatalf("read after Close: %v, want the socket closed", err)
	}
}

func hostOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := neturl.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// FuzzIsWebSocket checks the handshake detection on arbitrary Upgrade and
// Connection values: no panic, and a yes only when both tokens occur.
func FuzzIsWebSocket(f *testing.F) {
	f.Add("websocket", "Upgrade")
	f.Add("WebSocket, h2c", "keep-alive, upgrade")
	f.Add("websocket/13", "upgrade")
	f.Add("", "")
	f.Add(" ,,websocket ,", "\tUPGRADE")
	f.Fuzz(func(t *testing.T, upgrade, connection string) {
		r := &http.Request{Header: http.Header{"Upgrade": {upgrade}, "Connection": {connection}}}
		got := isWebSocket(r)
		if got && (!strings.Contains(strings.ToLower(upgrade), "websocket") || !strings.Contains(strings.ToLower(connection), "upgrade")) {
			t.Fatalf("isWebSocket(%q, %q) = true", upgrade, connection)
		}
		if upgrade == "websocket" && connection == "upgrade" && !got {
			t.Fatal("plain handshake not recognized")
		}
	})
}

func TestWebSocketConfig(t *testing.T) {
	file := t.TempDir() + "/c.yaml"
	yaml := "websocket:\n  disabled: true\n  idle-timeout: 5s\n  max-lifetime: 2m\n  max-bytes: 1000\n  max-per-host: 2\n  max-open: 9\n  close-grace: 3s\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	var c Config
	if err := config.Load(file, &c); err != nil {
		t.Fatal(err)
	}
	want := WebSocketConfig{Disabled: true, IdleTimeout: 5 * time.Second, MaxLifetime: 2 * time.Minute, MaxBytes: 1000, MaxPerHost: 2, MaxOpen: 9, CloseGrace: 3 * time.Second}
	if c.WebSocket != want {
		t.Fatalf("websocket = %+v, want %+v", c.WebSocket, want)
	}
	if d := (Config{}).withDefaults().WebSocket; d.IdleTimeout != time.Minute || d.MaxLifetime != time.Hour ||
		d.MaxBytes != 64<<20 || d.MaxPerHost != 4 || d.MaxOpen != 1000 || d.CloseGrace != time.Second || d.Disabled {
		t.Fatalf("defaults = %+v", d)
	}
	for _, bad := range []WebSocketConfig{{IdleTimeout: -1}, {MaxBytes: -1}, {MaxPerHost: -1}, {MaxOpen: maxQueueLimit + 1}, {CloseGrace: -1}, {CloseGrace: 2 * time.Minute}} {
		if err := (Config{WebSocket: bad}).Validate(); err == nil || !strings.Contains(err.Error(), "websocket") {
			t.Fatalf("Validate(%+v) = %v, want a websocket error", bad, err)
		}
	}
}

// TestWebSocketWaitMode: in wait mode a handshake is held for its host's
// delay like any request; the origin sees it at least one delay after the
// robots.txt fetch.
func TestWebSocketWaitMode(t *testing.T) {
	const delay = 300 * time.Millisecond
	o := wsOrigin(t, "User-agent: *\nAllow: /\n")
	e := newEnv(t, envOpts{pol: politeness.Config{DefaultDelay: delay}})
	c, br, resp := e.wsDial(o.URL+"/ws", HeaderMode, "wait")
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d (%s), want 101", resp.StatusCode, resp.Header.Get(HeaderReason))
	}
	if resp.Header.Get(HeaderWaitedMs) == "" {
		t.Fatalf("101 without %s: %v", HeaderWaitedMs, resp.Header)
	}
	wsEchoOnce(t, c, br, "waited")
	o.mu.Lock()
	reqs := append([]originReq(nil), o.reqs...)
	o.mu.Unlock()
	if len(reqs) != 1 || reqs[0].path != "/robots.txt" {
		t.Fatalf("origin requests so far %+v, want robots.txt only (the socket is still open)", reqs)
	}
	c.Close()
	waitFor(t, "socket closed", func() bool { return e.proxy.WebSockets() == 0 })
	// The origin records a request when its handler returns, which may
	// be a moment after the proxy closed its side.
	waitFor(t, "the origin to record the handshake", func() bool { return len(o.pages()) == 1 })
	var robotsEnd, wsStart time.Time
	o.mu.Lock()
	for _, r := range o.reqs {
		switch r.path {
		case "/robots.txt":
			robotsEnd = r.end
		case "/ws":
			wsStart = r.start
		}
	}
	o.mu.Unlock()
	if gap := wsStart.Sub(robotsEnd); wsStart.IsZero() || gap < delay {
		t.Fatalf("handshake %v after robots.txt, want at least %v", gap, delay)
	}
}
