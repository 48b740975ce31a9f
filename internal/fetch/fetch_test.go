// Over 600 lines: one table per fetch rule (limits, decoding, cookies,
// redirects, timeouts) against the same local origins and helpers.

package fetch

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
)

func newClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func fetchOK(t *testing.T, c *Client, rawURL string, req Request) *Result {
	t.Helper()
	r, err := c.Fetch(context.Background(), mustURL(t, rawURL), req)
	if err != nil {
		t.Fatalf("Fetch(%s): %v", rawURL, err)
	}
	return r
}

// Compressed fixtures of one page.
var page = bytes.Repeat([]byte("<p>Courtesy fetch test page, repeated.</p>\n"), 50)

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func zlibBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func flateBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestSpeed)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func brBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := brotli.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func TestCompression(t *testing.T) {
	t.Parallel()
	bomb := gzipBytes(t, make([]byte, 4<<20))
	tests := []struct {
		name     string
		encoding string
		raw      []byte
		want     []byte
		trunc    Truncation
	}{
		{"identity", "", page, page, TruncNone},
		{"gzip", "gzip", gzipBytes(t, page), page, TruncNone},
		{"x-gzip", "x-gzip", gzipBytes(t, page), page, TruncNone},
		{"deflate zlib", "deflate", zlibBytes(t, page), page, TruncNone},
		{"deflate raw", "deflate", flateBytes(t, page), page, TruncNone},
		{"br", "br", brBytes(t, page), page, TruncNone},
		{"gzip then br", "gzip, br", brBytes(t, gzipBytes(t, page)), page, TruncNone},
		{"corrupt gzip", "gzip", append(gzipBytes(t, page)[:20], "garbage"...), nil, TruncDecode},
		{"gzip on a plain body", "gzip", page, page, TruncNone},
		{"gzip on a gzip magic then garbage", "gzip", []byte("\x1f\x8bgarbage"), nil, TruncDecode},
		{"unsupported", "zstd", []byte("whatever"), nil, TruncDecode},
		{"bomb", "gzip", bomb, make([]byte, 1<<20), TruncSize},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, tc := range tests {
			if r.URL.Path == "/"+tc.name {
				if tc.encoding != "" {
					w.Header().Set("Content-Encoding", tc.encoding)
				}
				w.Header().Set("Content-Type", "text/html")
				w.Write(tc.raw)
				return
			}
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	c := newClient(t, Config{MaxDecodedSize: 1 << 20})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := fetchOK(t, c, srv.URL+"/"+url.PathEscape(tc.name), Request{})
			if got := r.Request.Header.Get("Accept-Encoding"); got != "gzip, deflate, br" {
				t.Errorf("Accept-Encoding sent = %q", got)
			}
			if !bytes.Equal(r.RawBody, tc.raw) {
				t.Errorf("RawBody: %d bytes, want the %d bytes sent", len(r.RawBody), len(tc.raw))
			}
			if r.TruncReason != tc.trunc || r.Truncated != (tc.trunc != TruncNone) {
				t.Errorf("truncation = %v %q, want %q (decode error %v)", r.Truncated, r.TruncReason, tc.trunc, r.DecodeErr)
			}
			if tc.want != nil && !bytes.Equal(r.Body, tc.want) {
				t.Errorf("Body: %d bytes, want %d", len(r.Body), len(tc.want))
			}
			if tc.trunc == TruncDecode && r.DecodeErr == nil {
				t.Error("DecodeErr not set")
			}
		})
	}
}

func TestSizeCap(t *testing.T) {
	t.Parallel()
	big := bytes.Repeat([]byte("x"), 5000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write(big)
	}))
	defer srv.Close()
	tests := []struct {
		name       string
		limit, req int64 // Config.MaxBodySize, Request.MaxBodySize
		trunc      bool
		n          int
	}{
		{"under", 6000, 0, false, 5000},
		{"exact", 5000, 0, false, 5000},
		{"over", 1000, 0, true, 1000},
		{"request raises", 1000, 6000, false, 5000},
		{"request lowers", 6000, 2000, true, 2000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, Config{MaxBodySize: tc.limit, MaxDecodedSize: tc.limit})
			r := fetchOK(t, c, srv.URL, Request{MaxBodySize: tc.req})
			if r.Truncated != tc.trunc || len(r.RawBody) != tc.n || len(r.Body) != tc.n {
				t.Errorf("Truncated %v (%q), %d raw, %d body; want %v, %d", r.Truncated, r.TruncReason, len(r.RawBody), len(r.Body), tc.trunc, tc.n)
			}
			if tc.trunc && r.TruncReason != TruncSize {
				t.Errorf("TruncReason = %q, want size", r.TruncReason)
			}
		})
	}
}

// TestSlowBody: a server that sends headers and part of the body, then
// stalls. The outcome does not depend on timing: the body never completes,
// so the timeout always cuts it.
func TestSlowBody(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/noheaders" {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html>partial"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	c := newClient(t, Config{Timeout: 300 * time.Millisecond})

	r := fetchOK(t, c, srv.URL+"/body", Request{})
	if !r.Truncated || r.TruncReason != TruncTime || string(r.Body) != "<html>partial" {
		t.Errorf("slow body: Truncated %v %q, body %q", r.Truncated, r.TruncReason, r.Body)
	}

	_, err := c.Fetch(context.Background(), mustURL(t, srv.URL+"/noheaders"), Request{})
	if KindOf(err) != KindTimeout {
		t.Errorf("no headers: %v (kind %v), want timeout", err, KindOf(err))
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Fetch(ctx, mustURL(t, srv.URL+"/noheaders"), Request{})
	if KindOf(err) != KindCanceled {
		t.Errorf("canceled: %v (kind %v), want canceled", err, KindOf(err))
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/dir":
			// The Viuva Negra report §3.4: "www.somesite.com/dir" → 301 ".../dir/".
			w.Header().Set("Location", "/dir/")
			w.WriteHeader(http.StatusMovedPermanently)
		case "/rel/a/b":
			w.Header().Set("Location", "../c?x=1#frag")
			w.WriteHeader(http.StatusFound)
		case "/bad":
			w.Header().Set("Location", "http://[::1/")
			w.WriteHeader(http.StatusFound)
		default:
			w.Write([]byte("target"))
		}
	}))
	defer srv.Close()
	c := newClient(t, Config{})
	tests := []struct {
		path   string
		status int
		want   string
	}{
		{"/dir", 301, srv.URL + "/dir/"},
		{"/rel/a/b", 302, srv.URL + "/rel/c?x=1"},
		{"/bad", 302, ""},
		{"/dir/", 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			r := fetchOK(t, c, srv.URL+tc.path, Request{})
			if r.Status != tc.status {
				t.Errorf("Status = %d, want %d", r.Status, tc.status)
			}
			got := ""
			if r.Redirect != nil {
				got = r.Redirect.String()
			}
			if got != tc.want {
				t.Errorf("Redirect = %q, want %q", got, tc.want)
			}
		})
	}
	if n := hits.Load(); n != int32(len(tests)) {
		t.Errorf("server saw %d requests, want %d (redirects must not be followed)", n, len(tests))
	}
}

func TestCookies(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/set":
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "abc", Path: "/"})
			for i := range 100 { // more than a site may store
				http.SetCookie(w, &http.Cookie{Name: fmt.Sprintf("junk%d", i), Value: "x", Path: "/"})
			}
		case "/big":
			http.SetCookie(w, &http.Cookie{Name: "big", Value: strings.Repeat("b", 5000), Path: "/"})
		}
		fmt.Fprint(w, r.Header.Get("Cookie"))
	}))
	defer srv.Close()

	t.Run("jar on", func(t *testing.T) {
		c := newClient(t, Config{})
		fetchOK(t, c, srv.URL+"/set", Request{})
		fetchOK(t, c, srv.URL+"/big", Request{})
		r := fetchOK(t, c, srv.URL+"/check", Request{Cookie: "visitor=crawler"})
		got := string(r.Body)
		if !strings.HasPrefix(got, "session=abc") || !strings.HasSuffix(got, "; visitor=crawler") {
			t.Errorf("Cookie header = %q, want session=abc first and the REGP cookie last", got)
		}
		if n := strings.Count(got, ";") + 1; n != maxCookiesPerSite+1 {
			t.Errorf("%d cookies sent, want %d (site cap + REGP cookie)", n, maxCookiesPerSite+1)
		}
		if strings.Contains(got, "big=") {
			t.Error("a cookie over 4096 bytes was stored")
		}
		if r.Request.Header.Get("Cookie") != got {
			t.Errorf("SentRequest Cookie = %q, server saw %q", r.Request.Header.Get("Cookie"), got)
		}
	})
	t.Run("jar off", func(t *testing.T) {
		c := newClient(t, Config{DisableCookies: true})
		fetchOK(t, c, srv.URL+"/set", Request{})
		if r := fetchOK(t, c, srv.URL+"/check", Request{}); len(r.Body) != 0 {
			t.Errorf("Cookie header = %q, want none", r.Body)
		}
	})
	t.Run("site eviction", func(t *testing.T) {
		s := newCookieStore(2)
		for _, h := range []string{"a.example", "b.example", "c.example"} {
			s.SetCookies(mustURL(t, "http://"+h+"/"), []*http.Cookie{{Name: "n", Value: h}})
		}
		if got := s.Cookies(mustURL(t, "http://a.example/")); len(got) != 0 {
			t.Errorf("evicted site still has cookies %v", got)
		}
		if got := s.Cookies(mustURL(t, "http://c.example/")); len(got) != 1 {
			t.Errorf("recent site has %d cookies, want 1", len(got))
		}
	})
}

func TestRequestHeaders(t *testing.T) {
	t.Parallel()
	var seen http.Header
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
		w.Header().Set("X-B", "2")
		w.Header().Add("X-A", "1")
		w.Header().Add("X-A", "0")
		w.Header()["Content-Type"] = nil // no server-side sniffing
		w.Write([]byte("<!DOCTYPE html><html><body>hi</body></html>"))
	}))
	defer srv.Close()
	c := newClient(t, Config{UserAgent: "testbot/1.0 (+http://127.0.0.1/bot)"})
	r := fetchOK(t, c, srv.URL+"/p?q=1", Request{
		AcceptLanguage: "zh-CN",
		AcceptEncoding: "gzip",
		Header:         http.Header{"Accept": {"text/html"}, "User-Agent": {"evil"}, "If-None-Match": {`"x"`}},
	})
	mu.Lock()
	defer mu.Unlock()
	for k, want := range map[string]string{
		"User-Agent": "testbot/1.0 (+http://127.0.0.1/bot)", "Accept-Language": "zh-CN",
		"Accept-Encoding": "gzip", "Accept": "text/html", "If-None-Match": `"x"`,
	} {
		if got := seen.Get(k); got != want {
			t.Errorf("server saw %s %q, want %q", k, got, want)
		}
	}
	if r.ContentType != "text/html; charset=utf-8" || !r.Sniffed || r.MediaType() != "text/html" {
		t.Errorf("ContentType %q sniffed %v media %q", r.ContentType, r.Sniffed, r.MediaType())
	}
	if r.Proto != "HTTP/1.1" || r.Reason != "OK" || r.TTFB <= 0 || r.Duration < r.TTFB || r.Start.IsZero() {
		t.Errorf("Proto %q Reason %q TTFB %v Duration %v", r.Proto, r.Reason, r.TTFB, r.Duration)
	}
	if r.RemoteAddr.Addr() != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("RemoteAddr = %v", r.RemoteAddr)
	}
	hb := string(r.HTTPHeaderBytes())
	if !strings.HasPrefix(hb, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(hb, "\r\n\r\n") {
		t.Errorf("HTTPHeaderBytes = %q", hb)
	}
	if i, j, k := strings.Index(hb, "X-A: 1\r\n"), strings.Index(hb, "X-A: 0\r\n"), strings.Index(hb, "X-B: 2\r\n"); i < 0 || j < i || k < j {
		t.Errorf("headers not sorted with values in order: %q", hb)
	}
	if string(r.HTTPHeaderBytes()) != hb {
		t.Error("HTTPHeaderBytes not deterministic")
	}
	rb := string(r.RequestHeaderBytes())
	host := strings.TrimPrefix(srv.URL, "http://")
	if !strings.HasPrefix(rb, "GET /p?q=1 HTTP/1.1\r\nHost: "+host+"\r\n") || !strings.Contains(rb, "\r\nUser-Agent: testbot/1.0") {
		t.Errorf("RequestHeaderBytes = %q", rb)
	}
}

func TestHTTP2(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "text/html")
		w.Write(gzipBytes(t, page))
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	roots := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	tlsConf := &tls.Config{RootCAs: roots}

	c := newClient(t, Config{TLSConfig: tlsConf, HTTP2: true})
	r := fetchOK(t, c, srv.URL, Request{})
	if r.Proto != "HTTP/2.0" || !bytes.Equal(r.Body, page) || r.Truncated {
		t.Errorf("h2: Proto %q, body ok %v, truncated %v", r.Proto, bytes.Equal(r.Body, page), r.Truncated)
	}
	if hb := string(r.HTTPHeaderBytes()); !strings.HasPrefix(hb, "HTTP/1.1 200 OK\r\n") || !strings.Contains(hb, "Content-Encoding: gzip\r\n") {
		t.Errorf("h2 HTTPHeaderBytes = %q", hb)
	}
	if r.WireHeader != nil {
		t.Errorf("h2 WireHeader = %q, want none (rebuilt from the parsed fields)", r.WireHeader)
	}
	if r2 := fetchOK(t, c, srv.URL, Request{}); !r2.ConnReused {
		t.Error("second h2 request did not reuse the connection")
	}

	// By default https is HTTP/1.1 through h1, its bytes recorded.
	c1 := newClient(t, Config{TLSConfig: tlsConf})
	r1 := fetchOK(t, c1, srv.URL, Request{})
	if r1.Proto != "HTTP/1.1" || !bytes.Equal(r1.Body, page) || !strings.HasPrefix(string(r1.WireHeader), "HTTP/1.1 200 OK\r\n") {
		t.Errorf("default: Proto %q, body ok %v, wire %q", r1.Proto, bytes.Equal(r1.Body, page), r1.WireHeader)
	}

	// Untrusted certificate: a TLS error, on either path.
	for _, http2 := range []bool{false, true} {
		c2 := newClient(t, Config{HTTP2: http2})
		_, err := c2.Fetch(context.Background(), mustURL(t, srv.URL), Request{})
		if KindOf(err) != KindTLS {
			t.Errorf("untrusted cert, HTTP2 %v: %v (kind %v), want tls", http2, err, KindOf(err))
		}
	}
}

func TestHeadBeforeGet(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var log []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		log = append(log, r.Method+" "+r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/song.mp3":
			w.Header().Set("Content-Type", "audio/mpeg")
		case "/noref.pdf":
			if r.Method == http.MethodHead {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			w.Header().Set("Content-Type", "application/pdf")
		default:
			w.Header().Set("Content-Type", "text/html")
		}
		w.Write([]byte("body"))
	}))
	defer srv.Close()
	c := newClient(t, Config{HeadBeforeGet: true})
	tests := []struct {
		path    string
		req     Request
		skipped bool
		calls   string
	}{
		{"/song.mp3", Request{}, true, "HEAD /song.mp3"},
		{"/mislabeled.PDF", Request{}, false, "HEAD /mislabeled.PDF,GET /mislabeled.PDF"},
		{"/noref.pdf", Request{}, false, "HEAD /noref.pdf,GET /noref.pdf"},
		{"/page.html", Request{}, false, "GET /page.html"},
		{"/song.mp3", Request{NoHeadCheck: true}, false, "GET /song.mp3"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			mu.Lock()
			log = nil
			mu.Unlock()
			r := fetchOK(t, c, srv.URL+tc.path, tc.req)
			mu.Lock()
			got := strings.Join(log, ",")
			mu.Unlock()
			if r.Skipped != tc.skipped || got != tc.calls {
				t.Errorf("Skipped %v (%s), requests %q; want %v, %q", r.Skipped, r.SkipReason, got, tc.skipped, tc.calls)
			}
			if tc.skipped && (r.Request.Method != http.MethodHead || r.Body != nil || r.SkipReason == "") {
				t.Errorf("skipped result: method %q, body %q, reason %q", r.Request.Method, r.Body, r.SkipReason)
			}
		})
	}
}

// resetConn closes the handler's connection with a TCP RST instead of an
// answer.
func resetConn(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0) // close with RST
	}
	conn.Close()
}

func TestErrorKinds(t *testing.T) {
	t.Parallel()
	// A port with nothing listening: bind, note, close.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()

	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer plain.Close()

	reset := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resetConn(w)
	}))
	defer reset.Close()

	short := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.Write([]byte("only ten b")) // the server closes the connection
	}))
	defer short.Close()

	c := newClient(t, Config{})
	tests := []struct {
		name string
		url  string
		req  Request
		kind Kind
	}{
		{"closed mid-body", short.URL, Request{}, KindReset},
		{"connect refused", "http://" + closed + "/", Request{}, KindConnect},
		{"tls to plain server", strings.Replace(plain.URL, "http:", "https:", 1), Request{}, KindTLS},
		{"reset", reset.URL, Request{}, KindReset},
		{"bad method", plain.URL, Request{Method: "POST"}, KindRequest},
		{"bad scheme", "ftp://127.0.0.1/", Request{}, KindRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Fetch(context.Background(), mustURL(t, tc.url), tc.req)
			if err == nil {
				t.Fatal("no error")
			}
			var fe *Error
			if !errors.As(err, &fe) || fe.Kind != tc.kind || KindOf(err) != tc.kind {
				t.Errorf("error %v: kind %v, want %v", err, KindOf(err), tc.kind)
			}
			if !strings.HasPrefix(err.Error(), "fetch: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
	if _, err := c.Fetch(context.Background(), nil, Request{}); KindOf(err) != KindRequest {
		t.Errorf("nil URL: %v", err)
	}
	if KindOf(errors.New("x")) != KindOther || Kind(99).String() != "Kind(99)" || KindDNS.String() != "dns" {
		t.Error("KindOf/String of odd values")
	}
}

// TestConnectionReuse counts accepted connections: sequential fetches use
// one kept-alive connection; 4 concurrent fetches held at a server-side
// barrier open exactly 4, and a second such round reuses all 4 (so
// MaxIdleConnsPerHost >= 4 kept them; net/http's default of 2 would make
// it 6).
func TestConnectionReuse(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	var mu sync.Mutex
	arrived, gate := 0, make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/barrier" {
			// Hold each request until 4 are in flight, so that each
			// needs its own connection.
			mu.Lock()
			arrived++
			g := gate
			if arrived%4 == 0 {
				close(gate)
				gate = make(chan struct{})
			}
			mu.Unlock()
			select {
			case <-g:
			case <-time.After(10 * time.Second): // bound; the counts below then fail
			}
		}
		w.Write(page)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c := newClient(t, Config{})
	for i := range 10 {
		r := fetchOK(t, c, srv.URL, Request{})
		if i > 0 && !r.ConnReused {
			t.Errorf("fetch %d: connection not reused", i)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("10 sequential fetches opened %d connections, want 1", n)
	}

	conns.Store(0)
	c2 := newClient(t, Config{})
	var reused atomic.Int32
	for round := range 2 {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				r, err := c2.Fetch(context.Background(), mustURL(t, srv.URL+"/barrier"), Request{})
				if err != nil {
					t.Error(err)
					return
				}
				if r.ConnReused {
					reused.Add(1)
				}
			})
		}
		wg.Wait()
		if n := conns.Load(); n != 4 {
			t.Errorf("after round %d of 4 concurrent fetches: %d connections opened, want 4", round+1, n)
		}
	}
	if n := reused.Load(); n != 4 {
		t.Errorf("%d fetches of round 2 reused a connection, want 4", n)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"zero", Config{}, true},
		{"negative timeout", Config{Timeout: -1}, false},
		{"negative size", Config{MaxBodySize: -1}, false},
		{"negative conns", Config{MaxIdleConnsPerHost: -1}, false},
		{"control in UA", Config{UserAgent: "bot\r\nX: y"}, false},
		{"bad wanted type", Config{WantedTypes: []string{"html"}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if (err == nil) != tc.ok {
				t.Errorf("Validate() = %v, want ok=%v", err, tc.ok)
			}
			if _, err := New(tc.cfg); (err == nil) != tc.ok {
				t.Errorf("New() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
	c := Config{}.withDefaults()
	if c.MaxIdleConnsPerHost < 4 || c.ConnectTimeout != 10*time.Second || c.Timeout != 30*time.Second || c.MaxBodySize != 2<<20 {
		t.Errorf("defaults: %+v", c)
	}
}

// pageServer serves an HTML page of size bytes at every path, on
// loopback, until b ends.
func pageServer(b *testing.B, size int) *httptest.Server {
	body := bytes.Repeat([]byte("x"), size)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write(body)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkFetch: a 1 KB page over keep-alive HTTP/1.1 on loopback.
func BenchmarkFetch(b *testing.B) {
	srv := pageServer(b, 1024)
	c, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	u, _ := url.Parse(srv.URL + "/page.html")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		r, err := c.Fetch(ctx, u, Request{})
		if err != nil || len(r.Body) != 1024 {
			b.Fatal(err)
		}
	}
}
